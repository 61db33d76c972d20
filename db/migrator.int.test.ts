import { createHash } from "node:crypto";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { MigrationError, loadMigrations, migrate, migrationStatus, pendingMigrations } from "./migrator";
import type { Migration } from "./migrator";
import { createDb } from "./pool";
import type { Db } from "./pool";
import { createEmptyDatabase } from "./testing/test-database";

function migration(name: string, text: string): Migration {
  return { name, sql: text, checksum: createHash("sha256").update(text).digest("hex") };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh, unmigrated database for one test, removed afterwards. */
async function emptyDb(): Promise<{ db: Db; url: string }> {
  const database = await createEmptyDatabase();
  const db = createDb(database.url, { max: 3 });
  cleanups.push(async () => {
    await db.destroy();
    await database.drop();
  });
  return { db, url: database.url };
}

async function tableExists(db: Db, name: string): Promise<boolean> {
  const { rows } = await sql<{ t: string | null }>`SELECT to_regclass(quote_ident(${name}))::text AS "t"`.execute(db);
  return rows[0]?.t != null;
}

async function recorded(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`SELECT "name" FROM "SchemaMigrations" ORDER BY "name"`.execute(db);
  return rows.map((r) => r.name);
}

describe("migrator", () => {
  it("lists pending migrations by name, applies them all to an empty database, then none", async () => {
    const { db } = await emptyDb();
    const names = loadMigrations().map((m) => m.name);
    expect(names.slice(0, 3)).toEqual(["0001_platform", "0002_engine", "0003_human_work"]);

    expect(await pendingMigrations(db)).toEqual(names);
    expect(await migrate(db)).toEqual(names);
    expect(await pendingMigrations(db)).toEqual([]);
    expect(await migrate(db)).toEqual([]);
    expect(await recorded(db)).toEqual(names);
    const namespaces = await db.selectFrom("Namespaces").select("name").execute();
    expect(namespaces).toEqual([{ name: "default" }]);
  });

  it("leaves no half-made schema when a statement part-way through a migration fails", async () => {
    const { db } = await emptyDb();
    const migrations = [
      migration("0001_good", `CREATE TABLE "Good" ("id" INTEGER PRIMARY KEY);`),
      migration(
        "0002_broken",
        `CREATE TABLE "HalfMade" ("id" INTEGER PRIMARY KEY);
         CREATE TABLE "Broken" ("id" no_such_type);
         CREATE TABLE "NeverReached" ("id" INTEGER);`,
      ),
    ];

    const error = await migrate(db, { migrations }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as Error).message).toContain("0002_broken");

    expect(await tableExists(db, "Good")).toBe(true);
    expect(await tableExists(db, "HalfMade")).toBe(false);
    expect(await tableExists(db, "NeverReached")).toBe(false);
    expect(await recorded(db)).toEqual(["0001_good"]);
    expect(await pendingMigrations(db, migrations)).toEqual(["0002_broken"]);
  });

  it("reports a database ahead of the code as unknown, and refuses to migrate it", async () => {
    const { db } = await emptyDb();
    const first = migration("0001_a", `CREATE TABLE "A" ("id" INTEGER);`);
    const second = migration("0002_b", `CREATE TABLE "B" ("id" INTEGER);`);
    await migrate(db, { migrations: [first] });
    // A newer build applied a migration this one has never heard of (a replica
    // left running through a rollback). Counting rows would call this healthy.
    await sql`INSERT INTO "SchemaMigrations" ("name", "checksum") VALUES ('0009_from_the_future', 'x')`.execute(db);

    const status = await migrationStatus(db, [first, second]);
    expect(status).toMatchObject({ applied: ["0001_a", "0009_from_the_future"], pending: ["0002_b"], unknown: ["0009_from_the_future"] });
    expect(await pendingMigrations(db, [first, second])).toEqual(["0002_b"]);

    await expect(migrate(db, { migrations: [first, second] })).rejects.toThrow(/0009_from_the_future/);
    await expect(migrate(db, { migrations: [first, second] })).rejects.toBeInstanceOf(MigrationError);
    expect(await tableExists(db, "B")).toBe(false);
  });

  it("reports an applied migration whose file has since changed", async () => {
    const { db } = await emptyDb();
    await migrate(db, { migrations: [migration("0001_a", `CREATE TABLE "A" ("id" INTEGER);`)] });
    const edited = migration("0001_a", `CREATE TABLE "A" ("id" BIGINT);`);
    expect(await migrationStatus(db, [edited])).toMatchObject({ pending: [], changed: ["0001_a"] });
  });

  it("applies each migration once when two processes migrate at the same time", async () => {
    const { db, url } = await emptyDb();
    const other = createDb(url, { max: 1 });
    cleanups.push(() => other.destroy());
    // Plain CREATE TABLE: applying one twice would fail loudly.
    const migrations = ["0001_a", "0002_b", "0003_c"].map((name, i) =>
      migration(name, `CREATE TABLE "T${i}" ("id" INTEGER); SELECT pg_sleep(0.05);`),
    );
    const [mine, theirs] = await Promise.all([migrate(db, { migrations }), migrate(other, { migrations })]);
    expect([...mine, ...theirs].sort()).toEqual(["0001_a", "0002_b", "0003_c"]);
    expect(await recorded(db)).toEqual(["0001_a", "0002_b", "0003_c"]);
  });
});
