import type { Transaction } from "kysely";
import type { Database, TaskExecutionRow, WorkflowExecutionRow } from "../../../db/schema";
import { completeHumanTask, existingUserId } from "../../store/human-tasks";
import { transitionTask } from "../../store/task-executions";
import { cancelTimers } from "../../store/timers";
import { recordAction, refuse } from "./action-support";
import type { Actor } from "./action-support";

/**
 * Ends an IN_PROGRESS WAIT or HUMAN attempt inside a caller's transaction that
 * already holds the workflow (openWorkflow, with a decide enqueued): the
 * attempt becomes COMPLETED or FAILED with `output`, unseen (the decider reacts
 * to it like to a worker's report), its timers go, a HUMAN task's inbox row
 * closes with the output as its response, and the action is recorded.
 *
 * The one place that does this: completeExternalTask (API signal, operator,
 * Conductor) and the human-task service (inbox submissions, escalation's
 * "complete") both end here, so a completion looks the same whoever made it.
 * The human-task rules (who may, what data) are checked before, by the caller.
 */
export async function endExternalTask(
  trx: Transaction<Database>,
  now: Date,
  wf: WorkflowExecutionRow,
  task: TaskExecutionRow,
  input: {
    actor: Actor;
    status: "COMPLETED" | "FAILED";
    output: Record<string, unknown>;
    reason?: string | undefined;
    /** For a HUMAN task: who completed it (a user id; null for nobody's behalf) and the outcome chosen. */
    completedByUserId?: string | null;
    outcome?: string | null;
    /** Extra AuditEvents details (the human task's id, outcome). */
    details?: Record<string, unknown>;
    /** The AuditEvents action; "task.complete" by default, "human-task.complete" for an inbox item. */
    auditAction?: string;
  },
): Promise<{ ok: true; workflowId: string; taskId: string; ref: string; status: "COMPLETED" | "FAILED" }> {
  const reason = input.status === "FAILED" ? (input.reason ?? `Failed by ${input.actor.type} ${input.actor.id}`) : null;
  const ended = await transitionTask(
    trx,
    { workflowId: wf.id, taskId: task.id, from: "IN_PROGRESS" },
    { status: input.status, output: input.output, reasonForIncompletion: reason, endedAt: now, deciderSeenAt: null, updatedAt: now },
  );
  // Under the workflow lock nothing else ends a WAIT or HUMAN row (no worker holds it), but never report a change not made.
  if (ended === undefined) refuse("task-not-open", `Task ${task.refName} (${task.id}) ended while it was being completed`);
  await cancelTimers(trx, { workflowId: wf.id, taskId: task.id });
  if (task.taskType === "HUMAN") {
    const userId =
      input.completedByUserId !== undefined ? input.completedByUserId : input.actor.type === "user" ? ((await existingUserId(trx, input.actor.id)) ?? null) : null;
    await completeHumanTask(trx, { namespaceId: wf.namespaceId, taskId: task.id, response: input.output, completedByUserId: userId, outcome: input.outcome ?? null, now });
  }
  await recordAction(trx, {
    wf,
    actor: input.actor,
    action: input.auditAction ?? "task.complete",
    events: [
      {
        type: input.status === "COMPLETED" ? "TASK_COMPLETED" : "TASK_FAILED",
        refName: task.refName,
        taskId: task.id,
        status: input.status,
        // The task's own times, which the live run page shows (the event's `at` is not the task's).
        data: { external: true, ...(ended.startedAt ? { startedAt: ended.startedAt.toISOString() } : {}), endedAt: now.toISOString(), ...(reason === null ? {} : { reason }), ...(input.outcome == null ? {} : { outcome: input.outcome }) },
      },
    ],
    details: { taskId: task.id, ref: task.refName, taskType: task.taskType, status: input.status, ...input.details },
    now,
  });
  return { ok: true as const, workflowId: wf.id, taskId: task.id, ref: task.refName, status: input.status };
}
