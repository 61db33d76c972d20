import { z } from "zod";
import { NameSchema } from "../../../engine";
import { createdByOfPrincipal } from "../../auth/api-keys";
import type { Principal } from "../../auth/principal";
import { resolvePayload } from "../../lib/payload-offload";
import { actionDeps } from "../../rest/action-results";
import { actorOf } from "../../rest/actor";
import { ensureInlineDefinition } from "../../executions/inline-definition";
import { startExecution } from "../../executions/start-execution";
import type { StartExecutionResult } from "../../executions/start-execution";
import { searchWorkflowExecutions } from "../../store/conductor-queries";
import { getTaskInNamespace } from "../../store/task-executions";
import { pauseWorkflow, rerunWorkflow, restartWorkflow, resumeWorkflow, retryWorkflow, skipTask, terminateWorkflow } from "../../executions/actions";
import type { ActionRefusal, WorkflowActionDeps } from "../../executions/actions";
import { badRequest, conflict, notFound, validationFailed } from "../conductor-error";
import type { ConductorError } from "../conductor-error";
import { toConductorWorkflowSummary } from "../conductor-shapes";
import { importConductorDefinition, missingReferenceErrors, registeredTaskPolicies } from "../register-conductor-workflow";
import { isUuid } from "../conductor-task-protocol";
import { loadConductorWorkflow, parseSearchQuery, waitForWorkflow } from "../conductor-workflows";
import type { ConductorDeps } from "../define-conductor-route";
import { defineConductorRoute } from "../define-conductor-route";

/**
 * Conductor's /workflow resource: the start variants (StartWorkflowRequest,
 * by name, synchronous execute), the Workflow read, status and search, and
 * the operator actions — each one call into server/ (startExecution,
 * server/executions/actions), in the caller's namespace, with the API key as
 * the recorded actor.
 */

const JsonObject = z.record(z.string(), z.unknown());
const WorkflowIdParams = z.object({ workflowId: z.string().min(1).max(100) });
const booleanFlag = (fallback: boolean) =>
  z
    .enum(["true", "false"])
    .default(fallback ? "true" : "false")
    .transform((v) => v === "true");

/** Conductor's StartWorkflowRequest. Fields node-flow cannot honour are refused by name rather than ignored. */
export const StartWorkflowRequestSchema = z.looseObject({
  name: NameSchema,
  version: z.number().int().min(1).nullish(),
  correlationId: z.string().max(255).nullish(),
  input: JsonObject.nullish(),
  priority: z.number().int().min(0).max(99).nullish(),
  idempotencyKey: z.string().min(1).max(255).nullish(),
  idempotencyStrategy: z.enum(["RETURN_EXISTING", "FAIL", "FAIL_ON_RUNNING"]).nullish(),
  taskToDomain: z
    .record(z.string(), z.string())
    .nullish()
    .refine((v) => v === null || v === undefined || Object.keys(v).length === 0, "taskToDomain is not supported: set a task's domain on its node"),
  /** A WorkflowDef to run without registering it (server/executions/inline-definition.ts). */
  workflowDef: JsonObject.nullish(),
  externalInputPayloadStoragePath: z.null({ error: "External payload storage is not supported: send the input inline (large inputs are stored by the server)" }).optional(),
  createdBy: z.string().nullish(),
});
type StartWorkflowRequest = z.output<typeof StartWorkflowRequestSchema>;

function startFailure(result: Extract<StartExecutionResult, { ok: false }>): ConductorError {
  switch (result.reason) {
    case "not-found":
      return notFound(result.message);
    case "invalid-input":
      return validationFailed(result.problems.map((p) => ({ path: p.path[0] === "priority" || p.path[0] === "idempotencyKey" ? String(p.path[0]) : ["input", ...p.path].join("."), message: p.message })));
    case "conflict":
      return conflict(`${result.message}`);
  }
}

