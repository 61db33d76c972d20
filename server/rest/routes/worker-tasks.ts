import { z } from "zod";
import { SYSTEM_QUEUE_NAMES } from "../../../engine";
import { countWorkerPoll } from "../../lib/metrics";
import { PayloadResolutionError, resolveTaskPayloads } from "../../lib/payload-offload";
import { processTracer, traceparentOf } from "../../lib/tracing";
import { reportTaskResult } from "../../tasks/report-task-result";
import type { ReportTaskResultOutcome } from "../../tasks/report-task-result";
import type { WorkerFinalStatus } from "../../store/task-executions";
import { getTaskInNamespace } from "../../store/task-executions";
import { appendTaskLogs, listTaskLogs } from "../../store/task-logs";
import { releaseLease, renewLease } from "../../store/task-queues";
import type { LeasedTask } from "../../store/task-queues";
import { dispatchWorkerTasks } from "../../secrets/dispatch-worker-tasks";
import { secretLookup } from "../../secrets/secrets";
import { releaseTaskGates, renewTaskGates } from "../../tasks/task-gates";
import { MAX_POLL_TIMEOUT_MS, pollTasks } from "../../tasks/task-poller";
import { defineRoute } from "../define-route";
import type { RestDeps } from "../define-route";
import { HttpProblem, validationProblem } from "../problem";
import { TimestampSchema, UuidSchema, iso, limitSchema } from "../schemas";

/**
 * The worker protocol: batch poll with long-poll, heartbeat, release,
 * complete, fail, logs. Every route needs the `work` permission — an API key with the
 * `worker` scope, or an operator and up — and acts only on tasks of the
 * path's namespace (every repository call below filters by it as well).
 *
 * Workers echo back the `workflowId` a poll gave them: the task tables are
 * partitioned by it, so with it a report touches one partition instead of
 * probing all sixteen.
 */

const tags = ["Worker protocol"];

/** The lease a task without a response timeout of its own gets, when the poll names none. */
export const DEFAULT_LEASE_SECONDS = 300;
export const MAX_POLL_COUNT = 100;

const WorkerIdSchema = z.string().min(1).max(200).meta({ description: "Names the worker process; a task can be heartbeated and reported only by the worker that leased it." });
const LeaseSecondsSchema = z
  .int()
  .min(1)
  .max(86_400)
  .meta({ description: `How long a lease lasts before the task is handed to another worker, for tasks whose definition sets no responseTimeoutSeconds (that wins when set). ${DEFAULT_LEASE_SECONDS} by default.` });

const PolledTaskSchema = z.object({
  taskId: UuidSchema,
  workflowId: UuidSchema,
  refName: z.string(),
  taskType: z.string(),
  taskDefName: z.string(),
  queue: z.string(),
  iteration: z.int(),
  attempt: z.int().meta({ description: "0 for the first attempt; each retry is a new task with attempt + 1." }),
  input: z.unknown().meta({ description: "Resolved: an input offloaded to the blob store is read back." }),
  pollCount: z.int(),
  startedAt: TimestampSchema,
  leaseExpiresAt: TimestampSchema.meta({ description: "Heartbeat before this, or the task goes to another worker." }),
  responseTimeoutSeconds: z.int().nullable(),
  timeoutSeconds: z.int().nullable(),
  traceparent: z
    .string()
    .optional()
    .meta({
      description:
        "Present when the server exports traces (OTEL_TRACES_EXPORTER=otlp): the W3C trace context of this task attempt's span in its run's trace. A worker that starts its spans under it joins the run's trace.",
    }),
});

