import { z } from "zod";
import { cancelOpenHumanTasks } from "../../store/human-tasks";
import { removeQueuedTask } from "../../store/task-queues";
import { transitionTask } from "../../store/task-executions";
import { cancelTimers } from "../../store/timers";
import { terminateWorkflowTree } from "../workflow-lifecycle";
import { TASK_SELECTOR_PROBLEM, TaskSelectorFields, WorkflowActionBaseSchema, hasOneTaskSelector, findTask, openWorkflow, parseInput, recordAction, refuse, refuseStatus, runInTransaction } from "./action-support";
import type { ActionRefusal, CommonRefusalCode, WorkflowActionDeps } from "./action-support";

export const SkipTaskInputSchema = WorkflowActionBaseSchema.extend({
  ...TaskSelectorFields,
  /** The output successors read as `${ref.output…}` (Conductor's SkipTaskRequest.taskOutput); {} when absent. */
  output: z.record(z.string(), z.unknown()).optional(),
  reason: z.string().max(2000).optional(),
}).refine(hasOneTaskSelector, TASK_SELECTOR_PROBLEM);
export type SkipTaskInput = z.infer<typeof SkipTaskInputSchema>;

export type SkipTaskResult =
  | { ok: true; workflowId: string; taskId: string; ref: string; status: "COMPLETED"; terminatedChild: string | null }
  | ActionRefusal<CommonRefusalCode | "not-running" | "task-not-found" | "task-not-open" | "unsupported-task-type">;

const CONTAINERS: ReadonlySet<string> = new Set(["DO_WHILE", "FORK_JOIN_DYNAMIC", "AGENT"]);

/**
 * Skips a SCHEDULED or IN_PROGRESS task of a RUNNING or PAUSED workflow and
 * lets the workflow carry on as if it had completed (Conductor's skipTask).
 *
 * The row becomes **COMPLETED**, not SKIPPED: to the decider a SKIPPED row is
 * dead-path elimination — "this node was not taken" — so its successors would
 * all be skipped in turn, and a join would see the branch as not taken. An
 * operator skip means the opposite: the work is done, move on. The skip
 * shows in the row's reason ("Skipped by …"), in a TASK_SKIPPED_BY_OPERATOR
 * event and in the audit log; the output is what the operator gave ({} by
 * default). The row is left unseen and a decide enqueued, so the next
 * evaluation reacts exactly as to a worker's completion (it also cancels the
 * task's deadline timers; they are cancelled here already).
 *
 * A worker still holding the task loses it: its queue row is deleted (first:
 * lock order, task-queues.ts) and its late report is refused as "not in
 * progress". A SUB_WORKFLOW's child is terminated first (without notifying
 * this workflow, which is being told by the skip), a HUMAN's inbox row is
 * canceled. Loops and dynamic forks are refused: skipping the container while
 * its body or instances run would orphan them — skip those tasks instead.
 */
export async function skipTask(deps: WorkflowActionDeps, rawInput: unknown): Promise<SkipTaskResult> {
  const parsed = parseInput(SkipTaskInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  return runInTransaction(deps, async (trx, now) => {
    const wf = await openWorkflow(trx, { ...input, decideReason: "operator: skip task" });
    if (wf.status !== "RUNNING" && wf.status !== "PAUSED") refuseStatus("not-running", wf, "tasks can be skipped only in a RUNNING or PAUSED workflow");
    const task = await findTask(trx, wf.id, input);
    if (task.status !== "SCHEDULED" && task.status !== "IN_PROGRESS") {
      refuse("task-not-open", `Task ${task.refName} (${task.id}) is ${task.status}; only a SCHEDULED or IN_PROGRESS task can be skipped`);
    }
    if (CONTAINERS.has(task.taskType)) {
      refuse("unsupported-task-type", `Task ${task.refName} is a ${task.taskType}: skipping it would orphan its body or instances; skip those tasks instead`);
    }
    if (task.subWorkflowId !== null) {
      // Lock order parent → child, as a parent evaluation takes them.
      await terminateWorkflowTree(trx, { workflowId: task.subWorkflowId, namespaceId: wf.namespaceId, reason: `Task ${task.refName} of parent workflow ${wf.id} skipped by an operator`, notifyParent: false, now });
    }
    if (task.queueName !== null) await removeQueuedTask(trx, { namespaceId: wf.namespaceId, queueName: task.queueName, taskId: task.id });
    const reason = `Skipped by ${input.actor.type} ${input.actor.id}${input.reason ? `: ${input.reason}` : ""}`;
    const output = input.output ?? {};
    const skipped = await transitionTask(
      trx,
      { workflowId: wf.id, taskId: task.id, from: task.status },
      { status: "COMPLETED", output, reasonForIncompletion: reason, endedAt: now, deciderSeenAt: null, updatedAt: now },
    );
    // A worker's report (which takes no workflow lock) ended it between our read and our update.
    if (skipped === undefined) refuse("task-not-open", `Task ${task.refName} (${task.id}) ended while it was being skipped`);
    await cancelTimers(trx, { workflowId: wf.id, taskId: task.id });
    if (task.taskType === "HUMAN") await cancelOpenHumanTasks(trx, wf.id, { taskId: task.id, now });
    await recordAction(trx, {
      wf,
      actor: input.actor,
      action: "task.skip",
      events: [
        {
          type: "TASK_SKIPPED_BY_OPERATOR",
          refName: task.refName,
          taskId: task.id,
          status: "COMPLETED",
          data: { from: task.status, iteration: task.iteration, attempt: task.attempt, ...(input.reason === undefined ? {} : { reason: input.reason }), ...(task.subWorkflowId === null ? {} : { terminatedChild: task.subWorkflowId }) },
        },
      ],
      details: { taskId: task.id, ref: task.refName, from: task.status, ...(input.reason === undefined ? {} : { reason: input.reason }) },
      now,
    });
    return { ok: true as const, workflowId: wf.id, taskId: task.id, ref: task.refName, status: "COMPLETED" as const, terminatedChild: task.subWorkflowId };
  }) as Promise<SkipTaskResult>;
}