/** A start request's inline workflowDef, imported as registration imports one and stored under its content's name. */
async function inlineTarget(deps: ConductorDeps, namespaceId: string, workflowDef: Record<string, unknown>): Promise<{ name: string; version: number }> {
  const imported = importConductorDefinition(workflowDef, "workflowDef");
  if (!imported.ok) throw validationFailed(imported.errors);
  const missing = await missingReferenceErrors(deps.db, namespaceId, imported.definition, "workflowDef");
  if (missing.length > 0) throw validationFailed(missing);
  const policies = await registeredTaskPolicies(deps.db, namespaceId, imported.definition);
  const stored = await ensureInlineDefinition(deps.db, namespaceId, imported.definition, { taskPolicy: (name) => policies.get(name) });
  if (!stored.ok) throw validationFailed([{ path: "workflowDef", message: stored.message }]);
  return stored;
}

async function start(deps: ConductorDeps, principal: Parameters<typeof createdByOfPrincipal>[0], namespaceId: string, request: StartWorkflowRequest): Promise<string> {
  if (request.idempotencyStrategy !== undefined && request.idempotencyStrategy !== null && (request.idempotencyKey === undefined || request.idempotencyKey === null)) {
    throw validationFailed([{ path: "body.idempotencyStrategy", message: "idempotencyStrategy needs an idempotencyKey" }]);
  }
  const target = request.workflowDef ? await inlineTarget(deps, namespaceId, request.workflowDef) : { name: request.name, version: request.version ?? undefined };
  const result = await startExecution(deps, {
    namespaceId,
    name: target.name,
    version: target.version,
    input: request.input ?? {},
    correlationId: request.correlationId ?? null,
    priority: request.priority ?? undefined,
    idempotencyKey: request.idempotencyKey ?? null,
    idempotencyStrategy: request.idempotencyStrategy ?? undefined,
    createdBy: createdByOfPrincipal(principal),
  });
  if (!result.ok) throw startFailure(result);
  return result.workflowId;
}

export const startWorkflowRoute = defineConductorRoute({
  method: "POST",
  path: "/workflow",
  auth: "operate",
  summary: "Start a workflow from a StartWorkflowRequest; answers its id as text/plain",
  body: StartWorkflowRequestSchema,
  handler: async ({ deps, principal, namespaceId, body }) => ({ status: 200, text: await start(deps, principal, namespaceId, body) }),
});

export const startWorkflowByNameRoute = defineConductorRoute({
  method: "POST",
  path: "/workflow/{name}",
  auth: "operate",
  summary: "Start a workflow by name, the body its input; answers its id as text/plain",
  params: z.object({ name: NameSchema }),
  query: z.object({
    version: z.coerce.number().int().min(1).optional(),
    correlationId: z.string().max(255).optional(),
    priority: z.coerce.number().int().min(0).max(99).optional(),
  }),
  body: JsonObject.optional(),
  handler: async ({ deps, principal, namespaceId, params, query, body }) => ({
    status: 200,
    text: await start(deps, principal, namespaceId, { name: params.name, version: query.version, correlationId: query.correlationId, priority: query.priority, input: body ?? {} }),
  }),
});

/** How long a synchronous execute waits when the caller names no time (Orkes' default). */
const DEFAULT_EXECUTE_WAIT_SECONDS = 10;
/** Longest wait: a request parked longer than this risks proxies' idle timeouts. */
const MAX_EXECUTE_WAIT_SECONDS = 30;

