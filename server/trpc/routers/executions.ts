import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { TASK_STATUSES, WORKFLOW_STATUSES } from "@/engine";
import { actorOf } from "../../rest/actor";
import { actionDeps, humanTaskError } from "../action-results";
import { capPayload, toExecutionSummary, toTaskSummary } from "../../executions/execution-summaries";
import { InvalidSearchTermError, parseExecutionSearch } from "../../executions/execution-search";
import { PayloadResolutionError, resolvePayload } from "../../lib/payload-offload";
import {
  getExecutionSummary,
  lastWorkflowEventSeq,
  listChildExecutions,
  listTaskAttempts,
  listTaskSummaries,
} from "../../store/execution-views";
import { getHumanTaskByTaskId } from "../../store/human-tasks";
import { getTaskInNamespace } from "../../store/task-executions";
import { listTaskLogs } from "../../store/task-logs";
import { getWorkflowDefinition } from "../../store/workflow-definitions";
import { readWorkflowEvents } from "../../store/workflow-events";
import { getWorkflowExecution, InvalidCursorError, listWorkflowExecutions } from "../../store/workflow-executions";
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
import type { ActionRefusal } from "../../executions/actions";
import { namespaceProcedure, router } from "../init";
import type { TrpcContext } from "../init";

/**
 * The executions list and the execution page: read a run, its tasks, history,
 * logs and payloads, and act on it. Thin: reads are the repositories'
 * (store/workflow-executions.ts, store/execution-views.ts), actions are
 * server/executions/actions' (the REST run-actions call the same functions).
 * Live updates come over SSE (server/realtime/), not from here.
 */

// No transformer is configured, so a Date would reach the browser as a string
// while its type still said Date. The output schemas make the wire type honest.
const isoDate = z.date().transform((d) => d.toISOString());
const runId = z.guid("must be a run id");
const taskId = z.guid("must be a task id");

/** Run payloads above this come back null with `…Truncated: true`; `payload` loads them. */
const RUN_PAYLOAD_LIMIT_BYTES = 64 * 1024;
/** Task payloads above this (the offload threshold: anything offloaded) likewise. */
const TASK_PAYLOAD_LIMIT_BYTES = 256 * 1024;
/** `get` returns at most this many task rows (every attempt of every iteration); `tasksTruncated` says when there were more. */
const MAX_TASK_ROWS = 5000;
const MAX_CHILDREN = 500;

const executionSummaryOutput = z.object({
  id: z.string(),
  workflow: z.string(),
  version: z.number().int(),
  status: z.enum(WORKFLOW_STATUSES),
  correlationId: z.string().nullable(),
  startedAt: isoDate,
  endedAt: isoDate.nullable(),
  durationMs: z.number().nullable(),
  parentWorkflowId: z.string().nullable(),
  reasonForIncompletion: z.string().nullable(),
});

const taskSummaryOutput = z.object({
  id: z.string(),
  ref: z.string(),
  type: z.string(),
  iteration: z.number().int(),
  attempt: z.number().int(),
  status: z.enum(TASK_STATUSES),
  scheduledAt: isoDate,
  startedAt: isoDate.nullable(),
  endedAt: isoDate.nullable(),
  workerId: z.string().nullable(),
  pollCount: z.number().int(),
  reasonForIncompletion: z.string().nullable(),
  subWorkflowId: z.string().nullable(),
  parentRef: z.string().nullable(),
  forkIndex: z.number().int().nullable(),
});

const listInput = z.object({
  statuses: z.array(z.enum(WORKFLOW_STATUSES)).max(WORKFLOW_STATUSES.length).optional(),
  workflow: z.string().trim().min(1).max(200).optional(),
  version: z.number().int().min(1).optional(),
  startedAfter: z.iso.datetime({ offset: true }).optional(),
  startedBefore: z.iso.datetime({ offset: true }).optional(),
  correlationId: z.string().trim().min(1).max(255).optional(),
  search: z.string().max(2000).optional(),
  cursor: z.string().max(400).optional(),
  limit: z.number().int().min(1).max(100).default(50),
});

const runInput = z.object({ id: runId });

const historyEventOutput = z.object({
  seq: z.number().int(),
  at: isoDate,
  type: z.string(),
  ref: z.string().nullable(),
  taskId: z.string().nullable(),
  status: z.string().nullable(),
  data: z.unknown(),
});

const ok = z.object({ ok: z.literal(true) });

