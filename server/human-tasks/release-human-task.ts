import type { WorkflowActionDeps } from "../executions/actions/action-support";
import { HumanTaskActionBaseSchema, runHumanTaskAction } from "./human-task-action";
import type { HumanTaskActionResult } from "./human-task-action";
import { isOpen, isOperator, recordHumanAction, refuseClosed, refuseHuman, userRefs } from "./human-task-support";

export const ReleaseHumanTaskInputSchema = HumanTaskActionBaseSchema;

/**
 * Hands a claimed task back to its assignees. The holder may release it, and
 * so may an operator (someone on leave must not block the task); anyone else
 * finds it claimed by someone else: a conflict. Releasing an unclaimed open
 * task is a no-op.
 */
export async function releaseHumanTask(deps: WorkflowActionDeps, rawInput: unknown): Promise<HumanTaskActionResult> {
  return runHumanTaskAction(deps, ReleaseHumanTaskInputSchema, rawInput, async (trx, now, row, who, input) => {
    if (!isOpen(row)) refuseClosed(row);
    if (row.status !== "CLAIMED") return;
    const mine = who.kind === "user" && row.claimedByUserId === who.userId;
    if (!mine && !isOperator(who)) {
      const holder = row.claimedByUserId === null ? undefined : (await userRefs(trx, [row.claimedByUserId])).get(row.claimedByUserId);
      refuseHuman("conflict", `Human task ${row.id} is claimed by ${holder?.email ?? "someone else"}; only they or an operator can release it`);
    }
    await trx.updateTable("HumanTasks").set({ status: "PENDING", claimedByUserId: null, claimedAt: null, updatedAt: now }).where("id", "=", row.id).execute();
    await recordHumanAction(trx, { row, actor: input.actor, verb: "release", eventType: "HUMAN_TASK_RELEASED", details: { previousHolder: row.claimedByUserId }, now });
  });
}
