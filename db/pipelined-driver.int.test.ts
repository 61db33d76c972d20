import { Kysely, sql } from "kysely";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeAndCommit, PipelinedPostgresDialect } from "./pipelined-driver";
import { createPool } from "./pool";
import { useTestDatabase } from "./testing/test-database";

/**
 * The wire, as a client of the pool sees it: "W<type>" for each protocol
 * message written (Q a simple query such as BEGIN or COMMIT, B the bind of a
 * statement with parameters), "Z" for each ReadyForQuery read (a statement's
 * answer has ended). A round trip saved shows as two writes before one "Z".
 */
const wire: string[] = [];
const notices: string[] = [];

describe("PipelinedPostgresDialect", () => {
  const t = useTestDatabase();
  let db: Kysely<{ items: { id: number } }>;
  let pool: pg.Pool;

  beforeAll(async () => {
    await sql`CREATE TABLE "items" ("id" int PRIMARY KEY)`.execute(t.db);
    pool = createPool(t.url, { max: 1, preparedStatements: false });
    pool.on("connect", (client) => {
      const connection = (client as unknown as { connection: { stream: { write: (chunk: Buffer, ...rest: unknown[]) => boolean }; prependListener: (event: string, listener: () => void) => void } }).connection;
      const write = connection.stream.write.bind(connection.stream);
      connection.stream.write = (chunk, ...rest) => {
        if (Buffer.isBuffer(chunk) && chunk.length > 0) wire.push(`W${String.fromCharCode(chunk[0]!)}`);
        return write(chunk, ...rest);
      };
      // Before the client's own listener, which writes the next queued statement when it hears the answer.
      connection.prependListener("readyForQuery", () => wire.push("Z"));
      client.on("notice", (notice) => notices.push(notice.message ?? "(a notice without a message)"));
    });
    db = new Kysely({ dialect: new PipelinedPostgresDialect({ pool }) });
    await sql`SELECT 1`.execute(db); // connected, and its start-up chatter out of the way
  });

  afterAll(async () => {
    await db.destroy();
  });

  /** Writes and answers from the next one on. */
  const watch = () => {
    wire.length = 0;
    notices.length = 0;
    return wire;
  };
  /** The writes between answers: each group is one round trip (what was sent before waiting). */
  const roundTrips = (log: readonly string[]): string[][] => {
    const groups: string[][] = [];
    let previous = "Z";
    for (const entry of log) {
      if (entry.startsWith("W")) {
        if (previous === "Z") groups.push([]);
        groups.at(-1)!.push(entry);
      }
      previous = entry;
    }
    return groups;
  };

  it("sends BEGIN with the transaction's first statement, which still runs inside the transaction", async () => {
    const log = watch();
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO "items" ("id") VALUES (${1})`.execute(trx);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    // BEGIN and the insert went out before BEGIN's answer came back; then the ROLLBACK on its own.
    const trips = roundTrips(log);
    expect(trips).toHaveLength(2);
    expect(trips[0]).toEqual(expect.arrayContaining(["WQ", "WB", "WE", "WS"]));
    expect(trips[1]).toEqual(["WQ"]);
    expect(await db.selectFrom("items").selectAll().execute()).toEqual([]);
  });

  it("commits a transaction as before when its last statement was sent alone", async () => {
    await db.transaction().execute(async (trx) => {
      await sql`INSERT INTO "items" ("id") VALUES (${2})`.execute(trx);
      await sql`INSERT INTO "items" ("id") VALUES (${3})`.execute(trx);
    });
    expect((await db.selectFrom("items").select("id").orderBy("id").execute()).map((r) => r.id)).toEqual([2, 3]);
    await sql`DELETE FROM "items"`.execute(db);
  });

  it("executeAndCommit: the last statement and COMMIT in one round trip, and Kysely sends no second COMMIT", async () => {
    const log = watch();
    const result = await db.transaction().execute(async (trx) => {
      await sql`INSERT INTO "items" ("id") VALUES (${4})`.execute(trx);
      const inserted = await executeAndCommit<{ id: number }>(trx, sql<{ id: number }>`INSERT INTO "items" ("id") VALUES (${5}) RETURNING "id"`.compile(trx));
      return inserted.rows;
    });
    expect(result).toEqual([{ id: 5 }]);
    // BEGIN with the first insert, the second insert with COMMIT: two round trips where there were four, and no
    // COMMIT of Kysely's after them (it would be a third, answered "there is no transaction in progress").
    const trips = roundTrips(log);
    expect(trips).toHaveLength(2);
    expect(trips[0]![0]).toBe("WQ");
    expect(trips[0]).toContain("WB");
    expect(trips[1]).toContain("WB");
    expect(trips[1]!.at(-1)).toBe("WQ");
    expect(notices).toEqual([]);
    expect((await db.selectFrom("items").select("id").orderBy("id").execute()).map((r) => r.id)).toEqual([4, 5]);
    await sql`DELETE FROM "items"`.execute(db);
  });

  it("executeAndCommit: a failing last statement rolls the whole transaction back, rejects with its own error, and leaves the connection usable", async () => {
    await sql`INSERT INTO "items" ("id") VALUES (${6})`.execute(db);
    watch();
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO "items" ("id") VALUES (${7})`.execute(trx);
        await executeAndCommit(trx, sql`INSERT INTO "items" ("id") VALUES (${6})`.compile(trx)); // a duplicate key
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(notices).toEqual([]);
    // The one connection is not left in a failed transaction: this would say "current transaction is aborted".
    expect((await db.selectFrom("items").select("id").orderBy("id").execute()).map((r) => r.id)).toEqual([6]);
    await sql`DELETE FROM "items"`.execute(db);
  });

  it("a failing first statement rejects with its own error and rolls back", async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO "missing" ("id") VALUES (${1})`.execute(trx);
      }),
    ).rejects.toThrow(/"missing" does not exist/);
    expect(await sql<{ ok: number }>`SELECT 1 AS "ok"`.execute(db)).toMatchObject({ rows: [{ ok: 1 }] });
  });
});