export const pollTasksRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/tasks/poll",
  auth: "work",
  operationId: "pollTasks",
  summary: "Lease up to `count` tasks of a queue, waiting up to `timeoutMs` for one to arrive",
  description:
    "Long-poll: an empty queue parks the request until a task is enqueued (it answers within milliseconds of the enqueue's commit) or the timeout passes, then answers `tasks: []`. Each task is IN_PROGRESS and leased to `workerId` until `leaseExpiresAt`.",
  tags,
  body: z.strictObject({
    queue: z.string().min(1).max(400).meta({ description: "The queue: a SIMPLE node's task name (\"<domain>:<name>\" with a domain)." }),
    count: z.int().min(1).max(MAX_POLL_COUNT).default(1),
    timeoutMs: z.int().min(0).max(MAX_POLL_TIMEOUT_MS).default(0).meta({ description: `How long to wait for a task, 0 to ${MAX_POLL_TIMEOUT_MS}; 0 answers at once.` }),
    workerId: WorkerIdSchema,
    leaseSeconds: LeaseSecondsSchema.default(DEFAULT_LEASE_SECONDS),
  }),
  responses: { 200: z.object({ tasks: z.array(PolledTaskSchema) }) },
  handler: async ({ deps, namespace, body, signal }) => {
    if (SYSTEM_QUEUE_NAMES.has(body.queue)) {
      throw validationProblem([{ pointer: "/body/queue", message: `"${body.queue}" is a built-in task's queue; the server runs those tasks itself` }]);
    }
    countWorkerPoll(body.queue, body.workerId);
    const leased = await pollTasks(
      { db: deps.db, notifier: deps.notifier() },
      {
        namespaceId: namespace.id,
        queueName: body.queue,
        count: body.count,
        timeoutMs: body.timeoutMs,
        workerId: body.workerId,
        leaseSeconds: body.leaseSeconds,
        signal,
      },
    );
    return { status: 200, body: { tasks: await toPolledTasks(deps, leased) } };
  },
});

/**
 * Leased tasks as the worker sees them, their inputs read back from the blob
 * store where offloaded and their secrets and variables resolved
 * (dispatch-worker-tasks.ts; a task naming a missing one is failed and left out).
 */
async function toPolledTasks(deps: RestDeps, leased: readonly LeasedTask[]): Promise<z.infer<typeof PolledTaskSchema>[]> {
  let tasks;
  try {
    tasks = await dispatchWorkerTasks(
      { db: deps.db, blobs: deps.blobs, secrets: secretLookup(deps.db, deps.sealingKeys) },
      await resolveTaskPayloads(
        deps.blobs,
        leased.map((l) => l.task),
      ),
    );
  } catch (error) {
    // The leases stay; they expire and the sweeper hands the tasks on. A lost blob is not the worker's fault.
    if (error instanceof PayloadResolutionError) throw new HttpProblem("internal", error.message);
    throw error;
  }
  const queues = new Map(leased.map((l) => [l.task.id, l.queue]));
  // Computed from the ids, so handing it out costs no read (tracing.ts).
  const tracing = processTracer() !== undefined;
  return tasks.map((task) => {
    const queue = queues.get(task.id)!;
    return {
      taskId: task.id,
      workflowId: task.workflowId,
      refName: task.refName,
      taskType: task.taskType,
      taskDefName: task.taskDefName,
      queue: queue.queueName,
      iteration: task.iteration,
      attempt: task.attempt,
      input: task.input,
      pollCount: task.pollCount,
      startedAt: iso(task.startedAt ?? new Date()),
      leaseExpiresAt: iso(queue.leaseExpiresAt ?? new Date()),
      responseTimeoutSeconds: task.responseTimeoutSeconds,
      timeoutSeconds: task.timeoutSeconds,
      ...(tracing ? { traceparent: traceparentOf(task.workflowId, task.id) } : {}),
    };
  });
}

const TaskParams = z.object({ taskId: UuidSchema });

