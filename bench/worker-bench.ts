/**
 * `npm run bench:worker`: the worker protocol as a remote worker sees it. Everything runs on this machine: a Postgres 18 (a throwaway
 * embedded cluster in a temporary directory, or `--database-url`), the REST
 * route handlers served over node:http in this process, and SDK workers
 * (`createWorker`) in this process talking to them over real HTTP with an API
 * key. Two measurements:
 *
 * (a) poll → complete round trips per second: M tasks are queued first (M
 *     runs of a one-step workflow, started and decided like any other), then
 *     N workers of one slot each drain the queue; each task is one poll and
 *     one completion, two HTTP requests and their transactions. Each round
 *     drains its own queue, so no round waits on the decider; the decider does
 *     not run while a round is timed (the completions' decides stay queued),
 *     so the number is the protocol's, not the engine's.
 * (b) enqueue → worker-wake latency: one worker's poll is parked on an empty
 *     queue; a run is started and one decider evaluation schedules its task
 *     (the task's enqueue and its NOTIFY commit together). Measured from that
 *     commit returning to the handler starting: the NOTIFY's delivery, the
 *     woken poll's lease, the HTTP answer and the SDK's dispatch.
 *
 * Server, workers and decider share this process's event loop and the
 * machine's cores with Postgres, as on a one-machine install: the numbers
 * are a floor for that shape and say nothing about a split deployment. A
 * command, not a test: progress goes to stderr, the results to stdout.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { assertDatabaseCapabilities } from "../db/capabilities";
import { migrate } from "../db/migrator";
import { createDb } from "../db/pool";
import type { Db } from "../db/pool";
import type { ScriptEvaluator } from "../engine";
import { createWorker } from "../sdk";
import type { NodeFlowWorker, WorkerLogger } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { FilesystemBlobStore } from "../server/lib/blob-store";
import { evaluateBatch } from "../server/evaluator/evaluator";
import type { EvaluatorDeps } from "../server/evaluator/evaluator";
import { Notifier, TASKS_CHANNEL } from "../server/lib/notifier";
import { registerWorkflowDefinition } from "../server/definitions/register-workflow-definition";
import type { RestDeps } from "../server/rest/define-route";
import { serverAuth } from "../server/rest/rest-deps";
import { sealingKeysOf } from "../server/secrets/secrets";
// The same node:http adapter the REST integration tests serve the dispatcher with.
import { serveRest } from "../server/rest/testing/serve-rest";
import { startExecution } from "../server/executions/start-execution";
import { insertNamespace } from "../server/store/namespaces";
import { embeddedPaths, prepareEmbeddedState, startEmbeddedInProcess } from "../cli/embedded-database";
import type { EmbeddedPostgresHandle } from "../cli/embedded-database";

interface BenchOptions {
  workers: number;
  slots: number;
  tasks: number;
  rounds: number;
  samples: number;
  databaseUrl: string | undefined;
  /** Postgres' synchronous_commit for the measured work: "on" (the default, as installed) or "off". */
  synchronousCommit: "on" | "off";
}

function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      workers: { type: "string", default: "16" },
      slots: { type: "string", default: "1" },
      tasks: { type: "string", default: "400" },
      rounds: { type: "string", default: "3" },
      samples: { type: "string", default: "200" },
      "database-url": { type: "string" },
      "synchronous-commit": { type: "string", default: "on" },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(
      [
        "npm run bench:worker -- [--workers 16] [--slots 1] [--tasks 400] [--rounds 3] [--samples 200]",
        "                         [--synchronous-commit on|off] [--database-url URL]",
        "  --workers       SDK workers draining the queue in (a)",
        "  --slots         concurrency of each worker (tasks a poll asks for)",
        "  --tasks         tasks per round of (a)",
        "  --rounds        rounds of (a); the median is reported",
        "  --samples       wake-ups measured in (b)",
        "  --synchronous-commit  off: commits of the measured work do not wait for the WAL flush (how fast",
        "                  without the disk's fsync); on, the default, is how node-flow runs",
        "  --database-url  a scratch Postgres 18 database to use (it is migrated and written to, in a",
        "                  namespace of its own) instead of a throwaway embedded cluster",
        "",
      ].join("\n"),
    );
    process.exit(0);
  }
  const int = (name: string, text: string | undefined, min: number, max: number): number => {
    const value = Number(text);
    if (!(Number.isInteger(value) && value >= min && value <= max)) throw new Error(`--${name} must be an integer from ${min} to ${max}, got "${text}"`);
    return value;
  };
  return {
    workers: int("workers", values.workers, 1, 200),
    slots: int("slots", values.slots, 1, 100),
    tasks: int("tasks", values.tasks, 1, 100_000),
    rounds: int("rounds", values.rounds, 1, 20),
    samples: int("samples", values.samples, 1, 10_000),
    databaseUrl: values["database-url"]?.trim() || undefined,
    synchronousCommit: synchronousCommit(values["synchronous-commit"]),
  };
}