export const executeWorkflowRoute = defineConductorRoute({
  method: "POST",
  path: "/workflow/execute/{name}/{version}",
  auth: "operate",
  summary: "Start a workflow and wait (up to waitForSeconds) for it to end, or for waitUntilTaskRef; answers a WorkflowRun",
  params: z.object({ name: NameSchema, version: z.coerce.number().int().min(1) }),
  query: z.object({
    requestId: z.string().max(255).optional(),
    waitUntilTaskRef: z.string().min(1).max(400).optional(),
    waitForSeconds: z.coerce.number().int().min(0).max(MAX_EXECUTE_WAIT_SECONDS).default(DEFAULT_EXECUTE_WAIT_SECONDS),
  }),
  body: StartWorkflowRequestSchema.partial({ name: true }).optional(),
  handler: async ({ deps, principal, namespaceId, params, query, body, signal }) => {
    const workflowId = await start(deps, principal, namespaceId, { ...body, name: params.name, version: params.version });
    await waitForWorkflow(deps, { namespaceId, workflowId, timeoutMs: query.waitForSeconds * 1000, untilTaskRef: query.waitUntilTaskRef, signal });
    const loaded = await loadConductorWorkflow(deps, namespaceId, workflowId, { includeTasks: true });
    if (loaded === undefined) throw notFound(`Workflow ${workflowId} disappeared`);
    const w = loaded.workflow;
    return {
      status: 200,
      json: {
        workflowId,
        requestId: query.requestId ?? null,
        correlationId: w.correlationId,
        input: w.input,
        output: w.output,
        status: w.status,
        tasks: w.tasks,
        variables: w.variables,
        priority: w.priority,
        createTime: w.createTime,
        updateTime: w.updateTime,
        createdBy: w.createdBy,
        reasonForIncompletion: w.reasonForIncompletion,
      },
    };
  },
});

export const searchWorkflowsRoute = defineConductorRoute({
  method: "GET",
  path: "/workflow/search",
  auth: "read",
  summary: "Search workflows: {totalHits, results: WorkflowSummary[]}",
  query: z.object({
    start: z.coerce.number().int().min(0).max(1_000_000).default(0),
    size: z.coerce.number().int().min(1).max(1000).default(100),
    sort: z
      .string()
      .regex(/^startTime(:(ASC|DESC))?$/i, "node-flow sorts by startTime only: startTime:ASC or startTime:DESC")
      .optional(),
    freeText: z.string().max(400).optional(),
    query: z.string().max(4000).optional(),
  }),
  handler: async ({ deps, namespaceId, query }) => {
    const parsed = parseSearchQuery(query.query);
    if (!parsed.ok) throw validationFailed(parsed.errors);
    const { totalHits, rows } = await searchWorkflowExecutions(deps.db, {
      namespaceId,
      ...parsed.fields,
      freeText: query.freeText,
      order: query.sort?.toUpperCase().endsWith(":ASC") === true ? "ASC" : "DESC",
      offset: query.start,
      limit: query.size,
    });
    const results = [];
    for (const row of rows) {
      const [input, output] = await Promise.all([
        resolvePayload(deps.blobs, { inline: row.input, ref: row.inputRef }, `the input of workflow ${row.id}`),
        resolvePayload(deps.blobs, { inline: row.output, ref: row.outputRef }, `the output of workflow ${row.id}`),
      ]);
      results.push(toConductorWorkflowSummary({ ...row, input, output }));
    }
    return { status: 200, json: { totalHits, results } };
  },
});

export const runningWorkflowsRoute = defineConductorRoute({
  method: "GET",
  path: "/workflow/running/{name}",
  auth: "read",
  summary: "Ids of the running workflows of a definition (optionally one version)",
  params: z.object({ name: NameSchema }),
  query: z.object({ version: z.coerce.number().int().min(1).optional() }),
  handler: async ({ deps, namespaceId, params, query }) => {
    const ids: string[] = [];
    for (let offset = 0; ; offset += 1000) {
      const { rows } = await searchWorkflowExecutions(deps.db, { namespaceId, defNames: [params.name], statuses: ["RUNNING"], order: "DESC", offset, limit: 1000 });
      ids.push(...rows.filter((r) => query.version === undefined || r.defVersion === query.version).map((r) => r.id));
      if (rows.length < 1000) break;
    }
    return { status: 200, json: ids };
  },
});

