import { sql } from "kysely";
import type { Kysely, Transaction } from "kysely";
import type { Database, HumanAssigneeKind, HumanTaskRow, MemberRole } from "../../db/schema";
import { NAMESPACE_ROLES } from "../auth/principal";
import type { NamespaceRole } from "../auth/principal";
import { getFormTemplateById } from "../store/form-templates";
import { rolesOfUserInNamespace, strongestRole } from "../store/namespace-members";
import { ActionRefused, asObject, recordAction } from "../executions/actions/action-support";
import type { ActionRefusal, Actor } from "../executions/actions/action-support";

/**
 * What the human-task service shares: who is acting (resolved to a person,
 * a service account or the system), who a task is for, the eligibility and
 * self-approval rules, the refusals, the form a task shows, and how its
 * actions are recorded. Each verb is one file beside this one; every
 * completion path (inbox, REST, operator, Conductor, escalation) ends in
 * submit-human-task.ts, so the rules here are the only ones.
 */

type Executor = Kysely<Database>;

/** Refusals of the human-task rules, on top of the workflow actions' (not-found, invalid-input, …). */
export type HumanRefusalCode = "forbidden" | "conflict" | "invalid-data";

/** A field of the submitted data that failed the form's schema: a JSON pointer ("/amount") and why. */
export interface FieldError {
  path: string;
  message: string;
}

export type HumanRefusal = ActionRefusal & { fieldErrors?: FieldError[] };

/** Refuses from inside a human-task transaction: everything it wrote is rolled back. */
export function refuseHuman(code: HumanRefusalCode | "not-found" | "invalid-input", message: string, fieldErrors?: FieldError[]): never {
  throw new ActionRefused({ ok: false, code, message, ...(fieldErrors === undefined ? {} : { fieldErrors }) });
}

/**
 * Who acts, as the rules see them:
 * - a person: a signed-in user, or an API key acting for a user (it acts as
 *   that user, with that user's roles and groups);
 * - a service: an API key of a service account (or of nobody), which acts only
 *   on tasks assigned to "anyone" and never counts as a distinct approver;
 * - the system: escalation, which the rules do not apply to.
 */
export type HumanActor =
  | { kind: "user"; actor: Actor; userId: string; email: string; role: NamespaceRole | null; groupIds: string[] }
  | { kind: "service"; actor: Actor }
  | { kind: "system"; actor: Actor };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The person behind `actor` in `namespaceId`: roles (direct, via groups, owner = admin) and group memberships. */
export async function resolveHumanActor(db: Executor, namespaceId: string, actor: Actor): Promise<HumanActor> {
  if (actor.type === "system") return { kind: "system", actor };
  let userId: string | null = null;
  if (actor.type === "user") userId = actor.id;
  else if (UUID.test(actor.id)) {
    // A key never acts outside its own namespace: a key of another namespace is nobody here.
    const key = await db.selectFrom("ApiKeys").select(["userId"]).where("id", "=", actor.id).where("namespaceId", "=", namespaceId).executeTakeFirst();
    userId = key?.userId ?? null;
    if (key === undefined || userId === null) return { kind: "service", actor };
  } else return { kind: "service", actor };
  const user = UUID.test(userId) ? await db.selectFrom("Users").select(["id", "email", "isAdmin", "disabledAt"]).where("id", "=", userId).executeTakeFirst() : undefined;
  if (user === undefined || user.disabledAt !== null) return { kind: "user", actor, userId, email: "", role: null, groupIds: [] };
  const role = user.isAdmin ? "admin" : strongestRole(await rolesOfUserInNamespace(db, namespaceId, user.id));
  const groups = await db
    .selectFrom("GroupMembers as gm")
    .innerJoin("Groups as g", "g.id", "gm.groupId")
    .select("g.id")
    .where("gm.userId", "=", user.id)
    .where("g.namespaceId", "=", namespaceId)
    .execute();
  return { kind: "user", actor, userId: user.id, email: user.email, role, groupIds: groups.map((g) => g.id) };
}

export function roleRank(role: string | null): number {
  return role === null ? -1 : NAMESPACE_ROLES.indexOf(role as NamespaceRole);
}

/** Operator and up: may reassign, release someone else's claim, and see every task of the namespace. */
export function isOperator(who: HumanActor): boolean {
  return who.kind === "system" || (who.kind === "user" && roleRank(who.role) >= roleRank("operator"));
}

export type ParsedAssignee = { kind: "anyone" } | { kind: "user"; email: string } | { kind: "group"; name: string } | { kind: "role"; role: MemberRole };

