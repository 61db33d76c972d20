import { Kysely, PostgresDialect, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeTogether } from "./pipeline";
import { createPool } from "./pool";
import type { Db } from "./pool";
import type { Database } from "./schema";
import { useTestDatabase } from "./testing/test-database";

describe("executeTogether and the pooled client's pipelining", () => {
  const t = useTestDatabase();
  // One connection: every statement of a test meets whatever an earlier one left on it.
  let db: Db;
  const notices: string[] = [];
  beforeAll(async () => {
    const pool = createPool(t.url, { max: 1, applicationName: "pipeline-test" });
    pool.on("connect", (client) => client.on("notice", (notice) => notices.push(notice.message ?? "")));
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    await sql`CREATE TABLE IF NOT EXISTS "PipelineProbe" ("n" INT PRIMARY KEY)`.execute(t.db);
  });
  afterAll(async () => {
    await db?.destroy();
  });
  const probe = async () => (await sql<{ n: number }>`SELECT "n" FROM "PipelineProbe" ORDER BY "n"`.execute(t.db)).rows.map((r) => r.n);
  const clear = () => sql`DELETE FROM "PipelineProbe"`.execute(t.db);

  it("returns each statement's rows in order, from one connection, each statement seeing what the ones before it did", async () => {
    const [pids, set, read] = await db.transaction().execute((trx) =>
      executeTogether(
        trx,
        sql<{ pid: number }>`SELECT pg_backend_pid() AS "pid"`,
        sql<{ v: string }>`SELECT set_config('node_flow.pipeline_test', ${"carried"}, true) AS "v"`,
        sql<{ v: string; pid: number }>`SELECT current_setting('node_flow.pipeline_test') AS "v", pg_backend_pid() AS "pid"`,
      ),
    );
    expect(set).toEqual([{ v: "carried" }]);
    expect(read).toEqual([{ v: "carried", pid: pids[0]!.pid }]);
  });

  it("outside a transaction, each statement commits on its own: a failed lead rejects, and the statement behind it still ran", async () => {
    await clear();
    await expect(executeTogether(db, sql`SELECT 1 / ${0}::int`, sql`INSERT INTO "PipelineProbe" ("n") VALUES (1)`)).rejects.toThrow(/division by zero/);
    expect(await probe()).toEqual([1]);
    await expect(executeTogether(db, sql`INSERT INTO "PipelineProbe" ("n") VALUES (2)`, sql`INSERT INTO "PipelineProbe" ("n") VALUES (1)`)).rejects.toThrow(
      /duplicate key/,
    );
    expect(await probe()).toEqual([1, 2]);
    // The connection is whole afterwards.
    expect((await sql<{ one: number }>`SELECT 1 AS "one"`.execute(db)).rows).toEqual([{ one: 1 }]);
  });

  it("in a transaction, a failure aborts it: nothing it wrote stays, and the connection is usable after", async () => {
    await clear();
    await expect(
      db.transaction().execute((trx) => executeTogether(trx, sql`INSERT INTO "PipelineProbe" ("n") VALUES (3)`, sql`SELECT 1 / ${0}::int`, sql`INSERT INTO "PipelineProbe" ("n") VALUES (4)`)),
    ).rejects.toThrow(/division by zero/);
    expect(await probe()).toEqual([]);
    expect((await sql<{ one: number }>`SELECT 1 AS "one"`.execute(db)).rows).toEqual([{ one: 1 }]);
  });

  it("a COMMIT sent behind the transaction's last statement commits it, and Kysely's own COMMIT is answered without a second", async () => {
    await clear();
    notices.length = 0;
    await db.transaction().execute(async (trx) => {
      await sql`INSERT INTO "PipelineProbe" ("n") VALUES (5)`.execute(trx);
      await executeTogether(trx, sql`INSERT INTO "PipelineProbe" ("n") VALUES (6)`, sql`COMMIT`);
    });
    expect(await probe()).toEqual([5, 6]);
    // A second COMMIT, with no transaction left, would have drawn Postgres's warning.
    expect(notices).toEqual([]);

    // When the statement before it fails, the COMMIT answers ROLLBACK: nothing is kept, and the call rejects. Kysely's
    // ROLLBACK is sent (the callback threw), and finds no transaction left.
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO "PipelineProbe" ("n") VALUES (7)`.execute(trx);
        await executeTogether(trx, sql`INSERT INTO "PipelineProbe" ("n") VALUES (5)`, sql`COMMIT`);
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await probe()).toEqual([5, 6]);
    expect(notices).toEqual(["there is no transaction in progress"]);
  });

  it("a connection that dies with statements in flight fails every one of them, and the pool goes on with a new connection", async () => {
    const before = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS "pid"`.execute(db)).rows[0]!.pid;
    // Killed from another connection while the lead sleeps, so both statements are surely still in flight: a backend
    // that terminates itself may first answer the statement that asked it to, and the one behind it too.
    const inFlight = executeTogether(db, sql`SELECT pg_sleep(${30})`, sql`SELECT ${1}::int AS "n"`);
    inFlight.catch(() => undefined);
    await expect
      .poll(async () => (await sql<{ n: number }>`SELECT count(*)::int AS "n" FROM pg_stat_activity WHERE "pid" = ${before} AND "wait_event" = 'PgSleep'`.execute(t.db)).rows[0]!.n)
      .toBe(1);
    await sql`SELECT pg_terminate_backend(${before})`.execute(t.db);
    await expect(inFlight).rejects.toThrow(/terminat|Connection/i);
    const after = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS "pid"`.execute(db)).rows[0]!.pid;
    expect(after).not.toBe(before);
  });

  it("a transaction's BEGIN travels with its first statement and keeps its meaning: a rollback undoes the first statement too", async () => {
    await clear();
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO "PipelineProbe" ("n") VALUES (8)`.execute(trx);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await probe()).toEqual([]);
    // A first statement that fails fails the transaction with its own error.
    await expect(db.transaction().execute((trx) => sql`SELECT 1 / ${0}::int`.execute(trx))).rejects.toThrow(/division by zero/);
    const inBlock = await db.transaction().execute(async (trx) => (await sql<{ xid: string | null }>`SELECT pg_current_xact_id_if_assigned()::text AS "xid"`.execute(trx)).rows[0]);
    expect(inBlock).toEqual({ xid: null });
  });
});
