import type { Db } from "../../db/pool";
import type { TaskExecutionRow } from "../../db/schema";
import type { ScriptEvaluator } from "../../engine/expressions";
import type { RunnerLogger } from "../sidecar/background-runner";
import type { BlobStore } from "../lib/blob-store";
import { resolvePayload } from "../lib/payload-offload";
import type { SecretLookup } from "../lib/secret-lookup";
import { dispatchInput, DispatchReferenceError } from "../secrets/dispatch-input";
import { redactSecrets, redactText } from "../secrets/redact";
import { reportTaskResult } from "../tasks/report-task-result";
import type { JqTransform } from "../sandbox/jq-transform";
import { leaseSystemTasks } from "../store/system-task-queues";
import { SYSTEM_TASK_TYPES } from "../store/task-queues";
import { recordTaskProgress } from "../store/conductor-queries";
import { defer } from "../store/task-queues";
import { offloadIfLarge } from "../lib/payload-offload";
import { isLlmNodeType } from "../../engine/definition/llm-schema";
import { runLlmTask } from "../ai/llm-tasks";
import { isMcpNodeType, runMcpTask } from "../ai/mcp-tasks";
import { runEventTask } from "./event-task";
import { runHttpPollTask } from "./http-poll-task";
import { HTTP_TASK_DEFAULTS, runHttpTask } from "./http-task";
import { runJdbcTask } from "./jdbc-task";
import type { HttpTaskOptions } from "./http-task";
import { runInlineTask } from "./inline-task";
import { runJqTask } from "./jq-task";
import { failed, failedTerminally } from "./system-task-outcome";
import type { SystemTaskOutcome } from "./system-task-outcome";

/**
 * The in-process system-task runner: one batch of HTTP, HTTP_POLL, JDBC,
 * INLINE, JSON_JQ_TRANSFORM and EVENT tasks, leased across every namespace, run
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
  /** Namespace secrets' values, for `${workflow.secrets.NAME}` in HTTP, INLINE and JQ input; without it such a task fails saying so. */
  secrets?: SecretLookup;
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
        if (outcome.status === "IN_PROGRESS") {
          await postpone(deps, task, outcome, options.owner);
          return;
        }
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

/**
 * Runs one leased task to an outcome. Never throws: an unexpected error
 * becomes a FAILED outcome. The input it runs with has the task's secrets and
 * variables resolved (dispatch-input.ts); the outcome it returns, and what it
 * logs, have every secret value it was given read `***` (redact.ts).
 */
export async function executeSystemTask(
  task: TaskExecutionRow,
  deps: SystemTaskRunnerDeps,
  options: Pick<RunSystemTaskBatchOptions, "inlineTimeoutMs" | "jqTimeoutMs"> = {},
): Promise<SystemTaskOutcome> {
  let secretValues: string[] = [];
  try {
    const resolved = task.inputRef === null ? task.input : await resolvePayload(deps.blobs, { inline: task.input, ref: task.inputRef }, `the input of "${task.refName}"`);
    const stored = resolved !== null && typeof resolved === "object" && !Array.isArray(resolved) ? (resolved as Record<string, unknown>) : {};
    let input = stored;
    // An EVENT's payload is stored (the outbox), so it is never handed values: validation refuses references there.
    if (task.taskType !== "EVENT") {
      try {
        const dispatched = await dispatchInput({ db: deps.db, secrets: deps.secrets, blobs: deps.blobs }, { id: task.id, namespaceId: task.namespaceId, workflowId: task.workflowId, refName: task.refName, input: stored }, "resolve");
        input = dispatched.input;
        secretValues = dispatched.secretValues;
      } catch (error) {
        if (error instanceof DispatchReferenceError) return failedTerminally(`${task.taskType} task: ${error.message}`);
        throw error;
      }
    }
    const outcome = await runSystemTask(task, input, deps, options);
    if (secretValues.length === 0) return outcome;
    return { ...outcome, output: redactSecrets(outcome.output, secretValues), ...(outcome.reason === undefined ? {} : { reason: redactText(outcome.reason, secretValues) }) };
  } catch (error) {
    const message = redactText(error instanceof Error ? error.message : String(error), secretValues);
    deps.logger?.error({ taskId: task.id, taskType: task.taskType, err: secretValues.length === 0 ? error : message }, "system task threw");
    return failed(`${task.taskType} task failed: ${message}`);
  }
}

async function runSystemTask(
  task: TaskExecutionRow,
  input: Record<string, unknown>,
  deps: SystemTaskRunnerDeps,
  options: Pick<RunSystemTaskBatchOptions, "inlineTimeoutMs" | "jqTimeoutMs">,
): Promise<SystemTaskOutcome> {
  switch (task.taskType) {
    case "HTTP":
      return await runHttpTask(input, deps.http);
    case "HTTP_POLL":
      return await runHttpPollTask(input, { pollCount: task.pollCount, scripts: deps.scripts, http: deps.http, scriptTimeoutMs: options.inlineTimeoutMs });
    case "JDBC":
      return await runJdbcTask(task.namespaceId, input, { secrets: deps.secrets });
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
      if (isMcpNodeType(task.taskType)) return await runMcpTask(task.taskType, input, deps.http);
      if (isLlmNodeType(task.taskType)) {
        return await runLlmTask({ namespaceId: task.namespaceId, taskType: task.taskType, pollCount: task.pollCount }, input, { db: deps.db, secrets: deps.secrets, http: deps.http });
      }
      return failedTerminally(`no system executor for task type ${task.taskType}`);
  }
}

/**
 * An IN_PROGRESS outcome (an HTTP_POLL whose condition does not hold yet):
 * the output is recorded and the task goes back on its queue, visible after
 * `callbackAfterSeconds`, in one transaction — the path a worker's
 * IN_PROGRESS TaskResult takes. The next lease counts the next poll.
 */
async function postpone(deps: SystemTaskRunnerDeps, task: TaskExecutionRow, outcome: SystemTaskOutcome, owner: string): Promise<void> {
  // Written before the transaction that references it (invariant 8).
  const offloaded = await offloadIfLarge(deps.blobs, outcome.output);
  const output = "ref" in offloaded ? { value: {}, ref: offloaded.ref } : { value: outcome.output, ref: null };
  const callbackAfterSeconds = outcome.callbackAfterSeconds ?? 0;
  const kept = await deps.db.transaction().execute(async (trx) => {
    const row = await recordTaskProgress(trx, { namespaceId: task.namespaceId, workflowId: task.workflowId, taskId: task.id, output, callbackAfterSeconds, now: deps.now?.() });
    if (row === undefined || row.queueName === null) return false;
    return await defer(trx, { namespaceId: task.namespaceId, queueName: row.queueName, taskId: task.id, owner, delaySeconds: callbackAfterSeconds, now: deps.now?.() });
  });
  if (kept) deps.logger?.debug({ taskId: task.id, taskType: task.taskType, callbackAfterSeconds }, "system task postponed");
  else deps.logger?.info({ taskId: task.id, taskType: task.taskType }, "system task ended while it ran; its progress was dropped");
}

/** Runs every job, at most `limit` at a time. Jobs do not reject (they catch their own errors). */
async function runLimited(jobs: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
}