export const getWorkflowRoute = defineConductorRoute({
  method: "GET",
  path: "/workflow/{workflowId}",
  auth: "read",
  summary: "A Workflow, with its tasks unless includeTasks=false",
  params: WorkflowIdParams,
  query: z.object({ includeTasks: booleanFlag(true) }),
  handler: async ({ deps, namespaceId, params, query }) => {
    const loaded = isUuid(params.workflowId) ? await loadConductorWorkflow(deps, namespaceId, params.workflowId, { includeTasks: query.includeTasks }) : undefined;
    if (loaded === undefined) throw notFound(`No such workflow found by id: ${params.workflowId}`);
    return { status: 200, json: loaded.workflow };
  },
});

export const workflowStatusRoute = defineConductorRoute({
  method: "GET",
  path: "/workflow/{workflowId}/status",
  auth: "read",
  summary: "A workflow's status summary: {workflowId, correlationId, status, output, variables}",
  params: WorkflowIdParams,
  query: z.object({ includeOutput: booleanFlag(false), includeVariables: booleanFlag(false) }),
  handler: async ({ deps, namespaceId, params, query }) => {
    const loaded = isUuid(params.workflowId) ? await loadConductorWorkflow(deps, namespaceId, params.workflowId, { includeTasks: false }) : undefined;
    if (loaded === undefined) throw notFound(`No such workflow found by id: ${params.workflowId}`);
    const w = loaded.workflow;
    return {
      status: 200,
      json: {
        workflowId: w.workflowId,
        correlationId: w.correlationId,
        status: w.status,
        ...(query.includeOutput ? { output: w.output } : {}),
        ...(query.includeVariables ? { variables: w.variables } : {}),
      },
    };
  },
});

const NOT_FOUND_CODES: ReadonlySet<string> = new Set(["not-found", "task-not-found", "definition-not-found"]);

/** An operator action's refusal as Conductor answers it: unknown run or task 404, a bad value 400, the wrong state 409. */
function refusal(result: ActionRefusal): ConductorError {
  if (NOT_FOUND_CODES.has(result.code)) return notFound(result.message);
  if (result.code === "invalid-input" || result.code === "unknown-node") return badRequest(result.message);
  return conflict(`${result.message} (${result.code})`);
}

/** A workflow id the actions can take: anything not a UUID names no workflow. */
function workflowIdOf(raw: string): string {
  if (!isUuid(raw)) throw notFound(`No such workflow found by id: ${raw}`);
  return raw;
}

/**
 * Runs an operator action on the path's workflow, in the caller's namespace
 * with its key as the actor; `input` is the rest of the action's input. A
 * refusal is thrown as Conductor answers it.
 */
async function actOnWorkflow(
  ctx: { deps: ConductorDeps; principal: Principal; namespaceId: string; params: { workflowId: string } },
  action: (deps: WorkflowActionDeps, input: unknown) => Promise<{ ok: true } | ActionRefusal>,
  input: Record<string, unknown> = {},
): Promise<void> {
  const result = await action(actionDeps(ctx.deps), { namespaceId: ctx.namespaceId, workflowId: workflowIdOf(ctx.params.workflowId), actor: actorOf(ctx.principal), ...input });
  if (!result.ok) throw refusal(result);
}

const EMPTY = { status: 200, text: "" } as const;

export const pauseWorkflowRoute = defineConductorRoute({
  method: "PUT",
  path: "/workflow/{workflowId}/pause",
  auth: "operate",
  summary: "Pause a running workflow",
  params: WorkflowIdParams,
  handler: async (ctx) => {
    await actOnWorkflow(ctx, pauseWorkflow);
    return EMPTY;
  },
});

export const resumeWorkflowRoute = defineConductorRoute({
  method: "PUT",
  path: "/workflow/{workflowId}/resume",
  auth: "operate",
  summary: "Resume a paused workflow",
  params: WorkflowIdParams,
  handler: async (ctx) => {
    await actOnWorkflow(ctx, resumeWorkflow);
    return EMPTY;
  },
});

