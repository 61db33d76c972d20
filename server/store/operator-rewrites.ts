import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database, TaskExecutionRow, TaskStatus } from "../../db/schema";

/**
 * Statements only the workflow lifecycle and operator actions run: they read
 * or rewrite a workflow's task history as a whole, which no evaluation may do
 * (invariant 6 bounds an evaluation by in-flight work; an operator action is
 * rare and may pay O(tasks of one workflow)). Every statement carries
 * "workflowId", so "TaskExecutions" (HASH-partitioned on it) prunes to one
 * partition. Callers hold the workflow's row lock.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * Deletes the workflow's pending evaluation, unless a decider holds it. SKIP
 * LOCKED, because the holder is a decider that has claimed (deleted, not yet
 * committed) the row and now waits for the workflow lock this caller holds:
 * waiting for it would deadlock. Skipped, that decider gets the lock after our
 * commit, finds the workflow ended and drops its claim itself.
 */
export async function dropPendingDecide(db: Executor, workflowId: string): Promise<boolean> {
  const { rows } = await sql<{ workflowId: string }>`
    DELETE FROM "DecideQueues"
    WHERE "workflowId" IN (
      SELECT "workflowId" FROM "DecideQueues" WHERE "workflowId" = ${workflowId}::uuid FOR UPDATE SKIP LOCKED
    )
    RETURNING "workflowId"`.execute(db);
  return rows.length > 0;
}

/**
 * Each ref's latest row — (iteration DESC, attempt DESC), the row decide
 * reads — for every ref of the workflow, dynamic-fork instances included.
 * DISTINCT ON walks "TaskExecutions_identity_idx" in its order, so this is one
 * index scan of the workflow's history.
 */
export async function latestTaskRowPerRef(db: Executor, workflowId: string): Promise<TaskExecutionRow[]> {
  const { rows } = await sql<TaskExecutionRow>`
    SELECT DISTINCT ON ("refName") * FROM "TaskExecutions"
    WHERE "workflowId" = ${workflowId}::uuid
    ORDER BY "refName", "iteration" DESC, "attempt" DESC`.execute(db);
  return rows;
}

/** What was removed, for the WorkflowEvents record of a rerun or restart. */
export interface DeletedTaskRow {
  id: string;
  refName: string;
  iteration: number;
  attempt: number;
  status: TaskStatus;
  queueName: string | null;
}

/**
 * Deletes every row (all iterations and attempts) of `refs`, or of the whole
 * workflow when `refs` is "all", and returns what went. All rows and not only
 * the latest: decide reads a ref's latest row, so deleting only that one would
 * promote an older attempt or iteration to "latest".
 */
export async function deleteTaskRows(db: Executor, workflowId: string, refs: readonly string[] | "all"): Promise<DeletedTaskRow[]> {
  if (refs !== "all" && refs.length === 0) return [];
  let query = db.deleteFrom("TaskExecutions").where("workflowId", "=", workflowId);
  if (refs !== "all") query = query.where("refName", "in", [...refs]);
  const rows = await query.returning(["id", "refName", "iteration", "attempt", "status", "queueName"]).execute();
  return rows.sort((a, b) => a.refName.localeCompare(b.refName) || a.iteration - b.iteration || a.attempt - b.attempt);
}

/**
 * How many instances of a dynamic fork count as done for its `completed`
 * counter (engine/decide/types.ts, AggregateForkOutputCommand): instance rows
 * at the fork's iteration that reached COMPLETED / COMPLETED_WITH_ERRORS /
 * SKIPPED *and were marked seen*. An unseen successful instance is left out on
 * purpose: the next evaluation reacts to it and adds it itself, so counting it
 * here too would count it twice. At most one attempt of an instance succeeds
 * (only failures are retried), so rows are instances.
 */
export async function countSeenSuccessfulForkInstances(
  db: Executor,
  input: { workflowId: string; forkRef: string; iteration: number; total: number },
): Promise<number> {
  if (input.total <= 0) return 0;
  const { rows } = await sql<{ done: number }>`
    SELECT count(*)::int AS "done"
    FROM generate_series(0, ${input.total}::int - 1) AS "g"("k")
    JOIN "TaskExecutions" AS "t"
      ON "t"."workflowId" = ${input.workflowId}::uuid AND "t"."refName" = ${input.forkRef} || '#' || "g"."k"
     AND "t"."iteration" = ${input.iteration}
     AND "t"."status" IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'SKIPPED')
     AND "t"."deciderSeenAt" IS NOT NULL`.execute(db);
  return rows[0]?.done ?? 0;
}

/**
 * Clears the decider's watermark on terminal rows (invariant 4): the next
 * evaluation finds them in "TaskExecutions_pending_idx" and reacts to them
 * again, exactly as to a fresh completion. Returns the ids cleared.
 */
export async function markUnseen(db: Executor, workflowId: string, taskIds: readonly string[], now: Date): Promise<string[]> {
  if (taskIds.length === 0) return [];
  const rows = await db
    .updateTable("TaskExecutions")
    .set({ deciderSeenAt: null, updatedAt: now })
    .where("workflowId", "=", workflowId)
    .where("id", "in", [...taskIds])
    .where("endedAt", "is not", null)
    .returning("id")
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Cancels one task if it has not ended: CANCELED, seen (nothing for the
 * decider to react to: the workflow is ending), with `reason`. The compare is
 * "any non-terminal status" rather than the status the caller read, because a
 * lease can move a task SCHEDULED → IN_PROGRESS between that read and this
 * update (leases do not take the workflow lock); a worker's report racing it
 * is waited for and wins, and then this matches nothing. Delete the task's
 * queue row first (lock order: queue row, then task row; task-queues.ts).
 * Returns the canceled row, or undefined when it had ended.
 */
export async function cancelTaskIfOpen(
  db: Executor,
  input: { workflowId: string; taskId: string; reason: string; now: Date },
): Promise<TaskExecutionRow | undefined> {
  const { rows } = await sql<TaskExecutionRow>`
    UPDATE "TaskExecutions"
    SET "status" = 'CANCELED', "reasonForIncompletion" = ${input.reason},
        "endedAt" = ${input.now}, "updatedAt" = ${input.now}, "deciderSeenAt" = ${input.now}
    WHERE "workflowId" = ${input.workflowId}::uuid AND "id" = ${input.taskId}::uuid
      AND "status" NOT IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED', 'FAILED_WITH_TERMINAL_ERROR',
                           'TIMED_OUT', 'CANCELED', 'SKIPPED')
    RETURNING *`.execute(db);
  return rows[0];
}

/** One task row of a workflow by id (the partition key first, so one partition is probed). */
export async function getTaskRow(db: Executor, workflowId: string, taskId: string): Promise<TaskExecutionRow | undefined> {
  return db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", workflowId).where("id", "=", taskId).executeTakeFirst();
}