export const heartbeatTaskRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/tasks/{taskId}/heartbeat",
  auth: "work",
  operationId: "heartbeatTask",
  summary: "Extend the lease of a task this worker holds",
  description:
    "Extends the lease — and any semaphore permit the task holds — by the task's responseTimeoutSeconds, or by `leaseSeconds` when its definition sets none. 409 when the worker no longer holds the task: stop working on it.",
  tags,
  params: TaskParams,
  body: z.strictObject({ workflowId: UuidSchema, workerId: WorkerIdSchema, leaseSeconds: LeaseSecondsSchema.default(DEFAULT_LEASE_SECONDS) }),
  responses: { 200: z.object({ taskId: UuidSchema, leaseSeconds: z.int().meta({ description: "How long the lease now runs from the heartbeat." }) }) },
  problems: [409],
  handler: async ({ deps, namespace, params, body }) => {
    // One transaction: the lease and the permits it guards are extended together or not at all.
    const leaseSeconds = await deps.db.transaction().execute(async (trx) => {
      const task = await getTaskInNamespace(trx, { namespaceId: namespace.id, workflowId: body.workflowId, taskId: params.taskId });
      if (task === undefined) throw new HttpProblem("not-found", `No task ${params.taskId} of run ${body.workflowId} in namespace ${namespace.name}`);
      if (task.queueName === null) throw new HttpProblem("conflict", `Task ${task.refName} is a ${task.taskType} task; no worker holds it`);
      // renewLease applies the same rule itself; the permits must get the same window.
      const window = task.responseTimeoutSeconds !== null && task.responseTimeoutSeconds > 0 ? task.responseTimeoutSeconds : body.leaseSeconds;
      const renewed = await renewLease(trx, {
        namespaceId: namespace.id,
        queueName: task.queueName,
        taskId: task.id,
        owner: body.workerId,
        workflowId: task.workflowId,
        leaseSeconds: body.leaseSeconds,
      });
      if (!renewed) {
        throw new HttpProblem("conflict", `Worker ${body.workerId} does not hold task ${task.id} (it is ${task.status}): it was reported, cancelled, or its lease expired and it was handed on`);
      }
      await renewTaskGates(trx, { namespaceId: namespace.id, taskId: task.id, leaseSeconds: window });
      return window;
    });
    return { status: 200, body: { taskId: params.taskId, leaseSeconds } };
  },
});

export const releaseTaskRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/tasks/{taskId}/release",
  auth: "work",
  operationId: "releaseTask",
  summary: "Give a held task back to its queue, to be leased again at once as the same attempt",
  description:
    "For a worker that cannot finish a task — it is shutting down — and would rather not fail it: the lease and any semaphore permits are let go, and the task is visible to the next poll at once (a parked poll is woken). No attempt is used and no retry is spent: the next worker leases the same attempt, its pollCount one higher; a run timeout still counts from the first start. 409 when the worker no longer holds the task.",
  tags,
  params: TaskParams,
  body: z.strictObject({ workflowId: UuidSchema, workerId: WorkerIdSchema }),
  responses: { 200: z.object({ taskId: UuidSchema, workflowId: UuidSchema }) },
  problems: [409],
  handler: async ({ deps, namespace, params, body }) => {
    // One transaction: a lease given back with its permits still taken would
    // have the next worker's lease gated on a permit nobody uses.
    const task = await deps.db.transaction().execute(async (trx) => {
      const found = await getTaskInNamespace(trx, { namespaceId: namespace.id, workflowId: body.workflowId, taskId: params.taskId });
      if (found === undefined) throw new HttpProblem("not-found", `No task ${params.taskId} of run ${body.workflowId} in namespace ${namespace.name}`);
      if (found.queueName === null) throw new HttpProblem("conflict", `Task ${found.refName} is a ${found.taskType} task; no worker holds it`);
      // Only the queue row changes, as when the sweeper requeues an expired
      // lease: the task stays IN_PROGRESS until the next lease records its new
      // worker, after which this worker's late report is refused as not held.
      const released = await releaseLease(trx, { namespaceId: namespace.id, queueName: found.queueName, taskId: found.id, owner: body.workerId });
      if (!released) {
        throw new HttpProblem("conflict", `Worker ${body.workerId} does not hold task ${found.id} (it is ${found.status}): it was reported, released, cancelled, or its lease expired and it was handed on`);
      }
      await releaseTaskGates(trx, { namespaceId: namespace.id, taskId: found.id, queueName: found.queueName });
      return found;
    });
    return { status: 200, body: { taskId: task.id, workflowId: task.workflowId } };
  },
});

