import { sql } from "kysely";
import type { Kysely, RawBuilder, Transaction } from "kysely";
import { executeTogether, passIds } from "../../db/pipeline";
import type { Database, WorkflowExecutionRow } from "../../db/schema";

/**
 * The decide queue: one row per workflow that needs an evaluation. The primary
 * key on "workflowId" is the dedupe — any number of completions collapse into
 * one pending evaluation.
 *
 * The correctness argument (DESIGN.md invariants 2 and 3) lives in the pairing
 * of {@link enqueueDecide} and {@link claimDecideBatch}:
 * - a decider deletes its claim, in the transaction that then locks the
 *   workflow and reads its state, before it reads anything;
 * - an enqueue always takes the row lock on a pending row (ON CONFLICT DO
 *   UPDATE), so it can never slip past a claim that is in flight.
 * Together: a state change whose enqueue commits after a decider's claim always
 * leaves a new pending row behind, and the decider that missed it runs again.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

export interface EnqueueDecideInput {
  workflowId: string;
  namespaceId: string;
  /** Free text for operators ("task completed", "timer fired", …). Read by nobody; see below. */
  reason: string;
}

/**
 * Asks for an evaluation of `workflowId`. Call it in the same transaction as the
 * state change it announces, so a rollback takes both back.
 *
 * ON CONFLICT … DO UPDATE, never DO NOTHING (invariant 3). DO NOTHING on an
 * existing row takes no lock, so this interleaving loses work:
 *   completion: writes the task result; enqueue finds the row, does nothing
 *   decider:    claims (deletes) that row — nothing stops it — reads state,
 *               cannot see the uncommitted result, commits
 *   completion: commits → a result that no pending evaluation will ever read.
 * DO UPDATE locks the row first: a decider's SKIP LOCKED claim then skips it
 * (it stays pending), and if the decider had already claimed it, this statement
 * waits for that transaction and, once the claim commits, inserts a fresh row.
 * decide-queues.int.test.ts provokes both orders, and the DO NOTHING loss.
 *
 * "enqueuedAt" is left as it was on conflict: a workflow re-enqueued by every
 * completion would otherwise be pushed to the back of the queue each time and
 * could starve behind quieter ones.
 */
export async function enqueueDecide(db: Executor, input: EnqueueDecideInput): Promise<void> {
  await enqueueDecidesFrom(sql`VALUES (${input.workflowId}::uuid, ${input.namespaceId}::uuid, ${input.reason})`).execute(db);
}

/**
 * {@link enqueueDecide} as a data-modifying statement for a larger one (a
 * worker's completion enqueues in the statement that ends the task): one
 * request per row of `rows`, a query yielding "workflowId", "namespaceId" and
 * "reason". The one home of the ON CONFLICT … DO UPDATE above.
 */
export function enqueueDecidesFrom(rows: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`INSERT INTO "DecideQueues" ("workflowId", "namespaceId", "reason")
    ${rows}
    ON CONFLICT ("workflowId") DO UPDATE SET "reason" = "excluded"."reason"`;
}

export interface ClaimDecideBatchOptions {
  /** Rows to claim, 1 to 1000. */
  limit: number;
  /**
   * Where in the queue (oldest first) this decider starts looking; 0 by default.
   * Replicas may pass different offsets (e.g. replicaIndex × limit) to work on
   * different stretches of the queue; when the stretch from there holds fewer
   * than `limit` claimable rows, the rest is claimed from the head.
   */
  offset?: number;
}

