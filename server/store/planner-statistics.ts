import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";

/**
 * Gives the engine's partitions their first planner statistics as soon as
 * they hold rows, instead of whenever autovacuum first gets round to them.
 *
 * Every statement runs with a generic plan (db/pool.ts), made once per
 * connection and kept until a table it reads changes. A plan made while a
 * partition has no statistics is a coin toss between indexes that all look
 * equally cheap on a table believed tiny, and it stayed that way as the table
 * grew: the system bench's 10,000-task workflow leased every task through
 * "namespaceId, taskDefName, scheduledAt" with a filter on the task's id,
 * stepping over all 10,115 rows of the namespace in that partition (2 ms a
 * lease, growing with history) — the large run's evaluations that kept
 * getting slower. ANALYZE gives the planner the truth (one namespace, ids
 * unique) and invalidates the cached plans that read the partition, in every
 * session; autovacuum keeps the statistics current from then on.
 *
 * A generic plan over a partitioned table names all of its partitions, so
 * the ANALYZE of any one of them has every session plan its statements on
 * that table again — 2–9 ms a plan over "TaskExecutions" here, where the
 * report function's statements on it were planned 40–43 times each in a
 * 15-second closed loop when its partitions were analyzed one at a time
 * (docs/performance.md). Hash partitions fill together, so when one
 * partition of a table is due, all of that table's never-analyzed partitions
 * that hold changes are analyzed with it, in one transaction: the sessions see
 * one invalidation for the table, not one per partition.
 *
 * Analyzes at most `limit` never-analyzed partitions of the engine tables:
 * those of tables where one has seen at least `minChanges` row changes, most
 * changed first, and returns their names. Cheap when there is nothing to do:
 * one read of pg_stat_user_tables.
 */
export async function analyzeNewPartitions(db: Kysely<Database>, input: { minChanges: number; limit: number }): Promise<string[]> {
  const { rows } = await sql<{ relname: string }>`
    WITH "fresh" AS (
      SELECT "s"."relname", "s"."n_mod_since_analyze", "i"."inhparent"
      FROM pg_stat_user_tables AS "s" JOIN pg_inherits AS "i" ON "i"."inhrelid" = "s"."relid"
      WHERE "s"."schemaname" = current_schema()
        AND "s"."relname" ~ '^(TaskExecutions|TaskQueues|WorkflowExecutions|WorkflowEvents|Timers)_p'
        AND "s"."last_analyze" IS NULL AND "s"."last_autoanalyze" IS NULL
        AND "s"."n_mod_since_analyze" > 0
    )
    SELECT "relname" FROM "fresh"
    WHERE "inhparent" IN (SELECT "inhparent" FROM "fresh" WHERE "n_mod_since_analyze" >= ${input.minChanges})
    ORDER BY "n_mod_since_analyze" DESC
    LIMIT ${input.limit}`.execute(db);
  if (rows.length === 0) return [];
  await db.transaction().execute(async (trx) => {
    for (const { relname } of rows) await sql`ANALYZE ${sql.table(relname)}`.execute(trx);
  });
  return rows.map((r) => r.relname);
}
