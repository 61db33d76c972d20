import type { Kysely } from "kysely";
import { json } from "../../db/json";
import type { Database, HumanAssigneeKind, HumanTaskRow, MemberRole } from "../../db/schema";

/**
 * HumanTasks: one inbox row per HUMAN task attempt. The row mirrors its
 * TaskExecutions attempt ("taskId", unique) but the attempt is the truth the
 * decider reads; this row is what people see and act on. Every statement
 * carries "namespaceId" or is addressed by a workflow the caller already
 * resolved inside its namespace.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/** The statuses a task still waits in: someone may yet open, claim or submit it. */
const OPEN_STATUSES = ["PENDING", "CLAIMED"] as const;

export interface CreateHumanTaskInput {
  namespaceId: string;
  workflowId: string;
  /** The TaskExecutions attempt this stands for. */
  taskId: string;
  refName: string;
  title: string;
  description?: string | null;
  /** What the form shows and is pre-filled with. */
  input: unknown;
  dueAt?: Date | null;
  formTemplateId?: string | null;
  assigneeUserId?: string | null;
  assigneeGroupId?: string | null;
  assigneeKind?: HumanAssigneeKind;
  assigneeRole?: MemberRole | null;
  /** The assignee as written ("user:ann@x.io"), shown even when it names no one. */
  assigneeLabel?: string;
  approvalsRequired?: number;
  allowSelfApproval?: boolean;
  starterUserId?: string | null;
  outcomes?: readonly string[];
  formSchema?: unknown;
  formUiSchema?: unknown;
  escalation?: readonly unknown[];
}

/**
 * Creates the inbox row for a HUMAN attempt, or does nothing when it exists:
 * ON CONFLICT ("taskId") DO NOTHING, because whoever creates it (the
 * evaluator scheduling the task, an operator's retry) may run again after a
 * crash or a rolled-back evaluation and must land on the same row. Returns the
 * row when this call inserted it, undefined when it already existed.
 */
export async function createHumanTask(db: Executor, input: CreateHumanTaskInput): Promise<HumanTaskRow | undefined> {
  return db
    .insertInto("HumanTasks")
    .values({
      namespaceId: input.namespaceId,
      workflowId: input.workflowId,
      taskId: input.taskId,
      refName: input.refName,
      title: input.title,
      description: input.description ?? null,
      input: json(input.input ?? {}),
      dueAt: input.dueAt ?? null,
      formTemplateId: input.formTemplateId ?? null,
      assigneeUserId: input.assigneeUserId ?? null,
      assigneeGroupId: input.assigneeGroupId ?? null,
      assigneeKind: input.assigneeKind ?? "anyone",
      assigneeRole: input.assigneeRole ?? null,
      assigneeLabel: input.assigneeLabel ?? "anyone",
      approvalsRequired: input.approvalsRequired ?? 1,
      allowSelfApproval: input.allowSelfApproval ?? true,
      starterUserId: input.starterUserId ?? null,
      outcomes: json(input.outcomes ?? []),
      formSchema: input.formSchema === undefined || input.formSchema === null ? null : json(input.formSchema),
      formUiSchema: input.formUiSchema === undefined || input.formUiSchema === null ? null : json(input.formUiSchema),
      escalation: json(input.escalation ?? []),
    })
    .onConflict((oc) => oc.column("taskId").doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** The inbox row of one HUMAN attempt, only inside `namespaceId`. */
export async function getHumanTaskByTaskId(db: Executor, namespaceId: string, taskId: string): Promise<HumanTaskRow | undefined> {
  return db.selectFrom("HumanTasks").selectAll().where("taskId", "=", taskId).where("namespaceId", "=", namespaceId).executeTakeFirst();
}

/**
 * Cancels a workflow's open inbox rows (PENDING, CLAIMED): the workflow ended
 * or was terminated, or (with `taskId`) that one attempt was skipped. Rows
 * already COMPLETED, CANCELED or EXPIRED are left as they are, so calling this
 * twice changes nothing. Returns how many were canceled. `status` EXPIRED is
 * for an attempt that timed out (its deadline, or an escalation's "timeout").
 */
export async function cancelOpenHumanTasks(
  db: Executor,
  workflowId: string,
  options: { taskId?: string; now?: Date; status?: "CANCELED" | "EXPIRED" } = {},
): Promise<number> {
  let query = db
    .updateTable("HumanTasks")
    .set({ status: options.status ?? "CANCELED", updatedAt: options.now ?? new Date() })
    .where("workflowId", "=", workflowId)
    .where("status", "in", [...OPEN_STATUSES]);
  if (options.taskId !== undefined) query = query.where("taskId", "=", options.taskId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export interface CompleteHumanTaskInput {
  namespaceId: string;
  taskId: string;
  /** The submitted form data. */
  response: unknown;
  /** The user who submitted it; null for an API key or the system. */
  completedByUserId?: string | null;
  /** The chosen outcome, when the task has outcomes. */
  outcome?: string | null;
  now?: Date;
}

/**
 * Records a submission: an open row (PENDING or CLAIMED) becomes COMPLETED
 * with its response. Compare-and-set on the open statuses, so of two
 * submissions racing for one task exactly one wins. Returns the updated row,
 * or undefined when the task is missing, in another namespace, or already
 * closed. The caller ends the TaskExecutions attempt in the same transaction
 * (complete-external-task does both).
 */
export async function completeHumanTask(db: Executor, input: CompleteHumanTaskInput): Promise<HumanTaskRow | undefined> {
  const now = input.now ?? new Date();
  return db
    .updateTable("HumanTasks")
    .set({
      status: "COMPLETED",
      response: json(input.response ?? {}),
      completedByUserId: input.completedByUserId ?? null,
      outcome: input.outcome ?? null,
      completedAt: now,
      updatedAt: now,
    })
    .where("taskId", "=", input.taskId)
    .where("namespaceId", "=", input.namespaceId)
    .where("status", "in", [...OPEN_STATUSES])
    .returningAll()
    .executeTakeFirst();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `userId` when it names an existing user, else undefined: "completedByUserId"
 * and "claimedByUserId" reference Users, and an actor id that is not a user's
 * (an API key's, a test's) must not fail the completion on the foreign key.
 * Who acted is recorded in AuditEvents either way.
 */
export async function existingUserId(db: Executor, userId: string): Promise<string | undefined> {
  if (!UUID.test(userId)) return undefined;
  const row = await db.selectFrom("Users").select("id").where("id", "=", userId).executeTakeFirst();
  return row?.id;
}
