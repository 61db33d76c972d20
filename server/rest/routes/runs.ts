import { z } from "zod";
import { NameSchema, WORKFLOW_STATUSES } from "../../../engine";
import { PayloadResolutionError, resolvePayload, resolveTaskPayloads } from "../../lib/payload-offload";
import { startExecution } from "../../executions/start-execution";
import { InvalidTaskCursorError, listWorkflowTasks } from "../../store/task-executions";
import { getWorkflowExecution, InvalidCursorError, listWorkflowExecutions } from "../../store/workflow-executions";
import { createdByOfPrincipal } from "../../auth/api-keys";
import { defineRoute } from "../define-route";
import { HttpProblem, jsonPointer, validationProblem } from "../problem";
import {
  CursorSchema,
  RunSchema,
  RunSummarySchema,
  TaskSchema,
  TimestampSchema,
  UuidSchema,
  limitSchema,
  pageSchema,
  toRunDto,
  toRunSummaryDto,
  toTaskDto,
} from "../schemas";

const tags = ["Runs"];

const IDEMPOTENCY_STRATEGIES = ["RETURN_EXISTING", "FAIL", "FAIL_ON_RUNNING"] as const;

export const startRunRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/runs",
  auth: "operate",
  operationId: "startRun",
  summary: "Start a run of a definition",
  description:
    "Writes the run and queues its first evaluation; nothing is evaluated in the request. With an `Idempotency-Key`, a repeated start returns the run the key already names (200, `created: false`) unless `Idempotency-Strategy` says FAIL (409) or FAIL_ON_RUNNING (409 while that run is still running).",
  tags,
  headers: z.object({
    "idempotency-key": z.string().min(1).max(255).optional().meta({ description: "Makes the start happen at most once per key in the namespace." }),
    "idempotency-strategy": z.enum(IDEMPOTENCY_STRATEGIES).optional().meta({ description: "What a key already held does; RETURN_EXISTING by default." }),
  }),
  body: z.strictObject({
    name: NameSchema,
    version: z.int().min(1).optional().meta({ description: "The latest unarchived version when absent." }),
    input: z.record(z.string(), z.unknown()).optional(),
    correlationId: z.string().min(1).max(255).nullable().optional(),
    priority: z.int().min(0).max(99).optional(),
  }),
  responses: {
    201: z.object({ id: UuidSchema, created: z.literal(true) }),
    200: z.object({ id: UuidSchema, created: z.literal(false) }),
  },
  problems: [409],
  handler: async ({ deps, principal, namespace, headers, body }) => {
    const key = headers["idempotency-key"];
    if (key === undefined && headers["idempotency-strategy"] !== undefined) {
      throw validationProblem([{ pointer: "/headers/idempotency-strategy", message: "Idempotency-Strategy needs an Idempotency-Key" }]);
    }
    const result = await startExecution(deps, {
      namespaceId: namespace.id,
      name: body.name,
      version: body.version,
      input: body.input,
      correlationId: body.correlationId ?? null,
      priority: body.priority,
      idempotencyKey: key ?? null,
      idempotencyStrategy: headers["idempotency-strategy"],
      createdBy: createdByOfPrincipal(principal),
    });
    if (!result.ok) {
      switch (result.reason) {
        case "not-found":
          throw new HttpProblem("not-found", result.message);
        case "invalid-input":
          throw validationProblem(
            result.problems.map((p) => ({
              // startExecution reports priority and the key by field name, the input's problems by their path inside it.
              pointer: p.path[0] === "priority" ? "/body/priority" : p.path[0] === "idempotencyKey" ? "/headers/idempotency-key" : jsonPointer(["body", "input", ...p.path]),
              message: p.message,
            })),
          );
        case "conflict":
          throw new HttpProblem("conflict", `${result.message} (run ${result.existingWorkflowId})`);
      }
    }
    const location = `/api/v1/ns/${encodeURIComponent(namespace.name)}/runs/${result.workflowId}`;
    return result.created
      ? { status: 201, body: { id: result.workflowId, created: true as const }, headers: { location } }
      : { status: 200, body: { id: result.workflowId, created: false as const }, headers: { location } };
  },
});

