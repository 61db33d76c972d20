import type { TaskExecutionRow } from "../../db/schema";
import { SYSTEM_QUEUE_NAMES } from "../../engine";
import { countWorkerPoll } from "../lib/metrics";
import { offloadIfLarge, resolvePayload, resolveTaskPayloads } from "../lib/payload-offload";
import { reportTaskResult } from "../tasks/report-task-result";
import { dispatchWorkerTasks } from "../secrets/dispatch-worker-tasks";
import { sealingKeysOf, secretLookup } from "../secrets/secrets";
import { findForkTask, findRetryOf, recordTaskProgress, taskSequenceNumbers, workflowHeaders } from "../store/conductor-queries";
import { getTaskInNamespace } from "../store/task-executions";
import type { TaskWithoutPayloads } from "../store/task-executions";
import { appendTaskLogs } from "../store/task-logs";
import { defer, renewLease } from "../store/task-queues";
import { releaseTaskGates, renewTaskGates } from "../tasks/task-gates";
import { pollTasks } from "../tasks/task-poller";
import { completeExternalTask } from "../executions/actions";
import type { Actor } from "../executions/actions";
import { actionDeps } from "../rest/action-results";
import { badRequest, conflict, forbidden, notFound } from "./conductor-error";
import type { ConductorError } from "./conductor-error";
import { forkedTaskLabels, toConductorTask } from "./conductor-shapes";
import type { ConductorDeps } from "./define-conductor-route";

/**
 * Conductor's worker protocol on node-flow's queues: poll (long-poll), the
 * TaskResult update in all its forms, and the Task view. Everything goes
 * through the same functions node-flow's own REST worker API uses —
 * pollTasks (gates, NOTIFY wake-ups), reportTaskResult (blob offload, the
 * decide enqueue), the lease functions — so both protocols behave alike.
 */

/**
 * The lease of a task whose definition sets no responseTimeoutSeconds:
 * Conductor's default response timeout, so a worker that neither heartbeats
 * nor answers loses the task when Conductor's would.
 */
export const CONDUCTOR_LEASE_SECONDS = 3600;

/** Conductor refuses a longer batch-poll timeout ("Long Poll Timeout value cannot be more than 5 seconds"). */
export const MAX_CONDUCTOR_POLL_TIMEOUT_MS = 5000;

/** Conductor's worker id when a poll names none. */
export const ANONYMOUS_WORKER = "conductor-worker";

