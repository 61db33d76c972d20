import type { Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../../db/schema";
import { ActionRefused, ActorSchema, asObject, parseInput, UUID } from "../executions/actions/action-support";
import type { WorkflowActionDeps } from "../executions/actions/action-support";
import { toHumanTaskItem } from "./human-task-items";
import type { HumanTaskItem } from "./human-task-items";
import {
  eligibilityProblem,
  findHumanTask,
  formOf,
  isOpen,
  isOperator,
  mayView,
  outcomesOf,
  prefillOf,
  refuseHuman,
  resolveHumanActor,
  selfApprovalProblem,
  userRefs,
} from "./human-task-support";
import type { HumanActor, HumanRefusal } from "./human-task-support";
import type { HumanTaskRow } from "../../db/schema";


export const GetHumanTaskInputSchema = z.strictObject({ namespaceId: UUID, id: z.string().min(1).max(100), actor: ActorSchema });

export interface HumanTaskDetail extends HumanTaskItem {
  schema: Record<string, unknown>;
  uiSchema: Record<string, unknown>;
  formData: Record<string, unknown>;
  outcomes: string[];
  context: { workflowInput: Record<string, unknown>; variables: Record<string, unknown> };
  submissions: { userId: string; email: string; outcome: string | null; at: string }[];
  can: { claim: boolean; release: boolean; submit: boolean; reassign: boolean; reason: string | null };
  response: Record<string, unknown> | null;
  completedBy: { userId: string; email: string } | null;
  completedAt: string | null;
}

/**
 * One task with its form (the template version it opened on, or its inline
 * form), the pre-fill, the run's input and variables for context, who
 * submitted so far, and what the caller may do with it (`can`, with the reason
 * they may not submit). A task the caller may not see is NOT_FOUND, exactly
 * like one that does not exist or belongs to another namespace.
 */
export async function getHumanTask(deps: WorkflowActionDeps, rawInput: unknown): Promise<({ ok: true } & HumanTaskDetail) | HumanRefusal> {
  const parsed = parseInput(GetHumanTaskInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  const db: Kysely<Database> = deps.db;
  try {
    const row = await findHumanTask(db, input.namespaceId, input.id);
    const who = await resolveHumanActor(db, input.namespaceId, input.actor);
    const submissions = await db
      .selectFrom("HumanTaskSubmissions as s")
      .innerJoin("Users as u", "u.id", "s.userId")
      .select(["s.userId", "u.email", "s.outcome", "s.at"])
      .where("s.humanTaskId", "=", row.id)
      .orderBy("s.at")
      .execute();
    if (!mayView(row, who, submissions.map((s) => s.userId))) refuseHuman("not-found", `Human task ${input.id} not found`);
    const now = new Date(deps.now?.() ?? Date.now());
    const item = await toHumanTaskItem(db, row, now);
    const form = await formOf(db, row);
    const wf = await db.selectFrom("WorkflowExecutions").select(["input", "variables"]).where("id", "=", row.workflowId).where("namespaceId", "=", row.namespaceId).executeTakeFirst();
    const completedBy = row.completedByUserId === null ? null : ((await userRefs(db, [row.completedByUserId])).get(row.completedByUserId) ?? null);
    return {
      ok: true,
      ...item,
      schema: form.schema,
      uiSchema: form.uiSchema,
      formData: prefillOf(form.schema, row.input),
      outcomes: outcomesOf(row),
      context: { workflowInput: asObject(wf?.input), variables: asObject(wf?.variables) },
      submissions: submissions.map((s) => ({ userId: s.userId, email: s.email, outcome: s.outcome, at: s.at.toISOString() })),
      can: abilities(row, who, submissions.map((s) => s.userId)),
      response: row.response === null ? null : asObject(row.response),
      completedBy,
      completedAt: row.completedAt?.toISOString() ?? null,
    };
  } catch (error) {
    if (error instanceof ActionRefused) return error.refusal;
    throw error;
  }
}

/** The same rules the verbs enforce, asked in advance so the UI shows only what will work. */
export function abilities(row: HumanTaskRow, who: HumanActor, submitters: readonly string[]): HumanTaskDetail["can"] {
  const me = who.kind === "user" ? who.userId : null;
  if (!isOpen(row)) return { claim: false, release: false, submit: false, reassign: false, reason: `This task is ${row.status.toLowerCase()}` };
  const notEligible = eligibilityProblem(row, who);
  const self = selfApprovalProblem(row, who);
  const claimedByOther = row.status === "CLAIMED" && row.claimedByUserId !== me;
  const already = me !== null && submitters.includes(me);
  const reason = notEligible ?? self ?? (claimedByOther ? "Someone else has claimed this task" : already ? "You already submitted this task; it needs someone else's approval" : null);
  return {
    claim: who.kind === "user" && row.status === "PENDING" && notEligible === null && self === null && !already,
    release: row.status === "CLAIMED" && (row.claimedByUserId === me || isOperator(who)),
    submit: reason === null,
    reassign: isOperator(who) && who.kind !== "system",
    reason,
  };
}
