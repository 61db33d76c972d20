import { sql } from "kysely";
import type { Transaction } from "kysely";
import type { Db } from "../../db/pool";
import type { Database, TaskExecutionRow, TaskStatus } from "../../db/schema";
import type { BlobStore } from "../lib/blob-store";
import { offloadIfLarge } from "../lib/payload-offload";
import { json } from "../../db/json";
import { executeTogether } from "../../db/pipeline";
import { TASK_COLUMNS_WITHOUT_PAYLOADS, TaskReportRefusedError, completeTaskFromWorker, findAppliedReport, reportRefusal } from "../store/task-executions";
import type { TaskWithoutPayloads, WorkerFinalStatus } from "../store/task-executions";
import { leasedByReport, leasedQueueColumns, toLeasedTask } from "../store/task-queues";
import type { LeasedTask, LeasedTaskRow } from "../store/task-queues";
import { wakeDeciders, wakeWithReport } from "../evaluator/decide-wake";
import { leaseGatedTasks } from "./task-gates";

/**
 * The one path a task's final result takes, from a remote worker (REST,
 * Conductor's API) or the in-process system-task runner:
 *
 * 1. the output must be a JSON object — anything else is refused with a reason
 *    (the REST layer maps "invalid_output" to 400);
 * 2. an output over 256 KB goes to the blob store BEFORE the transaction that
 *    references it (invariant 8): the row keeps {} and "outputRef";
 * 3. one transaction ends the task (compare-and-set from IN_PROGRESS, held by
 *    `workerId` when given), deletes its queue row, enqueues a decide, and runs
 *    the caller's `inTransaction` writes (an EVENT's outbox row) — all or none.
 *    Without `inTransaction` that transaction is one statement, the SQL
 *    function "nf_report_task" (migration 0014): one round trip;
 * 4. with `next`, the same statement then leases up to `next.count` more tasks
 *    of the finished task's queue to the same worker: a busy worker's poll
 *    rides on its report, one HTTP request and one round trip where there were
 *    two requests and eight round trips. A queue with gates is leased through
 *    them as a poll would, in a transaction of its own after the completion.
 *
 * A report sent again after its answer was lost gets the first attempt's
 * answer, leased tasks included, rather than a refusal (replayedReport below):
 * every lease that rides on a report records the reported task in the queue
 * row's "leaseReport".
 *
 * A refused report (not found, not held, already ended) rolled back, so its
 * blob is referenced by nothing and is deleted here. A NUL in the output is
 * stripped by json() (invariant 9), never a failure.
 */

export interface ReportTaskResultDeps {
  db: Db;
  blobs: BlobStore;
}

export interface ReportTaskResultInput {
  namespaceId: string;
  workflowId: string;
  taskId: string;
  status: WorkerFinalStatus;
  /** A JSON object; absent (undefined or null) is {}. */
  output?: unknown;
  reason?: string | null;
  /** When given, the task must be held by this worker (its lease owner). */
  workerId?: string;
  now?: Date;
  /** Lease more tasks of the same queue to `workerId` in the report's transaction (see the module comment). */
  next?: { count: number; leaseSeconds: number };
  /** Writes that must commit with the completion and roll back with it; run after the task ended. */
  inTransaction?: (trx: Transaction<Database>, task: TaskExecutionRow) => Promise<void>;
}

export type ReportRefusal = "not_found" | "not_in_progress" | "not_held" | "invalid_output";

export type ReportTaskResultOutcome =
  | {
      ok: true;
      /** The task as it ended. Its input and output are not part of the answer: the usual path leaves them out (reportedTaskColumns), and the caller sent the output. */
      task: TaskWithoutPayloads;
      /** Set when the output went to the blob store. */
      outputRef: string | null;
      /** What `next` leased; [] without it. */
      leased: LeasedTask[];
    }
  | { ok: false; error: ReportRefusal; message: string; status?: TaskStatus };