/** "user:<email>" | "group:<name>" | "role:<role>" | "anyone"; undefined for anything else. Absent = anyone. */
export function parseAssignee(text: unknown): ParsedAssignee | undefined {
  if (text === undefined || text === null) return { kind: "anyone" };
  if (typeof text !== "string") return undefined;
  const value = text.trim();
  if (value === "anyone") return { kind: "anyone" };
  const colon = value.indexOf(":");
  if (colon < 0) return undefined;
  const kind = value.slice(0, colon);
  const rest = value.slice(colon + 1).trim();
  if (rest === "") return undefined;
  if (kind === "user") return { kind: "user", email: rest };
  if (kind === "group") return { kind: "group", name: rest };
  if (kind === "role" && (NAMESPACE_ROLES as readonly string[]).includes(rest)) return { kind: "role", role: rest as MemberRole };
  return undefined;
}

/** The HumanTasks columns for an assignee, looked up in the namespace. */
export interface AssigneeColumns {
  assigneeKind: HumanAssigneeKind;
  assigneeUserId: string | null;
  assigneeGroupId: string | null;
  assigneeRole: MemberRole | null;
  assigneeLabel: string;
}

/**
 * The columns for `text`, or undefined when it is not an assignee at all. A
 * user or group that does not exist keeps its kind with a null id: the task is
 * then nobody's until an operator reassigns it — never silently "anyone",
 * which would hand an approval meant for one person to the whole namespace.
 */
export async function resolveAssignee(db: Executor, namespaceId: string, text: unknown): Promise<AssigneeColumns | undefined> {
  const parsed = parseAssignee(text);
  if (parsed === undefined) return undefined;
  const none = { assigneeUserId: null, assigneeGroupId: null, assigneeRole: null };
  switch (parsed.kind) {
    case "anyone":
      return { ...none, assigneeKind: "anyone", assigneeLabel: "anyone" };
    case "role":
      return { ...none, assigneeKind: "role", assigneeRole: parsed.role, assigneeLabel: `role:${parsed.role}` };
    case "user": {
      const user = await db.selectFrom("Users").select("id").where(sql<string>`lower("email")`, "=", parsed.email.toLowerCase()).executeTakeFirst();
      return { ...none, assigneeKind: "user", assigneeUserId: user?.id ?? null, assigneeLabel: `user:${parsed.email}` };
    }
    case "group": {
      const group = await db.selectFrom("Groups").select("id").where("namespaceId", "=", namespaceId).where("name", "=", parsed.name).executeTakeFirst();
      return { ...none, assigneeKind: "group", assigneeGroupId: group?.id ?? null, assigneeLabel: `group:${parsed.name}` };
    }
  }
}

/** Why `who` may not act on the task as its assignee (claim, submit), or null when they may. */
export function eligibilityProblem(row: HumanTaskRow, who: HumanActor): string | null {
  if (who.kind === "system") return null;
  if (who.kind === "service") {
    return row.assigneeKind === "anyone" ? null : `This task is for ${row.assigneeLabel}; a service account's key acts only on tasks assigned to anyone`;
  }
  if (who.role === null) return "You are not a member of this namespace";
  switch (row.assigneeKind) {
    case "anyone":
      return null;
    case "user":
      return row.assigneeUserId !== null && row.assigneeUserId === who.userId ? null : `This task is assigned to ${row.assigneeLabel.slice("user:".length)}, not to you`;
    case "group":
      return row.assigneeGroupId !== null && who.groupIds.includes(row.assigneeGroupId) ? null : `This task is for the group ${row.assigneeLabel.slice("group:".length)}, which you are not in`;
    case "role":
      return roleRank(who.role) >= roleRank(row.assigneeRole) ? null : `This task is for the ${row.assigneeRole ?? "?"} role and up; you are ${who.role}`;
  }
}

/** Why `who` may not submit because they started the run (allowSelfApproval false), or null. */
export function selfApprovalProblem(row: HumanTaskRow, who: HumanActor): string | null {
  if (row.allowSelfApproval || who.kind !== "user" || row.starterUserId === null) return null;
  return row.starterUserId === who.userId ? "You started this run; self-approval is not allowed on this task, so someone else must submit it" : null;
}

/** Whether `who` may see the task at all: anyone it is for, whoever holds or closed it, and operators. */
export function mayView(row: HumanTaskRow, who: HumanActor, submitters: readonly string[]): boolean {
  if (isOperator(who)) return true;
  if (eligibilityProblem(row, who) === null) return true;
  if (who.kind !== "user") return false;
  return row.claimedByUserId === who.userId || row.completedByUserId === who.userId || submitters.includes(who.userId);
}