function synchronousCommit(text: string | undefined): "on" | "off" {
  if (text === "on" || text === "off") return text;
  throw new Error(`--synchronous-commit must be on or off, got "${text}"`);
}

/** `url` with a server setting for every connection made with it (libpq's `options`). */
function withSetting(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  const existing = parsed.searchParams.get("options");
  parsed.searchParams.set("options", `${existing ? `${existing} ` : ""}-c ${name}=${value}`);
  return parsed.toString();
}

/** One progress line, rewritten in place on a terminal; elsewhere at most one line a second. */
function progressReporter(): { update(line: string): void; done(line?: string): void } {
  const tty = process.stderr.isTTY;
  let last = 0;
  let shown = "";
  return {
    update(line) {
      if (tty) {
        process.stderr.write(`\r\x1b[2K${line}`);
        shown = line;
        return;
      }
      const now = performance.now();
      if (now - last < 1000) return;
      last = now;
      process.stderr.write(`${line}\n`);
    },
    done(line) {
      if (tty && shown) process.stderr.write("\r\x1b[2K");
      shown = "";
      last = 0;
      if (line) process.stderr.write(`${line}\n`);
    },
  };
}

const progress = progressReporter();

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
const loadText = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

// Benchmark workflows are SIMPLE steps only: nothing evaluates a script.
const noScripts: ScriptEvaluator = { evaluate: () => ({ ok: false, error: "the benchmark workflows have no scripts" }) };

const quiet: WorkerLogger = {
  info: () => undefined,
  warn: (fields, message) => progress.done(`worker warning: ${message} ${JSON.stringify(fields)}`),
  error: (fields, message) => progress.done(`worker error: ${message} ${JSON.stringify(fields)}`),
};

interface Setup {
  /** The measured work's pool: the REST handlers' and the measured decider evaluation's (synchronous_commit as asked). */
  db: Db;
  /**
   * Preparation's pool (starting runs, deciding them), with synchronous_commit
   * off: on a disk that flushes slowly, preparing (a) durably took longer than
   * measuring it. Nothing measured goes through it.
   */
  prepDb: Db;
  namespaceId: string;
  /** A fresh namespace per run, so a given database's own work is never touched; the workers address it by name. */
  namespaceName: string;
  apiKey: string;
  baseUrl: string;
  notifier: Notifier;
  evaluator: EvaluatorDeps;
  prepEvaluator: EvaluatorDeps;
  blobs: FilesystemBlobStore;
  where: string;
}

/** Decides until the decide queue is empty; two loops, one per core, spread over the queue (the seed's peekBatch offset lesson). */
async function drainDecides(evaluator: EvaluatorDeps, onProgress?: (evaluated: number) => void): Promise<number> {
  let total = 0;
  const loop = async (offset: number) => {
    for (;;) {
      const evaluated = await evaluateBatch(evaluator, { limit: 50, offset });
      total += evaluated;
      onProgress?.(total);
      // The offset loop stops once nothing lies past its offset; the head loop and the sweep below finish the rest.
      if (evaluated === 0) return;
    }
  };
  await Promise.all([loop(0), loop(25)]);
  // Whatever the offset loop left behind its window.
  for (let evaluated = 1; evaluated > 0; ) {
    evaluated = await evaluateBatch(evaluator, { limit: 50 });
    total += evaluated;
  }
  return total;
}

/** Starts `count` runs of `name`, four at a time. */
async function startRuns(setup: Setup, name: string, count: number, onProgress: (started: number) => void): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const starter = async () => {
    while (next < count) {
      next += 1;
      const started = await startExecution({ db: setup.prepDb, blobs: setup.blobs }, { namespaceId: setup.namespaceId, name, input: {} });
      if (!started.ok) throw new Error(`benchmark setup: start failed: ${JSON.stringify(started)}`);
      ids.push(started.workflowId);
      onProgress(ids.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, count) }, starter));
  return ids;
}

