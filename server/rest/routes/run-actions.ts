import { z } from "zod";
import { RefSchema, TASK_STATUSES, WORKFLOW_STATUSES } from "../../../engine";
import {
  completeExternalTask,
  pauseWorkflow,
  rerunWorkflow,
  restartWorkflow,
  resumeWorkflow,
  retryWorkflow,
  skipTask,
  terminateWorkflow,
} from "../../executions/actions";
import type { ActionRefusal, WorkflowActionDeps } from "../../executions/actions";
import type { Principal } from "../../auth/principal";
import { actionDeps, formDataProblem } from "../action-results";
import { actorOf } from "../actor";
import { defineRoute } from "../define-route";
import type { NamespaceAccess, RestDeps } from "../define-route";
import { HttpProblem, validationProblem } from "../problem";
import { UuidSchema } from "../schemas";

/**
 * Operator actions and signals. Each is one call into server/executions/actions,
 * which acts only inside the given namespace, in one transaction, and records
 * WorkflowEvents and AuditEvents with the caller as the actor; its refusals map
 * to problems here: unknown run or task 404, wrong state 409.
 */

const tags = ["Run actions"];

/** Refusal codes that are about the request's values rather than the run's state. */
const INVALID_REQUEST_CODES: Readonly<Record<string, string>> = {
  "invalid-input": "/body",
  "unknown-node": "/body/fromRef",
};
const NOT_FOUND_CODES: ReadonlySet<string> = new Set(["not-found", "task-not-found", "definition-not-found"]);

type RunRefusal = ActionRefusal & { fieldErrors?: { path: string; message: string }[] };

function refusalProblem(refusal: RunRefusal): HttpProblem {
  // The human-task rules (complete-external-task on a HUMAN task): not allowed, and form data that fails the schema.
  if (refusal.code === "forbidden") return new HttpProblem("forbidden", refusal.message);
  // Field errors point into the form data (the output); a refusal naming no field is about output.outcome.
  if (refusal.code === "invalid-data") return formDataProblem("/body/output", refusal, "/body/output/outcome");
  const pointer = INVALID_REQUEST_CODES[refusal.code];
  if (pointer !== undefined) return validationProblem([{ pointer, message: refusal.message, code: refusal.code }]);
  if (NOT_FOUND_CODES.has(refusal.code)) return new HttpProblem("not-found", refusal.message);
  // Everything else is the run's or the task's state: not-running, not-paused, not-ended, task-not-open, …
  return new HttpProblem("conflict", `${refusal.message} (${refusal.code})`);
}

/**
 * Runs an operator action on the path's run, in the path's namespace, with
 * the caller as the actor; `input` is the rest of the action's input. A
 * refusal is thrown as its problem.
 */
async function actOnRun<R extends { ok: true } | RunRefusal>(
  ctx: { deps: RestDeps; principal: Principal; namespace: NamespaceAccess; params: { runId: string } },
  action: (deps: WorkflowActionDeps, input: unknown) => Promise<R>,
  input: Record<string, unknown> = {},
): Promise<Exclude<R, { ok: false }>> {
  const result = await action(actionDeps(ctx.deps), { namespaceId: ctx.namespace.id, workflowId: ctx.params.runId, actor: actorOf(ctx.principal), ...input });
  if (!result.ok) throw refusalProblem(result);
  return result as Exclude<R, { ok: false }>;
}

const RunParams = z.object({ runId: UuidSchema });

const RunActionResultSchema = z.object({
  id: UuidSchema,
  status: z.enum(WORKFLOW_STATUSES).meta({ description: "The run's status after the action." }),
});

const ReopenedTaskSchema = z.object({
  ref: z.string(),
  iteration: z.int(),
  attempt: z.int(),
  taskId: UuidSchema,
  taskType: z.string(),
  how: z.enum(["queued", "external", "container"]),
  previous: z.object({ taskId: UuidSchema, status: z.enum(TASK_STATUSES) }),
});

const ReasonBody = z.strictObject({ reason: z.string().min(1).max(2000).optional() }).optional();

export const pauseRunRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/runs/{runId}/pause",
  auth: "operate",
  operationId: "pauseRun",
  summary: "Pause a running run",
  description: "Nothing new is scheduled until it is resumed; tasks already in flight finish.",
  tags,
  params: RunParams,
  body: ReasonBody,
  responses: { 200: RunActionResultSchema },
  problems: [409],
  handler: async (ctx) => {
    const result = await actOnRun(ctx, pauseWorkflow, { reason: ctx.body?.reason });
    return { status: 200, body: { id: result.workflowId, status: result.status } };
  },
});

export const resumeRunRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/runs/{runId}/resume",
  auth: "operate",
  operationId: "resumeRun",
  summary: "Resume a paused run",
  tags,
  params: RunParams,
  responses: { 200: RunActionResultSchema },
  problems: [409],
  handler: async (ctx) => {
    const result = await actOnRun(ctx, resumeWorkflow);
    return { status: 200, body: { id: result.workflowId, status: result.status } };
  },
});