export const terminateWorkflowRoute = defineConductorRoute({
  method: "DELETE",
  path: "/workflow/{workflowId}",
  auth: "operate",
  summary: "Terminate a running or paused workflow (and its sub-workflows)",
  params: WorkflowIdParams,
  query: z.object({ reason: z.string().min(1).max(2000).optional() }),
  handler: async (ctx) => {
    await actOnWorkflow(ctx, terminateWorkflow, ctx.query.reason === undefined ? {} : { reason: ctx.query.reason });
    return EMPTY;
  },
});

export const restartWorkflowRoute = defineConductorRoute({
  method: "POST",
  path: "/workflow/{workflowId}/restart",
  auth: "operate",
  summary: "Restart an ended workflow from the beginning, in place",
  params: WorkflowIdParams,
  query: z.object({ useLatestDefinitions: booleanFlag(false) }),
  handler: async (ctx) => {
    await actOnWorkflow(ctx, restartWorkflow, ctx.query.useLatestDefinitions ? { version: "latest" } : {});
    return EMPTY;
  },
});

export const retryWorkflowRoute = defineConductorRoute({
  method: "POST",
  path: "/workflow/{workflowId}/retry",
  auth: "operate",
  summary: "Retry the failed tasks of an ended workflow",
  params: WorkflowIdParams,
  query: z.object({ resumeSubworkflowTasks: booleanFlag(false) }),
  handler: async (ctx) => {
    await actOnWorkflow(ctx, retryWorkflow);
    return EMPTY;
  },
});

export const rerunWorkflowRoute = defineConductorRoute({
  method: "POST",
  path: "/workflow/{workflowId}/rerun",
  auth: "operate",
  summary: "Rerun an ended workflow from a task (RerunWorkflowRequest), or from the start; answers its id as text/plain",
  params: WorkflowIdParams,
  body: z.looseObject({
    reRunFromWorkflowId: z.string().nullish(),
    reRunFromTaskId: z.string().max(100).nullish(),
    workflowInput: JsonObject.nullish(),
    taskInput: JsonObject.nullish().refine((v) => v === null || v === undefined || Object.keys(v).length === 0, "taskInput is not supported: a rerun task reads its input from its expressions"),
    correlationId: z.string().nullish(),
  }),
  handler: async (ctx) => {
    const { deps, namespaceId, body } = ctx;
    const workflowId = workflowIdOf(ctx.params.workflowId);
    const input = body.workflowInput ?? undefined;
    if (body.reRunFromTaskId === undefined || body.reRunFromTaskId === null) {
      await actOnWorkflow(ctx, restartWorkflow, input === undefined ? {} : { input });
      return { status: 200, text: workflowId };
    }
    const task = isUuid(body.reRunFromTaskId) ? await getTaskInNamespace(deps.db, { namespaceId, workflowId, taskId: body.reRunFromTaskId }) : undefined;
    if (task === undefined) throw notFound(`No task ${body.reRunFromTaskId} in workflow ${workflowId}`);
    await actOnWorkflow(ctx, rerunWorkflow, { fromRef: task.refName, ...(input === undefined ? {} : { input }) });
    return { status: 200, text: workflowId };
  },
});

export const skipTaskRoute = defineConductorRoute({
  method: "PUT",
  path: "/workflow/{workflowId}/skiptask/{taskReferenceName}",
  auth: "operate",
  summary: "Skip a scheduled or in-progress task (SkipTaskRequest: taskOutput becomes its output)",
  params: z.object({ workflowId: z.string().min(1).max(100), taskReferenceName: z.string().min(1).max(400) }),
  body: z.looseObject({ taskInput: JsonObject.nullish(), taskOutput: JsonObject.nullish() }).optional(),
  handler: async (ctx) => {
    // A loop body task is named `<ref>__<iteration>` in Conductor; skip takes the node's ref (its latest task).
    const ref = ctx.params.taskReferenceName.replace(/__\d+$/, "");
    const output = ctx.body?.taskOutput;
    await actOnWorkflow(ctx, skipTask, { taskRef: ref, ...(output === undefined || output === null ? {} : { output }) });
    return EMPTY;
  },
});