/** Resolves an offloaded payload for a response; a lost blob is the server's failure, said plainly. */
async function resolved<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PayloadResolutionError) throw new HttpProblem("internal", error.message);
    throw error;
  }
}

export const getRunRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/runs/{runId}",
  auth: "read",
  operationId: "getRun",
  summary: "Get a run with a page of its tasks",
  description: "Tasks come in the order they were scheduled, keyset-paged: pass `tasks.nextCursor` as `taskCursor` for the next page. Offloaded payloads are resolved.",
  tags,
  params: z.object({ runId: UuidSchema }),
  query: z.object({ taskLimit: limitSchema(50, 100), taskCursor: CursorSchema.optional() }),
  responses: { 200: RunSchema.extend({ tasks: pageSchema(TaskSchema) }) },
  handler: async ({ deps, namespace, params, query }) => {
    const row = await getWorkflowExecution(deps.db, namespace.id, params.runId);
    if (row === undefined) throw new HttpProblem("not-found", `No run ${params.runId} in namespace ${namespace.name}`);
    let page;
    try {
      page = await listWorkflowTasks(deps.db, { namespaceId: namespace.id, workflowId: row.id, limit: query.taskLimit, cursor: query.taskCursor });
    } catch (error) {
      if (error instanceof InvalidTaskCursorError) throw validationProblem([{ pointer: "/query/taskCursor", message: error.message }]);
      throw error;
    }
    const [input, output, tasks] = await resolved(() =>
      Promise.all([
        resolvePayload(deps.blobs, { inline: row.input, ref: row.inputRef }, `the input of run ${row.id}`),
        resolvePayload(deps.blobs, { inline: row.output, ref: row.outputRef }, `the output of run ${row.id}`),
        resolveTaskPayloads(deps.blobs, page.items),
      ]),
    );
    return {
      status: 200,
      body: { ...toRunDto({ ...row, input, output }), tasks: { items: tasks.map(toTaskDto), nextCursor: page.nextCursor } },
    };
  },
});

export const searchRunsRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/runs",
  auth: "read",
  operationId: "searchRuns",
  summary: "Search runs, newest first",
  description: "Every filter is optional and they combine. Keyset-paged: pass `nextCursor` as `cursor` with the same filters for the next page.",
  tags,
  query: z.object({
    status: z.enum(WORKFLOW_STATUSES).optional(),
    workflow: NameSchema.optional().meta({ description: "The definition's name." }),
    correlationId: z.string().min(1).max(255).optional(),
    startedFrom: TimestampSchema.optional().meta({ description: "Runs started at or after this instant (ISO 8601)." }),
    startedBefore: TimestampSchema.optional().meta({ description: "Runs started before this instant (ISO 8601)." }),
    limit: limitSchema(20, 100),
    cursor: CursorSchema.optional(),
  }),
  responses: { 200: pageSchema(RunSummarySchema) },
  handler: async ({ deps, namespace, query }) => {
    try {
      const page = await listWorkflowExecutions(deps.db, {
        namespaceId: namespace.id,
        status: query.status,
        defName: query.workflow,
        correlationId: query.correlationId,
        startedFrom: query.startedFrom === undefined ? undefined : new Date(query.startedFrom),
        startedBefore: query.startedBefore === undefined ? undefined : new Date(query.startedBefore),
        limit: query.limit,
        cursor: query.cursor,
      });
      return { status: 200, body: { items: page.items.map(toRunSummaryDto), nextCursor: page.nextCursor } };
    } catch (error) {
      if (error instanceof InvalidCursorError) throw validationProblem([{ pointer: "/query/cursor", message: error.message }]);
      throw error;
    }
  },
});
