import type { Transaction } from "kysely";
import { z } from "zod";
import { json } from "../../db/json";
import type { Database, TaskExecutionRow, WorkflowExecutionRow } from "../../db/schema";
import { getTaskRow } from "../store/operator-rewrites";
import { ActorSchema, openWorkflow, parseInput, runInTransaction, UUID } from "../executions/actions/action-support";
import type { Actor, WorkflowActionDeps } from "../executions/actions/action-support";
import { endExternalTask } from "../executions/actions/end-external-task";
import { approvingOutcome, toHumanTaskItem } from "./human-task-items";
import type { HumanTaskItem } from "./human-task-items";
import {
  eligibilityProblem,
  findHumanTask,
  formOf,
  isOpen,
  outcomesOf,
  prefillOf,
  readOnlyFields,
  recordHumanAction,
  refuseClosed,
  refuseHuman,
  resolveHumanActor,
  selfApprovalProblem,
  userRefs,
} from "./human-task-support";
import type { HumanActor, HumanRefusal } from "./human-task-support";
import { validateFormData } from "./validate-form-data";


export const SubmitHumanTaskInputSchema = z.strictObject({
  namespaceId: UUID,
  /** The HumanTasks id (the inbox item), not the TaskExecutions id. */
  id: z.string().min(1).max(100),
  actor: ActorSchema,
  outcome: z.string().min(1).max(200).optional(),
  data: z.record(z.string(), z.unknown()).default({}),
});
export type SubmitHumanTaskInput = z.input<typeof SubmitHumanTaskInputSchema>;

export type SubmitHumanTaskResult = { ok: true; status: "COMPLETED" | "APPROVAL_RECORDED"; item: HumanTaskItem } | HumanRefusal;

/**
 * Submits an inbox item (the inbox's form, REST's complete): the rules below,
 * then the TaskExecutions attempt ends exactly as completeExternalTask ends
 * it, or — short of N approvals — the approval is recorded and the task stays
 * open for the next person.
 */
