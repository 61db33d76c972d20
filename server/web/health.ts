import { sql } from "kysely";
import type { Db } from "@/db/pool";
import { loadMigrations, migrationStatus } from "@/db/migrator";
import type { Migration } from "@/db/migrator";

/** The oldest server node-flow runs on; the hot tables key on uuidv7(), new in 18 (see db/capabilities.ts). */
export const MIN_SERVER_VERSION_NUM = 180000;

export interface Liveness {
  status: "ok";
}

export interface DatabaseProbe {
  ok: boolean;
  serverVersionNum?: number;
  error?: string;
}

export interface MigrationProbe {
  /** In this build, not applied: the schema is behind the code. */
  pending: string[];
  /** Applied, not in this build: the schema is ahead of the code (a rollback left this replica running). */
  unknown: string[];
  /** Applied, but the file's checksum has changed since: reported, not fatal. */
  changed: string[];
  /** Set when the migration state could not be read at all. */
  error?: string;
}

export interface Readiness {
  ok: boolean;
  database: DatabaseProbe;
  migrations: MigrationProbe;
}

export interface ReadinessOptions {
  /** The migrations this build ships; read from db/migrations when omitted. */
  migrations?: Migration[];
  /** A probe that hangs is worse than one that fails: load balancers time out and retry into a pile-up. */
  timeoutMs?: number;
}

/**
 * Liveness says only that this process can answer. It never touches the
 * database: an orchestrator restarts unlive processes, and restarting every
 * web process because Postgres blinked turns an outage into a thundering herd.
 */
export function checkLiveness(): Liveness {
  return { status: "ok" };
}

/**
 * Readiness says whether this process should get traffic: Postgres answers,
 * is 18 or newer, and its schema is exactly the one this build expects. It
 * resolves in every case (an unreachable database is a result, not an error),
 * so callers can always answer with a body.
 */
export async function checkReadiness(db: Db, options: ReadinessOptions = {}): Promise<Readiness> {
  const timeoutMs = options.timeoutMs ?? 3000;
  let database: DatabaseProbe;
  try {
    const { rows } = await withTimeout(
      sql<{ v: string }>`SELECT current_setting('server_version_num') AS "v"`.execute(db),
      timeoutMs,
      "the database did not answer",
    );
    database = probeServerVersion(Number(rows[0]?.v ?? 0));
  } catch (error) {
    return evaluateReadiness(
      { ok: false, error: describeError(error) },
      { pending: [], unknown: [], changed: [], error: "not checked: the database is unreachable" },
    );
  }

  let migrations: MigrationProbe;
  try {
    const known = options.migrations ?? loadMigrations();
    const status = await withTimeout(migrationStatus(db, known), timeoutMs, "reading the applied migrations timed out");
    migrations = { pending: status.pending, unknown: status.unknown, changed: status.changed };
  } catch (error) {
    migrations = { pending: [], unknown: [], changed: [], error: describeError(error) };
  }
  return evaluateReadiness(database, migrations);
}

/** Pure: the verdict from the two probes. */
export function evaluateReadiness(database: DatabaseProbe, migrations: MigrationProbe): Readiness {
  const ok =
    database.ok && migrations.error === undefined && migrations.pending.length === 0 && migrations.unknown.length === 0;
  return { ok, database, migrations };
}

export function probeServerVersion(serverVersionNum: number): DatabaseProbe {
  if (serverVersionNum >= MIN_SERVER_VERSION_NUM) return { ok: true, serverVersionNum };
  const major = Math.floor(serverVersionNum / 10000);
  return {
    ok: false,
    serverVersionNum,
    error: `PostgreSQL ${major} is too old: node-flow needs PostgreSQL 18 or newer (server_version_num ${serverVersionNum}).`,
  };
}

/**
 * A message for an error whose message may be empty: connecting to
 * `localhost` tries ::1 and 127.0.0.1 and, when both refuse, node throws an
 * AggregateError whose own message is "" and whose causes carry the detail.
 */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError) {
    const inner = error.errors.map(describeError).filter(Boolean);
    if (inner.length > 0) return [...new Set(inner)].join("; ");
  }
  if (error instanceof Error) {
    if (error.message) return error.message;
    const code = (error as Error & { code?: unknown }).code;
    if (typeof code === "string") return code;
    return error.name;
  }
  return String(error);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
