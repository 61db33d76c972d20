import type { WorkflowActionDeps } from "../executions/actions/action-support";
import { HumanTaskActionBaseSchema, runHumanTaskAction } from "./human-task-action";
import type { HumanTaskActionResult } from "./human-task-action";
import { eligibilityProblem, isOpen, recordHumanAction, refuseClosed, refuseHuman, selfApprovalProblem, userRefs } from "./human-task-support";

export const ClaimHumanTaskInputSchema = HumanTaskActionBaseSchema;

/**
 * Claims an open task for the caller, so nobody else submits it meanwhile.
 * Claiming one's own claim again is a no-op; someone else's claim is a
 * conflict; a person the task is not for — or its run's starter when
 * self-approval is off, who could never submit it — is refused (forbidden).
 * Only people claim: a service account's key has no one to hold the claim.
 */
export async function claimHumanTask(deps: WorkflowActionDeps, rawInput: unknown): Promise<HumanTaskActionResult> {
  return runHumanTaskAction(deps, ClaimHumanTaskInputSchema, rawInput, async (trx, now, row, who, input) => {
    if (!isOpen(row)) refuseClosed(row);
    if (who.kind !== "user") refuseHuman("forbidden", "Only a person can claim a human task; complete it directly instead");
    if (row.status === "CLAIMED") {
      if (row.claimedByUserId === who.userId) return;
      const holder = row.claimedByUserId === null ? undefined : (await userRefs(trx, [row.claimedByUserId])).get(row.claimedByUserId);
      refuseHuman("conflict", `Human task ${row.id} is already claimed by ${holder?.email ?? "someone else"}`);
    }
    const problem = eligibilityProblem(row, who) ?? selfApprovalProblem(row, who);
    if (problem !== null) refuseHuman("forbidden", problem);
    // With N approvals, someone who already approved holding the claim would only keep the next approver out.
    const already = await trx.selectFrom("HumanTaskSubmissions").select("id").where("humanTaskId", "=", row.id).where("userId", "=", who.userId).executeTakeFirst();
    if (already !== undefined) refuseHuman("conflict", `You already submitted human task ${row.id}; it needs ${row.approvalsRequired} different people`);
    await trx.updateTable("HumanTasks").set({ status: "CLAIMED", claimedByUserId: who.userId, claimedAt: now, updatedAt: now }).where("id", "=", row.id).execute();
    await recordHumanAction(trx, { row, actor: input.actor, verb: "claim", eventType: "HUMAN_TASK_CLAIMED", details: { by: { userId: who.userId, email: who.email } }, now });
  });
}
