import { randomUUID } from "node:crypto";
import pg from "pg";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { analyzeNewPartitions } from "./planner-statistics";

const t = useTestDatabase();
let namespaceId: string;
let session: pg.Client;

/** The generic plan another long-lived session (a pool connection) runs for a task update by its key. */
async function taskUpdatePlan(workflowId: string): Promise<string> {
  const { rows } = await session.query<{ "QUERY PLAN": string }>(
    `EXPLAIN EXECUTE task_update(now(), '${workflowId}', '${randomUUID()}', '${namespaceId}')`,
  );
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

beforeAll(async () => {
  namespaceId = (await t.db.insertInto("Namespaces").values({ name: `ns-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
  session = new pg.Client({ connectionString: t.url });
  await session.connect();
  await session.query("SET plan_cache_mode = force_generic_plan");
  await session.query(`PREPARE task_update(timestamptz, uuid, uuid, uuid) AS
    UPDATE "TaskExecutions" SET "updatedAt" = $1 WHERE "workflowId" = $2 AND "id" = $3 AND "namespaceId" = $4`);
});

afterAll(async () => {
  await session.end();
});

/**
 * Flushes this test's table statistics, then runs analyzeNewPartitions (a
 * threshold of 200 changes) until a call analyzes `partition`, for up to 5 s;
 * returns what that call analyzed (the last call's, if none did).
 */
async function analyzeOnceDue(partition: string, limit: number): Promise<string[]> {
  // Statistics reach pg_stat_user_tables when the writing session flushes them.
  await sql`SELECT pg_stat_force_next_flush()`.execute(t.db);
  await sql`SELECT 1`.execute(t.db);
  let analyzed: string[] = [];
  for (let attempt = 0; attempt < 50; attempt++) {
    analyzed = await analyzeNewPartitions(t.db, { minChanges: 200, limit });
    if (analyzed.includes(partition)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return analyzed;
}

describe("analyzeNewPartitions", () => {
  it("analyzes a never-analyzed partition once it has rows, which replans other sessions' statements onto the primary key", async () => {
    const workflowId = randomUUID();
    // Planned on a partition without statistics: not the primary key (a namespace-wide or workflow-wide scan).
    expect(await taskUpdatePlan(workflowId)).not.toMatch(/_pkey/);

    // One big workflow, as the system bench's large run: every row in one partition.
    await sql`
      INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "iteration", "attempt", "taskType", "taskDefName")
      SELECT ${workflowId}::uuid, ${namespaceId}::uuid, 'task#' || g, 0, 0, 'SIMPLE', 'work' FROM generate_series(1, 500) AS g`.execute(t.db);
    const { rows } = await sql<{ partition: string }>`
      SELECT tableoid::regclass::text AS "partition" FROM "TaskExecutions" WHERE "workflowId" = ${workflowId}::uuid LIMIT 1`.execute(t.db);
    const partition = rows[0]!.partition.replaceAll('"', "");

    const analyzed = await analyzeOnceDue(partition, 20);
    expect(analyzed).toContain(partition);
    expect(await taskUpdatePlan(workflowId)).toMatch(new RegExp(`Index Scan using "${partition}_pkey"`));

    // Analyzed once; autovacuum owns it from now on.
    expect(await analyzeNewPartitions(t.db, { minChanges: 200, limit: 20 })).not.toContain(partition);
  });

  it("analyzes a due partition's never-analyzed siblings with it, so sessions replan once for the table", async () => {
    // "TaskQueues": no partition of it has been analyzed in this database yet.
    const partitionOf = async (queueName: string) =>
      (await sql<{ p: string }>`SELECT tableoid::regclass::text AS "p" FROM "TaskQueues" WHERE "queueName" = ${queueName} LIMIT 1`.execute(t.db)).rows[0]!.p.replaceAll('"', "");
    const enqueue = (queueName: string, count: number) =>
      sql`INSERT INTO "TaskQueues" ("queueName", "namespaceId", "workflowId", "taskId", "taskType")
          SELECT ${queueName}, ${namespaceId}::uuid, gen_random_uuid(), gen_random_uuid(), 'SIMPLE' FROM generate_series(1, ${count})`.execute(t.db);
    // A busy queue past the threshold, and a quiet one in another partition.
    let quiet = "quiet-0";
    await enqueue("busy", 300);
    for (let i = 0; ; i++) {
      quiet = `quiet-${i}`;
      await enqueue(quiet, 3);
      if ((await partitionOf(quiet)) !== (await partitionOf("busy"))) break;
    }
    const [busyPartition, quietPartition] = [await partitionOf("busy"), await partitionOf(quiet)];

    const analyzed = await analyzeOnceDue(busyPartition, 64);
    expect(analyzed).toEqual(expect.arrayContaining([busyPartition, quietPartition]));
    const { rows } = await sql<{ relname: string }>`
      SELECT "relname" FROM pg_stat_user_tables WHERE "relname" IN (${busyPartition}, ${quietPartition}) AND "last_analyze" IS NOT NULL`.execute(t.db);
    expect(rows.map((r) => r.relname).sort()).toEqual([busyPartition, quietPartition].sort());
  });

  it("leaves partitions with fewer changes than asked alone", async () => {
    const workflowId = randomUUID();
    await sql`
      INSERT INTO "TaskExecutions" ("workflowId", "namespaceId", "refName", "iteration", "attempt", "taskType", "taskDefName")
      SELECT ${workflowId}::uuid, ${namespaceId}::uuid, 'few#' || g, 0, 0, 'SIMPLE', 'work' FROM generate_series(1, 5) AS g`.execute(t.db);
    expect(await analyzeNewPartitions(t.db, { minChanges: 1_000_000, limit: 20 })).toEqual([]);
  });
});
