import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "/work/main/db/embedded-postgres";
import { createDb } from "/work/main/db/pool";
import { migrate } from "/work/main/db/migrator";
import { randomUUID } from "node:crypto";
const dir = mkdtempSync(join("/tmp/exp", "pg-"));
const pgRun = await startEmbeddedPostgres({ dataDir: dir, persistent: false });
const db = createDb(pgRun.url); await migrate(db as never); await db.destroy();
const c = new pg.Client({ connectionString: pgRun.url }); await c.connect();
const ns = (await c.query(`INSERT INTO "Namespaces"(name) VALUES ('x') RETURNING id`)).rows[0].id;
const wf = randomUUID();
// 300 iterations x 100 instances + the fork rows
await c.query(`INSERT INTO "TaskExecutions" (id, "workflowId", "namespaceId", "refName", iteration, attempt, "taskType", "taskDefName", "queueName", status, output, "endedAt", "deciderSeenAt")
  SELECT gen_random_uuid(), $1, $2, 'fan#' || k, it, 0, 'SIMPLE', 'q', 'q', 'COMPLETED', '{"a":1}', now(), now() FROM generate_series(0,99) k, generate_series(1,300) it`, [wf, ns]);
await c.query(`INSERT INTO "TaskExecutions" (id, "workflowId", "namespaceId", "refName", iteration, attempt, "taskType", "taskDefName", status, input)
  SELECT gen_random_uuid(), $1, $2, 'fan', it, 0, 'FORK_JOIN_DYNAMIC', 'f', CASE WHEN it = 300 THEN 'IN_PROGRESS' ELSE 'COMPLETED' END, '{}' FROM generate_series(1,300) it`, [wf, ns]);
await c.query(`ANALYZE "TaskExecutions"`);
const text = `
    WITH fork AS (
      SELECT "id", "input" FROM "TaskExecutions"
      WHERE "workflowId" = $1::uuid AND "refName" = $2 AND "iteration" = $3
        AND "attempt" = $4 AND "status" = $5
    ), inst AS (
      SELECT g.k, t."output"
      FROM generate_series(0, $6::int - 1) AS g(k)
      LEFT JOIN "TaskExecutions" AS t
        ON t."workflowId" = $1::uuid AND t."refName" = $2 || '#' || g.k AND t."iteration" = $3
       AND t."status" IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'SKIPPED')
    )
    SELECT count(inst."output") FROM inst CROSS JOIN fork GROUP BY fork."id"`;
await c.query(`SET plan_cache_mode = force_generic_plan`);
const r = await c.query(`EXPLAIN (ANALYZE, COSTS OFF) ` + text.replace(/\$1/g, `'${wf}'`).replace(/\$2/g, "'fan'").replace(/\$3/g, "300").replace(/\$4/g, "0").replace(/\$5/g, "'IN_PROGRESS'").replace(/\$6/g, "100"));
console.log(r.rows.map((x) => x["QUERY PLAN"]).join("\n"));
await c.query({ name: "agg", text, values: [wf, "fan", 300, 0, "IN_PROGRESS", 100] });
const r2 = await c.query(`EXPLAIN (ANALYZE, COSTS OFF) EXECUTE agg('${wf}', 'fan', 300, 0, 'IN_PROGRESS', 100)`);
console.log("--- generic prepared:\n" + r2.rows.map((x) => x["QUERY PLAN"]).join("\n"));
await c.end(); await pgRun.stop();
