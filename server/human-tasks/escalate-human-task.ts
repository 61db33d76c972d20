import type { Kysely } from "kysely";
import type { Database, TimerRow } from "../../db/schema";
import { waitDurationSeconds } from "../../engine";
import { cancelOpenHumanTasks } from "../store/human-tasks";
import { getTaskRow } from "../store/operator-rewrites";
import { transitionTask } from "../store/task-executions";
import { armTimer, deleteTimers } from "../store/timers";
import { ActionRefused, asObject, openWorkflow, runInTransaction } from "../executions/actions/action-support";
import type { Actor } from "../executions/actions/action-support";
import { isOpen, recordHumanAction, resolveAssignee } from "./human-task-support";
import { submitHumanTaskInTransaction } from "./submit-human-task";

/** Who escalation acts as, in the audit log and the run's history. */
export const ESCALATION_ACTOR: Actor = { type: "system", id: "human-task-escalation" };

export type EscalationOutcome =
  | { action: "reassign"; humanTaskId: string; to: string; dueAt: string | null }
  | { action: "timeout"; humanTaskId: string; reason: string }
  | { action: "complete"; humanTaskId: string; outcome: string }
  | { action: "dropped"; why: string };

/**
 * Fires one humanEscalation timer (claimed by the timer poller): step `level`
 * of the task's escalation chain, if the task is still open at that level —
 * a timer is a hint, never the decision, so a task completed, released into
 * another step or canceled since is left alone and the timer dropped.
 * - reassign: the new assignee, the claim dropped, a new due time (now +
 *   dueIn) with the next step armed for it; no dueIn, no further deadline;
 * - timeout: the attempt TIMED_OUT, unseen, so decide applies the retry
 *   policy as for any timeout; the item EXPIRED;
 * - complete: submitted with the step's outcome and data on nobody's behalf,
 *   through the same submission path (the form's schema still applies; data
 *   that fails it times the task out instead, with the reason recorded).
 * Each is recorded in AuditEvents and the run's history. The timer is deleted
 * in the same transaction.
 */
export async function escalateHumanTask(deps: { db: Kysely<Database>; now?: () => number }, timer: TimerRow, owner: string): Promise<EscalationOutcome> {
  const payload = asObject(timer.payload);
  const humanTaskId = typeof payload.humanTaskId === "string" ? payload.humanTaskId : "";
  const level = typeof payload.level === "number" ? payload.level : -1;
  const result = await runInTransaction({ db: deps.db, ...(deps.now === undefined ? {} : { now: deps.now }) }, async (trx, now): Promise<EscalationOutcome> => {
    const drop = async (why: string): Promise<EscalationOutcome> => {
      await deleteTimers(trx, [timer], { owner });
      return { action: "dropped", why };
    };
    const seen = await trx.selectFrom("HumanTasks").selectAll().where("id", "=", humanTaskId).where("namespaceId", "=", timer.namespaceId).executeTakeFirst();
    if (seen === undefined || !isOpen(seen)) return drop("task-closed");
    if (seen.escalationLevel !== level) return drop("stale-level");
    const wf = await openWorkflow(trx, { namespaceId: seen.namespaceId, workflowId: seen.workflowId, decideReason: "human task escalated" });
    const task = await getTaskRow(trx, wf.id, seen.taskId);
    if (task?.status !== "IN_PROGRESS" || (wf.status !== "RUNNING" && wf.status !== "PAUSED")) return drop("task-ended");
    const row = await trx.selectFrom("HumanTasks").selectAll().where("id", "=", seen.id).forUpdate().executeTakeFirstOrThrow();
    if (!isOpen(row) || row.escalationLevel !== level) return drop("task-moved-on");
    const steps = Array.isArray(row.escalation) ? row.escalation.map(asObject) : [];
    const step = steps[level];
    if (step === undefined) return drop("no-step");
    await deleteTimers(trx, [timer], { owner });
    const record = (details: Record<string, unknown>) =>
      recordHumanAction(trx, { row, actor: ESCALATION_ACTOR, verb: "escalate", eventType: "HUMAN_TASK_ESCALATED", details: { step: level, ...details }, now });

    const timeOut = async (reason: string): Promise<EscalationOutcome> => {
      await transitionTask(
        trx,
        { workflowId: wf.id, taskId: task.id, from: "IN_PROGRESS" },
        // Unseen, like a worker's report: the next evaluation applies the retry policy to it.
        { status: "TIMED_OUT", reasonForIncompletion: reason, endedAt: now, deciderSeenAt: null, updatedAt: now },
      );
      await trx.updateTable("HumanTasks").set({ escalationLevel: level + 1 }).where("id", "=", row.id).execute();
      await cancelOpenHumanTasks(trx, wf.id, { taskId: task.id, now, status: "EXPIRED" });
      await record({ action: "timeout", reason });
      return { action: "timeout", humanTaskId: row.id, reason };
    };

    switch (step.action) {
      case "reassign": {
        const columns = await resolveAssignee(trx, row.namespaceId, step.assignee);
        if (columns === undefined) return timeOut(`Escalation step ${level + 1} names no valid assignee (${JSON.stringify(step.assignee)})`);
        const seconds = waitDurationSeconds(step.dueIn);
        const dueAt = seconds === null ? null : new Date(now.getTime() + seconds * 1000);
        await trx
          .updateTable("HumanTasks")
          .set({ ...columns, status: "PENDING", claimedByUserId: null, claimedAt: null, dueAt, escalationLevel: level + 1, updatedAt: now })
          .where("id", "=", row.id)
          .execute();
        if (dueAt !== null && level + 1 < steps.length) {
          await armTimer(trx, { kind: "humanEscalation", fireAt: dueAt, namespaceId: row.namespaceId, workflowId: row.workflowId, taskId: row.taskId, payload: { humanTaskId: row.id, level: level + 1 } });
        }
        await record({ action: "reassign", from: row.assigneeLabel, to: columns.assigneeLabel, dueAt: dueAt?.toISOString() ?? null });
        return { action: "reassign", humanTaskId: row.id, to: columns.assigneeLabel, dueAt: dueAt?.toISOString() ?? null };
      }
      case "complete": {
        const outcome = typeof step.outcome === "string" ? step.outcome : undefined;
        try {
          await submitHumanTaskInTransaction(trx, now, wf, task, { actor: ESCALATION_ACTOR, status: "COMPLETED", outcome, data: asObject(step.data), asSystem: true });
        } catch (error) {
          // Refused before it wrote anything (outcome or data checks): the deadline still has to do something.
          if (!(error instanceof ActionRefused)) throw error;
          return timeOut(`Escalation step ${level + 1} could not complete the task: ${error.refusal.message}`);
        }
        await record({ action: "complete", outcome: outcome ?? null });
        return { action: "complete", humanTaskId: row.id, outcome: outcome ?? "" };
      }
      default:
        return timeOut(`Human task not completed by its due time (escalation step ${level + 1})`);
    }
  });
  if ("ok" in result && result.ok === false) return { action: "dropped", why: result.message };
  return result as EscalationOutcome;
}