async function requireRun(ctx: TrpcContext & { namespaceId: string }, namespace: string, id: string) {
  const row = await getWorkflowExecution(ctx.db, ctx.namespaceId, id);
  if (row === undefined) throw new TRPCError({ code: "NOT_FOUND", message: `No run ${id} in ${namespace}` });
  return row;
}

async function resolved(work: () => Promise<unknown>): Promise<unknown> {
  try {
    return await work();
  } catch (error) {
    // A lost blob is the server's failure; say so plainly rather than the generic message.
    if (error instanceof PayloadResolutionError) throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
    throw error;
  }
}

/** Refusal codes about the request's values rather than the run's state. */
const BAD_REQUEST_CODES: ReadonlySet<string> = new Set(["invalid-input", "unknown-node", "unsupported-node"]);
const NOT_FOUND_CODES: ReadonlySet<string> = new Set(["not-found", "task-not-found", "definition-not-found"]);

/** An action's refusal as a tRPC error: values → BAD_REQUEST, unknown run/task → NOT_FOUND, state → CONFLICT. */
function refusalError(refusal: ActionRefusal): TRPCError {
  // The human-task rules (completeTask on a HUMAN task) share the inbox's mapping, field errors included.
  if (refusal.code === "forbidden" || refusal.code === "invalid-data") return humanTaskError(refusal);
  const code = BAD_REQUEST_CODES.has(refusal.code) ? "BAD_REQUEST" : NOT_FOUND_CODES.has(refusal.code) ? "NOT_FOUND" : "CONFLICT";
  return new TRPCError({ code, message: `${refusal.message} (${refusal.code})` });
}

function done(result: { ok: true } | ActionRefusal): { ok: true } {
  if (!result.ok) throw refusalError(result);
  return { ok: true };
}

const BULK_ACTIONS = ["terminate", "retry", "restart"] as const;

