import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "kysely";
import type { Kysely } from "kysely";

/**
 * Raw-SQL migrations: `db/migrations/NNNN_name.sql`, applied in file-name order,
 * each in its own transaction (DDL is transactional in Postgres, so a failure
 * part-way leaves nothing half-made). Forward-only: a change is a new file.
 */
export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationStatus {
  applied: string[];
  /** In the code, not in the database: `migrate()` would apply these. */
  pending: string[];
  /** In the database, not in the code: the database is ahead of this build. */
  unknown: string[];
  /** Applied, but the file has changed since. */
  changed: string[];
}

const FILE_PATTERN = /^(\d{4})_[a-z0-9_]+\.sql$/;
// One key for the whole cluster: two processes migrating at once serialise here.
const MIGRATION_LOCK_KEY = 7_263_104_551;

export function defaultMigrationsDir(): string {
  const cwd = process.cwd();
  return process.env.NODE_FLOW_MIGRATIONS_DIR ?? path.join(/* turbopackIgnore: true */ cwd, "db", "migrations");
}

export function loadMigrations(dir: string = defaultMigrationsDir()): Migration[] {
  // The turbopackIgnore comments keep Next's build from tracing the whole project
  // into the server output because of a runtime-computed path.
  const files = readdirSync(/* turbopackIgnore: true */ dir).filter((f) => f.endsWith(".sql")).sort();
  const seen = new Set<string>();
  return files.map((file) => {
    const match = FILE_PATTERN.exec(file);
    if (!match) throw new Error(`Migration file "${file}" must be named NNNN_lower_snake.sql`);
    if (seen.has(match[1] ?? "")) throw new Error(`Two migrations share the number ${match[1]}`);
    seen.add(match[1] ?? "");
    const filePath = path.join(dir, file);
    const text = readFileSync(/* turbopackIgnore: true */ filePath, "utf8");
    return { name: file.replace(/\.sql$/, ""), sql: text, checksum: createHash("sha256").update(text).digest("hex") };
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- runs against any schema, including none yet
type AnyDb = Kysely<any>;

async function ensureMigrationsTable(db: AnyDb): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS "SchemaMigrations" (
    "name" TEXT PRIMARY KEY,
    "checksum" TEXT NOT NULL,
    "appliedAt" TIMESTAMPTZ NOT NULL DEFAULT now()
  )`.execute(db);
}

async function readApplied(db: AnyDb): Promise<Map<string, string>> {
  const exists = await sql<{ t: string | null }>`SELECT to_regclass('"SchemaMigrations"')::text AS "t"`.execute(db);
  if (!exists.rows[0]?.t) return new Map();
  const { rows } = await sql<{ name: string; checksum: string }>`
    SELECT "name", "checksum" FROM "SchemaMigrations" ORDER BY "name"`.execute(db);
  return new Map(rows.map((r) => [r.name, r.checksum]));
}

export async function migrationStatus(db: AnyDb, migrations: Migration[] = loadMigrations()): Promise<MigrationStatus> {
  const applied = await readApplied(db);
  const known = new Set(migrations.map((m) => m.name));
  return {
    applied: [...applied.keys()],
    pending: migrations.filter((m) => !applied.has(m.name)).map((m) => m.name),
    unknown: [...applied.keys()].filter((name) => !known.has(name)),
    changed: migrations.filter((m) => applied.has(m.name) && applied.get(m.name) !== m.checksum).map((m) => m.name),
  };
}

/** The names of migrations this build has and the database lacks, in order. */
export async function pendingMigrations(db: AnyDb, migrations: Migration[] = loadMigrations()): Promise<string[]> {
  return (await migrationStatus(db, migrations)).pending;
}

export class MigrationError extends Error {
  override name = "MigrationError";
}

/**
 * Applies every pending migration, one transaction each. Safe to run from
 * several processes at once: each transaction takes an advisory lock and then
 * re-checks whether its migration is still pending.
 */
export async function migrate(
  db: AnyDb,
  options: { migrations?: Migration[]; onApply?: (name: string) => void } = {},
): Promise<string[]> {
  const migrations = options.migrations ?? loadMigrations();
  const status = await migrationStatus(db, migrations);
  if (status.unknown.length > 0) {
    throw new MigrationError(
      `The database has migrations this build does not know (${status.unknown.join(", ")}): it was migrated by a newer node-flow. Run that version, or restore a matching database.`,
    );
  }
  const appliedNow: string[] = [];
  for (const migration of migrations) {
    if (!status.pending.includes(migration.name)) continue;
    const applied = await db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
      await ensureMigrationsTable(trx);
      const done = await sql`SELECT 1 FROM "SchemaMigrations" WHERE "name" = ${migration.name}`.execute(trx);
      if (done.rows.length > 0) return false;
      try {
        await sql.raw(migration.sql).execute(trx);
      } catch (error) {
        throw new MigrationError(`Migration ${migration.name} failed and was rolled back: ${(error as Error).message}`, {
          cause: error,
        });
      }
      await sql`INSERT INTO "SchemaMigrations" ("name", "checksum") VALUES (${migration.name}, ${migration.checksum})`.execute(trx);
      return true;
    });
    if (applied) {
      appliedNow.push(migration.name);
      options.onApply?.(migration.name);
    }
  }
  return appliedNow;
}
