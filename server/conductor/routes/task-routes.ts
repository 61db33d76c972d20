import { z } from "zod";
import { findLatestTaskByRef, findTaskById, waitingTaskCounts } from "../../store/conductor-queries";
import { appendTaskLogs, listTaskLogs } from "../../store/task-logs";
import { actorOf } from "../../rest/actor";
import type { TaskExecutionRow } from "../../../db/schema";
import { toConductorTaskLog } from "../conductor-shapes";
import {
  ANONYMOUS_WORKER,
  MAX_CONDUCTOR_POLL_TIMEOUT_MS,
  conductorTasks,
  isUuid,
  leaseConductorTasks,
  pollConductorTasks,
  queueNameOf,
  taskNotFound,
  updateConductorTask,
} from "../conductor-task-protocol";
import type { ConductorDeps } from "../define-conductor-route";
import { defineConductorRoute } from "../define-conductor-route";

/**
 * Conductor's /tasks resource: the worker protocol (poll, batch poll, update,
 * update-v2, logs) and the task and queue reads. Every route acts in the
 * caller's key's namespace only, and needs the `work` permission (a `worker`
 * key, or an admin one): workers read their tasks and queue sizes too.
 */

const TaskTypeParams = z.object({ taskType: z.string().min(1).max(400) });
const TaskIdParams = z.object({ taskId: z.string().min(1).max(100) });
const optionalText = (max: number) => z.string().max(max).optional();

/** The task of the path's id in the caller's namespace, or Conductor's 404: an id that is no UUID names no task. */
async function taskOfId(deps: ConductorDeps, namespaceId: string, taskId: string): Promise<TaskExecutionRow> {
  const row = isUuid(taskId) ? await findTaskById(deps.db, { namespaceId, taskId }) : undefined;
  if (row === undefined) throw taskNotFound(taskId);
  return row;
}

/** Conductor's TaskResult: lenient about nulls and unknown fields (clients send every field), strict about what it reads. */
export const TaskResultSchema = z.looseObject({
  workflowInstanceId: z.string().min(1, "Workflow Id cannot be null or empty").max(100),
  taskId: z.string().min(1, "Task ID cannot be null or empty").max(100),
  status: z.enum(["IN_PROGRESS", "COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR"]),
  outputData: z.record(z.string(), z.unknown()).nullish(),
  reasonForIncompletion: z.string().max(10_000).nullish(),
  callbackAfterSeconds: z.number().int().min(0).max(31_536_000).nullish(),
  workerId: z.string().max(200).nullish(),
  logs: z
    .array(z.union([z.string().max(65_536), z.looseObject({ log: z.string().max(65_536).nullish() })]))
    .max(1000)
    .nullish(),
  extendLease: z.boolean().nullish(),
  externalOutputPayloadStoragePath: z.null().optional().meta({ description: "Not supported: node-flow stores large outputs itself (send them inline)." }),
});

export const pollTaskRoute = defineConductorRoute({
  method: "GET",
  path: "/tasks/poll/{taskType}",
  auth: "work",
  summary: "Poll for one task of a type: 200 with the Task, or 204 when there is none",
  params: TaskTypeParams,
  query: z.object({ workerid: optionalText(200), domain: optionalText(200) }),
  handler: async ({ deps, namespaceId, params, query, signal }) => {
    // Conductor's single poll waits briefly (100 ms) rather than not at all.
    const tasks = await pollConductorTasks(deps, {
      namespaceId,
      taskType: params.taskType,
      domain: query.domain,
      workerId: query.workerid,
      count: 1,
      timeoutMs: 100,
      signal,
    });
    const task = tasks[0];
    return task === undefined ? { status: 204 } : { status: 200, json: task };
  },
});

export const batchPollRoute = defineConductorRoute({
  method: "GET",
  path: "/tasks/poll/batch/{taskType}",
  auth: "work",
  summary: "Poll for up to `count` tasks, long-polling up to `timeout` ms (at most 5000); 200 [] when none arrives",
  params: TaskTypeParams,
  query: z.object({
    workerid: optionalText(200),
    domain: optionalText(200),
    count: z.coerce.number().int().min(1).max(1000).default(1),
    timeout: z.coerce
      .number()
      .int()
      .min(0)
      .max(MAX_CONDUCTOR_POLL_TIMEOUT_MS, `Long Poll Timeout value cannot be more than ${MAX_CONDUCTOR_POLL_TIMEOUT_MS / 1000} seconds`)
      .default(100),
  }),
  handler: async ({ deps, namespaceId, params, query, signal }) => {
    const tasks = await pollConductorTasks(deps, {
      namespaceId,
      taskType: params.taskType,
      domain: query.domain,
      workerId: query.workerid,
      count: query.count,
      timeoutMs: query.timeout,
      signal,
    });
    return { status: 200, json: tasks };
  },
});

export const updateTaskRoute = defineConductorRoute({
  method: "POST",
  path: "/tasks",
  auth: "work",
  summary: "Update a task with a TaskResult; answers the task id as text/plain",
  body: TaskResultSchema,
  handler: async ({ deps, principal, namespaceId, body }) => {
    const outcome = await updateConductorTask(deps, namespaceId, body, actorOf(principal));
    return { status: 200, text: outcome.task.id };
  },
});

