import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";

/** A node's output in a past run, as stored (inline, or a blob ref when offloaded). */
export interface PastTaskOutput {
  workflowId: string;
  runStartedAt: Date;
  taskId: string;
  iteration: number;
  output: unknown;
  outputRef: string | null;
  endedAt: Date | null;
}

/** How many of the workflow's newest runs are looked at: a ref no recent run completed is not worth a scan of years of runs. */
export const PAST_RUNS_SCANNED = 200;

/**
 * The output of `ref` in the newest run of `workflowName` (in the namespace)
 * that completed it: its last completed row there (the last iteration, the
 * attempt that succeeded). Runs are walked newest first down
 * "WorkflowExecutions_def_idx", and each is probed by the task identity index
 * with its "workflowId" — the partition key, so one partition of sixteen — so
 * the cost is one index probe per run until a hit, at most
 * {@link PAST_RUNS_SCANNED}.
 */
export async function latestCompletedTaskOutput(
  db: Kysely<Database>,
  where: { namespaceId: string; workflowName: string; ref: string },
): Promise<PastTaskOutput | undefined> {
  const { rows } = await sql<PastTaskOutput>`
    SELECT r."id" AS "workflowId", r."startedAt" AS "runStartedAt", t."id" AS "taskId", t."iteration", t."output", t."outputRef", t."endedAt"
      FROM (SELECT "id", "startedAt" FROM "WorkflowExecutions"
             WHERE "namespaceId" = ${where.namespaceId} AND "defName" = ${where.workflowName}
             ORDER BY "startedAt" DESC, "id" DESC
             LIMIT ${PAST_RUNS_SCANNED}) r
      CROSS JOIN LATERAL (
        SELECT "id", "iteration", "output", "outputRef", "endedAt" FROM "TaskExecutions"
         WHERE "workflowId" = r."id" AND "namespaceId" = ${where.namespaceId} AND "refName" = ${where.ref} AND "status" = 'COMPLETED'
         ORDER BY "iteration" DESC, "attempt" DESC
         LIMIT 1) t
     ORDER BY r."startedAt" DESC, r."id" DESC
     LIMIT 1`.execute(db);
  return rows[0];
}
