import { sql } from "kysely";
import type { Kysely, RawBuilder, Transaction } from "kysely";
import { json } from "../../db/json";
import { executeTogether } from "../../db/pipeline";
import type { Database, WorkflowEventRow } from "../../db/schema";
import type { WorkflowEndStatus } from "../../engine";
import { lockWorkflow } from "./decide-queues";

/**
 * A workflow's history: the rows behind the history view and the live SSE
 * stream. Every insert is announced by the table's own AFTER INSERT trigger
 * (pg_notify 'node_flow_workflow_events', "workflowId:seq" once per workflow
 * per statement, delivered at commit), so nothing here issues a NOTIFY and no
 * writer can forget one.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

export interface NewWorkflowEventInput {
  /** e.g. "WORKFLOW_STARTED", "TASK_SCHEDULED", "TASK_COMPLETED". */
  type: string;
  /** The event's body (JSONB "data"), through json(). */
  data?: unknown;
  refName?: string | null;
  taskId?: string | null;
  status?: string | null;
  /** Defaults to now(): the transaction's start, shared by every event of one evaluation — seq, not "at", orders them. */
  at?: Date | string;
}

/**
 * Appends `events`, in order, with gap-free "seq" numbers continuing the
 * workflow's history, and returns the stored rows.
 *
 * PRECONDITION: the caller holds the workflow's row lock in `trx`
 * (lockWorkflow, in decide-queues.ts) — taken before it read the state these
 * events describe — and keeps it until commit. "seq" is allocated as max + 1
 * from the table, not from a sequence (which leaves a gap on every rollback)
 * nor a clock (which ties events written in one transaction), and max + 1 is
 * only safe while no other transaction can append to this workflow between our
 * read and our commit. The row lock serialises appenders: the second waits for
 * the first to commit, and its max() — a later statement, so a fresh snapshot
 * under READ COMMITTED — sees the first's rows.
 *
 * Nothing else would catch a mistake here, so the lock is re-taken below: the
 * primary key is ("workflowId","seq","at") because a partitioned table's key
 * must include its partition key, and "at" defaults to each transaction's own
 * now(), so two appenders that both read max = 4 both store a seq 5 without
 * any error (workflow-events.int.test.ts shows it). Re-locking a row this
 * transaction already holds returns at once; a caller that forgot is
 * serialised here instead of silently forking the history. The one exception
 * is `options.lockedBy`: the row lockWorkflow returned to this caller in this
 * transaction — a round trip saved, for a lock it took earlier. And
 * `options.newWorkflow` says the execution was inserted in `trx`: until
 * commit its row is invisible to every other transaction, so none can lock it
 * to append, and its history is empty — the lock and the max() are skipped
 * and seq starts at 1 (a start's WORKFLOW_STARTED). (All of this
 * assumes READ COMMITTED, the default: under REPEATABLE READ the max() would
 * read the transaction's first snapshot and miss a commit it waited for.)
 */
export async function appendWorkflowEvents(
  trx: Transaction<Database>,
  workflow: { workflowId: string; namespaceId: string },
  events: readonly NewWorkflowEventInput[],
  options: { lockedBy?: { id: string }; newWorkflow?: boolean } = {},
): Promise<WorkflowEventRow[]> {
  if (!trx.isTransaction) {
    throw new Error("appendWorkflowEvents needs the transaction that holds the workflow's row lock");
  }
  if (events.length === 0) return [];
  let last = 0;
  if (!options.newWorkflow) {
    if (options.lockedBy?.id !== workflow.workflowId) {
      const locked = await lockWorkflow(trx, workflow.workflowId);
      if (!locked) throw new Error(`Cannot append events: workflow ${workflow.workflowId} does not exist`);
    }
    // One probe of the ("workflowId","seq","at") key per monthly partition,
    // answered backwards from the index (a min/max-optimised Limit 1 per partition).
    const { rows } = await sql<{ last: number | null }>`
      SELECT max("seq") AS "last" FROM "WorkflowEvents" WHERE "workflowId" = ${workflow.workflowId}::uuid`.execute(trx);
    last = Number(rows[0]?.last ?? 0);
  }

  const inserted = await insertWorkflowEventsQuery(trx, workflow, events, last).returningAll().execute();
  // RETURNING of a multi-row insert comes back in VALUES order in practice, but
  // nothing promises it; the caller gets history order.
  return inserted.sort((a, b) => a.seq - b.seq);
}

/**
 * The INSERT of `events` numbered on from `last`; {@link appendWorkflowEvents}
 * says when that numbering is safe. Exported for a new workflow's first event,
 * written in its start's one statement (start-execution.ts), where `last` is 0.
 */
export function insertWorkflowEventsQuery(
  db: Kysely<Database>,
  workflow: { workflowId: string; namespaceId: string },
  events: readonly NewWorkflowEventInput[],
  last: number,
) {
  return db.insertInto("WorkflowEvents").values(
    events.map((event, i) => ({
      workflowId: workflow.workflowId,
      seq: last + i + 1,
      at: event.at,
      namespaceId: workflow.namespaceId,
      type: event.type,
      refName: event.refName ?? null,
      taskId: event.taskId ?? null,
      status: event.status ?? null,
      data: json(event.data ?? {}),
    })),
  );
}