export const executionsRouter = router({
  /**
   * Runs of the namespace, newest first, keyset-paged on ("startedAt","id")
   * with a full-precision cursor (never OFFSET). Filters combine; `search`
   * terms are JSON containment on input/output (execution-search.ts). A bad
   * cursor or term is a BAD_REQUEST naming it, never an empty page.
   */
  list: namespaceProcedure("read")
    .input(listInput)
    .output(z.object({ items: z.array(executionSummaryOutput), nextCursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      let contains;
      try {
        contains = input.search === undefined ? [] : parseExecutionSearch(input.search);
      } catch (error) {
        if (error instanceof InvalidSearchTermError) throw new TRPCError({ code: "BAD_REQUEST", message: `search: ${error.message}` });
        throw error;
      }
      try {
        const page = await listWorkflowExecutions(ctx.db, {
          namespaceId: ctx.namespaceId,
          statuses: input.statuses,
          defName: input.workflow,
          defVersion: input.version,
          correlationId: input.correlationId,
          startedFrom: input.startedAfter === undefined ? undefined : new Date(input.startedAfter),
          startedBefore: input.startedBefore === undefined ? undefined : new Date(input.startedBefore),
          contains,
          limit: input.limit,
          cursor: input.cursor,
        });
        return { items: page.items.map(toExecutionSummary), nextCursor: page.nextCursor };
      } catch (error) {
        if (error instanceof InvalidCursorError) throw new TRPCError({ code: "BAD_REQUEST", message: `cursor: ${error.message}` });
        throw error;
      }
    }),

  /**
   * The execution page in one call: the run (payloads over 64 KB left out and
   * flagged), the graph of the version it ran, every task row without
   * payloads, the last history seq (open the stream with `?after=lastSeq`),
   * and its parent and children. Another namespace's run is NOT_FOUND.
   */
  get: namespaceProcedure("read")
    .input(runInput)
    .output(
      z.object({
        execution: executionSummaryOutput.extend({
          input: z.unknown(),
          output: z.unknown(),
          variables: z.unknown(),
          inputTruncated: z.boolean(),
          outputTruncated: z.boolean(),
          variablesTruncated: z.boolean(),
          /** Who or what started the run: a user or key, `schedule:<name>`, `webhook:<name>`. */
          startedBy: z.string().nullable(),
        }),
        definition: z.unknown(),
        tasks: z.array(taskSummaryOutput),
        tasksTruncated: z.boolean(),
        lastSeq: z.number().int(),
        parent: z.object({ id: z.string(), workflow: z.string() }).nullable(),
        children: z.array(z.object({ id: z.string(), workflow: z.string(), status: z.enum(WORKFLOW_STATUSES), parentTaskId: z.string().nullable() })),
      }),
    )
    .query(async ({ ctx, input }) => {
      // lastSeq first: a task row read after it can only be newer, so a stream
      // resumed from lastSeq replays anything the rows below might have missed.
      const row = await requireRun(ctx, input.namespace, input.id);
      const lastSeq = await lastWorkflowEventSeq(ctx.db, row.id);
      const [definition, tasks, children, parent] = await Promise.all([
        getWorkflowDefinition(ctx.db, ctx.namespaceId, row.defName, row.defVersion),
        listTaskSummaries(ctx.db, { namespaceId: ctx.namespaceId, workflowId: row.id, limit: MAX_TASK_ROWS + 1 }),
        listChildExecutions(ctx.db, { namespaceId: ctx.namespaceId, parentWorkflowId: row.id, limit: MAX_CHILDREN }),
        row.parentWorkflowId === null ? undefined : getExecutionSummary(ctx.db, ctx.namespaceId, row.parentWorkflowId),
      ]);
      const runInputValue = capPayload(row.input, row.inputRef, RUN_PAYLOAD_LIMIT_BYTES);
      const runOutputValue = capPayload(row.output, row.outputRef, RUN_PAYLOAD_LIMIT_BYTES);
      const variables = capPayload(row.variables, null, RUN_PAYLOAD_LIMIT_BYTES);
      return {
        execution: {
          ...toExecutionSummary(row),
          input: runInputValue.value,
          output: runOutputValue.value,
          variables: variables.value,
          inputTruncated: runInputValue.truncated,
          outputTruncated: runOutputValue.truncated,
          variablesTruncated: variables.truncated,
          startedBy: row.createdBy,
        },
        definition: definition?.graph ?? null,
        tasks: tasks.slice(0, MAX_TASK_ROWS).map(toTaskSummary),
        tasksTruncated: tasks.length > MAX_TASK_ROWS,
        lastSeq,
        parent: parent === undefined ? null : { id: parent.id, workflow: parent.defName },
        children: children.map((c) => ({ id: c.id, workflow: c.defName, status: c.status, parentTaskId: c.parentTaskId })),
      };
    }),

  /** One task row with its payloads (over 256 KB: null and flagged, load through `payload`) and every attempt of its (ref, iteration). */
  task: namespaceProcedure("read")
    .input(z.object({ id: runId, taskId }))
    .output(
      z.object({
        task: taskSummaryOutput.extend({
          taskDefName: z.string(),
          input: z.unknown(),
          output: z.unknown(),
          inputTruncated: z.boolean(),
          outputTruncated: z.boolean(),
        }),
        attempts: z.array(taskSummaryOutput),
        /** A HUMAN attempt's inbox item, where it is claimed and submitted under the human-task rules. */
        humanTaskId: z.string().nullable(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const task = await getTaskInNamespace(ctx.db, { namespaceId: ctx.namespaceId, workflowId: input.id, taskId: input.taskId });
      if (task === undefined) throw new TRPCError({ code: "NOT_FOUND", message: `No task ${input.taskId} in run ${input.id} of ${input.namespace}` });
      const attempts = await listTaskAttempts(ctx.db, { namespaceId: ctx.namespaceId, workflowId: task.workflowId, refName: task.refName, iteration: task.iteration });
      const taskInput = capPayload(task.input, task.inputRef, TASK_PAYLOAD_LIMIT_BYTES);
      const taskOutput = capPayload(task.output, task.outputRef, TASK_PAYLOAD_LIMIT_BYTES);
      return {
        task: {
          ...toTaskSummary(task),
          taskDefName: task.taskDefName,
          input: taskInput.value,
          output: taskOutput.value,
          inputTruncated: taskInput.truncated,
          outputTruncated: taskOutput.truncated,
        },
        attempts: attempts.map(toTaskSummary),
        humanTaskId: task.taskType === "HUMAN" ? ((await getHumanTaskByTaskId(ctx.db, ctx.namespaceId, task.id))?.id ?? null) : null,
      };
    }),

  /** A whole payload, resolved from the blob store when offloaded: what `get` and `task` flag as truncated. */
  payload: namespaceProcedure("read")
    .input(z.object({ id: runId, taskId: taskId.optional(), kind: z.enum(["input", "output", "variables"]) }))
    .output(z.object({ value: z.unknown() }))
    .query(async ({ ctx, input }) => {
      if (input.taskId === undefined) {
        const row = await requireRun(ctx, input.namespace, input.id);
        if (input.kind === "variables") return { value: row.variables };
        const stored = input.kind === "input" ? { inline: row.input, ref: row.inputRef } : { inline: row.output, ref: row.outputRef };
        return { value: await resolved(() => resolvePayload(ctx.blobs, stored, `the ${input.kind} of run ${row.id}`)) };
      }
      if (input.kind === "variables") throw new TRPCError({ code: "BAD_REQUEST", message: "kind: a task has no variables; omit taskId for the run's" });
      const task = await getTaskInNamespace(ctx.db, { namespaceId: ctx.namespaceId, workflowId: input.id, taskId: input.taskId });
      if (task === undefined) throw new TRPCError({ code: "NOT_FOUND", message: `No task ${input.taskId} in run ${input.id} of ${input.namespace}` });
      const stored = input.kind === "input" ? { inline: task.input, ref: task.inputRef } : { inline: task.output, ref: task.outputRef };
      return { value: await resolved(() => resolvePayload(ctx.blobs, stored, `the ${input.kind} of task ${task.refName}`)) };
    }),

  /** A task's log lines after `after` (a line id), oldest first; poll again with `after: next`. */
  logs: namespaceProcedure("read")
    .input(z.object({ id: runId, taskId, after: z.number().int().min(0).optional(), limit: z.number().int().min(1).max(1000).default(500) }))
    .output(z.object({ lines: z.array(z.object({ id: z.number().int(), at: isoDate, message: z.string() })), next: z.number().int() }))
    .query(async ({ ctx, input }) => {
      const task = await getTaskInNamespace(ctx.db, { namespaceId: ctx.namespaceId, workflowId: input.id, taskId: input.taskId });
      if (task === undefined) throw new TRPCError({ code: "NOT_FOUND", message: `No task ${input.taskId} in run ${input.id} of ${input.namespace}` });
      const rows = await listTaskLogs(ctx.db, { namespaceId: ctx.namespaceId, taskId: task.id, afterId: input.after, limit: input.limit });
      return {
        lines: rows.map((r) => ({ id: Number(r.id), at: r.at, message: r.line })),
        next: rows.length > 0 ? Number(rows.at(-1)?.id) : (input.after ?? 0),
      };
    }),

  /** The run's WorkflowEvents in seq order after `afterSeq`; a page shorter than `limit` is the end (for now). */
  history: namespaceProcedure("read")
    .input(z.object({ id: runId, afterSeq: z.number().int().min(0).default(0), limit: z.number().int().min(1).max(1000).default(200) }))
    .output(z.array(historyEventOutput))
    .query(async ({ ctx, input }) => {
      const row = await requireRun(ctx, input.namespace, input.id);
      const events = await readWorkflowEvents(ctx.db, row.id, { afterSeq: input.afterSeq, limit: input.limit });
      return events.map((e) => ({ seq: e.seq, at: e.at, type: e.type, ref: e.refName, taskId: e.taskId, status: e.status, data: e.data }));
    }),

  pause: namespaceProcedure("operate")
    .input(z.object({ id: runId, reason: z.string().trim().min(1).max(2000).optional() }))
    .output(ok)
    .mutation(async ({ ctx, input }) =>
      done(await pauseWorkflow(actionDeps(ctx), { namespaceId: ctx.namespaceId, workflowId: input.id, actor: actorOf(ctx.principal), reason: input.reason })),
    ),

  resume: namespaceProcedure("operate")
    .input(runInput)
    .output(ok)
    .mutation(async ({ ctx, input }) => done(await resumeWorkflow(actionDeps(ctx), { namespaceId: ctx.namespaceId, workflowId: input.id, actor: actorOf(ctx.principal) }))),

  terminate: namespaceProcedure("operate")
    .input(z.object({ id: runId, reason: z.string().trim().min(1).max(2000).optional() }))
    .output(ok)
    .mutation(async ({ ctx, input }) =>
      done(
        await terminateWorkflow(actionDeps(ctx), {
          namespaceId: ctx.namespaceId,
          workflowId: input.id,
          actor: actorOf(ctx.principal),
          ...(input.reason === undefined ? {} : { reason: input.reason }),
        }),
      ),
    ),

  /** Retry from the failed tasks of a FAILED, TIMED_OUT or TERMINATED run. */
  retry: namespaceProcedure("operate")
    .input(runInput)
    .output(ok)
    .mutation(async ({ ctx, input }) => done(await retryWorkflow(actionDeps(ctx), { namespaceId: ctx.namespaceId, workflowId: input.id, actor: actorOf(ctx.principal) }))),

  /** Rerun an ended run from node `fromRef` (it and everything downstream), optionally with a new workflow input. */
  rerun: namespaceProcedure("operate")
    .input(z.object({ id: runId, fromRef: z.string().min(1).max(400), input: z.record(z.string(), z.unknown()).optional() }))
    .output(ok)
    .mutation(async ({ ctx, input }) =>
      done(
        await rerunWorkflow(actionDeps(ctx), {
          namespaceId: ctx.namespaceId,
          workflowId: input.id,
          actor: actorOf(ctx.principal),
          fromRef: input.fromRef,
          ...(input.input === undefined ? {} : { input: input.input }),
        }),
      ),
    ),

  /** Restart an ended run from the beginning, in place, on the version it ran or the latest. */
  restart: namespaceProcedure("operate")
    .input(z.object({ id: runId, version: z.enum(["same", "latest"]).default("same") }))
    .output(ok)
    .mutation(async ({ ctx, input }) =>
      done(
        await restartWorkflow(actionDeps(ctx), {
          namespaceId: ctx.namespaceId,
          workflowId: input.id,
          actor: actorOf(ctx.principal),
          ...(input.version === "latest" ? { version: "latest" as const } : {}),
        }),
      ),
    ),

  /** Mark an open task of a live run COMPLETED by hand (its latest row for `ref`) and carry on. */
  skipTask: namespaceProcedure("operate")
    .input(z.object({ id: runId, ref: z.string().min(1).max(400), output: z.record(z.string(), z.unknown()).optional(), reason: z.string().max(2000).optional() }))
    .output(ok)
    .mutation(async ({ ctx, input }) =>
      done(
        await skipTask(actionDeps(ctx), {
          namespaceId: ctx.namespaceId,
          workflowId: input.id,
          actor: actorOf(ctx.principal),
          taskRef: input.ref,
          ...(input.output === undefined ? {} : { output: input.output }),
          ...(input.reason === undefined ? {} : { reason: input.reason }),
        }),
      ),
    ),

  /** Complete (or fail) an IN_PROGRESS WAIT or HUMAN task by hand. */
  completeTask: namespaceProcedure("operate")
    .input(
      z.object({
        id: runId,
        taskId,
        output: z.record(z.string(), z.unknown()).default({}),
        status: z.enum(["COMPLETED", "FAILED"]).default("COMPLETED"),
        reason: z.string().max(2000).optional(),
      }),
    )
    .output(ok)
    .mutation(async ({ ctx, input }) =>
      done(
        await completeExternalTask(actionDeps(ctx), {
          namespaceId: ctx.namespaceId,
          workflowId: input.id,
          actor: actorOf(ctx.principal),
          taskId: input.taskId,
          output: input.output,
          status: input.status,
          ...(input.reason === undefined ? {} : { reason: input.reason }),
        }),
      ),
    ),

  /**
   * One action on up to 100 runs, each in its own transaction (one run's
   * refusal does not undo another's success), one after another so a bulk
   * terminate holds at most one workflow lock at a time.
   */
  bulk: namespaceProcedure("operate")
    .input(z.object({ action: z.enum(BULK_ACTIONS), ids: z.array(runId).min(1).max(100) }))
    .output(z.object({ results: z.array(z.object({ id: z.string(), ok: z.boolean(), error: z.string().optional() })) }))
    .mutation(async ({ ctx, input }) => {
      const deps = actionDeps(ctx);
      const results: { id: string; ok: boolean; error?: string }[] = [];
      for (const id of [...new Set(input.ids)]) {
        const base = { namespaceId: ctx.namespaceId, workflowId: id, actor: actorOf(ctx.principal) };
        const result =
          input.action === "terminate" ? await terminateWorkflow(deps, base) : input.action === "retry" ? await retryWorkflow(deps, base) : await restartWorkflow(deps, base);
        results.push(result.ok ? { id, ok: true } : { id, ok: false, error: `${result.message} (${result.code})` });
      }
      return { results };
    }),
});