export async function submitHumanTask(deps: WorkflowActionDeps, rawInput: unknown): Promise<SubmitHumanTaskResult> {
  const parsed = parseInput(SubmitHumanTaskInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  const result = await runInTransaction(deps, async (trx, now) => {
    // Unlocked first: a wrong id or another namespace's touches no queue row.
    const seen = await findHumanTask(trx, input.namespaceId, input.id);
    if (!isOpen(seen)) refuseClosed(seen);
    // The workflow's decide row, then its row lock (the evaluator's order); the
    // inbox row is locked after both, in submitHumanTaskInTransaction.
    const wf = await openWorkflow(trx, { namespaceId: input.namespaceId, workflowId: seen.workflowId, decideReason: "human task submitted" });
    const task = await getTaskRow(trx, wf.id, seen.taskId);
    if (task === undefined) refuseHuman("not-found", `Human task ${input.id} not found`);
    if (task.status !== "IN_PROGRESS" || (wf.status !== "RUNNING" && wf.status !== "PAUSED")) {
      refuseHuman("conflict", `Human task ${input.id} can no longer be submitted: its task is ${task.status} in a ${wf.status} run`);
    }
    return submitHumanTaskInTransaction(trx, now, wf, task, { actor: input.actor, status: "COMPLETED", outcome: input.outcome, data: input.data });
  });
  if (!result.ok) return result;
  const row = await findHumanTask(deps.db, input.namespaceId, input.id);
  return { ok: true, status: result.status === "APPROVAL_RECORDED" ? "APPROVAL_RECORDED" : "COMPLETED", item: await toHumanTaskItem(deps.db, row, new Date(deps.now?.() ?? Date.now())) };
}

export interface HumanSubmission {
  actor: Actor;
  status: "COMPLETED" | "FAILED";
  /** From completeExternalTask: the whole output; `outcome` in it is the outcome, the rest the form data. */
  output?: Record<string, unknown>;
  outcome?: string | undefined;
  data?: Record<string, unknown>;
  reason?: string | undefined;
  /** Escalation's "complete": on nobody's behalf, past the rules about who may. */
  asSystem?: boolean;
}

export type HumanSubmissionResult = { ok: true; workflowId: string; taskId: string; ref: string; status: "COMPLETED" | "FAILED" | "APPROVAL_RECORDED"; humanTaskId?: string };

/**
 * Every rule a HUMAN completion must pass, whichever path it came by (the
 * inbox, REST, completeExternalTask for the API signal, the operator and
 * Conductor, escalation), inside the caller's transaction, which already holds
 * the workflow (openWorkflow with a decide enqueued) and found the attempt
 * IN_PROGRESS. In order:
 * - the inbox row is locked; a closed one is a conflict (the second of two
 *   simultaneous submissions lands here, after the first committed);
 * - claimed by someone else: conflict; not eligible (user / group / role /
 *   anyone): forbidden; the run's starter when self-approval is off: forbidden;
 * - the outcome must be one of the outcomes; the data must match the form's
 *   schema (field errors, nothing written); read-only fields keep their
 *   pre-filled value whatever was sent;
 * - one HumanTaskSubmissions row per person; N approvals: the first outcome
 *   approves and the task stays open until N distinct people chose it, any
 *   other outcome completes it at once.
 * Then the attempt ends through endExternalTask with the contract's output.
 */
export async function submitHumanTaskInTransaction(
  trx: Transaction<Database>,
  now: Date,
  wf: WorkflowExecutionRow,
  task: TaskExecutionRow,
  input: HumanSubmission,
): Promise<HumanSubmissionResult> {
  const row = await trx.selectFrom("HumanTasks").selectAll().where("taskId", "=", task.id).where("namespaceId", "=", wf.namespaceId).forUpdate().executeTakeFirst();
  // An attempt opened before inbox rows existed has no row and so no rules to apply.
  if (row === undefined) return endExternalTask(trx, now, wf, task, { actor: input.actor, status: input.status, output: input.output ?? input.data ?? {}, reason: input.reason });
  if (!isOpen(row)) refuseClosed(row);
  const who: HumanActor = input.asSystem === true ? { kind: "system", actor: input.actor } : await resolveHumanActor(trx, wf.namespaceId, input.actor);
  const userId = who.kind === "user" ? who.userId : null;
  if (who.kind !== "system") {
    if (row.status === "CLAIMED" && row.claimedByUserId !== null && row.claimedByUserId !== userId) {
      const holder = (await userRefs(trx, [row.claimedByUserId])).get(row.claimedByUserId);
      refuseHuman("conflict", `Human task ${row.id} is claimed by ${holder?.email ?? "someone else"}; only they can submit it until it is released`);
    }
    const notEligible = eligibilityProblem(row, who);
    if (notEligible !== null) refuseHuman("forbidden", notEligible);
    const self = selfApprovalProblem(row, who);
    if (self !== null) refuseHuman("forbidden", self);
  }
  const completedBy = who.kind === "user" ? { userId: who.userId, email: who.email } : null;
  if (input.status === "FAILED") {
    return { ...(await endExternalTask(trx, now, wf, task, { actor: input.actor, status: "FAILED", output: input.output ?? {}, reason: input.reason, completedByUserId: userId, auditAction: "human-task.complete", details: { humanTaskId: row.id } })), humanTaskId: row.id };
  }

  const { outcome, data: submitted } = splitOutput(input);
  const outcomes = outcomesOf(row);
  if (outcomes.length > 0 && (outcome === undefined || !outcomes.includes(outcome))) {
    refuseHuman("invalid-data", outcome === undefined ? `Choose an outcome: one of ${outcomes.join(", ")}` : `The outcome "${outcome}" is not one of ${outcomes.join(", ")}`);
  }
  const form = await formOf(trx, row);
  const prefill = prefillOf(form.schema, row.input);
  const data = { ...submitted };
  // Never trust a read-only field: it shows workflow data, and a changed value would be a forged one.
  for (const field of readOnlyFields(form)) {
    if (prefill[field] !== undefined) data[field] = prefill[field];
    else delete data[field];
  }
  const fieldErrors = validateFormData(form.schema, data);
  if (fieldErrors.length > 0) refuseHuman("invalid-data", `The form has ${fieldErrors.length} error${fieldErrors.length === 1 ? "" : "s"}: ${fieldErrors.map((e) => `${e.path || "(form)"} ${e.message}`).join("; ")}`, fieldErrors);

  if (who.kind === "user") {
    const inserted = await trx
      .insertInto("HumanTaskSubmissions")
      .values({ humanTaskId: row.id, namespaceId: row.namespaceId, userId: who.userId, outcome: outcome ?? null, data: json(data), at: now })
      .onConflict((oc) => oc.columns(["humanTaskId", "userId"]).doNothing())
      .returning("id")
      .executeTakeFirst();
    if (inserted === undefined) refuseHuman("conflict", `You already submitted human task ${row.id}; it needs ${row.approvalsRequired} different people`);
  } else if (who.kind === "service" && row.approvalsRequired > 1) {
    refuseHuman("forbidden", `Human task ${row.id} needs ${row.approvalsRequired} distinct people; a service account's key cannot count as one`);
  }

  const approving = approvingOutcome(row);
  const approves = approving === null || outcome === approving;
  if (row.approvalsRequired > 1 && approves && who.kind === "user") {
    const { count } = await trx
      .selectFrom("HumanTaskSubmissions")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where("humanTaskId", "=", row.id)
      .$if(approving !== null, (q) => q.where("outcome", "=", approving))
      .executeTakeFirstOrThrow();
    const given = Number(count);
    if (given < row.approvalsRequired) {
      // Released, so the next approver can take it; the approval stays recorded.
      await trx.updateTable("HumanTasks").set({ status: "PENDING", claimedByUserId: null, claimedAt: null, updatedAt: now }).where("id", "=", row.id).execute();
      await recordHumanAction(trx, {
        row,
        actor: input.actor,
        verb: "approve",
        eventType: "HUMAN_TASK_APPROVAL_RECORDED",
        details: { outcome: outcome ?? null, approvalsGiven: given, approvalsRequired: row.approvalsRequired, by: completedBy },
        now,
      });
      return { ok: true, workflowId: wf.id, taskId: task.id, ref: task.refName, status: "APPROVAL_RECORDED", humanTaskId: row.id };
    }
  }

  const output: Record<string, unknown> = { ...data, ...(outcome === undefined ? {} : { outcome }), completedBy };
  if (row.approvalsRequired > 1) {
    const submissions = await trx
      .selectFrom("HumanTaskSubmissions as s")
      .innerJoin("Users as u", "u.id", "s.userId")
      .select(["s.userId", "u.email", "s.outcome", "s.data", "s.at"])
      .where("s.humanTaskId", "=", row.id)
      .orderBy("s.at")
      .orderBy("s.id")
      .execute();
    output.submissions = submissions.map((s) => ({ userId: s.userId, email: s.email, outcome: s.outcome, data: s.data, at: s.at.toISOString() }));
  }
  const ended = await endExternalTask(trx, now, wf, task, {
    actor: input.actor,
    status: "COMPLETED",
    output,
    completedByUserId: userId,
    outcome: outcome ?? null,
    auditAction: "human-task.complete",
    details: { humanTaskId: row.id, outcome: outcome ?? null, completedBy, ...(input.asSystem === true ? { escalated: true } : {}) },
  });
  return { ...ended, humanTaskId: row.id };
}

/** The outcome and form data of a submission; an external completion's output carries the outcome inside it. */
function splitOutput(input: HumanSubmission): { outcome: string | undefined; data: Record<string, unknown> } {
  if (input.output === undefined) return { outcome: input.outcome, data: input.data ?? {} };
  const { outcome, completedBy: _completedBy, submissions: _submissions, ...data } = input.output;
  // An outcome that is not text is left in the data for the schema to judge, and no outcome is chosen.
  if (outcome !== undefined && typeof outcome !== "string") return { outcome: undefined, data: { ...data, outcome } };
  return { outcome: input.outcome ?? outcome, data };
}