export const terminateRunRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/runs/{runId}/terminate",
  auth: "operate",
  operationId: "terminateRun",
  summary: "Terminate a running or paused run, and everything under it",
  tags,
  params: RunParams,
  body: ReasonBody,
  responses: { 200: RunActionResultSchema },
  problems: [409],
  handler: async (ctx) => {
    const result = await actOnRun(ctx, terminateWorkflow, ctx.body?.reason === undefined ? {} : { reason: ctx.body.reason });
    return { status: 200, body: { id: result.workflowId, status: result.status } };
  },
});

export const retryRunRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/runs/{runId}/retry",
  auth: "operate",
  operationId: "retryRun",
  summary: "Retry the failed tasks of an ended run",
  tags,
  params: RunParams,
  responses: { 200: RunActionResultSchema.extend({ retried: z.array(ReopenedTaskSchema) }) },
  problems: [409],
  handler: async (ctx) => {
    const result = await actOnRun(ctx, retryWorkflow);
    return { status: 200, body: { id: result.workflowId, status: result.status, retried: result.retried } };
  },
});

export const rerunRunRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/runs/{runId}/rerun",
  auth: "operate",
  operationId: "rerunRun",
  summary: "Rerun an ended run from a node",
  description: "The node and everything downstream of it run again; `input` replaces the run's input when given.",
  tags,
  params: RunParams,
  body: z.strictObject({ fromRef: RefSchema, input: z.record(z.string(), z.unknown()).optional() }),
  responses: {
    200: RunActionResultSchema.extend({
      removed: z.array(z.object({ ref: z.string(), iteration: z.int(), attempt: z.int(), status: z.string(), taskId: UuidSchema })),
      retried: z.array(ReopenedTaskSchema),
    }),
  },
  problems: [409],
  handler: async (ctx) => {
    const result = await actOnRun(ctx, rerunWorkflow, ctx.body);
    return { status: 200, body: { id: result.workflowId, status: result.status, removed: result.removed, retried: result.retried } };
  },
});

export const restartRunRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/runs/{runId}/restart",
  auth: "operate",
  operationId: "restartRun",
  summary: "Restart an ended run from the beginning, in place",
  tags,
  params: RunParams,
  body: z
    .strictObject({
      version: z
        .union([z.int().min(1), z.literal("latest")])
        .optional()
        .meta({ description: "The definition version to run: the one it ran by default, a number, or \"latest\"." }),
      input: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  responses: { 200: RunActionResultSchema.extend({ workflowVersion: z.int(), removedTasks: z.int() }) },
  problems: [409],
  handler: async (ctx) => {
    const result = await actOnRun(ctx, restartWorkflow, ctx.body);
    return { status: 200, body: { id: result.workflowId, status: result.status, workflowVersion: result.defVersion, removedTasks: result.removedTasks } };
  },
});

const TaskActionResultSchema = z.object({
  id: UuidSchema.meta({ description: "The run." }),
  taskId: UuidSchema,
  ref: z.string(),
  status: z.enum(TASK_STATUSES).meta({ description: "The task's status after the action." }),
});

export const skipTaskRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/runs/{runId}/skip",
  auth: "operate",
  operationId: "skipRunTask",
  summary: "Skip a scheduled or in-progress task: it completes with the given output",
  tags,
  params: RunParams,
  body: z
    .strictObject({
      taskRef: RefSchema.optional().meta({ description: "The node ref (its latest task); give this or taskId." }),
      taskId: UuidSchema.optional(),
      output: z.record(z.string(), z.unknown()).optional(),
      reason: z.string().max(2000).optional(),
    })
    .refine((b) => (b.taskRef === undefined) !== (b.taskId === undefined), { message: "Give exactly one of taskRef and taskId", path: ["taskRef"] }),
  responses: { 200: TaskActionResultSchema },
  problems: [409],
  handler: async (ctx) => {
    const result = await actOnRun(ctx, skipTask, ctx.body);
    return { status: 200, body: { id: result.workflowId, taskId: result.taskId, ref: result.ref, status: result.status } };
  },
});

export const completeRunTaskRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/runs/{runId}/tasks/{ref}/complete",
  auth: "operate",
  operationId: "completeRunTask",
  summary: "Signal a WAIT or HUMAN task: complete (or fail) it with an output",
  description: "Only WAIT and HUMAN tasks in progress are completed this way; a worker's task is completed by the worker that holds it.",
  tags,
  params: z.object({ runId: UuidSchema, ref: RefSchema }),
  body: z
    .strictObject({
      output: z.record(z.string(), z.unknown()).optional(),
      status: z.enum(["COMPLETED", "FAILED"]).optional().meta({ description: "COMPLETED by default; FAILED hands the task to its retry policy." }),
      reason: z.string().max(2000).optional(),
    })
    .optional(),
  responses: { 200: TaskActionResultSchema },
  problems: [409],
  handler: async (ctx) => {
    const result = await actOnRun(ctx, completeExternalTask, { taskRef: ctx.params.ref, ...ctx.body });
    // An approval short of N leaves the task IN_PROGRESS, waiting for the next person.
    return { status: 200, body: { id: result.workflowId, taskId: result.taskId, ref: result.ref, status: result.status === "APPROVAL_RECORDED" ? ("IN_PROGRESS" as const) : result.status } };
  },
});
