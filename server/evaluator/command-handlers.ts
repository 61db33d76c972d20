import { sql } from "kysely";
import type { Transaction } from "kysely";
import { json } from "../../db/json";
import type { Database, TaskExecutionRow, WorkflowExecutionRow } from "../../db/schema";
import type { Command, WorkflowEndCommand, WorkflowEndStatus } from "../../engine";
import { ensureInlineDefinition } from "../executions/inline-definition";
import { startNestedExecution } from "../executions/start-execution";
import type { StartExecutionResult } from "../executions/start-execution";
import { afterWorkflowEnded, terminateWorkflowTree } from "../executions/workflow-lifecycle";
import { openHumanTask } from "../human-tasks/open-human-task";
import { enqueueDecide } from "../store/decide-queues";
import { cancelOpenHumanTasks } from "../store/human-tasks";
import { transitionTask } from "../store/task-executions";
import { armTimer, cancelTimers } from "../store/timers";
import { CommandContext, describeKey, endedByDecider, inlineOf, keyText, refOf } from "./command-context";
import type { CommandDeps, EvaluationTail } from "./command-context";

/**
 * One handler per engine command kind, looked up by the command's `kind` (as
 * Temporal's Activator has a method per activation job): each applies its
 * command inside the evaluation's transaction, through the workflow's
 * {@link CommandContext}. A kind without a handler does not compile.
 */
type CommandOf<K extends Command["kind"]> = Extract<Command, { kind: K }>;
type CommandHandler<K extends Command["kind"]> = (ctx: CommandContext, command: CommandOf<K>) => Promise<void> | void;
type CommandHandlers = { readonly [K in Command["kind"]]: CommandHandler<K> };

/**
 * Applies `commands` in order inside the evaluation's transaction and returns
 * what its caller writes for every workflow of the transaction at once. Every
 * compare-and-set that matches no row throws a CompareAndSetMiss, which rolls
 * everything back — the claim included, so the workflow stays queued.
 */
export async function applyCommands(
  deps: CommandDeps,
  trx: Transaction<Database>,
  wf: WorkflowExecutionRow,
  frontier: readonly TaskExecutionRow[],
  commands: readonly Command[],
  nowMs: number,
): Promise<EvaluationTail> {
  const ctx = new CommandContext(deps, trx, wf, frontier, nowMs);
  for (const c of commands) {
    // A command that writes may read or name a row just scheduled, so the run of
    // scheduled tasks before it is inserted first. markSeen writes nothing and
    // reads only the frontier as loaded; decide emits it after every schedule of
    // the evaluation, so flushing for it inserted each chain step's next task in
    // a statement of its own instead of the transaction's one (finishTails):
    // 4,162–4,620 inserts against ~1,400 in a 20-second closed loop of ~2,100
    // transactions.
    if (c.kind !== "scheduleTask" && c.kind !== "markSeen") await ctx.flushScheduled();
    await applyCommand(ctx, c);
  }
  return ctx.tail();
}

function applyCommand<K extends Command["kind"]>(ctx: CommandContext, command: CommandOf<K>): Promise<void> | void {
  const handler = COMMAND_HANDLERS[command.kind] as CommandHandler<K> | undefined;
  if (handler === undefined) throw new Error(`evaluator: unknown command ${JSON.stringify(command.kind)}`);
  return handler(ctx, command);
}

