import type { Db } from "../../db/pool";
import type { TaskExecutionRow } from "../../db/schema";
import type { ScriptEvaluator } from "../../engine/expressions";
import type { RunnerLogger } from "../sidecar/background-runner";
import type { BlobStore } from "../lib/blob-store";
import { resolvePayload } from "../lib/payload-offload";
import { reportTaskResult } from "../tasks/report-task-result";
import type { JqTransform } from "../sandbox/jq-transform";
import { leaseSystemTasks } from "../store/system-task-queues";
import { SYSTEM_TASK_TYPES } from "../store/task-queues";
import { runEventTask } from "./event-task";
import { HTTP_TASK_DEFAULTS, runHttpTask } from "./http-task";
import type { HttpTaskOptions } from "./http-task";
import { runInlineTask } from "./inline-task";
import { runJqTask } from "./jq-task";
import { failed, failedTerminally } from "./system-task-outcome";
import type { SystemTaskOutcome } from "./system-task-outcome";

/**
 * The in-process system-task runner: one batch of HTTP, INLINE,
 * JSON_JQ_TRANSFORM and EVENT tasks, leased across every namespace, run
 * concurrently (bounded), each result reported through reportTaskResult —
 * the path remote workers' results take too, so offloading, the
 * compare-and-set and the decide enqueue are the same for both.
 *
 * At least once: a runner that dies mid-batch leaves its leases to expire, and
 * the lease sweeper requeues the tasks for another pass. An HTTP call may
 * therefore be repeated; an EVENT's outbox row cannot be duplicated by it, as
 * it commits only with the completion, and a second completion is refused.
 */

export interface SystemTaskRunnerDeps {
  db: Db;
  blobs: BlobStore;
  /** The QuickJS sandbox (server/sandbox/quickjs-script-evaluator.ts). */
  scripts: ScriptEvaluator;
  jq: JqTransform;
  http: HttpTaskOptions;
  logger?: RunnerLogger;
  /** The clock for leases and reports; the database's now() when absent. */
  now?: () => Date;
}

export interface RunSystemTaskBatchOptions {
  /** Tasks to lease at most. */
  limit: number;
  /** This runner's identity, e.g. `system:<host>:<pid>`: recorded as lease owner and workerId. */
  owner: string;
  /** Tasks in flight at once. Default 8. INLINE scripts run one at a time whatever this is (the sandbox is synchronous). */
  concurrency?: number;
  /** Default: the HTTP cap plus a minute, so no call outlives its lease and is handed on while still running. */
  leaseSeconds?: number;
  /** Per-script budget for INLINE; the sandbox's default when absent. */
  inlineTimeoutMs?: number;
  /** Per-filter budget for JSON_JQ_TRANSFORM; jq-transform's default when absent. */
  jqTimeoutMs?: number;
}

/**
 * Leases up to `limit` system tasks, runs them and reports each result.
 * Returns how many were leased (BackgroundRunner's full-batch signal). A task
 * whose executor throws is reported FAILED with the error as its reason; a
 * report that is refused (the task was cancelled or timed out meanwhile) is
 * logged and dropped; a report that throws (the database is gone) leaves the
 * lease to expire, and after the whole batch has run the first such error is
 * rethrown so the runner counts the pass as failed.
 */
export async function runSystemTaskBatch(deps: SystemTaskRunnerDeps, options: RunSystemTaskBatchOptions): Promise<number> {
  const leaseSeconds = options.leaseSeconds ?? Math.ceil((deps.http.maxDurationMs ?? HTTP_TASK_DEFAULTS.maxDurationMs) / 1000) + 60;
  const leased = await leaseSystemTasks(deps.db, {
    queueNames: SYSTEM_TASK_TYPES,
    count: options.limit,
    leaseSeconds,
    owner: options.owner,
    now: deps.now?.(),
  });
  if (leased.length === 0) return 0;

  const reportErrors: unknown[] = [];
  await runLimited(
    leased.map(({ task }) => async () => {
      const outcome = await executeSystemTask(task, deps, options);
      try {
        const report = await reportTaskResult(
          { db: deps.db, blobs: deps.blobs },
          {
            namespaceId: task.namespaceId,
            workflowId: task.workflowId,
            taskId: task.id,
            status: outcome.status,
            output: outcome.output,
            reason: outcome.reason ?? null,
            workerId: options.owner,
            now: deps.now?.(),
            inTransaction: outcome.inTransaction,
          },
        );
        if (report.ok) {
          deps.logger?.debug({ taskId: task.id, taskType: task.taskType, status: outcome.status, reason: outcome.reason }, "system task reported");
        } else {
          deps.logger?.info({ taskId: task.id, taskType: task.taskType, refused: report.error, message: report.message }, "system task result refused");
        }
      } catch (error) {
        reportErrors.push(error);
        deps.logger?.error({ taskId: task.id, taskType: task.taskType, err: error }, "reporting a system task failed; its lease will expire and it will run again");
      }
    }),
    Math.max(1, options.concurrency ?? 8),
  );
  if (reportErrors.length > 0) throw reportErrors[0];
  return leased.length;
}

/** Runs one leased task to an outcome. Never throws: an unexpected error becomes a FAILED outcome. */
export async function executeSystemTask(
  task: TaskExecutionRow,
  deps: SystemTaskRunnerDeps,
  options: Pick<RunSystemTaskBatchOptions, "inlineTimeoutMs" | "jqTimeoutMs"> = {},
): Promise<SystemTaskOutcome> {
  try {
    const resolved = task.inputRef === null ? task.input : await resolvePayload(deps.blobs, { inline: task.input, ref: task.inputRef }, `the input of "${task.refName}"`);
    const input = resolved !== null && typeof resolved === "object" && !Array.isArray(resolved) ? (resolved as Record<string, unknown>) : {};
    switch (task.taskType) {
      case "HTTP":
        return await runHttpTask(input, deps.http);
      case "INLINE":
        return runInlineTask(input, deps.scripts, { timeoutMs: options.inlineTimeoutMs });
      case "JSON_JQ_TRANSFORM":
        return await runJqTask(input, deps.jq, { timeoutMs: options.jqTimeoutMs });
      case "EVENT":
        return await runEventTask(
          { namespaceId: task.namespaceId, workflowId: task.workflowId, refName: task.refName, input },
          { db: deps.db, allowPrivateNetworks: deps.http.allowPrivateNetworks },
        );
      default:
        return failedTerminally(`no system executor for task type ${task.taskType}`);
    }
  } catch (error) {
    deps.logger?.error({ taskId: task.id, taskType: task.taskType, err: error }, "system task threw");
    return failed(`${task.taskType} task failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Runs every job, at most `limit` at a time. Jobs do not reject (they catch their own errors). */
async function runLimited(jobs: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
}