const ReportResultSchema = z.object({
  taskId: UuidSchema,
  workflowId: UuidSchema,
  status: z.enum(["COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR"]),
  next: z
    .array(PolledTaskSchema)
    .optional()
    .meta({ description: "With `next` in the request: the tasks leased to this worker in the report's transaction, as a poll answers them ([] when none was waiting)." }),
});

const NextSchema = z
  .strictObject({
    count: z.int().min(1).max(MAX_POLL_COUNT),
    leaseSeconds: LeaseSecondsSchema.default(DEFAULT_LEASE_SECONDS),
    timeoutMs: z
      .int()
      .min(0)
      .max(MAX_POLL_TIMEOUT_MS)
      .default(0)
      .meta({ description: "When the queue has nothing for the report's own lease: wait up to this long for a task, as a long poll does (0, the default: answer at once)." }),
  })
  .optional()
  .meta({
    description:
      "Also lease up to `count` more tasks of the same queue to this worker, in the report's own transaction; an empty queue answers `next: []` at once, or after waiting up to `timeoutMs` for a task. Saves a busy worker its next poll, and a worker in a chain of tasks the poll that would wait for the next one. The same report sent again after its answer was lost answers as the first did, with the tasks it leased.",
  });

/**
 * A report from either route, and its answer. With `next`, the answer carries
 * the tasks leased with the report or — when there were none and it asks to
 * wait — the queue's next tasks as a long poll gets them, marked as leased by
 * this report: the report has committed either way, the wait is a poll riding
 * on its request, and a retry of the report after a lost answer gets them
 * again (report-task-result.ts, replayedReport).
 */
async function reportAndAnswer(
  { deps, namespace, taskId, signal }: { deps: RestDeps; namespace: { id: string }; taskId: string; signal: AbortSignal },
  body: { workflowId: string; workerId: string; output?: Record<string, unknown>; next?: z.infer<typeof NextSchema> },
  report: { status: WorkerFinalStatus; reason?: string },
) {
  const { next } = body;
  const outcome = await reportTaskResult(deps, {
    namespaceId: namespace.id,
    workflowId: body.workflowId,
    taskId,
    ...report,
    output: body.output,
    workerId: body.workerId,
    ...(next ? { next } : {}),
  });
  if (!outcome.ok) throw reportProblem(outcome);
  const queueName = outcome.task.queueName;
  // A report that asks for more is this busy worker's poll: without it, a worker that never idles would not count as active.
  if (next !== undefined && queueName !== null) countWorkerPoll(queueName, body.workerId);
  const leased =
    next === undefined || next.timeoutMs === 0 || outcome.leased.length > 0 || queueName === null
      ? outcome.leased
      : await pollTasks(
          { db: deps.db, notifier: deps.notifier() },
          { namespaceId: namespace.id, queueName, ...next, workerId: body.workerId, report: outcome.task.id, signal },
        );
  return {
    status: 200 as const,
    body: {
      taskId: outcome.task.id,
      workflowId: outcome.task.workflowId,
      status: report.status,
      ...(next !== undefined ? { next: await nextTasks(deps, leased) } : {}),
    },
  };
}

/**
 * The report has committed by now: an unreadable input among the tasks it
 * leased must not turn its answer into an error (the worker would retry a
 * report that landed). Those leases lapse and the sweeper hands the tasks on.
 */
async function nextTasks(deps: RestDeps, leased: readonly LeasedTask[]): Promise<z.infer<typeof PolledTaskSchema>[]> {
  try {
    return await toPolledTasks(deps, leased);
  } catch (error) {
    if (error instanceof HttpProblem) return [];
    throw error;
  }
}

const OutputSchema = z
  .record(z.string(), z.unknown())
  .optional()
  .meta({ description: "A JSON object; successors read it as ${ref.output…}. Over 256 KB it is stored in the blob store." });

function reportProblem(outcome: Extract<ReportTaskResultOutcome, { ok: false }>): HttpProblem {
  switch (outcome.error) {
    case "not_found":
      return new HttpProblem("not-found", `No such task in this namespace`);
    case "invalid_output":
      return validationProblem([{ pointer: "/body/output", message: outcome.message }]);
    case "not_held":
    case "not_in_progress":
      return new HttpProblem("conflict", `The report was refused: ${outcome.message}`);
  }
}

