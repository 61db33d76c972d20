import { z } from "zod";
import type { WorkflowActionDeps } from "../executions/actions/action-support";
import { HumanTaskActionBaseSchema, runHumanTaskAction } from "./human-task-action";
import type { HumanTaskActionResult } from "./human-task-action";
import { isOpen, isOperator, recordHumanAction, refuseClosed, refuseHuman, resolveAssignee } from "./human-task-support";

export const ReassignHumanTaskInputSchema = HumanTaskActionBaseSchema.extend({
  /** "user:<email>" | "group:<name>" | "role:<role>" | "anyone". */
  assignee: z.string().trim().min(1).max(400),
});

/**
 * Gives an open task to someone else: operator and up only. The claim is
 * dropped (the new assignee starts from an unclaimed task); a user or group
 * that does not exist in the namespace is refused rather than stored, since a
 * task assigned to nobody would sit in no inbox.
 */
export async function reassignHumanTask(deps: WorkflowActionDeps, rawInput: unknown): Promise<HumanTaskActionResult> {
  return runHumanTaskAction(deps, ReassignHumanTaskInputSchema, rawInput, async (trx, now, row, who, input) => {
    if (!isOpen(row)) refuseClosed(row);
    if (!isOperator(who)) refuseHuman("forbidden", "Only an operator (or above) can reassign a human task");
    const columns = await resolveAssignee(trx, row.namespaceId, input.assignee);
    if (columns === undefined) refuseHuman("invalid-input", `assignee: expected "user:<email>", "group:<name>", "role:<viewer|operator|editor|admin>" or "anyone", got "${input.assignee}"`);
    if (columns.assigneeKind === "user" && columns.assigneeUserId === null) refuseHuman("invalid-input", `assignee: there is no user ${columns.assigneeLabel.slice(5)}`);
    if (columns.assigneeKind === "group" && columns.assigneeGroupId === null) refuseHuman("invalid-input", `assignee: there is no group ${columns.assigneeLabel.slice(6)} in this namespace`);
    await trx.updateTable("HumanTasks").set({ ...columns, status: "PENDING", claimedByUserId: null, claimedAt: null, updatedAt: now }).where("id", "=", row.id).execute();
    await recordHumanAction(trx, { row, actor: input.actor, verb: "reassign", eventType: "HUMAN_TASK_REASSIGNED", details: { from: row.assigneeLabel, to: columns.assigneeLabel }, now });
  });
}
