import { sql } from "kysely";
import type { Kysely } from "kysely";
import { WORKFLOW_STATUSES } from "../../engine";
import type { WorkflowStatus } from "../../engine";
import type { Database } from "../../db/schema";
import { seconds } from "./sql-helpers";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * The runs dashboard's aggregates: runs started in a window, bucketed with
 * date_bin, counted by status, with percentile_cont of their durations and of
 * their worker tasks' queue waits. Each query is one range scan of one
 * namespace's runs over the window's "startedAt" (the range partitioning
 * prunes to the months it touches), grouped once with GROUPING SETS so the
 * window's own percentiles come from the same pass as the buckets'.
 * Measured on 100k runs in a week (docs/performance.md, "Runs dashboard").
 */

export interface DashboardQuery {
  namespaceId: string;
  /** One workflow's runs (by name, every version), or the whole namespace's. */
  workflow?: string | undefined;
  from: Date;
  to: Date;
  stepSeconds: number;
}

export interface RunAggregate {
  /** The bucket's start, or null for the whole window. */
  at: Date | null;
  counts: Partial<Record<WorkflowStatus, number>>;
  durationP50Ms: number | null;
  durationP95Ms: number | null;
}

export interface QueueWaitAggregate {
  at: Date | null;
  tasks: number;
  queueWaitP50Ms: number | null;
  queueWaitP95Ms: number | null;
}

// Constants from the engine, never input: safe to splice as column aliases.
const STATUS_COUNTS = sql.join(
  WORKFLOW_STATUSES.map((s) => sql`count(*) FILTER (WHERE "status" = ${s})::int AS ${sql.ref(s)}`),
);

const toNumber = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/** Runs started in [from, to): per bucket and for the window, counts by status and p50/p95 of ended runs' durations. */
export async function readRunAggregates(db: Executor, q: DashboardQuery): Promise<RunAggregate[]> {
  const { rows } = await sql<Record<string, unknown> & { at: Date | null; p50: unknown; p95: unknown }>`
    SELECT
      "bucket" AS "at",
      ${STATUS_COUNTS},
      -- Running runs have no duration: percentile_cont skips the nulls.
      percentile_cont(0.5) WITHIN GROUP (ORDER BY "ms") AS "p50",
      percentile_cont(0.95) WITHIN GROUP (ORDER BY "ms") AS "p95"
    FROM (
      SELECT date_bin(${seconds(q.stepSeconds)}, "startedAt", ${q.from}::timestamptz) AS "bucket", "status",
             extract(epoch FROM "endedAt" - "startedAt") * 1000 AS "ms"
      FROM "WorkflowExecutions"
      WHERE "namespaceId" = ${q.namespaceId}
        AND "startedAt" >= ${q.from}::timestamptz AND "startedAt" < ${q.to}::timestamptz
        ${q.workflow === undefined ? sql`` : sql`AND "defName" = ${q.workflow}`}
    ) AS "runs"
    GROUP BY GROUPING SETS (("bucket"), ())
    ORDER BY "bucket" NULLS FIRST`.execute(db);
  return rows.map((r) => ({
    at: r.at,
    counts: Object.fromEntries(WORKFLOW_STATUSES.filter((s) => Number(r[s]) > 0).map((s) => [s, Number(r[s])])),
    durationP50Ms: toNumber(r.p50),
    durationP95Ms: toNumber(r.p95),
  }));
}

/**
 * Queue wait — a worker task's time from scheduled to leased — of the tasks
 * of runs started in [from, to), bucketed by the task's scheduling (a
 * retry's backoff counts as waiting). Postgres hash-joins the runs' range
 * scan to the namespace's tasks scheduled in the window: at a week of 100k
 * runs that read of 300k tasks is most of the dashboard's cost
 * (docs/performance.md, "Runs dashboard").
 */
export async function readQueueWaitAggregates(db: Executor, q: DashboardQuery): Promise<QueueWaitAggregate[]> {
  const { rows } = await sql<{ at: Date | null; tasks: number; p50: unknown; p95: unknown }>`
    SELECT
      "bucket" AS "at",
      count(*)::int AS "tasks",
      percentile_cont(0.5) WITHIN GROUP (ORDER BY "ms") AS "p50",
      percentile_cont(0.95) WITHIN GROUP (ORDER BY "ms") AS "p95"
    FROM (
      SELECT date_bin(${seconds(q.stepSeconds)}, t."scheduledAt", ${q.from}::timestamptz) AS "bucket",
             extract(epoch FROM t."startedAt" - t."scheduledAt") * 1000 AS "ms"
      FROM "WorkflowExecutions" w
      JOIN "TaskExecutions" t ON t."workflowId" = w."id" AND t."namespaceId" = w."namespaceId"
      WHERE w."namespaceId" = ${q.namespaceId}
        AND w."startedAt" >= ${q.from}::timestamptz AND w."startedAt" < ${q.to}::timestamptz
        ${q.workflow === undefined ? sql`` : sql`AND w."defName" = ${q.workflow}`}
        AND t."queueName" IS NOT NULL AND t."startedAt" IS NOT NULL
        AND t."scheduledAt" >= ${q.from}::timestamptz AND t."scheduledAt" < ${q.to}::timestamptz
    ) AS "waits"
    GROUP BY GROUPING SETS (("bucket"), ())
    ORDER BY "bucket" NULLS FIRST`.execute(db);
  return rows.map((r) => ({ at: r.at, tasks: r.tasks, queueWaitP50Ms: toNumber(r.p50), queueWaitP95Ms: toNumber(r.p95) }));
}

export interface FailingRun {
  id: string;
  defName: string;
  defVersion: number;
  status: WorkflowStatus;
  startedAt: Date;
  endedAt: Date | null;
  reasonForIncompletion: string | null;
  failedTaskRef: string | null;
}

/** The newest runs started in the window that failed or timed out, newest first: the status index's range. */
export async function listFailingRuns(db: Executor, q: Omit<DashboardQuery, "stepSeconds">, limit: number): Promise<FailingRun[]> {
  let query = db
    .selectFrom("WorkflowExecutions")
    .select(["id", "defName", "defVersion", "status", "startedAt", "endedAt", "reasonForIncompletion", "failedTaskRef"])
    .where("namespaceId", "=", q.namespaceId)
    .where("status", "in", ["FAILED", "TIMED_OUT"])
    .where("startedAt", ">=", q.from)
    .where("startedAt", "<", q.to);
  if (q.workflow !== undefined) query = query.where("defName", "=", q.workflow);
  return query.orderBy("startedAt", "desc").orderBy("id", "desc").limit(limit).execute();
}

export interface DashboardSnapshot {
  runs: RunAggregate[];
  waits: QueueWaitAggregate[];
  failing: FailingRun[];
}

/** The three reads in one repeatable-read, read-only transaction: counts, percentiles and failures of one moment. */
export async function readDashboardSnapshot(db: Executor, q: DashboardQuery, failingLimit: number): Promise<DashboardSnapshot> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .setAccessMode("read only")
    .execute(async (trx) => {
      // percentile_cont sorts each bucket's values: a week of 100k runs (300k tasks) spilled those sorts to disk
      // at the default 4 MB; this transaction's own limit keeps them in memory (docs/performance.md).
      await sql`SET LOCAL work_mem = '32MB'`.execute(trx);
      return { runs: await readRunAggregates(trx, q), waits: await readQueueWaitAggregates(trx, q), failing: await listFailingRuns(trx, q, failingLimit) };
    });
}
