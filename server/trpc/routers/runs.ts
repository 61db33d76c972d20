import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { NameSchema, TASK_STATUSES, WORKFLOW_STATUSES } from "@/engine";
import { createdByOfPrincipal } from "../../auth/api-keys";
import { resolvePayload } from "../../payload-offload";
import { startExecution } from "../../start-execution";
import { InvalidTaskCursorError, listWorkflowTasks } from "../../store/task-executions";
import { getWorkflowExecution } from "../../store/workflow-executions";
import { namespaceProcedure, router } from "../init";
import { InputProblemsError } from "../problem-errors";

/**
 * Runs from the console: start one (the editor's Run dialog) and read one
 * (the run page). Thin: the work is startExecution's and the repositories';
 * the REST routes (server/rest/routes/runs.ts) call the same functions.
 */

// No transformer is configured, so a Date would reach the browser as a string
// while its type still said Date. The output schemas make the wire type honest.
const isoDate = z.date().transform((d) => d.toISOString());

const runStartInput = z.object({
  name: NameSchema,
  /** Omitted: the latest unarchived version. */
  version: z.number().int().min(1).optional(),
  input: z.record(z.string(), z.unknown()).default({}),
  correlationId: z.string().trim().min(1).max(255).optional(),
});

const runGetInput = z.object({
  id: z.guid("must be a run id"),
  /** Tasks in the order they were scheduled, a page at a time. */
  taskLimit: z.number().int().min(1).max(1000).default(500),
  /** `tasks.nextCursor` of the previous answer. */
  taskCursor: z.string().min(1).max(200).optional(),
});

const taskRowOutput = z.object({
  id: z.string(),
  refName: z.string(),
  taskType: z.string(),
  taskDefName: z.string(),
  iteration: z.number().int(),
  attempt: z.number().int(),
  status: z.enum(TASK_STATUSES),
  scheduledAt: isoDate,
  startedAt: isoDate.nullable(),
  endedAt: isoDate.nullable(),
  workerId: z.string().nullable(),
  pollCount: z.number().int(),
  reasonForIncompletion: z.string().nullable(),
  parentRef: z.string().nullable(),
  forkIndex: z.number().int().nullable(),
  /** The child run of a SUB_WORKFLOW task. */
  subWorkflowId: z.string().nullable(),
});

const runOutput = z.object({
  id: z.string(),
  defName: z.string(),
  defVersion: z.number().int(),
  status: z.enum(WORKFLOW_STATUSES),
  correlationId: z.string().nullable(),
  priority: z.number().int(),
  parentWorkflowId: z.string().nullable(),
  startedAt: isoDate,
  endedAt: isoDate.nullable(),
  updatedAt: isoDate,
  reasonForIncompletion: z.string().nullable(),
  failedTaskRef: z.string().nullable(),
  createdBy: z.string().nullable(),
  input: z.unknown(),
  output: z.unknown(),
  variables: z.unknown(),
  tasks: z.object({ items: z.array(taskRowOutput), nextCursor: z.string().nullable() }),
});

export const runsRouter = router({
  /**
   * Starts a run and returns its id. Writes rows and queues the first
   * evaluation; nothing is evaluated here (DESIGN.md invariant 1). An input
   * its workflow's inputSchema refuses is a BAD_REQUEST whose cause — over
   * HTTP `error.data.inputProblems` — lists each problem with its path.
   */
  start: namespaceProcedure("operate")
    .input(runStartInput)
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const result = await startExecution(
        { db: ctx.db, blobs: ctx.blobs },
        {
          namespaceId: ctx.namespaceId,
          name: input.name,
          version: input.version,
          input: input.input,
          correlationId: input.correlationId ?? null,
          createdBy: createdByOfPrincipal(ctx.principal),
        },
      );
      if (result.ok) return { id: result.workflowId };
      switch (result.reason) {
        case "not-found":
          throw new TRPCError({ code: "NOT_FOUND", message: result.message });
        case "invalid-input": {
          const cause = new InputProblemsError(result.problems);
          throw new TRPCError({ code: "BAD_REQUEST", message: cause.message, cause });
        }
        case "conflict":
          // Only an idempotency key conflicts, and this procedure sends none.
          throw new TRPCError({ code: "CONFLICT", message: result.message });
      }
    }),

  /** One run with its payloads resolved and a page of its task rows. A run of another namespace is NOT_FOUND, like one that does not exist. */
  get: namespaceProcedure("read")
    .input(runGetInput)
    .output(runOutput)
    .query(async ({ ctx, input }) => {
      const row = await getWorkflowExecution(ctx.db, ctx.namespaceId, input.id);
      if (row === undefined) throw new TRPCError({ code: "NOT_FOUND", message: `No run ${input.id} in ${input.namespace}` });
      let page;
      try {
        page = await listWorkflowTasks(ctx.db, { namespaceId: ctx.namespaceId, workflowId: row.id, limit: input.taskLimit, cursor: input.taskCursor });
      } catch (error) {
        if (error instanceof InvalidTaskCursorError) throw new TRPCError({ code: "BAD_REQUEST", message: error.message });
        throw error;
      }
      // Task payloads are not sent: a page of 500 tasks could carry 500 payloads. The run's own are resolved
      // (a lost blob is a server failure, and surfaces as one).
      const [runInput, runOutputValue] = await Promise.all([
        resolvePayload(ctx.blobs, { inline: row.input, ref: row.inputRef }, `the input of run ${row.id}`),
        resolvePayload(ctx.blobs, { inline: row.output, ref: row.outputRef }, `the output of run ${row.id}`),
      ]);
      return {
        id: row.id,
        defName: row.defName,
        defVersion: row.defVersion,
        status: row.status,
        correlationId: row.correlationId,
        priority: row.priority,
        parentWorkflowId: row.parentWorkflowId,
        startedAt: row.startedAt,
        endedAt: row.endedAt,
        updatedAt: row.updatedAt,
        reasonForIncompletion: row.reasonForIncompletion,
        failedTaskRef: row.failedTaskRef,
        createdBy: row.createdBy,
        input: runInput,
        output: runOutputValue,
        variables: row.variables,
        tasks: {
          items: page.items.map((task) => ({
            id: task.id,
            refName: task.refName,
            taskType: task.taskType,
            taskDefName: task.taskDefName,
            iteration: task.iteration,
            attempt: task.attempt,
            status: task.status,
            scheduledAt: task.scheduledAt,
            startedAt: task.startedAt,
            endedAt: task.endedAt,
            workerId: task.workerId,
            pollCount: task.pollCount,
            reasonForIncompletion: task.reasonForIncompletion,
            parentRef: task.parentRef,
            forkIndex: task.forkIndex,
            subWorkflowId: task.subWorkflowId,
          })),
          nextCursor: page.nextCursor,
        },
      };
    }),
});
