import type { TaskExecutionRow } from "../../db/schema";
import type { Db } from "../../db/pool";
import type { Notifier } from "../lib/notifier";
import type { BlobStore } from "../lib/blob-store";
import { resolvePayload } from "../lib/payload-offload";
import { reportTaskResult } from "../tasks/report-task-result";
import type { ReportTaskResultOutcome } from "../tasks/report-task-result";
import { completeTaskFromWorker } from "../store/task-executions";
import type { CompleteTaskFromWorkerResult, WorkerFinalStatus } from "../store/task-executions";
import { pollTasks } from "../tasks/task-poller";

/**
 * A worker for integration tests: the in-process stand-in for a remote worker
 * until the REST worker API and SDK exist. It does what a real one does —
 * long-polls one queue, runs a handler, reports the result as the lease holder
 * — through the same repository calls the API will make, so a test drives the
 * real decider loop in the sidecar process and nothing is simulated.
 */

/** What a handler decides for one task. */
export interface TaskResult {
  status: WorkerFinalStatus;
  output?: unknown;
  reason?: string;
}

/** Runs one leased task. A throw is reported as FAILED with the error's message, as an SDK would. */
export type TaskHandler = (task: TaskExecutionRow) => TaskResult | Promise<TaskResult>;

export interface InTestWorkerOptions {
  /** Its own pool is best: a parked poll holds no connection, but a burst of leases and reports can take `concurrency` at once. */
  db: Db;
  /** A started (or not) Notifier, or null to poll with notifications off entirely. */
  notifier: Notifier | null;
  namespaceId: string;
  queueName: string;
  handler: TaskHandler;
  /** Tasks held at once; each slot polls for one. Default 4. */
  concurrency?: number;
  /** The lease owner; reports must come from it. Default "in-test-worker". */
  workerId?: string;
  /** Default 30. */
  leaseSeconds?: number;
  /** How long one poll parks. Default 2000. */
  pollTimeoutMs?: number;
  /** A parked poll's re-check interval without a notification. Default 200, to keep notifier-off tests quick. */
  recheckIntervalMs?: number;
  /**
   * The blob store the sidecar uses. With it the worker behaves like the real
   * worker API: an offloaded task input is resolved before the handler sees
   * it, and results go through reportTaskResult (an output over 256 KB is
   * offloaded). Without it, results are reported with completeTaskFromWorker.
   */
  blobs?: BlobStore;
}

/** A report the store refused, kept for the test to assert on (a correct run has none). */
export interface RefusedReport {
  task: TaskExecutionRow;
  result: Extract<CompleteTaskFromWorkerResult, { ok: false }> | Extract<ReportTaskResultOutcome, { ok: false }>;
}

export interface InTestWorker {
  /** Tasks reported and accepted. */
  readonly completed: number;
  readonly refused: readonly RefusedReport[];
  /** Poll or report errors (a database error, not a refusal); the slot retries after each. */
  readonly errors: readonly unknown[];
  /** Stops polling, lets every slot finish (and report) the task in hand, and resolves when all have. */
  stop(): Promise<void>;
}

/** Starts `concurrency` slots polling `queueName`; call `stop()` before the pool closes. */
export function startInTestWorker(options: InTestWorkerOptions): InTestWorker {
  const {
    db,
    notifier,
    namespaceId,
    queueName,
    handler,
    concurrency = 4,
    workerId = "in-test-worker",
    leaseSeconds = 30,
    pollTimeoutMs = 2_000,
    recheckIntervalMs = 200,
  } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);

  const stopping = new AbortController();
  const refused: RefusedReport[] = [];
  const errors: unknown[] = [];
  let completed = 0;

  async function runTask(task: TaskExecutionRow): Promise<void> {
    let result: TaskResult;
    try {
      const resolved = options.blobs && task.inputRef !== null ? { ...task, input: await resolvePayload(options.blobs, { inline: task.input, ref: task.inputRef }, "the task input") } : task;
      result = await handler(resolved);
    } catch (error) {
      result = { status: "FAILED", reason: error instanceof Error ? error.message : String(error) };
    }
    const report = {
      namespaceId,
      workflowId: task.workflowId,
      taskId: task.id,
      status: result.status,
      output: result.output ?? {},
      reason: result.reason ?? null,
      workerId,
    };
    const outcome = options.blobs ? await reportTaskResult({ db, blobs: options.blobs }, report) : await completeTaskFromWorker(db, report);
    if (outcome.ok) completed++;
    else refused.push({ task, result: outcome });
  }

  async function slot(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        // An abort mid-lease gives the tasks back (pollTasks) and resolves [].
        const leased = await pollTasks(
          { db, notifier },
          { namespaceId, queueName, count: 1, timeoutMs: pollTimeoutMs, workerId, leaseSeconds, recheckIntervalMs, signal: stopping.signal },
        );
        // Not abortable from here on: a task in hand is finished and reported.
        for (const { task } of leased) await runTask(task);
      } catch (error) {
        errors.push(error);
        if (!stopping.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  const slots = Array.from({ length: concurrency }, () => slot());
  return {
    get completed() {
      return completed;
    },
    refused,
    errors,
    async stop() {
      stopping.abort();
      await Promise.all(slots);
    },
  };
}
