import { z } from "zod";
import { setWorkflowStatus } from "../../store/workflow-executions";
import { WorkflowActionBaseSchema, openWorkflow, parseInput, recordAction, refuseStatus, runInTransaction } from "./action-support";
import type { ActionRefusal, CommonRefusalCode, WorkflowActionDeps } from "./action-support";

export const PauseWorkflowInputSchema = WorkflowActionBaseSchema.extend({
  reason: z.string().max(2000).optional(),
});
export type PauseWorkflowInput = z.infer<typeof PauseWorkflowInputSchema>;

export type PauseWorkflowResult = { ok: true; workflowId: string; status: "PAUSED" } | ActionRefusal<CommonRefusalCode | "not-running">;

/**
 * RUNNING → PAUSED. The evaluator evaluates only RUNNING workflows, so from
 * now on nothing new is scheduled. What is already in flight is left alone:
 * a worker holding a task may finish it and its report is kept (the task
 * ends, unseen, and the decide it enqueues is dropped by the evaluator), and
 * tasks already queued may still be leased; timers that fire meanwhile are
 * dropped the same way. Resume re-enqueues a decide, which reacts to all of it
 * — completions, elapsed deadlines — at once.
 *
 * Takes no decide-queue row, so it needs no lock-order care beyond the
 * workflow row it locks.
 */
export async function pauseWorkflow(deps: WorkflowActionDeps, rawInput: unknown): Promise<PauseWorkflowResult> {
  const parsed = parseInput(PauseWorkflowInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  return runInTransaction(deps, async (trx, now) => {
    const wf = await openWorkflow(trx, input);
    if (wf.status !== "RUNNING") refuseStatus("not-running", wf, "only a RUNNING workflow can be paused");
    await setWorkflowStatus(trx, { workflowId: wf.id, from: ["RUNNING"], to: "PAUSED", now });
    await recordAction(trx, {
      wf,
      actor: input.actor,
      action: "workflow.pause",
      events: [{ type: "WORKFLOW_PAUSED", status: "PAUSED", data: input.reason === undefined ? {} : { reason: input.reason } }],
      details: { from: "RUNNING", ...(input.reason === undefined ? {} : { reason: input.reason }) },
      now,
    });
    return { ok: true as const, workflowId: wf.id, status: "PAUSED" as const };
  }) as Promise<PauseWorkflowResult>;
}