/** Tasks that something outside completes, never a worker's lease. */
const EXTERNAL_TYPES: ReadonlySet<string> = new Set(["WAIT", "HUMAN"]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

/** The queue a Conductor task type and domain name: node-flow writes a domain as "<domain>:<name>". */
export function queueNameOf(taskType: string, domain: string | undefined): string {
  return domain === undefined || domain === "" ? taskType : `${domain}:${taskType}`;
}

/** Task rows (payloads resolved) as Conductor Tasks, each with its workflow's fields, its seq and its retry. */
export async function conductorTasks(deps: ConductorDeps, namespaceId: string, rows: readonly TaskExecutionRow[], options: { lookUpRetries: boolean }): Promise<Record<string, unknown>[]> {
  if (rows.length === 0) return [];
  const resolved = await resolveTaskPayloads(deps.blobs, rows);
  const headers = await workflowHeaders(deps.db, { namespaceId, workflowIds: rows.map((r) => r.workflowId) });
  const seqs = new Map<string, number>();
  for (const workflowId of new Set(rows.map((r) => r.workflowId))) {
    const ids = rows.filter((r) => r.workflowId === workflowId).map((r) => r.id);
    for (const [id, seq] of await taskSequenceNumbers(deps.db, { workflowId, taskIds: ids })) seqs.set(id, seq);
  }
  const out: Record<string, unknown>[] = [];
  for (const row of resolved) {
    const header = headers.get(row.workflowId) ?? { defName: "", correlationId: null, priority: 0 };
    const retriedTaskId = options.lookUpRetries ? await findRetryOf(deps.db, row) : undefined;
    let instanceRef: string | undefined;
    if (row.parentRef !== null && row.forkIndex !== null) {
      const fork = await findForkTask(deps.db, { namespaceId, workflowId: row.workflowId, refName: row.parentRef, iteration: row.iteration });
      instanceRef = fork?.inputRef === null ? forkedTaskLabels(fork.input)?.[row.forkIndex] : undefined;
    }
    out.push(toConductorTask(row, header, { seq: seqs.get(row.id) ?? 0, retriedTaskId, instanceRef }));
  }
  return out;
}

export interface ConductorPollInput {
  namespaceId: string;
  taskType: string;
  domain?: string;
  workerId?: string;
  count: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Leases up to `count` tasks of a type, waiting up to `timeoutMs`. A type
 * nobody schedules — a built-in type the server runs itself included —
 * simply has an empty queue: Conductor answers such a poll with nothing, not
 * an error.
 */
export async function pollConductorTasks(deps: ConductorDeps, input: ConductorPollInput): Promise<Record<string, unknown>[]> {
  if (SYSTEM_QUEUE_NAMES.has(input.taskType)) return [];
  return leaseConductorTasks(deps, {
    namespaceId: input.namespaceId,
    queueName: queueNameOf(input.taskType, input.domain),
    count: input.count,
    timeoutMs: input.timeoutMs,
    workerId: input.workerId ?? ANONYMOUS_WORKER,
    signal: input.signal,
  });
}

/** Leases up to `count` tasks of a queue, for Conductor's lease time, as Conductor Tasks. */
export async function leaseConductorTasks(
  deps: ConductorDeps,
  input: { namespaceId: string; queueName: string; count: number; timeoutMs: number; workerId: string; signal?: AbortSignal | undefined },
): Promise<Record<string, unknown>[]> {
  // A poll, or an update-v2 asking for the next task: a worker at work either way (the active-workers gauge).
  countWorkerPoll(input.queueName, input.workerId);
  const leased = await pollTasks({ db: deps.db, notifier: deps.notifier() }, { ...input, leaseSeconds: CONDUCTOR_LEASE_SECONDS });
  // A lost blob fails the poll; the leases stay and expire, and the sweeper hands the tasks on.
  // Secrets and variables are resolved in the copies handed out (dispatch-worker-tasks.ts), never in what is stored.
  const secrets = secretLookup(deps.db, sealingKeysOf({ secret: deps.secret, previousSecrets: deps.previousSecrets ?? [] }));
  return conductorTasks(
    deps,
    input.namespaceId,
    await dispatchWorkerTasks({ db: deps.db, blobs: deps.blobs, secrets }, leased.map((l) => l.task)),
    { lookUpRetries: false },
  );
}

/** A Conductor TaskResult, as validated at the edge. */
export interface ConductorTaskResult {
  workflowInstanceId: string;
  taskId: string;
  status: "IN_PROGRESS" | "COMPLETED" | "FAILED" | "FAILED_WITH_TERMINAL_ERROR";
  outputData?: Record<string, unknown> | null;
  reasonForIncompletion?: string | null;
  callbackAfterSeconds?: number | null;
  workerId?: string | null;
  logs?: (string | { log?: string | null })[] | null;
  extendLease?: boolean | null;
}

export interface ConductorUpdateOutcome {
  /** The task after the update; its input and output are not needed by the answer (reportTaskResult leaves them out). */
  task: TaskWithoutPayloads;
  /** What happened, for tests and logs. */
  effect: "extended" | "progress" | "ended" | "ignored";
}

/**
 * Applies a worker's TaskResult, the way Conductor does:
 * - `extendLease: true` is a pure heartbeat: the lease (and any semaphore
 *   permit) is extended and nothing else changes;
 * - IN_PROGRESS replaces the output (when given), records
 *   callbackAfterSeconds and puts the task back on its queue, visible again
 *   after that many seconds (at once for 0) — the next poll hands it out
 *   again, still IN_PROGRESS, its pollCount one higher;
 * - COMPLETED, FAILED and FAILED_WITH_TERMINAL_ERROR end the task through
 *   reportTaskResult; FAILED is retried per its policy, the terminal failure
 *   never. Without outputData the output recorded by IN_PROGRESS updates is
 *   kept;
 * - an update of a task that has already ended changes nothing and succeeds,
 *   as in Conductor (a worker's retried request, or a report after a cancel);
 * - logs are appended in every case but the heartbeat.
 *
 * Conductor does not tie an update to the worker that polled the task, so
 * neither does this: any key of the namespace with the `work` permission may
 * update any of its tasks. A task of another namespace is not found.
 */
export async function updateConductorTask(deps: ConductorDeps, namespaceId: string, result: ConductorTaskResult, actor: Actor): Promise<ConductorUpdateOutcome> {
  const missing = notFound(`Task ${result.taskId} of workflow ${result.workflowInstanceId} not found`);
  if (!isUuid(result.taskId) || !isUuid(result.workflowInstanceId)) throw missing;
  const task = await getTaskInNamespace(deps.db, { namespaceId, workflowId: result.workflowInstanceId, taskId: result.taskId });
  if (task === undefined) throw missing;

  if (result.extendLease === true) {
    if (task.status !== "IN_PROGRESS" || task.queueName === null || task.workerId === null) return { task, effect: "ignored" };
    const queueName = task.queueName;
    const owner = task.workerId;
    const extended = await deps.db.transaction().execute(async (trx) => {
      const renewed = await renewLease(trx, { namespaceId, queueName, taskId: task.id, owner, workflowId: task.workflowId, leaseSeconds: CONDUCTOR_LEASE_SECONDS });
      if (renewed) {
        const window = task.responseTimeoutSeconds !== null && task.responseTimeoutSeconds > 0 ? task.responseTimeoutSeconds : CONDUCTOR_LEASE_SECONDS;
        await renewTaskGates(trx, { namespaceId, taskId: task.id, leaseSeconds: window });
      }
      return renewed;
    });
    return { task, effect: extended ? "extended" : "ignored" };
  }

  const lines = (result.logs ?? []).map((entry) => (typeof entry === "string" ? entry : (entry.log ?? ""))).filter((line) => line !== "");
  if (lines.length > 0) await appendTaskLogs(deps.db, { namespaceId, workflowId: task.workflowId, taskId: task.id, lines });

  if (result.status === "IN_PROGRESS") return recordProgress(deps, namespaceId, task, result);

  let output: unknown = result.outputData ?? undefined;
  if (output === undefined) output = await resolvePayload(deps.blobs, { inline: task.output, ref: task.outputRef }, `the output of task ${task.id}`);
  // No worker holds a WAIT or HUMAN task: Conductor completes them through
  // this same update, node-flow through the operator action that also closes
  // a HUMAN task's inbox row.
  if (EXTERNAL_TYPES.has(task.taskType)) {
    if (task.status !== "IN_PROGRESS") return endedOrRefused(task, task.status);
    const completed = await completeExternalTask(
      actionDeps(deps),
      {
        namespaceId,
        workflowId: task.workflowId,
        actor,
        taskId: task.id,
        output: output as Record<string, unknown>,
        status: result.status === "COMPLETED" ? "COMPLETED" : "FAILED",
        ...(result.reasonForIncompletion === undefined || result.reasonForIncompletion === null ? {} : { reason: result.reasonForIncompletion }),
      },
    );
    if (!completed.ok) {
      if (completed.code === "not-found" || completed.code === "task-not-found") throw missing;
      if (completed.code === "invalid-input") throw badRequest(completed.message);
      // The human-task rules apply to Conductor's update too: who may complete it, and form data that fails the schema.
      if (completed.code === "forbidden") throw forbidden(completed.message);
      if (completed.code === "invalid-data") throw badRequest(completed.message, (completed.fieldErrors ?? []).map((e) => ({ path: `body.outputData${e.path.replaceAll("/", ".")}`, message: e.message })));
      if (completed.code === "conflict") throw conflict(completed.message);
      const current = await getTaskInNamespace(deps.db, { namespaceId, workflowId: task.workflowId, taskId: task.id });
      return endedOrRefused(task, current?.status ?? task.status);
    }
    // An approval short of N: the task stays IN_PROGRESS for the next person.
    if (completed.status === "APPROVAL_RECORDED") return { task, effect: "ignored" };
    return { task: { ...task, status: completed.status }, effect: "ended" };
  }
  const outcome = await reportTaskResult(deps, {
    namespaceId,
    workflowId: task.workflowId,
    taskId: task.id,
    status: result.status,
    output,
    reason: result.reasonForIncompletion ?? null,
  });
  if (outcome.ok) return { task: outcome.task, effect: "ended" };
  switch (outcome.error) {
    case "not_found":
      throw missing;
    case "invalid_output":
      throw badRequest(`outputData: ${outcome.message}`, [{ path: "body.outputData", message: outcome.message }]);
    case "not_held":
    case "not_in_progress":
      return endedOrRefused(task, outcome.status ?? task.status);
  }
}

function endedOrRefused(task: TaskExecutionRow, status: string): ConductorUpdateOutcome {
  // node-flow completes a worker task only once a worker has polled it: a
  // SCHEDULED task is the one case where Conductor would accept the update
  // and this does not.
  if (status === "SCHEDULED") throw conflict(`Task ${task.id} has not been polled yet (it is SCHEDULED); poll it first`);
  return { task: { ...task, status: status as TaskExecutionRow["status"] }, effect: "ignored" };
}

async function recordProgress(deps: ConductorDeps, namespaceId: string, task: TaskExecutionRow, result: ConductorTaskResult): Promise<ConductorUpdateOutcome> {
  if (task.status !== "IN_PROGRESS") return endedOrRefused(task, task.status);
  const callbackAfterSeconds = result.callbackAfterSeconds ?? 0;
  let output: { value: Record<string, unknown>; ref: string | null } | undefined;
  if (result.outputData !== undefined && result.outputData !== null) {
    // Written before the transaction that references it (invariant 8).
    const offloaded = await offloadIfLarge(deps.blobs, result.outputData);
    output = "ref" in offloaded ? { value: {}, ref: offloaded.ref } : { value: result.outputData, ref: null };
  }
  const updated = await deps.db.transaction().execute(async (trx) => {
    const row = await recordTaskProgress(trx, { namespaceId, workflowId: task.workflowId, taskId: task.id, output, callbackAfterSeconds });
    if (row === undefined) return undefined;
    if (row.queueName !== null && row.workerId !== null) {
      // Back on its queue, as Conductor postpones the message: whoever polls
      // next after the callback gets it. Its semaphore permit goes too; the
      // next lease takes one again.
      const deferred = await defer(trx, { namespaceId, queueName: row.queueName, taskId: row.id, owner: row.workerId, delaySeconds: callbackAfterSeconds });
      if (deferred) await releaseTaskGates(trx, { namespaceId, taskId: row.id, queueName: row.queueName });
    }
    return row;
  });
  if (updated === undefined) {
    // It ended between the read and the update: report it as ended.
    const current = await getTaskInNamespace(deps.db, { namespaceId, workflowId: task.workflowId, taskId: task.id });
    return endedOrRefused(task, current?.status ?? task.status);
  }
  return { task: updated, effect: "progress" };
}

/** Throws the 404 a Conductor client expects for a task id it cannot see. */
export function taskNotFound(taskId: string): ConductorError {
  return notFound(`No such task found by id: ${taskId}`);
}