/** Reports a task's final result; see the module comment. Resolves with a refusal rather than throwing one. */
export async function reportTaskResult(deps: ReportTaskResultDeps, input: ReportTaskResultInput): Promise<ReportTaskResultOutcome> {
  // The blob must be durable before the transaction that references it even
  // begins; inside a caller's transaction that order cannot be kept.
  if (deps.db.isTransaction) throw new Error("reportTaskResult opens its own transaction: call it with the pool, not a transaction");

  const checked = checkOutput(input.output);
  if (!checked.ok) return { ok: false, error: "invalid_output", message: checked.message };

  const offloaded = await offloadIfLarge(deps.blobs, checked.value);
  const outputRef = "ref" in offloaded ? offloaded.ref : null;
  // Whether the transaction got as far as COMMIT: an error before it means a
  // rollback (the blob is ours to delete); an error from COMMIT itself leaves
  // the outcome unknown, and a blob a committed row points at must never be
  // deleted — leaking it is the right failure (payload-offload.ts).
  let reachedCommit = false;
  const completion = {
    namespaceId: input.namespaceId,
    workflowId: input.workflowId,
    taskId: input.taskId,
    status: input.status,
    output: outputRef === null ? checked.value : {},
    outputRef,
    reason: input.reason ?? null,
    workerId: input.workerId,
    now: input.now,
  };
  try {
    if (!input.inTransaction) {
      // One statement that commits on its own: a refusal rolled it back, but
      // after any other error (a lost connection) the outcome is unknown.
      reachedCommit = true;
      const reported = await reportInOneStatement(deps.db, { ...completion, next: input.workerId === undefined ? undefined : input.next });
      return { ok: true, task: reported.task, outputRef, leased: reported.leased };
    }
    const reported = await deps.db.transaction().execute(async (trx) => {
      const result = await completeTaskFromWorker(trx, completion);
      // In a transaction a refusal is thrown; this narrows the type.
      if (!result.ok) throw new TaskReportRefusedError(result);
      await input.inTransaction?.(trx, result.task);
      const queueName = result.task.queueName;
      const leased =
        input.next && input.workerId !== undefined && queueName !== null
          ? (await leaseGatedTasks(trx, { namespaceId: input.namespaceId, queueName, ...input.next, owner: input.workerId, report: input.taskId }))
              .leased
          : [];
      reachedCommit = true;
      return { task: result.task, leased };
    });
    return { ok: true, task: reported.task, outputRef, leased: reported.leased };
  } catch (error) {
    const refusal = error instanceof TaskReportRefusedError ? error.result : undefined;
    if (outputRef !== null && (refusal !== undefined || !reachedCommit)) await deps.blobs.delete(outputRef).catch(() => undefined);
    if (refusal === undefined) throw error;
    if (refusal.error === "not_in_progress" && input.workerId !== undefined) {
      const replayed = await replayedReport(deps.db, { ...completion, workerId: input.workerId });
      if (replayed) return { ok: true, ...replayed };
    }
    return refused(refusal);
  }

  function refused({ error: code, status }: { error: "not_found" | "not_in_progress" | "not_held"; status?: TaskStatus }): ReportTaskResultOutcome {
    return { ok: false, error: code, status, message: refusalMessage(code, status) };
  }
}

/**
 * "nf_report_task"'s rows as the lease functions' (leasedTaskColumns), except
 * that the ended task's row — the one without a queue row — comes without its
 * input and output: Postgres sent back the output the worker had just sent and
 * the task's input, each up to 256 KB inline, for this process to parse and
 * drop on every report.
 */
const reportedTaskColumns = sql`${sql.raw(TASK_COLUMNS_WITHOUT_PAYLOADS.map((c) => `(("l")."task")."${c}"`).join(", "))},
  CASE WHEN ("l")."queue" IS NULL THEN NULL ELSE (("l")."task")."input" END AS "input",
  CASE WHEN ("l")."queue" IS NULL THEN NULL ELSE (("l")."task")."output" END AS "output",
  ${leasedQueueColumns}`;

/**
 * The report as one call of "nf_report_task" (migration 0014): the completion,
 * then — with `next` — the next lease of the same queue, one round trip where
 * a transaction of the two took six. A queue with gates (rate limit,
 * concurrency limit, semaphore) is not leased there: its lease takes the gates'
 * lock and accounting (task-gates.ts), so it follows in a transaction of its
 * own, after the completion committed.
 */
