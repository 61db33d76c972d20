import type { z } from "zod";
import { setWorkflowStatus } from "../../store/workflow-executions";
import { WorkflowActionBaseSchema, openWorkflow, parseInput, recordAction, refuseStatus, runInTransaction } from "./action-support";
import type { ActionRefusal, CommonRefusalCode, WorkflowActionDeps } from "./action-support";

export const ResumeWorkflowInputSchema = WorkflowActionBaseSchema;
export type ResumeWorkflowInput = z.infer<typeof ResumeWorkflowInputSchema>;

export type ResumeWorkflowResult = { ok: true; workflowId: string; status: "RUNNING" } | ActionRefusal<CommonRefusalCode | "not-paused">;

/**
 * PAUSED → RUNNING, and a decide: the evaluation reacts to everything that
 * happened while paused (tasks finished, deadlines passed, timers whose
 * wake-ups were dropped), since decide works from rows and `now`, not from
 * the wake-ups themselves.
 */
export async function resumeWorkflow(deps: WorkflowActionDeps, rawInput: unknown): Promise<ResumeWorkflowResult> {
  const parsed = parseInput(ResumeWorkflowInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  return runInTransaction(deps, async (trx, now) => {
    const wf = await openWorkflow(trx, { ...input, decideReason: "operator: resume" });
    if (wf.status !== "PAUSED") refuseStatus("not-paused", wf, "only a PAUSED workflow can be resumed");
    await setWorkflowStatus(trx, { workflowId: wf.id, from: ["PAUSED"], to: "RUNNING", now });
    await recordAction(trx, {
      wf,
      actor: input.actor,
      action: "workflow.resume",
      events: [{ type: "WORKFLOW_RESUMED", status: "RUNNING" }],
      details: { from: "PAUSED" },
      now,
    });
    return { ok: true as const, workflowId: wf.id, status: "RUNNING" as const };
  }) as Promise<ResumeWorkflowResult>;
}
