import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { findFreePort } from "@/db/embedded-postgres";
import { loadMigrations } from "@/db/migrator";
import { createDb } from "@/db/pool";
import { useTestDatabase } from "@/db/testing/test-database";
import { checkReadiness } from "./health";

const database = useTestDatabase();

describe("checkReadiness", () => {
  it("is ready on a migrated Postgres 18", async () => {
    const readiness = await checkReadiness(database.db);
    expect(readiness).toEqual({
      ok: true,
      database: { ok: true, serverVersionNum: expect.any(Number) as number },
      migrations: { pending: [], unknown: [], changed: [] },
    });
    expect(readiness.database.serverVersionNum).toBeGreaterThanOrEqual(180000);
  });

  it("reports by name a migration this build has and the database lacks", async () => {
    const migrations = [...loadMigrations(), { name: "9999_not_yet_applied", sql: "SELECT 1", checksum: "none" }];
    const readiness = await checkReadiness(database.db, { migrations });
    expect(readiness.ok).toBe(false);
    expect(readiness.database.ok).toBe(true);
    expect(readiness.migrations.pending).toEqual(["9999_not_yet_applied"]);
    expect(readiness.migrations.unknown).toEqual([]);
  });

  it("reports by name a migration the database has and this build does not", async () => {
    await sql`INSERT INTO "SchemaMigrations" ("name", "checksum") VALUES ('9998_from_a_newer_build', 'x')`.execute(database.db);
    try {
      const readiness = await checkReadiness(database.db);
      expect(readiness.ok).toBe(false);
      expect(readiness.migrations.unknown).toEqual(["9998_from_a_newer_build"]);
      expect(readiness.migrations.pending).toEqual([]);
    } finally {
      await sql`DELETE FROM "SchemaMigrations" WHERE "name" = '9998_from_a_newer_build'`.execute(database.db);
    }
  });

  it("reports a changed migration file but stays ready", async () => {
    const [first, ...rest] = loadMigrations();
    if (!first) throw new Error("expected at least one migration");
    const readiness = await checkReadiness(database.db, { migrations: [{ ...first, checksum: "edited" }, ...rest] });
    expect(readiness.ok).toBe(true);
    expect(readiness.migrations.changed).toEqual([first.name]);
  });

  it("is not ready, and says why, when the database is unreachable", async () => {
    const port = await findFreePort();
    const unreachable = createDb(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`, { max: 1 });
    try {
      const readiness = await checkReadiness(unreachable, { timeoutMs: 5000 });
      expect(readiness.ok).toBe(false);
      expect(readiness.database.ok).toBe(false);
      expect(readiness.database.error).toMatch(/ECONNREFUSED/);
      expect(readiness.migrations.error).toMatch(/not checked/);
    } finally {
      await unreachable.destroy();
    }
  });

  it("gives up after the timeout instead of hanging", async () => {
    // A statement that outlives the probe's budget stands in for a server that accepts and never answers.
    const slow = createDb(database.url, { max: 1 });
    try {
      const hold = slow.connection().execute(async (conn) => {
        await sql`SELECT pg_sleep(1)`.execute(conn);
      });
      const started = Date.now();
      const readiness = await checkReadiness(slow, { timeoutMs: 200 });
      expect(Date.now() - started).toBeLessThan(900);
      expect(readiness.ok).toBe(false);
      expect(readiness.database.error).toMatch(/did not answer within 200 ms/);
      await hold;
    } finally {
      await slow.destroy();
    }
  });
});