async function reportInOneStatement(
  db: Db,
  input: Parameters<typeof completeTaskFromWorker>[1] & { next?: { count: number; leaseSeconds: number } },
): Promise<{ task: TaskWithoutPayloads; leased: LeasedTask[] }> {
  const next = input.next;
  const report = sql<LeasedTaskRow & { gated: boolean | null }>`
      SELECT ${reportedTaskColumns}, "l"."gated"
      FROM "nf_report_task"(${input.namespaceId}::uuid, ${input.workflowId}::uuid, ${input.taskId}::uuid,
        ${input.status}, ${json(input.output ?? {})}::jsonb, ${input.outputRef ?? null}, ${input.reason ?? null},
        ${input.workerId ?? null}, ${input.now ?? null}::timestamptz, ${next?.count ?? 0}::int,
        ${next?.leaseSeconds ?? 0}::double precision) AS "l"`;
  // The deciders' wake the function leaves to its caller (migration 0014): in the report's round trip, run once
  // the report has committed, unless one is on its way already (decide-wake.ts).
  const wake = wakeWithReport(db);
  let rows: (LeasedTaskRow & { gated: boolean | null })[];
  try {
    rows = wake === undefined ? (await report.execute(db)).rows : (await executeTogether(db, report, wake.statement))[0];
  } catch (error) {
    // A refusal rolled the statement back: thrown as the transaction path throws it.
    const refusal = reportRefusal(error);
    throw refusal === undefined ? error : new TaskReportRefusedError(refusal);
  } finally {
    wake?.answered();
  }
  if (wake === undefined) wakeDeciders(db);
  const [ended, ...leasedRows] = rows;
  const { gated, ...endedRow } = ended!;
  // The ended task's row has no queue ("queue" NULL) and no payloads (reportedTaskColumns): only its task half is wanted.
  const { input: _input, output: _output, ...task } = toLeasedTask(endedRow).task;
  let leased = leasedRows.map(({ gated: _gated, ...row }) => toLeasedTask(row));
  if (next && gated && input.workerId !== undefined && task.queueName !== null) {
    // The completion has committed: a lease that fails now must not turn the
    // report into an error the worker would retry into a refusal. It gets no
    // task, and its next poll meets the same failure with its own error.
    leased = await leaseGatedTasks(db, {
      namespaceId: input.namespaceId,
      queueName: task.queueName,
      count: next.count,
      leaseSeconds: next.leaseSeconds,
      owner: input.workerId,
      report: input.taskId,
    }).then(
      (result) => result.leased,
      () => [],
    );
  }
  return { task, leased };
}

/**
 * A report sent again after its first answer was lost (the worker's HTTP
 * client retries on a network error or a 502): the first attempt ended the
 * task, so this one is refused as "not_in_progress" — but when the task ended
 * exactly as this report says (findAppliedReport), the retry gets the first
 * answer instead: the task as it ended, and the tasks that report's `next`
 * leased, found by "leaseReport" (migration 0015). Without this a lost answer
 * left those tasks leased to a worker that never heard of them until their
 * leases expired. The retry's own blob, if any, was deleted with the refusal:
 * the row keeps the first attempt's.
 */
async function replayedReport(
  db: Db,
  input: Parameters<typeof findAppliedReport>[1],
): Promise<{ task: TaskExecutionRow; outputRef: string | null; leased: LeasedTask[] } | undefined> {
  const task = await findAppliedReport(db, input);
  if (task === undefined) return undefined;
  const leased =
    task.queueName === null
      ? []
      : await leasedByReport(db, { namespaceId: input.namespaceId, queueName: task.queueName, report: task.id, owner: input.workerId });
  return { task, outputRef: task.outputRef, leased };
}

function refusalMessage(code: "not_found" | "not_in_progress" | "not_held", status: TaskStatus | undefined): string {
  switch (code) {
    case "not_found":
      return "no such task in this namespace";
    case "not_in_progress":
      return `the task is not in progress (it is ${status ?? "unknown"}): it was already reported, cancelled, timed out or never started`;
    case "not_held":
      return "this worker does not hold the task (it never leased it, or its lease expired and the task was handed on)";
  }
}

/** An output a row can hold: a plain JSON object (absent → {}), serialisable (no cycle, no BigInt). */
function checkOutput(output: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  if (output === undefined || output === null) return { ok: true, value: {} };
  if (typeof output !== "object" || Array.isArray(output)) {
    return { ok: false, message: `the output must be a JSON object, got ${Array.isArray(output) ? "an array" : typeof output}` };
  }
  const proto = Object.getPrototypeOf(output) as unknown;
  if (proto !== Object.prototype && proto !== null) return { ok: false, message: "the output must be a plain JSON object" };
  try {
    JSON.stringify(output);
  } catch (error) {
    return { ok: false, message: `the output is not JSON: ${(error as Error).message.split("\n", 1)[0]}` };
  }
  return { ok: true, value: output as Record<string, unknown> };
}
