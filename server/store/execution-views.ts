import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database, TaskStatus, WorkflowStatus } from "../../db/schema";

/**
 * The reads behind the execution page and its live streams (server/trpc/
 * routers/executions.ts, server/realtime/): narrow column lists, never a
 * payload — a page of tasks or a batch of list updates must not ship
 * megabytes. Every statement filters by namespace and, for TaskExecutions,
 * carries "workflowId" (the hash partition key) so it touches one partition.
 */

type Executor = Kysely<Database>;

/** A task row without its payloads: what the diagram overlay and the attempt history show. */
export interface TaskSummaryRow {
  id: string;
  refName: string;
  taskType: string;
  iteration: number;
  attempt: number;
  status: TaskStatus;
  scheduledAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  workerId: string | null;
  pollCount: number;
  reasonForIncompletion: string | null;
  subWorkflowId: string | null;
  parentRef: string | null;
  forkIndex: number | null;
}

const TASK_SUMMARY_COLUMNS = [
  "id",
  "refName",
  "taskType",
  "iteration",
  "attempt",
  "status",
  "scheduledAt",
  "startedAt",
  "endedAt",
  "workerId",
  "pollCount",
  "reasonForIncompletion",
  "subWorkflowId",
  "parentRef",
  "forkIndex",
] as const;

/**
 * Every row (every iteration and attempt) of a run in scheduling order — ids
 * are uuidv7 — up to `limit`: one range scan of the ("workflowId","id")
 * primary key in one partition.
 */
export async function listTaskSummaries(
  db: Executor,
  input: { namespaceId: string; workflowId: string; limit: number },
): Promise<TaskSummaryRow[]> {
  return db
    .selectFrom("TaskExecutions")
    .select(TASK_SUMMARY_COLUMNS)
    .where("workflowId", "=", input.workflowId)
    .where("namespaceId", "=", input.namespaceId)
    .orderBy("id")
    .limit(input.limit)
    .execute();
}

/** Every attempt of one (ref, iteration): a prefix probe of "TaskExecutions_identity_idx". */
export async function listTaskAttempts(
  db: Executor,
  input: { namespaceId: string; workflowId: string; refName: string; iteration: number },
): Promise<TaskSummaryRow[]> {
  return db
    .selectFrom("TaskExecutions")
    .select(TASK_SUMMARY_COLUMNS)
    .where("workflowId", "=", input.workflowId)
    .where("refName", "=", input.refName)
    .where("iteration", "=", input.iteration)
    .where("namespaceId", "=", input.namespaceId)
    .orderBy("attempt")
    .execute();
}

/** A non-terminal task as the live stream's `tasks` snapshot carries it. */
export interface FrontierTaskRow {
  id: string;
  refName: string;
  iteration: number;
  attempt: number;
  status: TaskStatus;
  startedAt: Date | null;
  workerId: string | null;
  pollCount: number;
}

/**
 * The run's non-terminal tasks, through "TaskExecutions_pending_idx" (its
 * predicate spelled exactly as the index's, so the planner uses it): the
 * index holds only in-flight and not yet decided work, so this costs a handful of index entries
 * however long the run's history. Capped: a dynamic fork of thousands
 * in flight would otherwise make every snapshot that big.
 */
export async function loadFrontierSnapshot(db: Executor, workflowId: string, limit: number): Promise<FrontierTaskRow[]> {
  const { rows } = await sql<FrontierTaskRow>`
    SELECT "id", "refName", "iteration", "attempt", "status", "startedAt", "workerId", "pollCount"
    FROM "TaskExecutions"
    WHERE "workflowId" = ${workflowId}::uuid AND "deciderSeenAt" IS NULL
      AND "status" NOT IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED', 'FAILED_WITH_TERMINAL_ERROR',
                           'TIMED_OUT', 'CANCELED', 'SKIPPED')
    ORDER BY "id"
    LIMIT ${limit}`.execute(db);
  return rows;
}

/** The list's view of a run: no payloads. */
export interface ExecutionSummaryRow {
  id: string;
  namespaceId: string;
  defName: string;
  defVersion: number;
  status: WorkflowStatus;
  correlationId: string | null;
  startedAt: Date;
  endedAt: Date | null;
  updatedAt: Date;
  parentWorkflowId: string | null;
  reasonForIncompletion: string | null;
}

const EXECUTION_SUMMARY_COLUMNS = [
  "id",
  "namespaceId",
  "defName",
  "defVersion",
  "status",
  "correlationId",
  "startedAt",
  "endedAt",
  "updatedAt",
  "parentWorkflowId",
  "reasonForIncompletion",
] as const;

/**
 * The summaries of `ids` (any namespace: the caller routes each by its
 * "namespaceId"), in one statement — `"id" = ANY(…)` probes each monthly
 * partition's primary key once per id.
 */
export async function getExecutionSummaries(db: Executor, ids: readonly string[]): Promise<ExecutionSummaryRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("WorkflowExecutions")
    .select(EXECUTION_SUMMARY_COLUMNS)
    .where(sql<boolean>`"id" = ANY(${[...ids]}::uuid[])`)
    .execute();
}

/** One run's status fields, for the live stream's `workflow` event. */
export async function getExecutionSummary(db: Executor, namespaceId: string, id: string): Promise<ExecutionSummaryRow | undefined> {
  return db
    .selectFrom("WorkflowExecutions")
    .select(EXECUTION_SUMMARY_COLUMNS)
    .where("namespaceId", "=", namespaceId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** A run's SUB_WORKFLOW children, through "WorkflowExecutions_parent_idx". */
export async function listChildExecutions(
  db: Executor,
  input: { namespaceId: string; parentWorkflowId: string; limit: number },
): Promise<{ id: string; defName: string; status: WorkflowStatus; parentTaskId: string | null }[]> {
  return db
    .selectFrom("WorkflowExecutions")
    .select(["id", "defName", "status", "parentTaskId"])
    .where("parentWorkflowId", "=", input.parentWorkflowId)
    .where("namespaceId", "=", input.namespaceId)
    .orderBy("startedAt")
    .orderBy("id")
    .limit(input.limit)
    .execute();
}

/** The last seq of a run's history (0 before any): the `after` a stream resumes from when opened beside a `get`. */
export async function lastWorkflowEventSeq(db: Executor, workflowId: string): Promise<number> {
  const { rows } = await sql<{ last: number | null }>`
    SELECT max("seq") AS "last" FROM "WorkflowEvents" WHERE "workflowId" = ${workflowId}::uuid`.execute(db);
  return Number(rows[0]?.last ?? 0);
}

/**
 * The namespace a run belongs to, whatever the caller may see: for a stream
 * URL that names the run only. The caller must authorize the principal in
 * that namespace before revealing anything (and answer a refusal exactly as
 * an unknown id).
 */
export async function findExecutionNamespaceId(db: Executor, id: string): Promise<string | undefined> {
  const row = await db.selectFrom("WorkflowExecutions").select("namespaceId").where("id", "=", id).executeTakeFirst();
  return row?.namespaceId;
}