/** completeTask and failTask: a task the decider ends itself (no row yet) is inserted ended; a frontier task is moved. */
async function endTask(ctx: CommandContext, c: CommandOf<"completeTask" | "failTask">): Promise<void> {
  const { trx, workflowId, now } = ctx;
  const type = c.kind === "completeTask" ? "TASK_COMPLETED" : "TASK_FAILED";
  if (c.taskId === undefined) {
    const output = await ctx.store(c.output ?? {});
    const created = await ctx.insertOne({
      ...endedByDecider(c, c.status, now),
      input: c.input ?? {},
      output: inlineOf(output),
      outputRef: refOf(output),
      reasonForIncompletion: c.reasonForIncompletion ?? null,
      startedAt: now,
    });
    if (created) ctx.events.push({ type, refName: c.key.ref, taskId: created.id, status: c.status, data: taskTimes(now, now) });
    return;
  }
  await ctx.dequeue(c.taskId);
  const row = await transitionTask(
    trx,
    { workflowId, taskId: c.taskId, from: c.from ?? ctx.byId.get(c.taskId)?.status ?? "IN_PROGRESS" },
    {
      status: c.status,
      ...(c.output !== undefined ? { output: c.output } : {}),
      ...(c.reasonForIncompletion !== undefined ? { reasonForIncompletion: c.reasonForIncompletion } : {}),
      endedAt: now,
      deciderSeenAt: now,
      updatedAt: now,
    },
  );
  if (!row) ctx.miss(`${c.kind} ${describeKey(c.key)} from ${c.from}`);
  // A HUMAN attempt the decider ended (its timeoutSeconds ran out) leaves no item open in anyone's inbox.
  if (row.taskType === "HUMAN") await cancelOpenHumanTasks(trx, workflowId, { taskId: c.taskId, now, status: c.status === "TIMED_OUT" ? "EXPIRED" : "CANCELED" });
  ctx.events.push({
    type,
    refName: c.key.ref,
    taskId: c.taskId,
    status: c.status,
    data: { ...taskTimes(row.startedAt, now), ...(c.reasonForIncompletion ? { reason: c.reasonForIncompletion } : {}) },
  });
}

/**
 * The task's own start and end, for an event that ends (or starts) it. The
 * event's `at` is when the decider wrote it — for a worker's report, the
 * evaluation after it — so a live view that took `at` for the task's times
 * showed a different duration than the stored row (0 ms for a task that
 * started and failed between two snapshots).
 */
function taskTimes(startedAt: Date | null, endedAt: Date | null): { startedAt?: string; endedAt?: string } {
  return { ...(startedAt ? { startedAt: startedAt.toISOString() } : {}), ...(endedAt ? { endedAt: endedAt.toISOString() } : {}) };
}

const WORKFLOW_END_STATUS = {
  completeWorkflow: "COMPLETED",
  failWorkflow: "FAILED",
  terminateWorkflow: "TERMINATED",
  timeOutWorkflow: "TIMED_OUT",
} as const satisfies Record<WorkflowEndCommand["kind"], WorkflowEndStatus>;

/** The four ends of a workflow: the ending is written with the finish; the parent, if any, is told; a failure workflow starts. */
async function endWorkflow(ctx: CommandContext, c: WorkflowEndCommand): Promise<void> {
  const { trx, wf, workflowId, namespaceId, now, deps } = ctx;
  const status = WORKFLOW_END_STATUS[c.kind];
  const reason = c.kind === "completeWorkflow" ? null : c.reason;
  const failedTaskRef = c.kind === "failWorkflow" ? c.failedTaskRef : c.kind === "timeOutWorkflow" ? c.timedOutTaskRef : undefined;
  const output = await ctx.store(c.output);
  // Written with the version bump, and the run's open inbox rows canceled, in the
  // transaction's finish (finishEvaluations): one UPDATE of the run row, not two.
  ctx.ending = { status, output: inlineOf(output), outputRef: refOf(output), reasonForIncompletion: reason, failedTaskRef: failedTaskRef ?? null };
  // Its timers are left to fire: the poller drops a timer whose workflow
  // has ended (timer-poller.ts). Deleting them here cost every run a
  // statement that scans every "Timers" partition, which has no index on
  // "workflowId" (timers.ts): O(pending timers) per completed run.
  // Terminating a workflow still deletes them (workflow-lifecycle.ts).
  ctx.events.push({ type: `WORKFLOW_${status}`, status, data: reason ? { reason } : {} });
  await afterWorkflowEnded(
    trx,
    { id: workflowId, namespaceId, status, output: c.output, reasonForIncompletion: reason, parentWorkflowId: wf.parentWorkflowId, parentTaskId: wf.parentTaskId },
    now,
  );
  if ((c.kind === "failWorkflow" || c.kind === "timeOutWorkflow") && c.failureWorkflow !== undefined) {
    const started = await startNestedExecution(trx, deps.blobs, {
      namespaceId,
      name: c.failureWorkflow.name,
      input: { ...c.failureWorkflow.input, failedWorkflow: { workflowId, defName: wf.defName, defVersion: wf.defVersion, status, reason } },
      ...(wf.correlationId !== null ? { correlationId: wf.correlationId } : {}),
      priority: wf.priority,
    });
    if (started.ok) {
      ctx.events.push({ type: "FAILURE_WORKFLOW_STARTED", data: { name: c.failureWorkflow.name, workflowId: started.workflowId } });
    } else {
      // The failure is already decided; a failure workflow that cannot start is recorded, never silently dropped.
      deps.logger?.error({ workflowId, failureWorkflow: c.failureWorkflow.name, reason: startFailure(started) }, "decider: failureWorkflow not started");
      ctx.events.push({ type: "FAILURE_WORKFLOW_NOT_STARTED", data: { name: c.failureWorkflow.name, reason: startFailure(started) } });
    }
  }
}

