import { z } from "zod";
import type { WorkflowExecutionRow } from "../../../db/schema";
import { observeRunFinished } from "../../lib/metrics";
import { processTracer } from "../../lib/tracing";
import { appendWorkflowEvents } from "../../store/workflow-events";
import { terminateWorkflowTree } from "../workflow-lifecycle";
import { WorkflowActionBaseSchema, openWorkflow, parseInput, recordAction, refuse, refuseStatus, runInTransaction } from "./action-support";
import type { ActionRefusal, CommonRefusalCode, WorkflowActionDeps } from "./action-support";

export const TerminateWorkflowInputSchema = WorkflowActionBaseSchema.extend({
  reason: z.string().min(1).max(2000).default("Terminated by an operator"),
});
export type TerminateWorkflowInput = z.input<typeof TerminateWorkflowInputSchema>;

export type TerminateWorkflowResult = { ok: true; workflowId: string; status: "TERMINATED" } | ActionRefusal<CommonRefusalCode | "not-running">;

/**
 * Ends a RUNNING or PAUSED workflow as TERMINATED with everything under it
 * (terminateWorkflowTree): its open tasks canceled and dequeued, its timers
 * and pending decide dropped, its running children terminated in turn, and —
 * when it is itself a child — its parent's SUB_WORKFLOW task failed, which the
 * parent's decider then handles by that task's retry policy like any failure.
 *
 * The history records who asked (TERMINATE_REQUESTED, before the
 * terminateWorkflowTree events, so WORKFLOW_TERMINATED stays the last event).
 */
export async function terminateWorkflow(deps: WorkflowActionDeps, rawInput: unknown): Promise<TerminateWorkflowResult> {
  const parsed = parseInput(TerminateWorkflowInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  let ended: { wf: WorkflowExecutionRow; at: Date } | undefined;
  const result = await runInTransaction(deps, async (trx, now) => {
    const wf = await openWorkflow(trx, input);
    if (wf.status !== "RUNNING" && wf.status !== "PAUSED") refuseStatus("not-running", wf, "only a RUNNING or PAUSED workflow can be terminated");
    const actor = { type: input.actor.type, id: input.actor.id };
    await appendWorkflowEvents(trx, { workflowId: wf.id, namespaceId: wf.namespaceId }, [
      { type: "TERMINATE_REQUESTED", status: wf.status, data: { reason: input.reason, actor }, at: now },
    ]);
    const terminated = await terminateWorkflowTree(trx, { workflowId: wf.id, namespaceId: wf.namespaceId, reason: input.reason, notifyParent: true, now });
    if (!terminated) refuse("not-running", `Workflow ${wf.id} ended before it could be terminated`);
    await recordAction(trx, {
      wf,
      actor: input.actor,
      action: "workflow.terminate",
      events: [],
      details: { from: wf.status, reason: input.reason },
      now,
    });
    ended = { wf, at: now };
    return { ok: true as const, workflowId: wf.id, status: "TERMINATED" as const };
  });
  // After the commit. The decider never sees this end (it is not evaluated), so this process counts it.
  if (result.ok && ended) observeRunTerminated(ended.wf, ended.at, input.reason);
  return result as TerminateWorkflowResult;
}

/** The run-finished metric and the run's span for an operator's terminate (sub-workflows ended with it are not counted). */
function observeRunTerminated(wf: WorkflowExecutionRow, at: Date, reason: string): void {
  observeRunFinished(wf.defName, "TERMINATED", at.getTime() - wf.startedAt.getTime());
  processTracer()?.runEnded({
    workflowId: wf.id,
    workflowName: wf.defName,
    workflowVersion: wf.defVersion,
    namespaceId: wf.namespaceId,
    status: "TERMINATED",
    startedAt: wf.startedAt,
    endedAt: at,
    reasonForIncompletion: reason,
    correlationId: wf.correlationId,
    parentWorkflowId: wf.parentWorkflowId,
    parentTaskId: wf.parentTaskId,
  });
}