export const OPEN_STATUSES = ["PENDING", "CLAIMED"] as const;
export function isOpen(row: { status: string }): boolean {
  return (OPEN_STATUSES as readonly string[]).includes(row.status);
}

/**
 * The task `id` of `namespaceId`, locked FOR UPDATE, or a not-found refusal —
 * also for an id of another namespace (never acts across namespaces).
 */
export async function lockHumanTask(trx: Transaction<Database>, namespaceId: string, id: string): Promise<HumanTaskRow> {
  if (!UUID.test(id)) refuseHuman("not-found", `Human task ${id} not found`);
  const row = await trx.selectFrom("HumanTasks").selectAll().where("id", "=", id).where("namespaceId", "=", namespaceId).forUpdate().executeTakeFirst();
  if (row === undefined) refuseHuman("not-found", `Human task ${id} not found`);
  return row;
}

/** The unlocked row, or a not-found refusal. */
export async function findHumanTask(db: Executor, namespaceId: string, id: string): Promise<HumanTaskRow> {
  if (!UUID.test(id)) refuseHuman("not-found", `Human task ${id} not found`);
  const row = await db.selectFrom("HumanTasks").selectAll().where("id", "=", id).where("namespaceId", "=", namespaceId).executeTakeFirst();
  if (row === undefined) refuseHuman("not-found", `Human task ${id} not found`);
  return row;
}

/** The refusal for acting on a closed task. */
export function refuseClosed(row: HumanTaskRow): never {
  refuseHuman("conflict", `Human task ${row.id} is ${row.status}: it can no longer be claimed, released, reassigned or submitted`);
}

export interface HumanForm {
  schema: Record<string, unknown>;
  uiSchema: Record<string, unknown>;
}

/** The form a task shows: the template version it opened on, else its inline form, else an empty object form. */
export async function formOf(db: Executor, row: HumanTaskRow): Promise<HumanForm> {
  if (row.formTemplateId !== null) {
    const template = await getFormTemplateById(db, row.namespaceId, row.formTemplateId);
    if (template !== undefined) return { schema: asObject(template.schema), uiSchema: asObject(template.uiSchema) };
  }
  const schema = asObject(row.formSchema);
  return { schema: Object.keys(schema).length > 0 ? schema : { type: "object", properties: {} }, uiSchema: asObject(row.formUiSchema) };
}

/** The form's pre-fill: `input[field]` for every property of the schema (the node's `input` expressions, resolved). */
export function prefillOf(schema: Record<string, unknown>, input: unknown): Record<string, unknown> {
  const properties = asObject(schema.properties);
  const values = asObject(input);
  const result: Record<string, unknown> = {};
  for (const field of Object.keys(properties)) if (values[field] !== undefined) result[field] = values[field];
  return result;
}

/** The schema's read-only fields: `ui:readonly` in the UI schema, or `readOnly` in the JSON Schema. */
export function readOnlyFields(form: HumanForm): string[] {
  const properties = asObject(form.schema.properties);
  return Object.keys(properties).filter((field) => asObject(form.uiSchema[field])["ui:readonly"] === true || asObject(properties[field]).readOnly === true);
}

export function outcomesOf(row: HumanTaskRow): string[] {
  return Array.isArray(row.outcomes) ? row.outcomes.filter((o): o is string => typeof o === "string") : [];
}

/**
 * Records a human-task action: an AuditEvents row ("human-task.<verb>", with
 * the task, what changed, the actor) and a WorkflowEvents entry in the run's
 * history. The caller holds the workflow's row lock (appending needs it).
 */
export async function recordHumanAction(
  trx: Transaction<Database>,
  input: { row: HumanTaskRow; actor: Actor; verb: string; eventType: string; details: Record<string, unknown>; now: Date },
): Promise<void> {
  const { row } = input;
  await recordAction(trx, {
    wf: { id: row.workflowId, namespaceId: row.namespaceId },
    actor: input.actor,
    action: `human-task.${input.verb}`,
    events: [{ type: input.eventType, refName: row.refName, taskId: row.taskId, data: { humanTaskId: row.id, ...input.details } }],
    details: { humanTaskId: row.id, taskId: row.taskId, ref: row.refName, ...input.details },
    now: input.now,
  });
}

/** A user's id and email, for claimedBy / completedBy / submissions. */
export async function userRefs(db: Executor, ids: readonly (string | null)[]): Promise<Map<string, { userId: string; email: string }>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom("Users").select(["id", "email"]).where("id", "in", wanted).execute();
  return new Map(rows.map((r) => [r.id, { userId: r.id, email: r.email }]));
}
