import { sql } from "kysely";
import type { Db } from "../../../db/pool";
import type { Database } from "../../../db/schema";

/** Every table a request could write to. */
const TABLES = [
  "Namespaces",
  "Users",
  "Sessions",
  "ServiceAccounts",
  "ApiKeys",
  "Groups",
  "GroupMembers",
  "NamespaceMembers",
  "SignInThrottles",
  "AuditEvents",
  "WorkflowDefinitions",
  "TaskDefinitions",
  "Secrets",
  "EnvironmentVariables",
  "Schedules",
  "ScheduleRuns",
  "IncomingWebhooks",
  "WebhookCallbacks",
  "EventHandlers",
  "EventExecutions",
  "StatusListeners",
  "FormTemplates",
  "HumanTasks",
  "HumanTaskSubmissions",
  "TaskLogs",
  "WorkflowExecutions",
  "IdempotencyKeys",
  "TaskExecutions",
  "TaskQueues",
  "DecideQueues",
  "Timers",
  "WorkflowEvents",
] as const satisfies readonly (keyof Database)[];

/**
 * Tables no request deletes from (queue rows go when their task ends, a
 * restart removes tasks): one that lost rows ran a statement nobody asked for.
 */
export const APPEND_ONLY_TABLES = ["Namespaces", "Users", "ApiKeys", "WorkflowDefinitions", "TaskDefinitions", "WorkflowExecutions", "WorkflowEvents", "AuditEvents", "TaskLogs"] as const;

/** The row count of every table, in one round trip: what "the request wrote nothing" is checked against. */
export async function tableCounts(db: Db): Promise<Record<string, number>> {
  const selects = TABLES.map((table) => sql`(SELECT count(*) FROM ${sql.table(table)})::int AS ${sql.ref(table)}`);
  const { rows } = await sql<Record<string, number>>`SELECT ${sql.join(selects)}`.execute(db);
  return rows[0] ?? {};
}