/** SUB_WORKFLOW and START_WORKFLOW: start the other workflow in this transaction; a start that fails fails the task. */
async function startOtherWorkflow(ctx: CommandContext, c: CommandOf<"startSubWorkflow" | "startWorkflow">): Promise<void> {
  const { trx, wf, workflowId, namespaceId, now, deps } = ctx;
  // Side effects of a scheduleTask whose insert was absorbed were applied by the evaluation that inserted it.
  if (ctx.absorbed.has(keyText(c.key))) return;
  const taskId = ctx.taskIdOf(c.key);
  if (taskId === undefined) throw new Error(`${c.kind} ${describeKey(c.key)}: no task row was inserted or started for it`);
  // An inline definition is stored under its content's name first (inline-definition.ts), then started like any other.
  const inline = c.kind === "startSubWorkflow" && c.workflowDefinition !== undefined ? await ensureInlineDefinition(trx, namespaceId, c.workflowDefinition) : undefined;
  const target = inline?.ok === true ? { name: inline.name, version: inline.version } : { name: c.name, version: c.version };
  const started: StartExecutionResult =
    inline?.ok === false
      ? { ok: false, reason: "not-found", message: inline.message }
      : await startNestedExecution(trx, deps.blobs, {
          namespaceId,
          name: target.name,
          ...(target.version !== undefined ? { version: target.version } : {}),
          input: c.input,
          ...(c.correlationId !== undefined ? { correlationId: c.correlationId } : {}),
          priority: c.kind === "startSubWorkflow" ? c.priority : (c.priority ?? wf.priority),
          ...(c.kind === "startWorkflow" && c.idempotencyKey !== undefined ? { idempotencyKey: c.idempotencyKey, idempotencyStrategy: c.idempotencyStrategy ?? "RETURN_EXISTING" } : {}),
          ...(c.kind === "startSubWorkflow" ? { parentWorkflowId: workflowId, parentTaskId: taskId } : {}),
        });
  if (!started.ok) {
    // Failed like a worker's failure, unseen: the next evaluation applies the retry policy.
    await ctx.endStartedTask(c.key, taskId, "FAILED", {}, `Could not start workflow "${c.name}": ${startFailure(started)}`);
  } else if (c.kind === "startSubWorkflow") {
    await trx.updateTable("TaskExecutions").set({ subWorkflowId: started.workflowId, updatedAt: now }).where("workflowId", "=", workflowId).where("id", "=", taskId).execute();
    ctx.events.push({ type: "SUB_WORKFLOW_STARTED", refName: c.key.ref, taskId, data: { workflowId: started.workflowId, name: c.name } });
  } else {
    await ctx.endStartedTask(c.key, taskId, "COMPLETED", { workflowId: started.workflowId }, null);
  }
}