/**
 * Claims up to `limit` pending evaluations and returns their workflow ids,
 * oldest first. The claimed rows are DELETED in this statement, inside the
 * caller's transaction: the deletion is the claim (invariant 2). Call it first
 * in the evaluation transaction, before reading any workflow state; then
 * {@link lockWorkflow} each one. A rollback restores the rows, so an evaluation
 * that fails is retried.
 *
 * Spreading deciders (the seed's `peekBatch` lesson, where three deciders were
 * slower than one because each peeked the same fifty rows and raced for them):
 * - The claim is one statement that locks with FOR UPDATE SKIP LOCKED and
 *   deletes what it locked. Two deciders can never claim the same row, and
 *   neither waits for the other: a row claimed by a decider still in its
 *   transaction is skipped, not waited on. That alone removes the race the seed
 *   measured; the remaining cost is scanning past the others' locked rows (at
 *   most (deciders − 1) × limit index entries). Measured in
 *   decide-queues.int.test.ts (NODE_FLOW_MEASURE=1 prints it): 3 concurrent
 *   claimers, batches of 50 held through a 2 ms "evaluation", 3,000 rows —
 *   every row claimed exactly once, 0 short batches, no backend ever seen
 *   waiting on a lock, drained in 280–390 ms. The seed's peek-then-claim shape
 *   on the same load: 1.7–2.2 s, about half of all claims lost to another
 *   decider, lock waits in ~40% of samples.
 * - Offsets are therefore optional. Spread starts (offset = replica × limit)
 *   drained the same load in 200–290 ms, a modest gain paid for in strict
 *   oldest-first order; 0 is the default.
 * - `offset` is NOT applied as SQL OFFSET on the locking query: Postgres locks
 *   the rows an OFFSET skips ("rows skipped over by OFFSET will get locked"),
 *   so a decider at offset 100 would hide the 100 oldest rows from every other
 *   decider for the length of its evaluation. The offset instead picks a start
 *   key with an unlocked read, and the locking scan begins there.
 */