async function register(setup: Setup, name: string, queue: string): Promise<void> {
  const registered = await registerWorkflowDefinition(setup.db, {
    namespaceId: setup.namespaceId,
    definition: { schemaVersion: 1, name, nodes: [{ ref: "step", type: "SIMPLE", name: queue, position: { x: 0, y: 0 } }], edges: [] },
    createdBy: "bench:worker",
  });
  if (!registered.ok) throw new Error(`benchmark setup: definition refused: ${JSON.stringify(registered)}`);
}

async function queuedCount(db: Db, namespaceId: string, queue: string): Promise<number> {
  const row = await db
    .selectFrom("TaskQueues")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("queueName", "=", queue)
    .where("namespaceId", "=", namespaceId)
    .where("leaseExpiresAt", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

interface RoundResult {
  tasks: number;
  seconds: number;
  perSecond: number;
  problems: string[];
}

/** (a): N workers drain a queue of `tasks` tasks; timed from the first worker's start to the last completion. */
async function roundTrips(setup: Setup, options: BenchOptions, queue: string, round: number): Promise<RoundResult> {
  let completed = 0;
  let finish!: () => void;
  const allDone = new Promise<void>((resolve) => (finish = resolve));
  const workers: NodeFlowWorker[] = [];
  const started = performance.now();
  const ticker = setInterval(() => {
    const seconds = (performance.now() - started) / 1000;
    progress.update(`(a) round ${round}/${options.rounds}: ${completed}/${options.tasks} completed, ${(completed / seconds).toFixed(0)}/s`);
  }, 200);
  for (let i = 0; i < options.workers; i++) {
    workers.push(
      createWorker({
        baseUrl: setup.baseUrl,
        apiKey: setup.apiKey,
        namespace: setup.namespaceName,
        queue,
        concurrency: options.slots,
        pollTimeoutMs: 1000,
        workerId: `bench-${round}-${i}`,
        logger: quiet,
        handler: () => ({}),
        onEvent: (event) => {
          if (event.type === "task-finished" && event.outcome === "completed") {
            completed += 1;
            if (completed === options.tasks) finish();
          }
        },
      }),
    );
  }
  await allDone;
  const seconds = (performance.now() - started) / 1000;
  clearInterval(ticker);
  await Promise.all(workers.map((w) => w.stop({ timeoutMs: 5000 })));
  progress.done();
  const problems: string[] = [];
  const totals = workers.map((w) => w.stats()).reduce((sum, s) => ({ refused: sum.refused + s.refused, pollErrors: sum.pollErrors + s.pollErrors, reportErrors: sum.reportErrors + s.reportErrors, unconfirmed: sum.unconfirmed + s.unconfirmed }), {
    refused: 0,
    pollErrors: 0,
    reportErrors: 0,
    unconfirmed: 0,
  });
  for (const [name, count] of Object.entries(totals)) if (count > 0) problems.push(`${count} ${name}`);
  const left = await queuedCount(setup.db, setup.namespaceId, queue);
  if (left > 0) problems.push(`${left} tasks left queued`);
  return { tasks: options.tasks, seconds, perSecond: options.tasks / seconds, problems };
}

/** (b): one parked worker; each sample starts a run and decides it, timing the task's enqueue commit → handler start. */
async function wakeLatency(setup: Setup, options: BenchOptions, name: string, queue: string): Promise<{ samples: number[]; notifyMisses: number }> {
  let committedAt = 0;
  let sampleStarted!: (at: number) => void;
  let sampleFinished!: () => void;
  const worker = createWorker({
    baseUrl: setup.baseUrl,
    apiKey: setup.apiKey,
    namespace: setup.namespaceName,
    queue,
    pollTimeoutMs: 30_000,
    workerId: "bench-wake",
    logger: quiet,
    handler: () => {
      sampleStarted(performance.now());
      return {};
    },
    onEvent: (event) => {
      if (event.type === "task-finished") sampleFinished();
    },
  });
  const evaluator: EvaluatorDeps = {
    ...setup.evaluator,
    onEvaluation: (_ms, outcome) => {
      if (outcome === "committed") committedAt = performance.now();
    },
  };
  const samples: number[] = [];
  try {
    for (let i = 0; i < options.samples; i++) {
      progress.update(`(b) wake-ups: ${i}/${options.samples}${samples.length > 0 ? `, median so far ${ms(median(samples))}` : ""}`);
      // The previous run's completion is decided first, so the one evaluation below is this sample's start.
      await drainDecides(setup.prepEvaluator);
      const started = await startExecution({ db: setup.prepDb, blobs: setup.blobs }, { namespaceId: setup.namespaceId, name, input: {} });
      if (!started.ok) throw new Error(`benchmark setup: start failed: ${JSON.stringify(started)}`);
      // Parked: the worker's next poll has subscribed on the server and found the queue empty.
      for (let waited = 0; setup.notifier.stats.waiters === 0; waited += 2) {
        if (waited > 10_000) throw new Error("the wake-up worker's poll never parked");
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
      const handlerStarted = new Promise<number>((resolve) => (sampleStarted = resolve));
      const finished = new Promise<void>((resolve) => (sampleFinished = resolve));
      const evaluated = await evaluateBatch(evaluator, { limit: 1 });
      if (evaluated !== 1) throw new Error("benchmark: the sample's run was not evaluated");
      samples.push((await handlerStarted) - committedAt);
      await finished;
    }
  } finally {
    progress.done();
    await worker.stop({ timeoutMs: 5000 });
  }
  // A wake-up that took about a re-check interval (1 s) missed its NOTIFY.
  return { samples, notifyMisses: samples.filter((s) => s > 500).length };
}

/**
 * Commits per second on one connection of the measured pool, each writing a
 * commit record (an xid) and nothing else: with synchronous_commit on, a
 * bound set by the disk's flush that every transaction below pays at least.
 */
async function commitsPerSecond(db: Db, count = 100): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    await db.transaction().execute((trx) => sql`SELECT pg_current_xact_id()`.execute(trx));
  }
  return count / ((performance.now() - started) / 1000);
}

async function setUp(options: BenchOptions, cleanups: (() => Promise<void> | void)[]): Promise<Setup> {
  let url: string;
  let where: string;
  const scratch = mkdtempSync(path.join(os.tmpdir(), "nf-bench-"));
  // As root the embedded Postgres runs as "postgres", which must be able to enter the directory.
  chmodSync(scratch, 0o755);
  cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
  if (options.databaseUrl) {
    url = options.databaseUrl;
    where = "the database given with --database-url";
  } else {
    progress.done(`Starting a throwaway embedded Postgres 18 in ${scratch}…`);
    const paths = embeddedPaths(path.join(scratch, "data"));
    const { state } = prepareEmbeddedState(paths);
    const embedded: EmbeddedPostgresHandle = await startEmbeddedInProcess(paths, state);
    cleanups.push(() => embedded.stop());
    url = embedded.url;
    where = `a throwaway embedded cluster (the settings \`npm start\` uses), in ${scratch}`;
  }
  const db = createDb(withSetting(url, "synchronous_commit", options.synchronousCommit), { max: Math.min(40, options.workers + 8), applicationName: "node-flow-bench" });
  cleanups.push(() => db.destroy());
  const prepDb = createDb(withSetting(url, "synchronous_commit", "off"), { max: 6, applicationName: "node-flow-bench-prep" });
  cleanups.push(() => prepDb.destroy());
  await assertDatabaseCapabilities(db);
  await migrate(db, { onApply: (name) => progress.update(`migrating: ${name}`) });
  progress.done();
  const namespace = await insertNamespace(db, { name: `bench-${randomBytes(4).toString("hex")}` });
  const apiKey = (await createApiKey(db, { namespaceId: namespace.id, name: "bench:worker", scopes: ["worker"], createdBy: "bench:worker" })).key;
  const notifier = new Notifier({ connectionString: url, applicationName: "node-flow-bench-notifier", channels: [TASKS_CHANNEL] });
  await notifier.start();
  cleanups.push(() => notifier.close());
  const blobs = new FilesystemBlobStore({ root: path.join(scratch, "blobs") });
  const deps: RestDeps = { db, blobs, notifier: () => notifier, auth: serverAuth, sealingKeys: sealingKeysOf({ secret: "s".repeat(64), previousSecrets: [] }), logger: { info: () => undefined, warn: () => undefined, error: (fields, message) => progress.done(`server error: ${message} ${JSON.stringify(fields)}`) } };
  const server = await serveRest(deps);
  cleanups.push(() => server.close());
  return {
    db,
    namespaceId: namespace.id,
    namespaceName: namespace.name,
    apiKey,
    // serveRest answers under /api/v1; the SDK wants the origin.
    baseUrl: new URL(server.baseUrl).origin,
    notifier,
    evaluator: { db, scripts: noScripts, blobs },
    prepEvaluator: { db: prepDb, scripts: noScripts, blobs },
    prepDb,
    blobs,
    where,
  };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const cleanups: (() => Promise<void> | void)[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const cleanup of cleanups.reverse()) {
        try {
          await cleanup();
        } catch {
          // Best effort: the temporary directory goes either way.
        }
      }
    })());
  process.once("SIGINT", () => {
    progress.done("Interrupted: cleaning up…");
    void cleanUp().then(() => process.exit(130));
  });

  const loadBefore = loadText();
  const began = performance.now();
  try {
    const setup = await setUp(options, cleanups);
    const version = await sql<{ server_version: string }>`SHOW server_version`.execute(setup.db);
    const commitRate = await commitsPerSecond(setup.db);

    // Every round's tasks are queued before the first is timed: a queue per round, so no round waits on the decider.
    const queues = Array.from({ length: options.rounds }, (_, i) => `bench_roundtrip_${i + 1}`);
    for (const [i, queue] of queues.entries()) await register(setup, `bench_roundtrip_${i + 1}`, queue);
    await register(setup, "bench_wake", "bench_wake");
    const total = options.tasks * options.rounds;
    const setupStarted = performance.now();
    let startedCount = 0;
    for (const [i] of queues.entries()) {
      await startRuns(setup, `bench_roundtrip_${i + 1}`, options.tasks, () => {
        startedCount += 1;
        progress.update(`queueing (a)'s ${total} tasks: ${startedCount} runs started`);
      });
    }
    await drainDecides(setup.prepEvaluator, (evaluated) => progress.update(`queueing (a)'s ${total} tasks: ${evaluated}/${total} runs decided`));
    progress.done(`Queued ${total} tasks for (a) in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s.`);

    const rounds: RoundResult[] = [];
    for (const [i, queue] of queues.entries()) {
      const queued = await queuedCount(setup.db, setup.namespaceId, queue);
      if (queued !== options.tasks) throw new Error(`benchmark setup: ${queued} tasks queued on ${queue}, expected ${options.tasks}`);
      rounds.push(await roundTrips(setup, options, queue, i + 1));
    }
    const wake = await wakeLatency(setup, options, "bench_wake", "bench_wake");
    const loadAfter = loadText();

    const cpus = os.cpus();
    const sorted = [...wake.samples].sort((a, b) => a - b);
    const lines = [
      "# node-flow worker benchmark (npm run bench:worker)",
      "",
      `Machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? "unknown CPU"}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; load average ${loadBefore} before, ${loadAfter} after.`,
      `Node ${process.version}; PostgreSQL ${version.rows[0]?.server_version ?? "?"} on ${setup.where}.`,
      `synchronous_commit ${options.synchronousCommit} for the measured work; one connection alone commits ${commitRate.toFixed(0)} empty transactions/s.`,
      "The REST handlers, the SDK workers and the decider share this process; the workers speak HTTP to the server like remote ones.",
      "",
      `## (a) poll → complete round trips: ${options.workers} workers × ${options.slots} slot${options.slots === 1 ? "" : "s"}, ${options.tasks} queued tasks a round`,
      "",
      "| round | tasks | seconds | round trips/s | problems |",
      "| ---: | ---: | ---: | ---: | --- |",
      ...rounds.map((r, i) => `| ${i + 1} | ${r.tasks} | ${r.seconds.toFixed(2)} | ${r.perSecond.toFixed(0)} | ${r.problems.join(", ") || "none"} |`),
      "",
      `Median: **${median(rounds.map((r) => r.perSecond)).toFixed(0)} round trips/s** (each: one poll and one completion, two HTTP requests).`,
      "",
      `## (b) enqueue → worker wake: ${wake.samples.length} samples, one parked long-poll`,
      "",
      "From the commit of the decider's transaction that enqueues the task (and NOTIFYs) to the handler starting.",
      "",
      "| p50 | p90 | p99 | max | missed a NOTIFY (> 500 ms) |",
      "| ---: | ---: | ---: | ---: | ---: |",
      `| ${ms(percentile(sorted, 50))} | ${ms(percentile(sorted, 90))} | ${ms(percentile(sorted, 99))} | ${ms(sorted.at(-1) ?? Number.NaN)} | ${wake.notifyMisses} |`,
      "",
      `Took ${((performance.now() - began) / 1000).toFixed(1)} s in all.`,
      "",
    ];
    process.stdout.write(lines.join("\n"));
  } finally {
    await cleanUp();
  }
}

main().catch((error: unknown) => {
  progress.done();
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