// A handler that calls ctx.miss annotates `ctx`: TypeScript narrows after a `never` method only when the object's
// type is written out, not inferred from the table's type.
const COMMAND_HANDLERS: CommandHandlers = {
  async scheduleTask(ctx, c) {
    ctx.schedule(c, await ctx.store(c.input));
  },

  completeTask: endTask,
  failTask: endTask,

  async skipTask(ctx, c) {
    const created = await ctx.insertOne(endedByDecider(c, "SKIPPED", ctx.now));
    if (created) ctx.events.push({ type: "TASK_SKIPPED", refName: c.key.ref, taskId: created.id, status: "SKIPPED" });
  },

  async cancelTask(ctx: CommandContext, c) {
    const { trx, workflowId, namespaceId, now } = ctx;
    const childId = ctx.byId.get(c.taskId)?.subWorkflowId;
    if (childId) {
      // Lock order parent → child: this evaluation holds the parent; a child
      // evaluation holds the child and touches only this task row, which the
      // compare-and-set below then finds moved on (a miss, retried).
      await terminateWorkflowTree(trx, { workflowId: childId, namespaceId, reason: `Parent workflow ${workflowId}: ${c.reason}`, notifyParent: false, now });
    }
    await ctx.dequeue(c.taskId);
    const row = await transitionTask(
      trx,
      { workflowId, taskId: c.taskId, from: c.from },
      { status: "CANCELED", reasonForIncompletion: c.reason, endedAt: now, deciderSeenAt: now, updatedAt: now },
    );
    if (!row) ctx.miss(`cancelTask ${describeKey(c.key)} from ${c.from}`);
    if (row.taskType === "HUMAN") await cancelOpenHumanTasks(trx, workflowId, { taskId: c.taskId, now });
    ctx.events.push({ type: "TASK_CANCELED", refName: c.key.ref, taskId: c.taskId, status: "CANCELED", data: { ...taskTimes(row.startedAt, now), reason: c.reason } });
  },

  async startTask(ctx: CommandContext, c) {
    const { trx, workflowId, now } = ctx;
    const row = await transitionTask(trx, { workflowId, taskId: c.taskId, from: c.from }, { status: "IN_PROGRESS", input: c.input, startedAt: now, updatedAt: now });
    if (!row) ctx.miss(`startTask ${describeKey(c.key)} from ${c.from}`);
    ctx.inserted.set(keyText(c.key), c.taskId);
    if (row.taskType === "HUMAN") await openHumanTask(trx, row, c.input, now);
    ctx.events.push({ type: "TASK_STARTED", refName: c.key.ref, taskId: c.taskId, status: "IN_PROGRESS", data: taskTimes(now, null) });
  },

  async updateTask(ctx: CommandContext, c) {
    const { workflowId } = ctx;
    const taskId = ctx.taskIdOf(c.key, c.taskId);
    const row = await transitionTask(
      ctx.trx,
      taskId !== undefined ? { workflowId, taskId, from: c.from } : { workflowId, key: c.key, from: c.from },
      { output: c.output, updatedAt: ctx.now },
    );
    if (!row) ctx.miss(`updateTask ${describeKey(c.key)} from ${c.from}`);
    ctx.events.push({ type: "TASK_UPDATED", refName: c.key.ref, taskId: row.id, status: row.status });
  },

  async aggregateForkOutput(ctx: CommandContext, c) {
    const id = await aggregateForkOutput(ctx.trx, ctx.workflowId, c, ctx.now);
    if (id === undefined) ctx.miss(`aggregateForkOutput ${describeKey(c.key)} (${c.status}, ${c.total} instances)`);
    ctx.events.push({ type: c.status === "COMPLETED" ? "TASK_COMPLETED" : "TASK_FAILED", refName: c.key.ref, taskId: id, status: c.status });
  },

  async setVariables(ctx, c) {
    await ctx.trx.updateTable("WorkflowExecutions").set({ variables: json(c.variables) }).where("id", "=", ctx.workflowId).execute();
    ctx.events.push({ type: "VARIABLES_SET", data: { variables: c.variables } });
  },

  async armTimer(ctx, c) {
    // Side effects of a scheduleTask whose insert was absorbed were applied by the evaluation that inserted it.
    if (c.key !== undefined && ctx.absorbed.has(keyText(c.key))) return;
    const taskId = c.key === undefined ? undefined : ctx.taskIdOf(c.key, c.taskId);
    await armTimer(ctx.trx, {
      kind: c.timer,
      fireAt: new Date(c.fireAt),
      namespaceId: ctx.namespaceId,
      workflowId: ctx.workflowId,
      taskId: taskId ?? null,
      payload: c.key === undefined ? {} : { key: c.key },
    });
  },

  async cancelTimer(ctx, c) {
    await cancelTimers(ctx.trx, { workflowId: ctx.workflowId, taskId: c.taskId });
  },

  markSeen(ctx, c) {
    // Stamped in the transaction's last statement (finishEvaluations, via finishTails).
    ctx.seen.push(...c.taskIds);
    // A worker's report (and an operator's completion) ends a task without
    // writing history: the row lock is the decider's. The decider records
    // the end here, when it first sees it, so the run's history — and the
    // live view that follows it — shows every task ending, once: a row is
    // seen once (deciderSeenAt), and rows this evaluation ended itself are
    // born seen or recorded where they end.
    for (const taskId of c.taskIds) {
      const row = ctx.byId.get(taskId);
      if (!row || row.endedAt === null) continue;
      ctx.events.push({
        type: `TASK_${row.status}`,
        refName: row.refName,
        taskId,
        status: row.status,
        data: {
          iteration: row.iteration,
          attempt: row.attempt,
          ...taskTimes(row.startedAt, row.endedAt),
          ...(row.reasonForIncompletion ? { reason: row.reasonForIncompletion.slice(0, 500) } : {}),
        },
      });
    }
  },

  async pruneIterations(ctx, c) {
    await ctx.trx
      .deleteFrom("TaskExecutions")
      .where("workflowId", "=", ctx.workflowId)
      .where("refName", "in", c.refs.length > 0 ? c.refs : ["\u0000none"])
      .where("iteration", "<", c.belowIteration)
      .where("endedAt", "is not", null)
      .execute();
  },

  alert(ctx, c) {
    ctx.deps.logger?.warn({ workflowId: ctx.workflowId, alert: c.alert, taskId: c.taskId }, c.message);
    ctx.events.push({ type: "ALERT", refName: c.key?.ref ?? null, taskId: c.taskId ?? null, data: { alert: c.alert, message: c.message } });
  },

  async requestEvaluation(ctx, c) {
    await enqueueDecide(ctx.trx, { workflowId: ctx.workflowId, namespaceId: ctx.namespaceId, reason: c.reason });
  },

  completeWorkflow: endWorkflow,
  failWorkflow: endWorkflow,
  terminateWorkflow: endWorkflow,
  timeOutWorkflow: endWorkflow,

  startSubWorkflow: startOtherWorkflow,
  startWorkflow: startOtherWorkflow,
};