export async function claimDecideBatch(trx: Transaction<Database>, options: ClaimDecideBatchOptions): Promise<string[]> {
  const { limit, offset = 0 } = options;
  if (!trx.isTransaction) {
    // Claiming outside a transaction commits the delete at once: a crash before
    // the evaluation commits would lose the evaluation for good.
    throw new Error("claimDecideBatch must run inside the evaluation's transaction");
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${limit}`);
  }
  if (!Number.isInteger(offset) || offset < 0) {
    throw new RangeError(`offset must be a non-negative integer, got ${offset}`);
  }

  const claimed = await claimFrom(trx, limit, offset);
  if (offset > 0 && claimed.length < limit) {
    // Near the tail: fill the batch from the head. Our own deleted rows are
    // invisible to this second statement, so nothing is claimed twice.
    claimed.push(...(await claimFrom(trx, limit - claimed.length, 0)));
  }
  return claimed.sort((a, b) => a.enqueuedAt.localeCompare(b.enqueuedAt)).map((r) => r.workflowId);
}

async function claimFrom(
  trx: Transaction<Database>,
  limit: number,
  offset: number,
): Promise<{ workflowId: string; enqueuedAt: string }[]> {
  // The start key comes from a plain (non-locking) read, so the rows before it
  // stay claimable by other deciders; an offset past the tail starts at the head.
  const start = claimStart(offset);
  // "enqueuedAt" goes back as text: it only orders the batch.
  const { rows } = await sql<{ workflowId: string; enqueuedAt: string }>`
    WITH ${claimedCte(start, limit)}
    SELECT "workflowId", ${enqueuedAtText} AS "enqueuedAt" FROM "claimed"`.execute(trx);
  return rows;
}

/**
 * `"claimable", "claimed"`: the CTEs of a claim — lock up to `limit` requests
 * from `start` on, oldest first, skipping any another claimer holds, and
 * delete exactly those ("claimed" returns their "workflowId", "reason" and
 * "enqueuedAt"). A CTE with a locking clause is never inlined, so the LIMIT
 * applies once and the DELETE removes exactly the rows this statement locked.
 * Plan: Limit → LockRows → Index Scan on "DecideQueues_enqueued_idx".
 */
function claimedCte(start: RawBuilder<unknown>, limit: number): RawBuilder<unknown> {
  return sql`"claimable" AS (
      SELECT "workflowId" FROM "DecideQueues"
      WHERE "enqueuedAt" >= ${start}
      ORDER BY "enqueuedAt"
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), "claimed" AS (
      DELETE FROM "DecideQueues" AS "q"
      USING "claimable" AS "c"
      WHERE "q"."workflowId" = "c"."workflowId"
      RETURNING "q"."workflowId", "q"."reason", "q"."enqueuedAt"
    )`;
}

/** "enqueuedAt" as fixed-width UTC text: it keeps the microseconds (a JS Date would tie rows enqueued within one millisecond) and sorts as time does. */
const enqueuedAtText = sql`to_char("enqueuedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;

/** A claimed decide request and its workflow's execution row, locked for the rest of the transaction. */
interface LockedClaim {
  reason: string | null;
  workflow: WorkflowExecutionRow;
}

/**
 * An evaluation transaction's start in one statement: claims the `limit`
 * oldest claimable requests (from `offset`, as {@link claimDecideBatch}) by
 * deleting them, and locks their workflows' execution rows FOR UPDATE for the
 * rest of the transaction, returning both, oldest request first. Empty when
 * nothing was claimed. A claim whose workflow no longer exists (a queue row can
 * outlive an execution whose partition was dropped) is deleted all the same
 * and returned with none — so an empty answer can also mean "only orphans";
 * the caller ends its batch as if the queue were empty and the next pass goes on.
 *
 * Invariant 2 holds as with claimDecideBatch then {@link lockWorkflow}: the claims
 * are deleted before any of the workflows' state is read, because that read is
 * the caller's next statement, with a snapshot of its own. The execution rows
 * read here are the locked, latest versions (a lock that had to wait re-reads
 * the row it waited for).
 */
export async function claimAndLockWorkflows(
  trx: Transaction<Database>,
  options: { limit: number; offset?: number },
): Promise<LockedClaim[]> {
  return (await claimAndLockWorkflowsThen(trx, options)).claims;
}

/**
 * {@link claimAndLockWorkflows}, with `then` sent in the claim's round trip
 * (db/pipeline.ts): a statement that needs nothing from the claim's answer —
 * it finds the claimed workflows' ids in the transaction-local setting
 * "node_flow.claimed", which the claim sets (task-executions.ts,
 * claimedFrontiersStatement). Postgres runs it once the claim has ended, so it
 * reads with a snapshot taken after every lock was granted (invariant 2).
 * `thenRows` is undefined when the claim had to try again from the head (an
 * `offset` past the tail): `then` ran after the first try, and the caller
 * reads what it wanted itself.
 */
export async function claimAndLockWorkflowsThen<R = never>(
  trx: Transaction<Database>,
  options: { limit: number; offset?: number; then?: RawBuilder<R> },
): Promise<{ claims: LockedClaim[]; thenRows?: R[] }> {
  if (!trx.isTransaction) throw new Error("claimAndLockWorkflows must run inside the evaluation's transaction");
  const { limit, offset = 0, then } = options;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new RangeError(`limit must be an integer from 1 to 1000, got ${limit}`);
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`offset must be a non-negative integer, got ${offset}`);
  type ClaimRow = WorkflowExecutionRow & { claimReason: string | null; claimedAt: string; claimedIds: string | null };
  const statement = (from: number) => sql<ClaimRow>`
      WITH ${claimedCte(claimStart(from), limit)}
      -- The claimed ids as an array subquery, not a join: evaluated once, it
      -- makes the lookup primary-key probes per partition whatever the
      -- statistics say (a join was planned as a hash join over every row of
      -- a freshly created, not yet analysed partition).
      SELECT "w".*,
        (SELECT "reason" FROM "claimed" WHERE "claimed"."workflowId" = "w"."id") AS "claimReason",
        (SELECT ${enqueuedAtText} FROM "claimed" WHERE "claimed"."workflowId" = "w"."id") AS "claimedAt",
        -- For a statement sent behind this one (claimAndLockWorkflowsThen).
        ${passIds("node_flow.claimed", "claimed", "workflowId")} AS "claimedIds"
      FROM "WorkflowExecutions" AS "w"
      WHERE "w"."id" = ANY(ARRAY(SELECT "workflowId" FROM "claimed"))
      FOR UPDATE OF "w"`;
  let rows: ClaimRow[];
  let thenRows: R[] | undefined;
  if (then === undefined) ({ rows } = await statement(offset).execute(trx));
  else [rows, thenRows] = await executeTogether(trx, statement(offset), then);
  // Near the tail the stretch from `offset` is empty: claim from the head (our own deleted rows are invisible to it).
  if (rows.length === 0 && offset > 0) {
    ({ rows } = await statement(0).execute(trx));
    thenRows = undefined;
  }
  // Oldest request first.
  rows.sort((a, b) => (a.claimedAt < b.claimedAt ? -1 : a.claimedAt > b.claimedAt ? 1 : 0));
  return {
    claims: rows.map(({ claimReason, claimedAt: _claimedAt, claimedIds: _claimedIds, ...workflow }) => ({ reason: claimReason, workflow })),
    ...(thenRows !== undefined ? { thenRows } : {}),
  };
}

/** Where a claim starts looking: the head, or the row `offset` places in (a plain, non-locking read; past the tail, the head). */
function claimStart(offset: number) {
  return offset === 0
    ? sql`'-infinity'::timestamptz`
    : sql`coalesce((SELECT "enqueuedAt" FROM "DecideQueues" ORDER BY "enqueuedAt" OFFSET ${offset} LIMIT 1), '-infinity'::timestamptz)`;
}

/**
 * Locks the workflow's execution row FOR UPDATE for the rest of the evaluation
 * and returns it; undefined when no such execution exists (a queue row can
 * outlive an execution whose partition was dropped — the claim is still deleted
 * and the evaluation ends there). This lock is what makes two deciders, an
 * operator action and an event append serialise on one workflow.
 *
 * The primary key is ("id", "startedAt") because a partitioned table's key must
 * include its partition key, and the decide queue does not carry "startedAt".
 * So this looks the row up by "id" alone: no partition can be pruned, and
 * Postgres probes each monthly partition's primary-key index once ("id" leads
 * it, so each probe is a btree descent, not a scan) — about 16 probes with 12
 * months kept. Callers that know "startedAt" (to the millisecond is enough)
 * pass it and the lookup prunes to one partition. Measured with 15 partitions
 * (decide-queues.int.test.ts, NODE_FLOW_MEASURE=1): execution 0.25–0.3 ms by id
 * against 0.06–0.09 ms pruned, but both are dwarfed by planning, 1.2–1.4 ms,
 * because an unnamed statement is re-planned over every partition and its
 * dozen indexes each time — that, not the probes, is the cost to attack. Not derived from the uuidv7's embedded time: "startedAt" can
 * be set independently of the id, and a wrong guess would report a live
 * workflow as missing.
 */
export async function lockWorkflow(
  trx: Transaction<Database>,
  workflowId: string,
  options: { startedAt?: Date | string } = {},
): Promise<WorkflowExecutionRow | undefined> {
  if (!trx.isTransaction) throw new Error("lockWorkflow outside a transaction would release the lock at once");
  let query = trx.selectFrom("WorkflowExecutions").selectAll().where("id", "=", workflowId);
  if (options.startedAt !== undefined) {
    // A range, not equality: a "startedAt" read back into a JS Date has lost its
    // microseconds, so `=` would miss the very row it came from. One millisecond
    // wide, the range still prunes to a single partition.
    const at = options.startedAt instanceof Date ? options.startedAt.toISOString() : options.startedAt;
    query = query
      .where("startedAt", ">=", sql<Date>`${at}::timestamptz`)
      .where("startedAt", "<", sql<Date>`${at}::timestamptz + interval '1 millisecond'`);
  }
  return query.forUpdate().executeTakeFirst();
}

/**
 * Pending evaluations, for metrics and the stuck-workflow sweeper. An exact
 * count: the table holds pending work only (claims delete), so it stays small
 * and an index-only count of it is cheap; a growing number here means the
 * deciders are behind.
 */
export async function decideQueueDepth(db: Executor): Promise<number> {
  const row = await db
    .selectFrom("DecideQueues")
    .select((eb) => eb.fn.countAll<string>().as("depth"))
    .executeTakeFirstOrThrow();
  return Number(row.depth);
}
