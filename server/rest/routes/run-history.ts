import { z } from "zod";
import { historyMessageData } from "../../realtime/execution-stream";
import { readWorkflowEvents } from "../../store/workflow-events";
import { getWorkflowExecution } from "../../store/workflow-executions";
import { defineRoute } from "../define-route";
import { HttpProblem } from "../problem";
import { TimestampSchema, UuidSchema, limitSchema } from "../schemas";

/**
 * A run's recorded history, for export: its WorkflowEvents in seq order, one
 * page at a time. The shape of each event is the live stream's `history`
 * message (status deltas, never task input or output), so what a reader may
 * see here is exactly what the run page already shows; payloads come from
 * GET /runs/{runId}, whose tasks carry the outputs a replay feeds back.
 * `nf replay` reads both (cli/run-history.ts).
 */

const HistoryEventSchema = z.object({
  seq: z.int(),
  at: TimestampSchema,
  type: z.string().meta({ description: "WORKFLOW_STARTED, TASK_SCHEDULED, TASK_UPDATED, WORKFLOW_RETRIED, …" }),
  ref: z.string().nullable(),
  taskId: UuidSchema.nullable(),
  status: z.string().nullable(),
  iteration: z.int().optional(),
  attempt: z.int().optional(),
  reason: z.string().optional().meta({ description: "At most 500 characters." }),
  workflowId: UuidSchema.optional().meta({ description: "The child run a SUB_WORKFLOW_STARTED (or failure workflow) event names." }),
});

export const getRunHistoryRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/runs/{runId}/history",
  auth: "read",
  operationId: "getRunHistory",
  summary: "Export a run's recorded history, oldest event first",
  description:
    "The run's WorkflowEvents in seq order (gap-free per run), keyset-paged: pass `nextAfter` as `after` for the next page; it is null on the last page. Each event carries status deltas only; task payloads come from GET /runs/{runId}.",
  tags: ["Runs"],
  params: z.object({ runId: UuidSchema }),
  query: z.object({
    after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0).meta({ description: "Events with seq above this; 0 (the default) for the first page." }),
    limit: limitSchema(500, 1000),
  }),
  responses: {
    200: z.object({
      runId: UuidSchema,
      workflowName: z.string(),
      workflowVersion: z.int(),
      status: z.string().meta({ description: "The run's status now." }),
      events: z.array(HistoryEventSchema),
      nextAfter: z.int().nullable(),
    }),
  },
  handler: async ({ deps, namespace, params, query }) => {
    const run = await getWorkflowExecution(deps.db, namespace.id, params.runId);
    if (run === undefined) throw new HttpProblem("not-found", `No run ${params.runId} in namespace ${namespace.name}`);
    const rows = await readWorkflowEvents(deps.db, run.id, { afterSeq: query.after, limit: query.limit });
    const events = rows.map((row) => {
      const message = historyMessageData(row);
      return { ...message, at: row.at.toISOString() };
    });
    return {
      status: 200,
      body: {
        runId: run.id,
        workflowName: run.defName,
        workflowVersion: run.defVersion,
        status: run.status,
        events: events as z.input<typeof HistoryEventSchema>[],
        nextAfter: rows.length === query.limit ? rows.at(-1)!.seq : null,
      },
    };
  },
});
