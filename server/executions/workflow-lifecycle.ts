import type { Transaction } from "kysely";
import type { Database } from "../../db/schema";
import type { WorkflowEndStatus } from "../../engine";
import { enqueueDecide, lockWorkflow } from "../store/decide-queues";
import { cancelOpenHumanTasks } from "../store/human-tasks";
import { cancelTaskIfOpen, dropPendingDecide } from "../store/operator-rewrites";
import { removeQueuedTask } from "../store/task-queues";
import { loadFrontier, transitionTask } from "../store/task-executions";
import { cancelTimers } from "../store/timers";
import { appendWorkflowEvents } from "../store/workflow-events";
import type { NewWorkflowEventInput } from "../store/workflow-events";
import { endWorkflowExecution, listLiveChildWorkflows } from "../store/workflow-executions";

/**
 * What happens around a workflow reaching a terminal status, whoever ended it
 * (the evaluator, or terminate): its inbox rows close, its parent's
 * SUB_WORKFLOW task ends, and a terminate reaches down through its children.
 *
 * Lock order, which everything here keeps: a workflow's DecideQueues row, then
 * its WorkflowExecutions row (the evaluator's claim-then-lock), then its
 * children's rows; within a workflow, a task's queue row before the task row
 * (task-queues.ts). A child never locks its parent's WorkflowExecutions row: a
 * parent evaluation holds the parent and may wait for the child, so a child
 * that waited for the parent would deadlock with it.
 */

export interface EndedWorkflow {
  id: string;
  namespaceId: string;
  status: WorkflowEndStatus;
  output: Record<string, unknown>;
  reasonForIncompletion: string | null;
  parentWorkflowId: string | null;
  parentTaskId: string | null;
}

/**
 * Called in the transaction that ends a workflow (by the evaluator or by
 * terminate, each of which also cancels the workflow's open HumanTasks: the
 * evaluator in its finish, nf_finish_evaluations): if it has a parent, ends
 * the parent's SUB_WORKFLOW task — COMPLETED with the child's output when
 * the child COMPLETED, else FAILED with reason "Sub-workflow <id> <status>:
 * <reason>" — compare-and-set from IN_PROGRESS (no row matched = the parent
 * already moved on: do nothing), leaves it unseen ("deciderSeenAt" NULL) and
 * enqueues the parent's decide. Must not lock the parent's WorkflowExecutions
 * row (lock order: a parent evaluation locks parent then child; a child
 * evaluation holds the child and touches only the parent's task row and decide
 * queue).
 *
 * For the same reason no WorkflowEvents row is written to the parent's history
 * here: appending takes the parent's row lock. The parent's next evaluation
 * reacts to the task ending (its unseen row) and records that.
 *
 * The FAILED task carries the child's output too (Conductor does the same), so
 * a failure's details stay readable from the parent's side.
 */
export async function afterWorkflowEnded(trx: Transaction<Database>, ended: EndedWorkflow, now: Date): Promise<void> {
  if (ended.parentWorkflowId === null || ended.parentTaskId === null) return;
  const completed = ended.status === "COMPLETED";
  const reason = completed
    ? null
    : `Sub-workflow ${ended.id} ${ended.status}${ended.reasonForIncompletion ? `: ${ended.reasonForIncompletion}` : ""}`;
  const task = await transitionTask(
    trx,
    { workflowId: ended.parentWorkflowId, taskId: ended.parentTaskId, from: "IN_PROGRESS" },
    {
      status: completed ? "COMPLETED" : "FAILED",
      output: ended.output,
      reasonForIncompletion: reason,
      endedAt: now,
      // Unseen: the parent's next evaluation reacts to it like to a worker's report (invariant 4).
      deciderSeenAt: null,
      updatedAt: now,
    },
  );
  // No row: the task was canceled, timed out or retried past (the parent moved on); nothing waits for this child.
  if (task === undefined) return;
  await enqueueDecide(trx, {
    workflowId: ended.parentWorkflowId,
    namespaceId: task.namespaceId,
    reason: `sub-workflow ${ended.id} ${ended.status}`,
  });
}

