import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { decideQueueDepth } from "./decide-queues";
import { queueDepths } from "./task-queues";
import type { QueueDepth } from "./task-queues";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

export interface OutboxCounts {
  /** Neither published nor dead-lettered: what the relay still has to deliver (due now or backing off). */
  backlog: number;
  /** Given up on after the last attempt; kept for inspection and replay. */
  deadLetters: number;
}

/**
 * Two scalar subqueries rather than one `count(*) FILTER (…)` pass: each matches
 * the predicate of one partial index ("OutboxEvents_deliverable_idx",
 * "OutboxEvents_deadletter_idx"), so neither reads the published history the
 * table keeps, which is most of it on a healthy install.
 */
export async function outboxCounts(db: Executor): Promise<OutboxCounts> {
  const { rows } = await sql<OutboxCounts>`
    SELECT
      (SELECT count(*) FROM "OutboxEvents" WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL)::int AS "backlog",
      (SELECT count(*) FROM "OutboxEvents" WHERE "deadLetteredAt" IS NOT NULL)::int AS "deadLetters"`.execute(db);
  const row = rows[0];
  if (!row) throw new Error("outboxCounts: the count query returned no row");
  return row;
}

/** Names for namespace ids; an id with no Namespaces row is simply absent from the map. */
export async function namespaceNames(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom("Namespaces").select(["id", "name"]).where("id", "in", [...new Set(ids)]).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

export interface QueueDepthWithName extends QueueDepth {
  /** The namespace's name, or its id when no Namespaces row has it. */
  namespace: string;
}

export interface MetricsSnapshot {
  queues: QueueDepthWithName[];
  decideQueueDepth: number;
  outbox: OutboxCounts;
}

export interface ReadMetricsSnapshotOptions {
  /** Postgres cancels any statement of the snapshot that runs longer than this. */
  statementTimeoutMs: number;
}

/**
 * Everything /metrics reads from the database, in one read-only transaction:
 * one pooled connection per scrape rather than one per gauge (the web pool is
 * shared with requests), and one consistent snapshot across the gauges.
 *
 * `SET LOCAL statement_timeout` makes Postgres itself stop a slow count: a
 * caller's own timer only stops *waiting*, and the query would otherwise go on
 * holding its connection after the scrape has answered without it.
 */
export async function readMetricsSnapshot(db: Executor, options: ReadMetricsSnapshotOptions): Promise<MetricsSnapshot> {
  const timeoutMs = Math.max(1, Math.round(options.statementTimeoutMs));
  return db
    .transaction()
    .setAccessMode("read only")
    .execute(async (trx) => {
      // SET takes no bind parameters; the value is an integer we formatted.
      await sql.raw(`SET LOCAL statement_timeout = ${timeoutMs}`).execute(trx);
      const depths = await queueDepths(trx);
      const names = await namespaceNames(
        trx,
        depths.map((d) => d.namespaceId),
      );
      const decide = await decideQueueDepth(trx);
      const outbox = await outboxCounts(trx);
      return {
        queues: depths.map((d) => ({ ...d, namespace: names.get(d.namespaceId) ?? d.namespaceId })),
        decideQueueDepth: decide,
        outbox,
      };
    });
}