function startFailure(result: Extract<StartExecutionResult, { ok: false }>): string {
  if (result.reason === "invalid-input") {
    return `invalid input: ${result.problems.map((p) => `${p.path.length > 0 ? p.path.join(".") : "(input)"}: ${p.message}`).join("; ")}`;
  }
  return result.message;
}

/** The documented statement (engine/decide/types.ts, AggregateForkOutputCommand), verbatim in shape. */
async function aggregateForkOutput(
  trx: Transaction<Database>,
  workflowId: string,
  c: Extract<Command, { kind: "aggregateForkOutput" }>,
  now: Date,
): Promise<string | undefined> {
  const { rows } = await sql<{ id: string }>`
    WITH fork AS (
      SELECT "id", "input" FROM "TaskExecutions"
      WHERE "workflowId" = ${workflowId}::uuid AND "refName" = ${c.key.ref} AND "iteration" = ${c.key.iteration}
        AND "attempt" = ${c.key.attempt} AND "status" = ${c.from}
    ), inst AS (
      SELECT g.k, t."output"
      FROM generate_series(0, ${c.total}::int - 1) AS g(k)
      LEFT JOIN "TaskExecutions" AS t
        ON t."workflowId" = ${workflowId}::uuid AND t."refName" = ${c.key.ref} || '#' || g.k AND t."iteration" = ${c.key.iteration}
       AND t."status" IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'SKIPPED')
    ), agg AS (
      SELECT count(inst."output") AS done,
             jsonb_build_object('results', coalesce(jsonb_agg(inst."output" ORDER BY inst.k), '[]'::jsonb)) AS results,
             coalesce(jsonb_object_agg(coalesce(fork."input" -> 'forkedTasks' ->> inst.k, inst.k::text), inst."output")
                        FILTER (WHERE inst."output" IS NOT NULL), '{}'::jsonb) AS by_label
      FROM inst CROSS JOIN fork
      GROUP BY fork."id"
    )
    UPDATE "TaskExecutions" AS f
    SET "status" = ${c.status},
        "output" = CASE ${c.shape}::text WHEN 'results' THEN agg.results ELSE agg.by_label END,
        "reasonForIncompletion" = coalesce(${c.reasonForIncompletion ?? null}::text, f."reasonForIncompletion"),
        "endedAt" = ${now}, "updatedAt" = ${now},
        "deciderSeenAt" = NULL
    FROM fork, agg
    WHERE f."workflowId" = ${workflowId}::uuid AND f."id" = fork."id"
      AND (${c.status}::text <> 'COMPLETED' OR agg.done = ${c.total}::int)
    RETURNING f."id"`.execute(trx);
  return rows[0]?.id;
}