/**
 * Terminates a workflow and, recursively, its running/paused children: locks
 * the row FOR UPDATE, and if RUNNING or PAUSED sets TERMINATED (reason,
 * endedAt), cancels every non-terminal task (delete its TaskQueues row first —
 * lock order queue row before task row, see server/store/task-queues.ts —,
 * then CANCELED, seen), cancels the workflow's timers, deletes its
 * DecideQueues row, appends WorkflowEvents, recurses into children
 * (WorkflowExecutions_parent_idx) with notifyParent false, and calls
 * afterWorkflowEnded when notifyParent is true. Returns false when the
 * workflow was already terminal or missing (or belongs to another namespace).
 *
 * Children are terminated *before* this workflow's tasks are canceled: a
 * child's own evaluation, ending at the same moment, holds the child's row and
 * updates this workflow's SUB_WORKFLOW task row. Had we canceled (locked) that
 * task row first and then waited for the child's lock, the two would deadlock.
 * This way the child's update commits first (we hold no task row yet), and
 * the task is then simply no longer open — its child's result stays on it,
 * unseen, for a retry of this workflow to react to.
 */
export async function terminateWorkflowTree(
  trx: Transaction<Database>,
  input: { workflowId: string; namespaceId: string; reason: string; notifyParent: boolean; now: Date },
): Promise<boolean> {
  const { now, reason } = input;
  const wf = await lockWorkflow(trx, input.workflowId);
  if (wf === undefined || wf.namespaceId !== input.namespaceId) return false;
  if (wf.status !== "RUNNING" && wf.status !== "PAUSED") return false;

  for (const child of await listLiveChildWorkflows(trx, wf.id)) {
    await terminateWorkflowTree(trx, {
      workflowId: child.id,
      namespaceId: child.namespaceId,
      reason: `Parent workflow ${wf.id} terminated: ${reason}`,
      notifyParent: false,
      now,
    });
  }

  const events: NewWorkflowEventInput[] = [];
  const open = (await loadFrontier(trx, wf.id)).filter((r) => r.endedAt === null).sort((a, b) => a.id.localeCompare(b.id));
  for (const task of open) {
    if (task.queueName !== null) await removeQueuedTask(trx, { namespaceId: wf.namespaceId, queueName: task.queueName, taskId: task.id });
    const canceled = await cancelTaskIfOpen(trx, { workflowId: wf.id, taskId: task.id, reason: `Workflow terminated: ${reason}`, now });
    if (canceled !== undefined) {
      events.push({ type: "TASK_CANCELED", refName: canceled.refName, taskId: canceled.id, status: "CANCELED", data: { reason: `Workflow terminated: ${reason}` }, at: now });
    }
  }
  await cancelOpenHumanTasks(trx, wf.id, { now });
  await cancelTimers(trx, { workflowId: wf.id });
  await dropPendingDecide(trx, wf.id);
  const ended = await endWorkflowExecution(trx, { workflowId: wf.id, status: "TERMINATED", reasonForIncompletion: reason, now });
  if (ended === undefined) throw new Error(`terminateWorkflowTree: workflow ${wf.id} left RUNNING/PAUSED under its own row lock`);
  events.push({ type: "WORKFLOW_TERMINATED", status: "TERMINATED", data: { reason }, at: now });
  await appendWorkflowEvents(trx, { workflowId: wf.id, namespaceId: wf.namespaceId }, events);

  if (input.notifyParent) {
    await afterWorkflowEnded(
      trx,
      {
        id: wf.id,
        namespaceId: wf.namespaceId,
        status: "TERMINATED",
        output: asObject(ended.output),
        reasonForIncompletion: reason,
        parentWorkflowId: wf.parentWorkflowId,
        parentTaskId: wf.parentTaskId,
      },
      now,
    );
  }
  return true;
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