export const updateTaskV2Route = defineConductorRoute({
  method: "POST",
  path: "/tasks/update-v2",
  auth: "work",
  summary: "Update a task, then hand out the next task of its type (JSON), or `null` when there is none",
  body: TaskResultSchema,
  handler: async ({ deps, principal, namespaceId, body }) => {
    const outcome = await updateConductorTask(deps, namespaceId, body, actorOf(principal));
    const queueName = outcome.task.queueName;
    if (queueName === null) return { status: 200, json: null };
    const [next] = await leaseConductorTasks(deps, { namespaceId, queueName, count: 1, timeoutMs: 0, workerId: body.workerId ?? outcome.task.workerId ?? ANONYMOUS_WORKER });
    return { status: 200, json: next ?? null };
  },
});

export const updateTaskByRefRoute = defineConductorRoute({
  method: "POST",
  path: "/tasks/{workflowId}/{taskRefName}/{status}",
  auth: "work",
  summary: "Update a workflow's task by reference name (the body is its output); answers the task id as text/plain",
  params: z.object({
    workflowId: z.string().min(1).max(100),
    taskRefName: z.string().min(1).max(400),
    status: z.enum(["IN_PROGRESS", "COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR"]),
  }),
  query: z.object({ workerid: optionalText(200) }),
  body: z.record(z.string(), z.unknown()).optional(),
  handler: async ({ deps, principal, namespaceId, params, query, body }) => {
    // A loop body task is `<ref>__<iteration>` in Conductor.
    const loop = /^(.+)__(\d+)$/.exec(params.taskRefName);
    const row = isUuid(params.workflowId)
      ? await findLatestTaskByRef(deps.db, {
          namespaceId,
          workflowId: params.workflowId,
          refName: loop === null ? params.taskRefName : loop[1]!,
          ...(loop === null ? {} : { iteration: Number(loop[2]) }),
        })
      : undefined;
    if (row === undefined) throw taskNotFound(`${params.workflowId}/${params.taskRefName}`);
    const outcome = await updateConductorTask(
      deps,
      namespaceId,
      { workflowInstanceId: row.workflowId, taskId: row.id, status: params.status, outputData: body ?? {}, workerId: query.workerid ?? null },
      actorOf(principal),
    );
    return { status: 200, text: outcome.task.id };
  },
});

export const getTaskRoute = defineConductorRoute({
  method: "GET",
  path: "/tasks/{taskId}",
  auth: "work",
  summary: "Get a task by id",
  params: TaskIdParams,
  handler: async ({ deps, namespaceId, params }) => {
    const row = await taskOfId(deps, namespaceId, params.taskId);
    const [task] = await conductorTasks(deps, namespaceId, [row], { lookUpRetries: true });
    return { status: 200, json: task };
  },
});

export const appendTaskLogRoute = defineConductorRoute({
  method: "POST",
  path: "/tasks/{taskId}/log",
  auth: "work",
  summary: "Append a line to a task's log (the body is the line)",
  params: TaskIdParams,
  textBody: true,
  body: z.string({ error: "The body must be the log line" }).min(1).max(65_536),
  handler: async ({ deps, namespaceId, params, body }) => {
    const row = await taskOfId(deps, namespaceId, params.taskId);
    // Clients serialise the line as a JSON string ("\"text\""); a bare body is the line itself.
    let line = body;
    try {
      const parsed = JSON.parse(body) as unknown;
      if (typeof parsed === "string") line = parsed;
    } catch {
      // Not JSON: the raw text is the line.
    }
    await appendTaskLogs(deps.db, { namespaceId, workflowId: row.workflowId, taskId: row.id, lines: [line] });
    return { status: 200, text: "" };
  },
});

export const getTaskLogsRoute = defineConductorRoute({
  method: "GET",
  path: "/tasks/{taskId}/log",
  auth: "work",
  summary: "A task's log, oldest line first (TaskExecLog list)",
  params: TaskIdParams,
  handler: async ({ deps, namespaceId, params }) => {
    if (!isUuid(params.taskId)) return { status: 200, json: [] };
    const rows = await listTaskLogs(deps.db, { namespaceId, taskId: params.taskId, limit: 10_000 });
    return { status: 200, json: rows.map(toConductorTaskLog) };
  },
});

const TaskTypesQuery = z.object({ taskType: z.union([z.string().min(1).max(400), z.array(z.string().min(1).max(400)).max(1000)]).optional() });

export const queueSizesRoute = defineConductorRoute({
  method: "GET",
  path: "/tasks/queue/sizes",
  auth: "work",
  summary: "Tasks waiting per task type: {taskType: size}",
  query: TaskTypesQuery,
  handler: async ({ deps, namespaceId, query }) => {
    const types = query.taskType === undefined ? [] : Array.isArray(query.taskType) ? query.taskType : [query.taskType];
    const counts = await waitingTaskCounts(deps.db, { namespaceId, queueNames: types });
    return { status: 200, json: Object.fromEntries(types.map((type) => [type, counts.get(type) ?? 0])) };
  },
});

export const queueSizeRoute = defineConductorRoute({
  method: "GET",
  path: "/tasks/queue/size",
  auth: "work",
  summary: "Tasks waiting for one task type (and domain): a number",
  query: z.object({ taskType: z.string().min(1).max(400), domain: optionalText(200) }),
  handler: async ({ deps, namespaceId, query }) => {
    const queueName = queueNameOf(query.taskType, query.domain);
    const counts = await waitingTaskCounts(deps.db, { namespaceId, queueNames: [queueName] });
    return { status: 200, json: counts.get(queueName) ?? 0 };
  },
});

export const allQueueSizesRoute = defineConductorRoute({
  method: "GET",
  path: "/tasks/queue/all",
  auth: "work",
  summary: "Tasks waiting in every queue of the namespace: {queueName: size}",
  handler: async ({ deps, namespaceId }) => {
    const counts = await waitingTaskCounts(deps.db, { namespaceId });
    return { status: 200, json: Object.fromEntries(counts) };
  },
});
