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
 * grew: nf bench's 10,000-task workflow leased every task through
 * "namespaceId, taskDefName, scheduledAt" with a filter on the task's id,
 * stepping over all 10,115 rows of the namespace in that partition (2 ms a
 * lease, growing with history) — the large run's evaluations that kept
 * getting slower. ANALYZE gives the planner the truth (one namespace, ids
 * unique) and invalidates the cached plans that read the partition, in every
 * session; autovacuum keeps the statistics current from then on.
 *
 * Analyzes at most `limit` never-analyzed partitions of the engine tables
 * that have seen at least `minChanges` row changes, largest first, and returns
 * their names. Cheap when there is nothing to do: one read of
 * pg_stat_user_tables.
 */
export async function analyzeNewPartitions(db: Kysely<Database>, input: { minChanges: number; limit: number }): Promise<string[]> {
  const { rows } = await sql<{ relname: string }>`
    SELECT "relname" FROM pg_stat_user_tables
    WHERE "schemaname" = current_schema()
      AND "relname" ~ '^(TaskExecutions|TaskQueues|WorkflowExecutions|WorkflowEvents|Timers)_p'
      AND "last_analyze" IS NULL AND "last_autoanalyze" IS NULL
      AND "n_mod_since_analyze" >= ${input.minChanges}
    ORDER BY "n_mod_since_analyze" DESC
    LIMIT ${input.limit}`.execute(db);
  for (const { relname } of rows) await sql`ANALYZE ${sql.table(relname)}`.execute(db);
  return rows.map((r) => r.relname);
}
