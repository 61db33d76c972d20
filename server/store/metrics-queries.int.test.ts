import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { json } from "../../db/json";
import { createDb } from "../../db/pool";
import { useTestDatabase } from "../../db/testing/test-database";
import { namespaceNames, outboxCounts, readMetricsSnapshot } from "./metrics-queries";

const t = useTestDatabase();

describe("outboxCounts", () => {
  it("counts owed events (due or backing off) and dead letters, never published ones", async () => {
    expect(await outboxCounts(t.db)).toEqual({ backlog: 0, deadLetters: 0 });
    const namespaceId = randomUUID();
    const later = new Date(Date.now() + 60_000);
    const event = (over: { publishedAt?: Date; deadLetteredAt?: Date; nextAttemptAt?: Date; attempts?: number } = {}) => ({
      namespaceId,
      topic: "t",
      payload: json({}),
      ...over,
    });
    await t.db
      .insertInto("OutboxEvents")
      .values([
        event(),
        event({ nextAttemptAt: later, attempts: 2 }),
        event({ publishedAt: new Date() }),
        event({ publishedAt: new Date(), attempts: 3 }),
        event({ deadLetteredAt: new Date(), attempts: 10 }),
      ])
      .execute();
    expect(await outboxCounts(t.db)).toEqual({ backlog: 2, deadLetters: 1 });
  });
});

describe("namespaceNames", () => {
  it("maps known ids to names and leaves unknown ones out", async () => {
    const { id } = await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
    const unknown = randomUUID();
    expect(await namespaceNames(t.db, [id, unknown, id])).toEqual(new Map([[id, "default"]]));
    expect(await namespaceNames(t.db, [])).toEqual(new Map());
  });
});

describe("readMetricsSnapshot", () => {
  it("has Postgres cancel a read that runs past the timeout", async () => {
    // A lock no read can pass makes the count wait; only statement_timeout ends it.
    const blocker = new pg.Client({ connectionString: t.url });
    await blocker.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query(`LOCK TABLE "OutboxEvents" IN ACCESS EXCLUSIVE MODE`);
      await expect(readMetricsSnapshot(t.db, { statementTimeoutMs: 100 })).rejects.toThrow(/statement timeout/);
    } finally {
      await blocker.query("ROLLBACK");
      await blocker.end();
    }
  });

  it("reads within the timeout, and leaves no timeout behind on the pooled connection", async () => {
    // One connection, so the SHOW runs on the very connection the snapshot used.
    const one = createDb(t.url, { max: 1 });
    try {
      const snapshot = await readMetricsSnapshot(one, { statementTimeoutMs: 5_000 });
      expect(snapshot).toMatchObject({ queues: [], decideQueueDepth: 0 });
      // SET LOCAL: a plain SET would outlive the committed transaction and cap
      // every later statement on this connection, requests included.
      const { rows } = await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(one);
      expect(rows[0]?.statement_timeout).toBe("0");
    } finally {
      await one.destroy();
    }
  });
});
