import type { z } from "zod";
import { reopenWorkflowExecution } from "../../store/workflow-executions";
import {
  WorkflowActionBaseSchema,
  loadBlueprint,
  openWorkflow,
  parseInput,
  rearmWorkflowTimeout,
  recordAction,
  refuse,
  refuseIfWorkflowTimeoutPassed,
  refuseStatus,
  runInTransaction,
} from "./action-support";
import type { ActionRefusal, CommonRefusalCode, WorkflowActionDeps } from "./action-support";
import { reopenFailedTasks } from "./reopen-failed-tasks";
import type { ReopenedTask } from "./reopen-failed-tasks";

export const RetryWorkflowInputSchema = WorkflowActionBaseSchema;
export type RetryWorkflowInput = z.infer<typeof RetryWorkflowInputSchema>;

export type RetryWorkflowResult =
  | { ok: true; workflowId: string; status: "RUNNING"; retried: ReopenedTask[] }
  | ActionRefusal<CommonRefusalCode | "not-retryable-status" | "nothing-to-retry" | "not-retryable" | "workflow-timeout-passed" | "definition-not-found">;

const RETRYABLE = ["FAILED", "TIMED_OUT", "TERMINATED"] as const;

/**
 * Resumes a FAILED, TIMED_OUT or TERMINATED workflow from its last failed
 * tasks: each ref whose latest row failed, timed out or was canceled gets a
 * new attempt (reopenFailedTasks explains per task kind, SUB_WORKFLOW and
 * containers included), the workflow is RUNNING again with its end cleared,
 * and a decide takes it from there. Everything that had succeeded stays: the
 * decider reads each ref's latest row, so completed work is not redone.
 *
 * Refused when nothing failed (a workflow FAILED by a TERMINATE node, say:
 * there is no task to run again — rerun or restart it), when a failure was
 * decide's own evaluation (rerun from that node instead), and when the
 * workflow's own timeout has run out (refuseIfWorkflowTimeoutPassed).
 *
 * Retrying a child workflow resumes the child only: its parent's SUB_WORKFLOW
 * task ended when the child failed and the parent moved on (retried it with
 * a new child, or failed), so the child's new end changes nothing there
 * (afterWorkflowEnded finds the task no longer IN_PROGRESS). To resume the
 * whole tree, retry the parent, which starts a new child.
 */
export async function retryWorkflow(deps: WorkflowActionDeps, rawInput: unknown): Promise<RetryWorkflowResult> {
  const parsed = parseInput(RetryWorkflowInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  return runInTransaction(deps, async (trx, now) => {
    const wf = await openWorkflow(trx, { ...input, decideReason: "operator: retry" });
    if (!(RETRYABLE as readonly string[]).includes(wf.status)) {
      refuseStatus("not-retryable-status", wf, wf.status === "COMPLETED" ? "a COMPLETED workflow has nothing to retry: rerun or restart it" : "only a FAILED, TIMED_OUT or TERMINATED workflow can be retried");
    }
    const blueprint = await loadBlueprint(trx, wf);
    refuseIfWorkflowTimeoutPassed(wf, blueprint, now);
    const { reopened, events } = await reopenFailedTasks(trx, { wf, blueprint, now, reason: "operator retry" });
    if (reopened.length === 0) {
      refuse("nothing-to-retry", `Workflow ${wf.id} ended ${wf.status}${wf.reasonForIncompletion ? ` (${wf.reasonForIncompletion})` : ""} with no failed, timed-out or canceled task to run again; rerun or restart it instead`);
    }
    await reopenWorkflowExecution(trx, { workflowId: wf.id, from: RETRYABLE, now });
    await rearmWorkflowTimeout(trx, wf, blueprint.timeoutSeconds, now);
    await recordAction(trx, {
      wf,
      actor: input.actor,
      action: "workflow.retry",
      events: [
        { type: "WORKFLOW_RETRIED", status: "RUNNING", data: { from: wf.status, tasks: reopened.map((r) => ({ ref: r.ref, iteration: r.iteration, attempt: r.attempt, taskId: r.taskId })) } },
        ...events,
      ],
      details: { from: wf.status, reason: wf.reasonForIncompletion, tasks: reopened.map((r) => r.ref) },
      now,
    });
    return { ok: true as const, workflowId: wf.id, status: "RUNNING" as const, retried: reopened };
  }) as Promise<RetryWorkflowResult>;
}
