import { sql } from "kysely";
import type { Kysely, RawBuilder } from "kysely";
import type { Database } from "../../db/schema";

/**
 * Finding RUNNING workflows that nothing will ever move again: the
 * stuck-workflow sweeper's query. The engine's invariants mean this should
 * find nothing (every state change enqueues a decide in its own transaction);
 * the sweeper is the net under a bug, a lost decide or an operator's hand edit.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * Where a walk over the RUNNING workflows stopped: the last row looked at, in
 * "WorkflowExecutions_running_idx" order. "startedAt" is text at full
 * (microsecond) precision: a JS Date would truncate it, and the next page's
 * `>` would then return the row it came from again, or skip rows sharing its
 * millisecond.
 */
export interface RunningWorkflowCursor {
  startedAt: string;
  id: string;
}

export interface FindStuckWorkflowsInput {
  /** RUNNING workflows to look at, 1 to 10,000: a page of the walk, stuck or not. */
  limit: number;
  /** Only workflows whose "updatedAt" (the last committed evaluation, or the start) is before this. */
  updatedBefore: Date;
  /** Continue after this row; omit to start from the oldest. */
  after?: RunningWorkflowCursor;
}

export interface StuckWorkflow {
  workflowId: string;
  namespaceId: string;
}

export interface FindStuckWorkflowsResult {
  stuck: StuckWorkflow[];
  /** How many RUNNING workflows this page looked at. */
  scanned: number;
  /** Where to continue; undefined once the page reached the end of the RUNNING workflows. */
  next: RunningWorkflowCursor | undefined;
}

/**
 * Looks at the next `limit` RUNNING workflows after `after` and returns those
 * that are stuck: not updated since `updatedBefore`, and with nothing in
 * flight. "In flight", exactly:
 * - a DecideQueues row (an evaluation is pending, or running right now: the
 *   decider's claim deletes the row in a transaction that has not committed,
 *   so this statement still sees it), or
 * - a non-terminal task ("TaskExecutions_pending_idx") that something other
 *   than the decider will end: a worker or the system-task runner (SCHEDULED,
 *   IN_PROGRESS), a timer (WAIT, a delayed start or retry), a person (HUMAN), a
 *   child workflow (SUB_WORKFLOW). Its ending enqueues a decide. Not DO_WHILE,
 *   FORK_JOIN_DYNAMIC and AGENT rows: those containers are advanced by the decider
 *   alone, when a body task ends or a requested evaluation runs, so a workflow
 *   whose only unfinished rows are containers is waiting on nothing.
 * A terminal task the decider has not seen ("deciderSeenAt" NULL) is not in
 * flight: it is waiting for exactly the decide that is missing, so a workflow
 * with one and no DecideQueues row is stuck too (its completion's decide was
 * lost). So is a RUNNING workflow whose every row is terminal and seen, and
 * one with no rows at all. A PAUSED workflow is not RUNNING and never found.
 *
 * The "updatedAt" cutoff keeps the sweeper off workflows mid-flight: one just
 * started, or evaluated a moment ago whose next task is being inserted.
 *
 * Cost, bounded per call: the page is an ordered range scan of
 * "WorkflowExecutions_running_idx" (0005, RUNNING rows only, every namespace)
 * with LIMIT, and "startedAt" >= the cursor's prunes older monthly partitions.
 * Each row of the page then costs a heap read ("updatedAt"; deliberately not
 * indexed, see 0005), a primary-key probe of "DecideQueues" and a probe of the
 * frontier index. The probes' correlation is a run-time value, so the
 * "TaskExecutions" subquery is planned over its sixteen partitions and pruned
 * to one per row as it runs: a fixed planning cost per page, not per row.
 */
export async function findStuckWorkflows(db: Executor, input: FindStuckWorkflowsInput): Promise<FindStuckWorkflowsResult> {
  const { limit } = input;
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw new RangeError(`limit must be an integer from 1 to 10000, got ${limit}`);
  }
  const { rows } = await findStuckWorkflowsStatement(input).execute(db);
  const last = rows.at(-1);
  return {
    stuck: rows.filter((row) => row.stuck).map(({ workflowId, namespaceId }) => ({ workflowId, namespaceId })),
    scanned: rows.length,
    next: rows.length < limit || last === undefined ? undefined : { startedAt: last.startedAt, id: last.workflowId },
  };
}

/** findStuckWorkflows' statement: one row per workflow looked at, with whether it is stuck. Exported for the plan test. */
export function findStuckWorkflowsStatement(
  input: FindStuckWorkflowsInput,
): RawBuilder<{ workflowId: string; namespaceId: string; startedAt: string; stuck: boolean }> {
  const { limit, updatedBefore, after } = input;
  // The row comparison is the index condition; the plain "startedAt" bound is
  // the one partition pruning understands.
  const page =
    after === undefined
      ? sql``
      : sql`AND "startedAt" >= ${after.startedAt}::timestamptz
            AND ("startedAt", "id") > (${after.startedAt}::timestamptz, ${after.id}::uuid)`;
  // The pending predicate is spelled exactly as 0012 defines
  // "TaskExecutions_pending_idx": the planner uses a partial index only for a
  // query whose predicate implies the index's, and literal repetition is the
  // form it always recognises.
  return sql<{ workflowId: string; namespaceId: string; startedAt: string; stuck: boolean }>`
    WITH "page" AS (
      SELECT "id", "namespaceId", "startedAt", "updatedAt"
      FROM "WorkflowExecutions"
      WHERE "status" = 'RUNNING' ${page}
      ORDER BY "startedAt", "id"
      LIMIT ${limit}
    )
    SELECT "p"."id" AS "workflowId", "p"."namespaceId",
      to_char("p"."startedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "startedAt",
      ("p"."updatedAt" < ${updatedBefore.toISOString()}::timestamptz
        AND NOT EXISTS (SELECT 1 FROM "DecideQueues" AS "d" WHERE "d"."workflowId" = "p"."id")
        AND NOT EXISTS (
          SELECT 1 FROM "TaskExecutions" AS "t"
          WHERE "t"."workflowId" = "p"."id" AND "t"."deciderSeenAt" IS NULL
            AND "t"."status" NOT IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED', 'FAILED_WITH_TERMINAL_ERROR',
                                     'TIMED_OUT', 'CANCELED', 'SKIPPED')
            AND "t"."taskType" NOT IN ('DO_WHILE', 'FORK_JOIN_DYNAMIC', 'AGENT'))
      ) AS "stuck"
    FROM "page" AS "p"
    ORDER BY "p"."startedAt", "p"."id"`;
}
