import type { Kysely } from "kysely";
import type { Database, HumanAssigneeKind, HumanTaskRow, HumanTaskStatus } from "../../db/schema";
import { outcomesOf, userRefs } from "./human-task-support";

/**
 * The inbox's view of a task (the contract's HumanTaskItem): built in bulk for
 * a page of rows with one query per related table, never one per row.
 */
export interface HumanTaskItem {
  id: string;
  taskId: string;
  workflowId: string;
  workflowName: string;
  refName: string;
  title: string;
  description: string | null;
  status: HumanTaskStatus;
  assignee: { kind: HumanAssigneeKind; id: string | null; label: string };
  claimedBy: { userId: string; email: string } | null;
  dueAt: string | null;
  overdue: boolean;
  createdAt: string;
  approvalsRequired: number;
  approvalsGiven: number;
}

type Executor = Kysely<Database>;

/** The approving outcome: the first button; with no buttons every submission approves. */
export function approvingOutcome(row: HumanTaskRow): string | null {
  return outcomesOf(row)[0] ?? null;
}

export async function toHumanTaskItems(db: Executor, rows: readonly HumanTaskRow[], now: Date): Promise<HumanTaskItem[]> {
  if (rows.length === 0) return [];
  const workflowIds = [...new Set(rows.map((r) => r.workflowId))];
  const workflows = await db.selectFrom("WorkflowExecutions").select(["id", "defName"]).where("id", "in", workflowIds).execute();
  const names = new Map(workflows.map((w) => [w.id, w.defName]));
  const groupIds = [...new Set(rows.map((r) => r.assigneeGroupId).filter((id): id is string => id !== null))];
  const groups = groupIds.length === 0 ? [] : await db.selectFrom("Groups").select(["id", "name"]).where("id", "in", groupIds).execute();
  const groupNames = new Map(groups.map((g) => [g.id, g.name]));
  const users = await userRefs(db, rows.flatMap((r) => [r.claimedByUserId, r.assigneeUserId]));
  const submissions = await db
    .selectFrom("HumanTaskSubmissions")
    .select(["humanTaskId", "outcome"])
    .where("humanTaskId", "in", rows.map((r) => r.id))
    .execute();
  return rows.map((row) => {
    const approving = approvingOutcome(row);
    const given = submissions.filter((s) => s.humanTaskId === row.id && (approving === null || s.outcome === approving)).length;
    return {
      id: row.id,
      taskId: row.taskId,
      workflowId: row.workflowId,
      workflowName: names.get(row.workflowId) ?? "",
      refName: row.refName,
      title: row.title,
      description: row.description,
      status: row.status,
      assignee: assigneeOf(row, users, groupNames),
      claimedBy: row.claimedByUserId === null ? null : (users.get(row.claimedByUserId) ?? null),
      dueAt: row.dueAt?.toISOString() ?? null,
      overdue: row.dueAt !== null && (row.status === "PENDING" || row.status === "CLAIMED") && row.dueAt.getTime() < now.getTime(),
      createdAt: row.createdAt.toISOString(),
      approvalsRequired: row.approvalsRequired,
      approvalsGiven: given,
    };
  });
}

function assigneeOf(row: HumanTaskRow, users: Map<string, { email: string }>, groups: Map<string, string>): HumanTaskItem["assignee"] {
  const written = row.assigneeLabel.includes(":") ? row.assigneeLabel.slice(row.assigneeLabel.indexOf(":") + 1) : row.assigneeLabel;
  switch (row.assigneeKind) {
    case "user":
      return { kind: "user", id: row.assigneeUserId, label: (row.assigneeUserId === null ? undefined : users.get(row.assigneeUserId)?.email) ?? written };
    case "group":
      return { kind: "group", id: row.assigneeGroupId, label: (row.assigneeGroupId === null ? undefined : groups.get(row.assigneeGroupId)) ?? written };
    case "role":
      return { kind: "role", id: row.assigneeRole, label: `${row.assigneeRole ?? written} and up` };
    case "anyone":
      return { kind: "anyone", id: null, label: "Anyone" };
  }
}

export async function toHumanTaskItem(db: Executor, row: HumanTaskRow, now: Date): Promise<HumanTaskItem> {
  return (await toHumanTaskItems(db, [row], now))[0]!;
}
