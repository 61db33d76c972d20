import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { DatabaseCapabilityError, assertDatabaseCapabilities } from "./capabilities";
import { useTestDatabase } from "./testing/test-database";

const t = useTestDatabase();

describe("assertDatabaseCapabilities", () => {
  it("passes on the Postgres 18 the tests run against, and uuidv7() is time-ordered", async () => {
    const { serverVersionNum } = await assertDatabaseCapabilities(t.db);
    expect(serverVersionNum).toBeGreaterThanOrEqual(180000);
    const { rows } = await sql<{ a: string; b: string; version: number }>`
      SELECT "a"::text AS "a", "b"::text AS "b", uuid_extract_version("a") AS "version"
      FROM (SELECT uuidv7() AS "a") x, LATERAL (SELECT pg_sleep(0.002), uuidv7() AS "b") y`.execute(t.db);
    const row = rows[0];
    expect(row?.version).toBe(7);
    // The property the hot tables rely on: later ids sort after earlier ones.
    expect(row && row.a < row.b).toBe(true);
  });

  // The refusal paths, on the real server: a schema ahead of pg_catalog in the
  // search_path shadows the two functions the check calls, for one transaction.
  it("refuses a server that reports a version below 18", async () => {
    const error = await t.db
      .transaction()
      .execute(async (trx) => {
        await sql`CREATE SCHEMA "pretend_pg17"`.execute(trx);
        await sql`CREATE FUNCTION "pretend_pg17".current_setting(text) RETURNS text LANGUAGE sql AS $$ SELECT '170005' $$`.execute(
          trx,
        );
        await sql`SET LOCAL search_path = "pretend_pg17", pg_catalog`.execute(trx);
        return assertDatabaseCapabilities(trx);
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseCapabilityError);
    expect((error as Error).message).toMatch(/PostgreSQL 17 is too old/);
  });

  it("refuses a server without a working uuidv7()", async () => {
    const error = await t.db
      .transaction()
      .execute(async (trx) => {
        await sql`CREATE SCHEMA "no_uuidv7"`.execute(trx);
        await sql`CREATE FUNCTION "no_uuidv7".uuidv7() RETURNS uuid LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'function uuidv7() does not exist'; END $$`.execute(trx);
        await sql`SET LOCAL search_path = "no_uuidv7", pg_catalog`.execute(trx);
        return assertDatabaseCapabilities(trx);
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseCapabilityError);
    expect((error as Error).message).toMatch(/uuidv7\(\) is not available/);
  });
});