export const completeTaskRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/tasks/{taskId}/complete",
  auth: "work",
  operationId: "completeTask",
  summary: "Report a held task completed, with its output",
  description:
    "409 when the task was already reported (by a different report), cancelled or timed out, or this worker no longer holds it. The same report sent again — a retry after a lost answer — is answered as the first was.",
  tags,
  params: TaskParams,
  body: z.strictObject({ workflowId: UuidSchema, workerId: WorkerIdSchema, output: OutputSchema, next: NextSchema }),
  responses: { 200: ReportResultSchema },
  problems: [409],
  handler: ({ deps, namespace, params, body, signal }) =>
    reportAndAnswer({ deps, namespace, taskId: params.taskId, signal }, body, { status: "COMPLETED" }),
});

export const failTaskRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/tasks/{taskId}/fail",
  auth: "work",
  operationId: "failTask",
  summary: "Report a held task failed: retryable (its retry policy applies) or terminal (never retried)",
  tags,
  params: TaskParams,
  body: z.strictObject({
    workflowId: UuidSchema,
    workerId: WorkerIdSchema,
    retryable: z.boolean().meta({ description: "true: FAILED, retried per the task's policy; false: FAILED_WITH_TERMINAL_ERROR, never retried." }),
    reason: z.string().min(1).max(10_000),
    output: OutputSchema,
    next: NextSchema,
  }),
  responses: { 200: ReportResultSchema },
  problems: [409],
  handler: ({ deps, namespace, params, body, signal }) =>
    reportAndAnswer({ deps, namespace, taskId: params.taskId, signal }, body, {
      status: body.retryable ? "FAILED" : "FAILED_WITH_TERMINAL_ERROR",
      reason: body.reason,
    }),
});

export const appendTaskLogsRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/tasks/{taskId}/logs",
  auth: "work",
  operationId: "appendTaskLogs",
  summary: "Append lines to a task's log",
  tags,
  params: TaskParams,
  body: z.strictObject({ workflowId: UuidSchema, lines: z.array(z.string().max(65_536)).min(1).max(1000) }),
  responses: { 200: z.object({ appended: z.int() }) },
  handler: async ({ deps, namespace, params, body }) => {
    const task = await getTaskInNamespace(deps.db, { namespaceId: namespace.id, workflowId: body.workflowId, taskId: params.taskId });
    if (task === undefined) throw new HttpProblem("not-found", `No task ${params.taskId} of run ${body.workflowId} in namespace ${namespace.name}`);
    const appended = await appendTaskLogs(deps.db, { namespaceId: namespace.id, workflowId: task.workflowId, taskId: task.id, lines: body.lines });
    return { status: 200, body: { appended } };
  },
});

export const listTaskLogsRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/tasks/{taskId}/logs",
  auth: "read",
  operationId: "listTaskLogs",
  summary: "Read a task's log, oldest line first",
  tags,
  params: TaskParams,
  query: z.object({
    after: z.coerce.number().int().min(0).optional().meta({ description: "`nextAfter` of the previous page." }),
    limit: limitSchema(500, 5000),
  }),
  responses: {
    200: z.object({
      items: z.array(z.object({ id: z.int(), at: TimestampSchema, line: z.string() })),
      nextAfter: z.int().nullable().meta({ description: "Pass as `after` for the next page; null when this page was not full." }),
    }),
  },
  handler: async ({ deps, namespace, params, query }) => {
    const rows = await listTaskLogs(deps.db, { namespaceId: namespace.id, taskId: params.taskId, afterId: query.after, limit: query.limit });
    const last = rows.at(-1);
    return {
      status: 200,
      body: {
        items: rows.map((r) => ({ id: r.id, at: iso(r.at), line: r.line })),
        nextAfter: rows.length === query.limit && last !== undefined ? last.id : null,
      },
    };
  },
});