/** How an evaluation ended its workflow: the terminal columns its finish writes. */
export interface WorkflowEnding {
  status: WorkflowEndStatus;
  /** The output kept in the row (`{}` when it went to the blob store), and its blob reference. */
  output: unknown;
  outputRef: string | null;
  reasonForIncompletion: string | null;
  failedTaskRef: string | null;
}

/** An event of a finish. */
export type FinishEvent = Omit<NewWorkflowEventInput, "at"> & {
  /**
   * It names a task inserted by the statement sent just before the finish
   * (`before`), whose answer the caller has not seen: kept only if that insert
   * made the row (insertAndEnqueueTasksStatement leaves the ids it made in a
   * transaction-local setting). An insert absorbed by an existing identity
   * (invariant 5) makes none, and that row's own evaluation wrote its event.
   */
  ifInserted?: boolean;
};

/** One evaluated workflow's last writes: {@link finishEvaluations}. */
export interface EvaluationFinish {
  /** The row the evaluation locked in the transaction. */
  locked: { id: string; namespaceId: string };
  /** Ended tasks it reacted to (decide's markSeen): stamped seen (invariant 4's watermark). */
  seenTaskIds: readonly string[];
  /** Appended in order, numbered on from the history's max "seq". */
  events: readonly FinishEvent[];
  at: Date;
  /** The workflow ended in this evaluation: written with the version bump ("endedAt" is `at`), and its open inbox rows canceled. */
  ending?: WorkflowEnding;
}

/**
 * The evaluations' last writes, for every workflow an evaluation transaction
 * holds, in one round trip: the SQL function "nf_finish_evaluations"
 * (migrations 0017, 0019 and 0020: the bumps and the events one statement each for
 * the whole batch) stamps each workflow's seen tasks, bumps its execution's
 * optimistic-concurrency "version" (every committed evaluation does), and
 * appends its events numbered on from its history's max "seq" as
 * {@link appendWorkflowEvents} does — under the same precondition, met by
 * construction: every `locked` is a row the evaluation locked in `trx` —, and
 * for a workflow the evaluation ended writes its terminal columns in the same
 * UPDATE as the bump and cancels its open HumanTasks (PENDING, CLAIMED). One
 * round trip for a transaction of eight workflows, where there was one per
 * workflow (and four each before that: mark, bump, max, insert). The events go
 * in as JSON, through json() (invariant 9).
 *
 * Marking seen last is safe because nothing an evaluation does after decide's
 * markSeen reads or writes those rows' watermark: they are ended, and only the
 * next evaluation looks for unseen ones.
 *
 * With `commit`, the transaction's COMMIT travels in the same round trip
 * (db/pipeline.ts), and a failure of either rejects this call: the caller's
 * last statement, with nothing after it but Kysely's own COMMIT, which is then
 * answered without another. With `before`, that statement (the evaluations'
 * tasks' insert) leads the round trip; the events marked `ifInserted` are
 * then kept only for the rows it really inserted (migration 0020), and the
 * events left are numbered with no gap.
 */
export async function finishEvaluations(
  trx: Transaction<Database>,
  finishes: readonly EvaluationFinish[],
  options: { commit?: boolean; before?: RawBuilder<unknown> } = {},
): Promise<void> {
  if (finishes.length === 0) return;
  const batch = finishes.map(({ locked, seenTaskIds, events, at, ending }) => ({
    w: locked.id,
    ns: locked.namespaceId,
    at: at.toISOString(),
    seen: seenTaskIds,
    ...(ending
      ? { status: ending.status, output: ending.output, outputRef: ending.outputRef, reason: ending.reasonForIncompletion, failedTaskRef: ending.failedTaskRef }
      : {}),
    events: events.map((event, i) => ({
      i: i + 1,
      type: event.type,
      refName: event.refName ?? null,
      taskId: event.taskId ?? null,
      status: event.status ?? null,
      data: event.data ?? {},
      ...(event.ifInserted ? { ifInserted: true } : {}),
    })),
  }));
  const finish = sql`SELECT "nf_finish_evaluations"(${json(batch)}::jsonb)`;
  const [lead, ...rest] = [...(options.before ? [options.before] : []), finish, ...(options.commit ? [sql`COMMIT`] : [])];
  if (rest.length === 0) await finish.execute(trx);
  else await executeTogether(trx, lead!, ...rest);
}

export interface ReadWorkflowEventsOptions {
  /** Events with seq greater than this; 0 (the default) reads from the start. An SSE resume passes Last-Event-ID. */
  afterSeq?: number;
  /** Page size, 1 to 1000. */
  limit: number;
}

/**
 * A page of a workflow's history in seq order. Keyset on "seq", never OFFSET:
 * the stream keeps growing while it is read. Pass the last row's seq as
 * `afterSeq` for the next page; a page shorter than `limit` is the end (for now).
 */
export async function readWorkflowEvents(
  db: Executor,
  workflowId: string,
  options: ReadWorkflowEventsOptions,
): Promise<WorkflowEventRow[]> {
  const { afterSeq = 0, limit } = options;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${limit}`);
  }
  if (!Number.isInteger(afterSeq) || afterSeq < 0) {
    throw new RangeError(`afterSeq must be a non-negative integer, got ${afterSeq}`);
  }
  return db
    .selectFrom("WorkflowEvents")
    .selectAll()
    .where("workflowId", "=", workflowId)
    .where("seq", ">", afterSeq)
    .orderBy("seq")
    .limit(limit)
    .execute();
}
