/**
 * `npm run bench:wal`: the WAL and the statements one run of the bench's
 * 3-step chain costs, and where the bytes go. Deterministic where the system
 * bench is not: WAL bytes and statement counts do not depend on how busy the
 * machine is, so this runs on a shared machine and compares across commits.
 *
 * It starts a throwaway embedded Postgres 18 with the settings `npm start`
 * uses (or `--database-url`), migrates it, and drives `--runs` chains through
 * the functions the web process and the sidecar call — start, evaluate, lease,
 * report, evaluate — `--in-flight` at a time, on one pool whose connections
 * count every statement they send (pipelined followers included). After
 * `--warmup` runs (caches, first page touches) it reads `pg_current_wal_lsn()`
 * before and after the measured runs and, with pg_walinspect, breaks the bytes
 * down by table and index (partitions folded into their parent) and by record
 * kind, full-page images apart. `--checkpoint` checkpoints first, so every first
 * touch of a page writes a full-page image (the worst case just after a
 * checkpoint); without it the figure is the steady state between checkpoints.
 *
 * A command, not a test: progress to stderr, figures to stdout (`--json` for JSON).
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Kysely, PostgresDialect, sql } from "kysely";
import type pg from "pg";
import { chain, simple, workflow } from "../engine/definition/test-fixtures";
import { migrate } from "../db/migrator";
import { createPool } from "../db/pool";
import type { Database } from "../db/schema";
import { embeddedPaths, prepareEmbeddedState, startEmbeddedInProcess } from "../cli/embedded-database";
import { registerWorkflowDefinition } from "../server/definitions/register-workflow-definition";
import { evaluateBatch } from "../server/evaluator/evaluator";
import { startExecution } from "../server/executions/start-execution";
import { FilesystemBlobStore } from "../server/lib/blob-store";
import { createQuickJsScriptEvaluator } from "../server/sandbox/quickjs-script-evaluator";
import { insertNamespace } from "../server/store/namespaces";
import { reportTaskResult } from "../server/tasks/report-task-result";
import { pollTasks } from "../server/tasks/task-poller";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    warmup: { type: "string", default: "40" },
    "in-flight": { type: "string", default: "8" },
    checkpoint: { type: "boolean", default: false },
    "database-url": { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (args.help) {
  console.log(
    [
      "npm run bench:wal -- [--runs 200] [--warmup 40] [--in-flight 8] [--checkpoint] [--database-url URL] [--json]",
      "  --runs          measured 3-step chains",
      "  --warmup        chains run first and not measured",
      "  --in-flight     chains driven together (the evaluator batches their decides)",
      "  --checkpoint    CHECKPOINT before measuring: every first page touch writes a full-page image",
      "  --database-url  a scratch Postgres 18 database (migrated and written to) instead of a throwaway cluster",
    ].join("\n"),
  );
  process.exit(0);
}
const positive = (name: string, value: string | undefined): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, got ${JSON.stringify(value)}`);
  return n;
};
const RUNS = Math.max(1, positive("runs", args.runs));
const WARMUP = positive("warmup", args.warmup);
const IN_FLIGHT = Math.max(1, positive("in-flight", args["in-flight"]));
const log = (line: string) => process.stderr.write(`${line}\n`);

type Phase = "start" | "evaluate" | "lease" | "report";
const PHASES: Phase[] = ["start", "evaluate", "lease", "report"];

async function main(): Promise<void> {
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    const scratch = mkdtempSync(path.join(os.tmpdir(), "nf-wal-"));
    // As root the embedded Postgres runs as "postgres", which must be able to enter the directory.
    chmodSync(scratch, 0o755);
    cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
    let url = args["database-url"];
    if (!url) {
      log(`Starting a throwaway embedded Postgres 18 in ${scratch}…`);
      const paths = embeddedPaths(path.join(scratch, "data"));
      const { state } = prepareEmbeddedState(paths);
      const embedded = await startEmbeddedInProcess(paths, state);
      cleanups.unshift(() => embedded.stop());
      url = embedded.url;
    }

    let statements = 0;
    let phase: Phase = "start";
    const statementsByPhase = new Map<Phase, number>(PHASES.map((p) => [p, 0]));
    const pool = createPool(url, { max: 4 });
    pool.prependListener("connect", (client: pg.PoolClient) => {
      const send = client.query.bind(client) as (...a: unknown[]) => unknown;
      (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
        statements++;
        statementsByPhase.set(phase, (statementsByPhase.get(phase) ?? 0) + 1);
        return send(...a);
      };
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    cleanups.unshift(() => db.destroy());
    log("Migrating…");
    await migrate(db);
    await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`.execute(db);
    const settings = await sql<{ name: string; setting: string }>`
      SELECT name, setting FROM pg_settings
      WHERE name IN ('wal_compression', 'full_page_writes', 'synchronous_commit', 'checkpoint_timeout', 'max_wal_size', 'wal_level')
      ORDER BY name`.execute(db);

    const scripts = await createQuickJsScriptEvaluator();
    cleanups.unshift(() => scripts.close());
    const blobs = new FilesystemBlobStore({ root: path.join(scratch, "blobs") });
    const namespace = await insertNamespace(db, { name: `wal-${randomBytes(4).toString("hex")}` });
    const namespaceId = namespace.id;
    const registered = await registerWorkflowDefinition(db, {
      namespaceId,
      definition: workflow([simple("a"), simple("b"), simple("c")], chain("a", "b", "c"), { name: "wal_chain" }),
    });
    if (!registered.ok) throw new Error(`registering the chain failed: ${JSON.stringify(registered)}`);

    const lsnByPhase = new Map<Phase, bigint>(PHASES.map((p) => [p, 0n]));
    const lsn = async () => BigInt((await sql<{ n: string }>`SELECT (pg_current_wal_lsn() - '0/0')::text AS n`.execute(db)).rows[0]!.n);
    // Each phase's WAL, read around it (the phases run one after another; only autovacuum writes beside them).
    const inPhase = async <T>(p: Phase, body: () => Promise<T>): Promise<T> => {
      phase = p;
      const before = await lsn();
      const result = await body();
      lsnByPhase.set(p, lsnByPhase.get(p)! + (await lsn()) - before);
      return result;
    };
    const evaluate = () => inPhase("evaluate", async () => {
      while ((await evaluateBatch({ db, scripts }, { limit: 50 })) > 0);
    });

    /** `count` chains to COMPLETED, `IN_FLIGHT` at a time. */
    const drive = async (count: number) => {
      for (let done = 0; done < count; ) {
        const batch = Math.min(IN_FLIGHT, count - done);
        const ids = await inPhase("start", () =>
          Promise.all(
            Array.from({ length: batch }, async () => {
              const started = await startExecution({ db, blobs }, { namespaceId, name: "wal_chain", input: {} });
              if (!started.ok) throw new Error(`a start failed: ${JSON.stringify(started)}`);
              return started.workflowId;
            }),
          ),
        );
        for (let step = 0; step < 3; step++) {
          await evaluate();
          const leased = await inPhase("lease", () =>
            pollTasks({ db, notifier: null }, { namespaceId, queueName: "task", count: batch, timeoutMs: 0, workerId: "w1", leaseSeconds: 30 }),
          );
          if (leased.length !== batch) throw new Error(`step ${step + 1}: leased ${leased.length} tasks, expected ${batch}`);
          await inPhase("report", () =>
            Promise.all(
              leased.map(async ({ task }) => {
                const report = await reportTaskResult(
                  { db, blobs },
                  { namespaceId, workflowId: task.workflowId, taskId: task.id, status: "COMPLETED", output: {}, workerId: "w1" },
                );
                if (!report.ok) throw new Error(`a report was refused: ${JSON.stringify(report)}`);
              }),
            ),
          );
        }
        await evaluate();
        const ended = await db.selectFrom("WorkflowExecutions").select("status").where("id", "in", ids).execute();
        const notDone = ended.filter((r) => r.status !== "COMPLETED");
        if (ended.length !== batch || notDone.length > 0) throw new Error(`${notDone.length} of ${batch} chains did not complete`);
        done += batch;
      }
    };

    log(`Warming up: ${WARMUP} chains…`);
    await drive(WARMUP);
    if (args.checkpoint) await sql`CHECKPOINT`.execute(db);
    for (const p of PHASES) {
      statementsByPhase.set(p, 0);
      lsnByPhase.set(p, 0n);
    }
    statements = 0;
    log(`Measuring: ${RUNS} chains, ${IN_FLIGHT} in flight…`);
    const startLsn = (await sql<{ l: string }>`SELECT pg_current_wal_lsn()::text AS l`.execute(db)).rows[0]!.l;
    const measuredStatementsBefore = statements;
    await drive(RUNS);
    const measuredStatements = statements - measuredStatementsBefore;
    const endLsn = (await sql<{ l: string }>`SELECT pg_current_wal_lsn()::text AS l`.execute(db)).rows[0]!.l;
    const total = Number((await sql<{ n: string }>`SELECT (${endLsn}::pg_lsn - ${startLsn}::pg_lsn)::text AS n`.execute(db)).rows[0]!.n);

    // Bytes by relation: a record's whole length goes to its first block's relation; full-page images counted apart.
    const byRelation = await sql<{ relation: string; records: string; bytes: string; fpi: string }>`
      WITH b AS (
        SELECT start_lsn, block_id, reltablespace, reldatabase, relfilenode, record_length, block_fpi_length,
               min(block_id) OVER (PARTITION BY start_lsn) AS first_block
        FROM pg_get_wal_block_info(${startLsn}::pg_lsn, ${endLsn}::pg_lsn)
      ), named AS (
        SELECT b.*, CASE
          WHEN b.reldatabase <> (SELECT oid FROM pg_database WHERE datname = current_database()) THEN '(other database / shared)'
          ELSE coalesce((SELECT coalesce(pg_partition_root(r)::regclass::text, r::regclass::text)
                         FROM pg_filenode_relation(CASE WHEN b.reltablespace = (SELECT dattablespace FROM pg_database WHERE datname = current_database()) THEN 0 ELSE b.reltablespace END, b.relfilenode) AS r),
                        '(relfilenode ' || b.relfilenode || ')') END AS relation
        FROM b
      )
      SELECT relation,
             count(*) FILTER (WHERE block_id = first_block)::text AS records,
             coalesce(sum(record_length) FILTER (WHERE block_id = first_block), 0)::text AS bytes,
             coalesce(sum(block_fpi_length), 0)::text AS fpi
      FROM named GROUP BY relation ORDER BY sum(record_length) FILTER (WHERE block_id = first_block) DESC NULLS LAST`.execute(db);
    const withoutBlocks = await sql<{ kind: string; records: string; bytes: string }>`
      SELECT resource_manager || '/' || record_type AS kind, count(*)::text AS records, sum(record_length)::text AS bytes
      FROM pg_get_wal_records_info(${startLsn}::pg_lsn, ${endLsn}::pg_lsn)
      WHERE block_ref IS NULL OR block_ref = ''
      GROUP BY 1 ORDER BY sum(record_length) DESC`.execute(db);
    const byKind = await sql<{ kind: string; records: string; bytes: string; fpi: string }>`
      SELECT resource_manager || '/' || record_type AS kind, count(*)::text AS records,
             sum(record_length)::text AS bytes, sum(fpi_length)::text AS fpi
      FROM pg_get_wal_records_info(${startLsn}::pg_lsn, ${endLsn}::pg_lsn)
      GROUP BY 1 ORDER BY sum(record_length) DESC`.execute(db);

    const perRun = (n: number | string | bigint) => Number(n) / RUNS;
    const result = {
      runs: RUNS,
      inFlight: IN_FLIGHT,
      checkpointFirst: args.checkpoint,
      settings: Object.fromEntries(settings.rows.map((r) => [r.name, r.setting])),
      walBytesPerRun: perRun(total),
      fpiBytesPerRun: perRun(byKind.rows.reduce((s, r) => s + Number(r.fpi), 0)),
      statementsPerRun: perRun(measuredStatements),
      phases: Object.fromEntries(PHASES.map((p) => [p, { walBytesPerRun: perRun(lsnByPhase.get(p)!), statementsPerRun: perRun(statementsByPhase.get(p)!) }])),
      relations: byRelation.rows.map((r) => ({ relation: r.relation, recordsPerRun: perRun(r.records), bytesPerRun: perRun(r.bytes), fpiBytesPerRun: perRun(r.fpi) })),
      recordsWithoutBlocks: withoutBlocks.rows.map((r) => ({ kind: r.kind, recordsPerRun: perRun(r.records), bytesPerRun: perRun(r.bytes) })),
      recordKinds: byKind.rows.map((r) => ({ kind: r.kind, recordsPerRun: perRun(r.records), bytesPerRun: perRun(r.bytes), fpiBytesPerRun: perRun(r.fpi) })),
    };
    if (args.json) {
      console.log(JSON.stringify(result, null, 2));
      return;
    }
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
    const row = (cells: (string | number)[], widths: number[]) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join("  ");
    console.log(`WAL per run of the 3-step chain: ${kb(result.walBytesPerRun)} (full-page images ${kb(result.fpiBytesPerRun)}), ${result.statementsPerRun.toFixed(1)} statements per run`);
    console.log(`${RUNS} runs, ${IN_FLIGHT} in flight${args.checkpoint ? ", after a CHECKPOINT" : ""}; ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(", ")}`);
    console.log("\nBy phase (per run):");
    for (const p of PHASES) {
      const figures = result.phases[p]!;
      console.log(`  ${row([p, kb(figures.walBytesPerRun), `${figures.statementsPerRun.toFixed(1)} stmts`], [10, 10, 12])}`);
    }
    console.log("\nBy relation (per run; a record counted at its first block):");
    console.log(`  ${row(["relation", "records", "bytes", "of it FPI"], [52, 8, 10, 10])}`);
    for (const r of result.relations) console.log(`  ${row([r.relation, r.recordsPerRun.toFixed(2), kb(r.bytesPerRun), kb(r.fpiBytesPerRun)], [52, 8, 10, 10])}`);
    console.log("\nRecords without blocks (per run):");
    for (const r of result.recordsWithoutBlocks) console.log(`  ${row([r.kind, r.recordsPerRun.toFixed(2), kb(r.bytesPerRun)], [52, 8, 10])}`);
    console.log("\nBy record kind (per run):");
    for (const r of result.recordKinds) console.log(`  ${row([r.kind, r.recordsPerRun.toFixed(2), kb(r.bytesPerRun), kb(r.fpiBytesPerRun)], [52, 8, 10, 10])}`);
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
