/**
 * `npm run bench` (`npm run bench`): node-flow end to end under load, with nothing
 * simulated. On this machine it starts a throwaway embedded
 * Postgres 18, migrates it, and runs the real web process
 * (server/web/main.ts, the app built first when stale, as `nf start` does) and the real sidecar
 * (server/sidecar/main.ts, roles decider,poller); or it targets a running server
 * (`--url`, `--api-key`, and `--database-url` for the figures only the
 * database knows). It registers a 3-task chain of SIMPLE tasks and runs N SDK
 * workers, each a process of its own, over real HTTP with an API key.
 *
 * Then, per point: open-loop arrivals at a fixed rate (a start every 1/rate s,
 * whether or not earlier runs finished — what users do to a server), or a
 * closed loop (a fixed number of runs in flight, a new one started as one
 * ends — the server's ceiling). After the arrivals it waits for every run of
 * the point to end and reads the figures from the rows themselves:
 *
 * - step turnaround: a task's "endedAt" (its completion committed) to the
 *   next task's "startedAt" (its lease): decide, enqueue, NOTIFY, wake, lease;
 * - decide lag: a state change ("endedAt", or the run's start) to the
 *   evaluation that reacted ("scheduledAt" of the next task, "endedAt" of the run);
 * - end to end: the start request leaving the driver to the run's "endedAt";
 * - write transactions per run (transaction ids assigned; a savepoint that
 *   writes takes one too), commits per run (pg_stat_database.xact_commit,
 *   read-only ones included), WAL bytes per run (pg_current_wal_lsn);
 * - the largest task-queue and decide-queue depths seen (sampled every 100 ms),
 *   and with them what the server's active backends were waiting on;
 * - CPU of each process tree (web, sidecar, Postgres, workers, this driver),
 *   from /proc, in % of one core;
 * - lost or duplicated completions: every run must be COMPLETED with exactly
 *   its three tasks, each completed once, and the workers' own list of the
 *   tasks they completed must match the database's, id for id.
 *
 * Last, a large workflow: a loop whose every iteration forks 100 SIMPLE
 * tasks, 30,000 tasks in all by default, through the same workers; the
 * sidecar's evaluation time (its /metrics histogram) is printed for a 5-task
 * workflow against the large one early and late in its life (invariant 6: an
 * evaluation reads the frontier, not the history).
 *
 * And the floor (bare-queue.ts): a bare leased queue on the same
 * Postgres with as many worker processes and jobs in flight as the closed
 * loop, and nothing else, set beside the closed loop's tasks/s.
 *
 * Everything shares this machine's cores, and the figures move with whatever
 * else runs on it: compare runs made back to back, not across days.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { findFreePort } from "../db/embedded-postgres";
import { migrate } from "../db/migrator";
import { createDb } from "../db/pool";
import type { Db } from "../db/pool";
import { createNodeFlowClient } from "../sdk";
import type { NodeFlowClient } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { insertNamespace } from "../server/store/namespaces";
import { runBareQueue } from "./bare-queue";
import { startGraphilePeer } from "./graphile-peer";
import type { GraphilePeer, PeerPointResult } from "./graphile-peer";
import { ask, forkReady, stopAll } from "./child-processes";
import type { BareQueueResult } from "./bare-queue";
import type { BenchWorkerMessage, BenchWorkerRequest } from "./worker-process";
import { embeddedPaths, prepareEmbeddedState, startEmbeddedProcess } from "../cli/embedded-database";
import type { EmbeddedPostgresHandle } from "../cli/embedded-database";
import { UsageError } from "../cli/help";
import { PROJECT_ROOT } from "../cli/start";
import { describeExit, spawnSupervised } from "../cli/supervised-process";
import type { SupervisedProcess } from "../cli/supervised-process";
import { readProcs, treeCpuSeconds } from "./process-cpu";
import { isBuildNeeded } from "../cli/web-build";

/** An environment; NodeJS.ProcessEnv would demand the NODE_ENV that Next's types make required. */
type Env = Record<string, string | undefined>;

export interface BenchOptions {
  /** Open-loop arrival rates, runs per second; one point each. */
  rates: number[];
  /** Seconds of arrivals per open-loop point. */
  duration: number;
  /** Seconds of the closed-loop point; 0 skips it. */
  closedSeconds: number;
  /** Runs kept in flight by the closed loop. */
  closedInFlight: number;
  workers: number;
  /** Each worker's concurrency (tasks one poll asks for). */
  slots: number;
  /** Tasks of the large workflow; 0 skips it. */
  largeTasks: number;
  web: "next" | "node";
  url: string | undefined;
  apiKey: string | undefined;
  databaseUrl: string | undefined;
  namespace: string | undefined;
  /** Where the JSON and markdown results go (`<out>.json`, `<out>.md`). */
  out: string;
  /** Seconds to wait for a point's runs to end after its arrivals. */
  drainSeconds: number;
  /** Writes V8 CPU profiles of web and sidecar into this directory. */
  cpuProfileDir: string | undefined;
  /** Loads pg_stat_statements in the embedded cluster and reports the costliest statements. */
  pgStatStatements: boolean;
  /** Seconds of the bare queue (bare-queue.ts) at the closed loop's workers and in-flight count; 0: none. */
  bareQueueSeconds: number;
  /** The peer run after each point (graphile-peer.ts), or none. */
  peer: "graphile" | "none";
  /** Sidecars for a second closed loop (the extra ones deciders only); 1: the closed loop runs once, with one. */
  sidecars: number;
}

export const BENCH_USAGE = `npm run bench -- [--rates 25,50,100,200,400] [--duration 20] [--closed 20] [--in-flight 64]
         [--workers 16] [--slots 1] [--large 30000] [--web next|node] [--out PATH]
         [--bare-queue 15] [--peer graphile|none] [--sidecars 1] [--smoke]
         [--url URL --api-key KEY --database-url URL [--namespace NS]] [--cpu-prof DIR]
  --rates      open-loop arrival rates (runs/s), one point each; "" for none
  --duration   seconds of arrivals per open-loop point
  --closed     seconds of the closed-loop point (0: none); --in-flight runs kept going
  --workers    SDK worker processes; --slots tasks each holds at once
  --large      tasks of the large workflow (a loop of 100-task forks); 0: none
  --web        next (default): the production web process (server/web/main.ts:
               Next, and the worker APIs on node:http), built first when stale;
               node: the REST API alone on node:http (no build; the CI smoke)
  --bare-queue seconds of the floor, each way (with and without NOTIFY): a bare leased
               queue on the same Postgres, as many worker processes and jobs in flight,
               no HTTP and no workflow (0: none; never with --url: it creates a table)
  --peer       graphile (default): after each point, graphile-worker runs the same chain
               with the same worker slots, its workers in one process, on the same
               Postgres, and the ratios node-flow ÷ graphile-worker are printed; none: no peer
               (never with --url: it installs a schema)
  --sidecars   N > 1: the closed loop runs again with N sidecars (the extra ones deciders
               only), set beside the one-sidecar loop
  --smoke      short defaults for CI: --web node --workers 2 --rates 10 --duration 2
               --closed 2 --in-flight 4 --large 200 --bare-queue 2 --drain 30 (flags given win)
  --out        results as PATH.json and PATH.md (default bench-results/bench-<time>)
  --url        a running node-flow instead of a throwaway one, with --api-key (worker
               and admin scopes) and --database-url (the figures only Postgres knows)
  --cpu-prof   V8 CPU profiles of the web, sidecar and first worker processes into DIR
  --pg-stat-statements  preload pg_stat_statements (embedded only) and list the
               statements that cost the most Postgres time
`;

const FULL_DEFAULTS = { rates: "25,50,100,200,400", duration: "20", closed: "20", "in-flight": "64", workers: "16", large: "30000", web: "next", drain: "60", "bare-queue": "15" };
const SMOKE_DEFAULTS: typeof FULL_DEFAULTS = { rates: "10", duration: "2", closed: "2", "in-flight": "4", workers: "2", large: "200", web: "node", drain: "30", "bare-queue": "2" };

function parseList(text: string): number[] {
  if (text.trim() === "") return [];
  return text.split(",").map((part) => {
    const value = Number(part.trim());
    if (!(Number.isFinite(value) && value > 0 && value <= 10_000)) throw new UsageError(`--rates: "${part}" is not a rate from 0 to 10000`);
    return value;
  });
}

export function parseBenchArgs(argv: string[], now = new Date()): BenchOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        rates: { type: "string" },
        duration: { type: "string" },
        closed: { type: "string" },
        "in-flight": { type: "string" },
        workers: { type: "string" },
        slots: { type: "string", default: "1" },
        large: { type: "string" },
        web: { type: "string" },
        out: { type: "string" },
        url: { type: "string" },
        "api-key": { type: "string" },
        "database-url": { type: "string" },
        namespace: { type: "string" },
        drain: { type: "string" },
        "cpu-prof": { type: "string" },
        "pg-stat-statements": { type: "boolean", default: false },
        "bare-queue": { type: "string" },
        peer: { type: "string", default: "graphile" },
        sidecars: { type: "string", default: "1" },
        smoke: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const number = (name: string, text: string | undefined, min: number, max: number, integer = true): number => {
    const value = Number(text);
    if (!(Number.isFinite(value) && value >= min && value <= max && (!integer || Number.isInteger(value)))) {
      throw new UsageError(`--${name} must be ${integer ? "an integer" : "a number"} from ${min} to ${max}, not "${text}"`);
    }
    return value;
  };
  // Flags given win over --smoke's defaults, which win over the full run's.
  const defaults = values.smoke ? SMOKE_DEFAULTS : FULL_DEFAULTS;
  for (const [flag, value] of Object.entries(defaults)) (values as Record<string, unknown>)[flag] ??= value;
  const web = values.web;
  if (web !== "next" && web !== "node") throw new UsageError(`--web must be next or node, not "${web}"`);
  const url = values.url?.trim() || undefined;
  const apiKey = values["api-key"]?.trim() || process.env.NODE_FLOW_API_KEY || undefined;
  const databaseUrl = values["database-url"]?.trim() || undefined;
  if (url !== undefined && (apiKey === undefined || databaseUrl === undefined)) {
    throw new UsageError("--url needs --api-key (or NODE_FLOW_API_KEY) and --database-url: the figures come from the database");
  }
  const peer = values.peer;
  if (peer !== "graphile" && peer !== "none") throw new UsageError(`--peer must be graphile or none, not "${peer}"`);
  const stamp = now.toISOString().replace(/[:.]/g, "-").slice(0, 19);
  return {
    rates: parseList(values.rates ?? ""),
    duration: number("duration", values.duration, 0.5, 3600, false),
    closedSeconds: number("closed", values.closed, 0, 3600, false),
    closedInFlight: number("in-flight", values["in-flight"], 1, 10_000),
    workers: number("workers", values.workers, 1, 256),
    slots: number("slots", values.slots, 1, 100),
    largeTasks: number("large", values.large, 0, 1_000_000),
    web,
    url,
    apiKey,
    databaseUrl,
    namespace: values.namespace?.trim() || undefined,
    out: values.out ?? path.join("bench-results", `bench-${stamp}`),
    drainSeconds: number("drain", values.drain, 1, 3600, false),
    cpuProfileDir: values["cpu-prof"] ? path.resolve(values["cpu-prof"]) : undefined,
    pgStatStatements: values["pg-stat-statements"] ?? false,
    bareQueueSeconds: number("bare-queue", values["bare-queue"], 0, 3600, false),
    peer,
    sidecars: number("sidecars", values.sidecars, 1, 8),
  };
}

// ---------------------------------------------------------------------------
// Small helpers

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Wall-clock epoch milliseconds with sub-millisecond resolution, comparable with Postgres timestamps on this machine. */
const wallMs = () => performance.timeOrigin + performance.now();

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function say(line: string): void {
  progress.clear();
  process.stderr.write(`[bench] ${line}\n`);
}

/** One progress line, rewritten in place on a terminal; elsewhere one line every 2 s. */
const progress = (() => {
  const tty = process.stderr.isTTY;
  let shown = false;
  let last = 0;
  return {
    update(line: string) {
      if (tty) {
        process.stderr.write(`\r\x1b[2K${line}`);
        shown = true;
        return;
      }
      if (performance.now() - last < 2000) return;
      last = performance.now();
      process.stderr.write(`${line}\n`);
    },
    clear() {
      if (tty && shown) process.stderr.write("\r\x1b[2K");
      shown = false;
      last = 0;
    },
  };
})();

type CpuGroup = "web" | "sidecar" | "postgres" | "workers" | "driver";
const CPU_GROUPS: readonly CpuGroup[] = ["web", "sidecar", "postgres", "workers", "driver"];

interface CpuSnapshot {
  at: number;
  seconds: Partial<Record<CpuGroup, number>>;
}

// ---------------------------------------------------------------------------
// The system under test

interface System {
  baseUrl: string;
  apiKey: string;
  namespace: string;
  /** The bench's own pool: setup, sampling and the figures. */
  db: Db;
  /** The sidecar's /metrics, when the bench started the sidecar. */
  metricsUrl: string | undefined;
  /** The throwaway database's URL, when the bench started Postgres (the bare queue runs only there). */
  ownDatabaseUrl: string | undefined;
  pids: Partial<Record<Exclude<CpuGroup, "workers" | "driver">, number>>;
  /** Starts one more sidecar (roles decider) and resolves with a function that stops it; only when the bench started the system. */
  addSidecar: ((label: string) => Promise<{ pid: number; stop: () => Promise<void> }>) | undefined;
  /** The extra sidecars running now: their CPU counts as the sidecar's. */
  extraSidecarPids: number[];
  where: string;
}

function lastLinesOf(child: SupervisedProcess): string {
  return child
    .lastLines()
    .slice(-15)
    .map((line) => `  ${line}`)
    .join("\n");
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean, failed?: () => string | undefined): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const problem = failed?.();
    if (problem !== undefined) throw new Error(problem);
    if (await check()) return;
    if (performance.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

async function startSystem(options: BenchOptions, cleanups: (() => Promise<void> | void)[]): Promise<System> {
  if (options.url !== undefined) {
    const db = createDb(options.databaseUrl!, { max: 4, applicationName: "node-flow-bench" });
    cleanups.push(() => db.destroy());
    return {
      baseUrl: options.url.replace(/\/+$/, ""),
      apiKey: options.apiKey!,
      namespace: options.namespace ?? "default",
      db,
      metricsUrl: undefined,
      ownDatabaseUrl: undefined,
      pids: {},
      addSidecar: undefined,
      extraSidecarPids: [],
      where: `the running server at ${options.url}`,
    };
  }

  const scratch = mkdtempSync(path.join(os.tmpdir(), "nf-bench-"));
  // As root the embedded Postgres runs as "postgres", which must be able to enter the directory.
  chmodSync(scratch, 0o755);
  cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
  say(`Starting a throwaway embedded Postgres 18 in ${scratch}…`);
  const paths = embeddedPaths(path.join(scratch, "data"));
  const { state } = prepareEmbeddedState(paths);
  const postgresLog: string[] = [];
  const embedded: EmbeddedPostgresHandle = await startEmbeddedProcess(
    paths,
    state,
    (line) => {
      postgresLog.push(line);
      if (postgresLog.length > 30) postgresLog.shift();
    },
    options.pgStatStatements ? { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "all", "pg_stat_statements.track_planning": "on" } : undefined,
  );
  cleanups.push(() => embedded.stop());
  const postmasterPid = Number(readFileSync(path.join(paths.postgresDir, "postmaster.pid"), "utf8").split("\n", 1)[0]);

  const db = createDb(embedded.url, { max: 4, applicationName: "node-flow-bench" });
  cleanups.push(() => db.destroy());
  await migrate(db);
  if (options.pgStatStatements) await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.execute(db);
  const namespace = await insertNamespace(db, { name: `bench-${randomBytes(3).toString("hex")}` });
  const apiKey = (await createApiKey(db, { namespaceId: namespace.id, name: "the system bench", scopes: ["worker", "admin"], createdBy: "the system bench" })).key;

  const childEnv: Env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
  if (options.web === "next") {
    const decision = isBuildNeeded(PROJECT_ROOT);
    if (decision.needed) {
      say(`Building the web app (${decision.reason}); this takes a minute or two…`);
      const { DATABASE_URL: _url, NODE_FLOW_SECRET: _secret, ...buildEnv } = childEnv;
      const build = spawnSupervised({ name: "build", command: process.execPath, args: ["node_modules/next/dist/bin/next", "build"], cwd: PROJECT_ROOT, env: buildEnv, onLine: () => undefined });
      const status = await build.exited;
      if (status.code !== 0) throw new Error(`the web app build ${describeExit(status)}:\n${lastLinesOf(build)}`);
    }
  }

  const webPort = await findFreePort();
  const metricsPort = await findFreePort();
  const serverEnv: Env = {
    ...childEnv,
    DATABASE_URL: embedded.url,
    NODE_FLOW_SECRET: randomBytes(24).toString("hex"),
    NODE_FLOW_DATA_DIR: path.join(scratch, "node-flow"),
    LOG_LEVEL: "warn",
  };
  // Default file names (CPU.<date>.<pid>.<thread>.cpuprofile): tsx's loader runs in a thread of its own, and one fixed name had it overwrite the main thread's profile.
  const profile = (_name: string) => (options.cpuProfileDir ? [`--cpu-prof`, `--cpu-prof-dir=${options.cpuProfileDir}`] : []);
  if (options.cpuProfileDir) mkdirSync(options.cpuProfileDir, { recursive: true });

  let webPortSeen: number | undefined;
  const web =
    options.web === "next"
      ? spawnSupervised({
          name: "web",
          command: process.execPath,
          // The production web process, as `nf start` runs it.
          args: [...profile("web"), "--import", "tsx", "server/web/main.ts"],
          cwd: PROJECT_ROOT,
          env: { ...serverEnv, NODE_FLOW_ROLES: "api", PORT: String(webPort), HOST: "127.0.0.1" },
          onLine: () => undefined,
          ipc: true,
        })
      : spawnSupervised({
          name: "web",
          command: process.execPath,
          args: [...profile("web"), "--import", "tsx", "bench/rest-server.ts"],
          cwd: PROJECT_ROOT,
          env: { ...serverEnv, NODE_FLOW_ROLES: "api" },
          onLine: (line) => {
            const match = /^listening on (\d+)$/.exec(line);
            if (match) webPortSeen = Number(match[1]);
          },
        });
  const spawnSidecar = (name: string, roles: string, port: number) => {
    let ready = false;
    const child = spawnSupervised({
      name,
      command: process.execPath,
      args: [...profile(name), "--import", "tsx", "server/sidecar/main.ts"],
      cwd: PROJECT_ROOT,
      env: { ...serverEnv, NODE_FLOW_ROLES: roles, NODE_FLOW_METRICS_PORT: String(port), LOG_LEVEL: "info" },
      ipc: true,
      onLine: (line) => {
        if (line.includes("worker ready")) ready = true;
      },
    });
    return { child, ready: () => ready };
  };
  const { child: sidecar, ready: sidecarReady } = spawnSidecar("sidecar", "decider,poller", metricsPort);
  cleanups.push(async () => {
    // SIGINT, not SIGTERM, for a profile: Node writes --cpu-prof output on a normal exit, which both handlers make.
    await Promise.all([web.stop(15_000), sidecar.stop(15_000)]);
  });
  const exitedEarly = () => {
    for (const child of [web, sidecar]) if (child.hasExited()) return `the ${child.name} process exited before it was ready:\n${lastLinesOf(child)}`;
    return undefined;
  };
  await waitFor("the sidecar's \"worker ready\"", 60_000, sidecarReady, exitedEarly);
  let baseUrl = `http://127.0.0.1:${webPort}`;
  if (options.web === "node") {
    await waitFor("the REST server's port", 60_000, () => webPortSeen !== undefined, exitedEarly);
    baseUrl = `http://127.0.0.1:${webPortSeen}`;
  }
  await waitFor("the web process's readiness", 120_000, async () => {
    try {
      const response = await fetch(`${baseUrl}/api/${options.web === "next" ? "health/ready" : "v1/openapi.json"}`, { signal: AbortSignal.timeout(5_000) });
      await response.body?.cancel();
      return response.status === 200;
    } catch {
      return false;
    }
  }, exitedEarly);

  return {
    baseUrl,
    apiKey,
    namespace: namespace.name,
    db,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    ownDatabaseUrl: embedded.url,
    pids: { web: web.pid, sidecar: sidecar.pid, postgres: postmasterPid },
    // Deciders only: the poller's sweeps are singletons of the first sidecar's.
    addSidecar: async (label) => {
      const extra = spawnSidecar(label, "decider", await findFreePort());
      cleanups.push(() => extra.child.stop(15_000));
      await waitFor(`${label}'s "worker ready"`, 60_000, extra.ready, () => (extra.child.hasExited() ? `${label} exited before it was ready:\n${lastLinesOf(extra.child)}` : undefined));
      return { pid: extra.child.pid, stop: () => extra.child.stop(15_000) };
    },
    extraSidecarPids: [],
    where: `a throwaway embedded Postgres 18 (the settings \`npm start\` uses), ${options.web === "next" ? "the production web process (server/web/main.ts)" : "the REST API alone on node:http (--web node)"} and the sidecar, all on this machine`,
  };
}

// ---------------------------------------------------------------------------
// Workers

interface WorkerPool {
  pids: number[];
  completed(): number;
  /** The ids of the tasks completed since the last flush, across all workers, with refusal and error counts. */
  flush(): Promise<{ taskIds: string[]; refused: number; errors: number }>;
  stop(): Promise<void>;
}

async function startWorkers(system: System, options: BenchOptions, queue: string): Promise<WorkerPool> {
  const forked = Array.from({ length: options.workers }, (_, i) =>
    forkReady("worker-process.ts", {
      name: `worker ${i}`,
      // One worker profiled is every worker profiled: they run the same loop.
      execArgv: options.cpuProfileDir && i === 0 ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`] : [],
      env: {
        ...process.env,
        NF_BENCH_URL: system.baseUrl,
        NF_BENCH_API_KEY: system.apiKey,
        NF_BENCH_NAMESPACE: system.namespace,
        NF_BENCH_QUEUE: queue,
        NF_BENCH_WORKER_ID: `bench-worker-${i}`,
        NF_BENCH_SLOTS: String(options.slots),
      },
    }),
  );
  const children = forked.map(({ child }) => child);
  const completed = new Map<ChildProcess, number>(children.map((child) => [child, 0]));
  children.forEach((child, i) =>
    child.on("message", (raw) => {
      const message = raw as BenchWorkerMessage;
      if (message.type === "progress") completed.set(child, message.completed);
      else if (message.type === "warning") say(`worker ${i}: ${message.message}`);
    }),
  );
  await Promise.all(forked.map(({ ready }) => ready));
  return {
    pids: children.map((child) => child.pid ?? 0),
    completed: () => [...completed.values()].reduce((a, b) => a + b, 0),
    flush: async () => {
      const answers = await Promise.all(children.map((child) => ask<BenchWorkerMessage, "flushed">(child, { type: "flush" } satisfies BenchWorkerRequest, "flushed")));
      return {
        taskIds: answers.flatMap((a) => a.taskIds),
        refused: answers.reduce((sum, a) => sum + a.refused, 0),
        errors: answers.reduce((sum, a) => sum + a.errors, 0),
      };
    },
    stop: () => stopAll(children, 10_000),
  };
}

// ---------------------------------------------------------------------------
// Database figures

interface DbSnapshot {
  commits: number;
  walBytes: bigint;
  /** Full-page images written to the WAL (pg_stat_wal, cluster-wide): the first change of a page after a checkpoint logs the whole page. */
  walFpi: number;
  /** Updates of TaskExecutions and WorkflowExecutions rows, and how many were HOT (no index touched; pg_stat_user_tables). */
  updates: Record<HotTable, { all: number; hot: number }>;
  /** The next transaction id to be assigned. */
  nextXid: bigint;
}

type HotTable = "task" | "run";

function hotPercent(before: { all: number; hot: number }, after: { all: number; hot: number }): number {
  return after.all > before.all ? (100 * (after.hot - before.hot)) / (after.all - before.all) : Number.NaN;
}

function lsnBytes(lsn: string): bigint {
  const [high, low] = lsn.split("/");
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

async function dbSnapshot(db: Db): Promise<DbSnapshot> {
  // Other backends' WAL counters reach pg_stat_wal when they flush their statistics (at most a second late).
  await sql`SELECT /* nf-bench */ pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ commits: string; lsn: string; xmax: string; fpi: string; taskUpd: string; taskHot: string; runUpd: string; runHot: string }>`
    SELECT /* nf-bench */ xact_commit::text AS commits, pg_current_wal_lsn()::text AS lsn, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax,
           (SELECT wal_fpi FROM pg_stat_wal)::text AS fpi,
           (SELECT coalesce(sum(n_tup_upd), 0) FROM pg_stat_user_tables WHERE relname LIKE 'TaskExecutions\_p%')::text AS "taskUpd",
           (SELECT coalesce(sum(n_tup_hot_upd), 0) FROM pg_stat_user_tables WHERE relname LIKE 'TaskExecutions\_p%')::text AS "taskHot",
           (SELECT coalesce(sum(n_tup_upd), 0) FROM pg_stat_user_tables WHERE relname LIKE 'WorkflowExecutions\_p%')::text AS "runUpd",
           (SELECT coalesce(sum(n_tup_hot_upd), 0) FROM pg_stat_user_tables WHERE relname LIKE 'WorkflowExecutions\_p%')::text AS "runHot"
    FROM pg_stat_database WHERE datname = current_database()`.execute(db);
  const row = rows[0]!;
  return {
    commits: Number(row.commits),
    walBytes: lsnBytes(row.lsn),
    walFpi: Number(row.fpi),
    updates: {
      task: { all: Number(row.taskUpd), hot: Number(row.taskHot) },
      run: { all: Number(row.runUpd), hot: Number(row.runHot) },
    },
    nextXid: BigInt(row.xmax),
  };
}

interface StatementTotals {
  calls: number;
  execMs: number;
  planMs: number;
}

/**
 * The server's statements (the bench's own are tagged and left out: the tag
 * follows the first keyword, because pg_stat_statements keeps a statement's
 * text from its first token and a leading comment would be lost), since the
 * last reset: the top-level ones, each a round trip from a client (BEGIN and
 * COMMIT included); a function's own statements count within its call.
 */
async function statementTotals(db: Db): Promise<StatementTotals> {
  const { rows } = await sql<StatementTotals>`
    SELECT /* nf-bench */ coalesce(sum(calls), 0)::float8 AS calls, coalesce(sum(total_exec_time), 0)::float8 AS "execMs", coalesce(sum(total_plan_time), 0)::float8 AS "planMs"
    FROM pg_stat_statements
    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel AND query NOT LIKE '%nf-bench%'`.execute(db);
  return rows[0]!;
}

interface Sample {
  tasks: number;
  decides: number;
  /** What the server's active backends were doing: "CPU" (no wait event) or the wait event ("Lock:object", "IO:WalSync", …), and how many. */
  backends: { state: string; n: number }[];
}

/**
 * One sample of the queues' depths and the active backends' states, taken
 * every 100 ms while a point runs. One statement rather than two, and with a
 * parameter so that db/pool.ts prepares it: planned once per connection, not
 * on every call — as two unparameterised statements the sampler was planned
 * 706 times and cost 1.8 s of Postgres's time in a 90-second closed loop,
 * taken from the system under test.
 */
async function sample(db: Db): Promise<Sample> {
  const { rows } = await sql<Sample>`
    SELECT /* nf-bench */ (SELECT count(*) FROM "TaskQueues" WHERE "leaseExpiresAt" IS NULL)::int AS "tasks",
           (SELECT count(*) FROM "DecideQueues")::int AS "decides",
           (SELECT coalesce(json_agg("s"), '[]'::json) FROM (
              SELECT coalesce("wait_event_type" || ':' || "wait_event", 'CPU') AS "state", count(*)::int AS "n"
              FROM pg_stat_activity
              WHERE "state" = 'active' AND "backend_type" = ${"client backend"} AND "pid" <> pg_backend_pid() AND "query" NOT LIKE '%nf-bench%'
              GROUP BY 1) AS "s") AS "backends"`.execute(db);
  return rows[0]!;
}

interface RunRow {
  id: string;
  status: string;
  startedMs: number;
  endedMs: number | null;
}

interface TaskRow {
  id: string;
  workflowId: string;
  refName: string;
  status: string;
  attempt: number;
  pollCount: number;
  scheduledMs: number;
  startedMs: number | null;
  endedMs: number | null;
}

const epochMs = (column: string) => sql.raw(`extract(epoch FROM ${column}) * 1000`);

async function loadRuns(db: Db, ids: readonly string[]): Promise<{ runs: RunRow[]; tasks: TaskRow[] }> {
  const runs: RunRow[] = [];
  const tasks: TaskRow[] = [];
  for (let i = 0; i < ids.length; i += 2000) {
    const chunk = ids.slice(i, i + 2000);
    const r = await sql<RunRow>`
      SELECT /* nf-bench */ "id", "status", ${epochMs(`"startedAt"`)}::float8 AS "startedMs", ${epochMs(`"endedAt"`)}::float8 AS "endedMs"
      FROM "WorkflowExecutions" WHERE "id" = ANY(${chunk}::uuid[])`.execute(db);
    runs.push(...r.rows);
    const t = await sql<TaskRow>`
      SELECT /* nf-bench */ "id", "workflowId", "refName", "status", "attempt", "pollCount",
             ${epochMs(`"scheduledAt"`)}::float8 AS "scheduledMs", ${epochMs(`"startedAt"`)}::float8 AS "startedMs",
             ${epochMs(`"endedAt"`)}::float8 AS "endedMs"
      FROM "TaskExecutions" WHERE "workflowId" = ANY(${chunk}::uuid[])`.execute(db);
    tasks.push(...t.rows);
  }
  return { runs, tasks };
}

/**
 * Which of `ids` are still RUNNING. Asked as "running", not "ended", so the
 * partial index of RUNNING workflows answers it: an ended run is found by "id"
 * alone, which probes the primary key of every monthly partition — with 2,000
 * ids that was ~30 ms of Postgres CPU per call, ten calls a second while a
 * point drained, taken from the system under test.
 */
async function stillRunning(db: Db, ids: readonly string[]): Promise<Set<string>> {
  const running = new Set<string>();
  for (let i = 0; i < ids.length; i += 5000) {
    const { rows } = await sql<{ id: string }>`
      SELECT /* nf-bench */ "id" FROM "WorkflowExecutions" WHERE "status" = 'RUNNING' AND "id" = ANY(${ids.slice(i, i + 5000)}::uuid[])`.execute(db);
    for (const row of rows) running.add(row.id);
  }
  return running;
}

// ---------------------------------------------------------------------------
// The benchmark workflows

const STEP_QUEUE = "bench_step";
const CHAIN = "bench_chain";
/** Tasks in a run of the chain. */
const CHAIN_STEPS = 3;
const FIVE = "bench_five";
const LARGE = "bench_large";
const FORK_WIDTH = 100;

function chainDefinition(name: string, steps: number): Record<string, unknown> {
  const refs = Array.from({ length: steps }, (_, i) => `step${i + 1}`);
  return {
    schemaVersion: 1,
    name,
    nodes: refs.map((ref, i) => ({ ref, type: "SIMPLE", name: STEP_QUEUE, position: { x: i * 200, y: 0 } })),
    edges: refs.slice(1).map((ref, i) => ({ source: refs[i], target: ref })),
  };
}

/** A loop of `iterations`, each forking FORK_WIDTH SIMPLE tasks: the history grows, the frontier stays ≤ FORK_WIDTH. */
function largeDefinition(iterations: number): Record<string, unknown> {
  return {
    schemaVersion: 1,
    name: LARGE,
    nodes: [
      { ref: "loop", type: "DO_WHILE", items: Array.from({ length: iterations }, (_, i) => i), position: { x: 0, y: 0 } },
      { ref: "fan", type: "FORK_JOIN_DYNAMIC", parent: "loop", forkTaskName: STEP_QUEUE, items: Array.from({ length: FORK_WIDTH }, (_, i) => i), position: { x: 40, y: 40 } },
    ],
    edges: [],
  };
}

// ---------------------------------------------------------------------------
// One point

export interface PointResult {
  mode: "open" | "closed";
  /** Open: the arrival rate asked for. Closed: runs in flight. */
  target: number;
  /** Sidecar processes deciding during the point. */
  sidecars: number;
  offeredPerSecond: number;
  completedPerSecond: number;
  started: number;
  startErrors: number;
  completed: number;
  notCompleted: number;
  stepTurnaroundMs: { p50: number; p95: number; p99: number };
  endToEndMs: { p50: number; p99: number };
  decideLagMs: { p50: number; p99: number };
  maxTaskQueue: number;
  maxDecideQueue: number;
  /**
   * The server's active backends by what they were doing — "CPU" or a wait
   * event — averaged over the 100 ms samples: 2.5 "Lock:object" means two or
   * three were queued on a heavyweight lock at any moment.
   */
  activeBackends: Record<string, number>;
  writeTransactionsPerRun: number;
  commitsPerRun: number;
  walBytesPerRun: number;
  /** Full-page images per run: WAL that depends on where the checkpoints fell, not on the work. */
  walFpiPerRun: number;
  /** The share of task-row and run-row updates that were HOT, in percent: each one that is not writes an entry into every index. */
  hotUpdatePercent: Record<HotTable, number>;
  cpuPercent: Partial<Record<CpuGroup, number>>;
  /** CPU milliseconds per completed run, per process group: steadier than latency on a shared machine. */
  cpuMsPerRun: Partial<Record<CpuGroup, number>>;
  /** Completions the workers made during the point (stragglers of earlier points included). */
  workerCompletions: number;
  /** With --pg-stat-statements: the server's statements per completed run, and their execution and planning time. */
  statementsPerRun?: StatementTotals;
  problems: string[];
  seconds: number;
}

/** Every run started and every completion a worker reported, for the final lost/duplicate check. */
interface Ledger {
  runIds: string[];
  reportedTaskIds: string[];
}

interface Driver {
  ledger: Ledger;
  system: System;
  client: NodeFlowClient;
  workers: WorkerPool;
  options: BenchOptions;
}

function cpuSnapshot(driver: Driver): CpuSnapshot {
  const procs = readProcs();
  const { pids } = driver.system;
  const usage = process.cpuUsage();
  const seconds: Partial<Record<CpuGroup, number>> = { workers: treeCpuSeconds(driver.workers.pids, procs), driver: (usage.user + usage.system) / 1e6 };
  if (pids.web !== undefined) seconds.web = treeCpuSeconds([pids.web], procs);
  if (pids.sidecar !== undefined) seconds.sidecar = treeCpuSeconds([pids.sidecar, ...driver.system.extraSidecarPids], procs);
  if (pids.postgres !== undefined) seconds.postgres = treeCpuSeconds([pids.postgres], procs);
  return { at: performance.now(), seconds };
}

async function runPoint(driver: Driver, mode: "open" | "closed", target: number, seconds: number, label: string): Promise<PointResult> {
  const { system, client, workers, options } = driver;
  const sentAt = new Map<string, number>();
  let startErrors = 0;
  let lastError = "";
  const problems: string[] = [];

  // Settle: the previous point's last commits reach pg_stat_database (backends flush at most once a second).
  await sleep(1200);
  const statementsBefore = options.pgStatStatements ? await statementTotals(system.db) : undefined;
  const before = await dbSnapshot(system.db);
  const cpuBefore = cpuSnapshot(driver);
  const completedBefore = workers.completed();
  let maxTaskQueue = 0;
  let maxDecideQueue = 0;
  let sampling = true;
  let stateSamples = 0;
  const backendTotals = new Map<string, number>();
  const sampler = (async () => {
    while (sampling) {
      try {
        const { tasks, decides, backends } = await sample(system.db);
        maxTaskQueue = Math.max(maxTaskQueue, tasks);
        maxDecideQueue = Math.max(maxDecideQueue, decides);
        for (const { state, n } of backends) backendTotals.set(state, (backendTotals.get(state) ?? 0) + n);
        stateSamples += 1;
      } catch {
        // A sample lost is a sample lost.
      }
      await sleep(100);
    }
  })();

  const inFlight = new Set<Promise<unknown>>();
  const startOne = async (): Promise<string | undefined> => {
    const at = wallMs();
    try {
      const started = await client.startRun({ name: CHAIN, input: {} }, { retry: false });
      sentAt.set(started.id, at);
      return started.id;
    } catch (error) {
      startErrors += 1;
      lastError = error instanceof Error ? error.message : String(error);
      return undefined;
    }
  };
  const track = <T>(promise: Promise<T>) => {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise));
    return promise;
  };

  const began = performance.now();
  const ticker = setInterval(() => {
    const elapsed = (performance.now() - began) / 1000;
    const done = workers.completed() - completedBefore;
    progress.update(`${label}: ${elapsed.toFixed(0)} s, ${sentAt.size} started, ${Math.floor(done / 3)} runs' worth of tasks done, task queue ≤ ${maxTaskQueue}, decide queue ≤ ${maxDecideQueue}`);
  }, 250);

  if (mode === "open") {
    const total = Math.max(1, Math.round(target * seconds));
    for (let i = 0; i < total; i++) {
      const due = began + (i * 1000) / target;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      void track(startOne());
    }
    await Promise.all(inFlight);
  } else {
    // Closed loop: `target` runs in flight; a run's end (seen by polling its row) makes room for the next.
    const running = new Set<string>();
    const deadline = began + seconds * 1000;
    const fill = async () => {
      while (running.size + inFlight.size < target && performance.now() < deadline) {
        void track(
          startOne().then((id) => {
            if (id !== undefined) running.add(id);
          }),
        );
      }
      await Promise.all(inFlight);
    };
    await fill();
    while (performance.now() < deadline) {
      // Every 20 ms, not faster: the driver shares the machine with what it
      // measures, and a run's end found up to 20 ms late delays the next start
      // by ~1% of an end-to-end run of a second or more.
      await sleep(20);
      if (running.size === 0) {
        await fill();
        continue;
      }
      const stillGoing = await stillRunning(system.db, [...running]);
      for (const id of running) if (!stillGoing.has(id)) running.delete(id);
      await fill();
    }
  }
  const arrivalsEnded = performance.now();
  const ids = [...sentAt.keys()];

  // Drain: every run of the point ends before its figures are read.
  const drainDeadline = performance.now() + options.drainSeconds * 1000;
  let ended = 0;
  while (performance.now() < drainDeadline) {
    ended = ids.length - (await stillRunning(system.db, ids)).size;
    if (ended === ids.length) break;
    await sleep(100);
  }
  clearInterval(ticker);
  sampling = false;
  await sampler;
  progress.clear();
  await sleep(1200);
  const after = await dbSnapshot(system.db);
  const cpuAfter = cpuSnapshot(driver);
  const statementsAfter = options.pgStatStatements ? await statementTotals(system.db) : undefined;
  const flushed = await workers.flush();
  const workerCompleted = workers.completed() - completedBefore;

  const { runs, tasks } = await loadRuns(system.db, ids);
  const completedRuns = runs.filter((r) => r.status === "COMPLETED" && r.endedMs !== null);
  if (startErrors > 0) problems.push(`${startErrors} starts failed (last: ${lastError})`);
  if (completedRuns.length < ids.length) problems.push(`${ids.length - completedRuns.length} of ${ids.length} runs did not complete within ${options.drainSeconds} s of the last arrival`);
  if (flushed.refused > 0) problems.push(`${flushed.refused} reports refused`);
  if (flushed.errors > 0) problems.push(`${flushed.errors} poll/report errors`);

  const tasksByRun = new Map<string, TaskRow[]>();
  for (const task of tasks) {
    const list = tasksByRun.get(task.workflowId);
    if (list) list.push(task);
    else tasksByRun.set(task.workflowId, [task]);
  }
  driver.ledger.runIds.push(...ids);
  driver.ledger.reportedTaskIds.push(...flushed.taskIds);

  // Latencies from the rows.
  const turnaround: number[] = [];
  const decideLag: number[] = [];
  const endToEnd: number[] = [];
  for (const run of completedRuns) {
    const list = (tasksByRun.get(run.id) ?? []).sort((a, b) => a.refName.localeCompare(b.refName));
    if (list.length !== 3) continue;
    decideLag.push(list[0]!.scheduledMs - run.startedMs);
    for (let k = 1; k < list.length; k++) {
      const prev = list[k - 1]!;
      const next = list[k]!;
      if (prev.endedMs !== null && next.startedMs !== null) turnaround.push(next.startedMs - prev.endedMs);
      if (prev.endedMs !== null) decideLag.push(next.scheduledMs - prev.endedMs);
    }
    const last = list.at(-1)!;
    if (last.endedMs !== null) decideLag.push(run.endedMs! - last.endedMs);
    const sent = sentAt.get(run.id);
    if (sent !== undefined) endToEnd.push(run.endedMs! - sent);
  }
  for (const list of [turnaround, decideLag, endToEnd]) list.sort((a, b) => a - b);

  const windowSeconds = (arrivalsEnded - began) / 1000;
  const lastEnd = Math.max(...completedRuns.map((r) => r.endedMs!), 0);
  const firstSent = Math.min(...sentAt.values());
  const activeSeconds = completedRuns.length > 0 ? (lastEnd - firstSent) / 1000 : windowSeconds;
  const cpuSeconds = (cpuAfter.at - cpuBefore.at) / 1000;
  const cpuPercent: Partial<Record<CpuGroup, number>> = {};
  for (const group of CPU_GROUPS) {
    const a = cpuBefore.seconds[group];
    const b = cpuAfter.seconds[group];
    // The window includes the settle and drain: CPU over the whole point, idle tails included.
    if (a !== undefined && b !== undefined) cpuPercent[group] = ((b - a) / cpuSeconds) * 100;
  }
  const perRun = (value: number) => (completedRuns.length > 0 ? value / completedRuns.length : Number.NaN);
  return {
    mode,
    target,
    sidecars: 1 + system.extraSidecarPids.length,
    offeredPerSecond: ids.length / windowSeconds,
    completedPerSecond: completedRuns.length / activeSeconds,
    started: ids.length,
    startErrors,
    completed: completedRuns.length,
    notCompleted: ids.length - completedRuns.length,
    stepTurnaroundMs: { p50: percentile(turnaround, 50), p95: percentile(turnaround, 95), p99: percentile(turnaround, 99) },
    endToEndMs: { p50: percentile(endToEnd, 50), p99: percentile(endToEnd, 99) },
    decideLagMs: { p50: percentile(decideLag, 50), p99: percentile(decideLag, 99) },
    maxTaskQueue,
    activeBackends: Object.fromEntries(
      [...backendTotals].sort((a, b) => b[1] - a[1]).map(([state, total]) => [state, stateSamples > 0 ? total / stateSamples : 0]),
    ),
    maxDecideQueue,
    writeTransactionsPerRun: perRun(Number(after.nextXid - before.nextXid)),
    commitsPerRun: perRun(after.commits - before.commits),
    walBytesPerRun: perRun(Number(after.walBytes - before.walBytes)),
    walFpiPerRun: perRun(after.walFpi - before.walFpi),
    hotUpdatePercent: {
      task: hotPercent(before.updates.task, after.updates.task),
      run: hotPercent(before.updates.run, after.updates.run),
    },
    cpuPercent,
    cpuMsPerRun: Object.fromEntries(
      Object.entries(cpuPercent).map(([group, percent]) => [group, completedRuns.length > 0 ? (percent * cpuSeconds * 10) / completedRuns.length : Number.NaN]),
    ),
    workerCompletions: workerCompleted,
    ...(statementsBefore && statementsAfter
      ? {
          statementsPerRun: {
            calls: perRun(statementsAfter.calls - statementsBefore.calls),
            execMs: perRun(statementsAfter.execMs - statementsBefore.execMs),
            planMs: perRun(statementsAfter.planMs - statementsBefore.planMs),
          },
        }
      : {}),
    problems,
    seconds: windowSeconds,
  };
}

interface CompletionCheck {
  runs: number;
  runsCompleted: number;
  lost: number;
  duplicated: number;
  detail: string[];
}

/** How a point is named in the progress line, the table and the notes: "open 25/s", "closed, 64 in flight". */
function pointLabel(mode: "open" | "closed", target: number, sidecars = 1): string {
  return `${mode === "open" ? `open ${target}/s` : `closed, ${target} in flight`}${sidecars > 1 ? `, ${sidecars} sidecars` : ""}`;
}

/**
 * Zero lost, zero duplicated, over every run of every point, once all have
 * ended (a straggler of one point is often completed during the next, so
 * this is checked at the end, not per point):
 * - every run COMPLETED, with exactly one row per step, each COMPLETED,
 *   first attempt (a second row or attempt for a step is a duplicate);
 * - the workers' own list of completions accepted by the server matches the
 *   COMPLETED rows id for id: a row no worker completed, or a completion the
 *   server acknowledged that no row shows, is lost; an id twice is a duplicate.
 */
async function checkCompletions(driver: Driver): Promise<CompletionCheck> {
  const { system, workers, options, ledger } = driver;
  const deadline = performance.now() + options.drainSeconds * 1000;
  while (performance.now() < deadline && (await stillRunning(system.db, ledger.runIds)).size > 0) await sleep(200);
  // The last reports' answers reach the workers after the rows commit.
  await sleep(500);
  ledger.reportedTaskIds.push(...(await workers.flush()).taskIds);
  const { runs, tasks } = await loadRuns(system.db, ledger.runIds);
  const detail: string[] = [];
  const reported = new Map<string, number>();
  for (const id of ledger.reportedTaskIds) reported.set(id, (reported.get(id) ?? 0) + 1);
  let duplicated = 0;
  for (const count of reported.values()) if (count > 1) duplicated += count - 1;
  if (duplicated > 0) detail.push(`${duplicated} task ids reported completed twice`);
  const byRun = new Map<string, TaskRow[]>();
  for (const task of tasks) byRun.set(task.workflowId, [...(byRun.get(task.workflowId) ?? []), task]);
  let extraRows = 0;
  let lost = 0;
  const completedRows = new Set<string>();
  for (const run of runs) {
    const list = byRun.get(run.id) ?? [];
    extraRows += Math.max(0, list.length - new Set(list.map((t) => t.refName)).size) + list.filter((t) => t.attempt > 0).length;
    for (const task of list) if (task.status === "COMPLETED") completedRows.add(task.id);
    if (run.status === "COMPLETED" && list.length !== 3) lost += 1;
  }
  if (extraRows > 0) detail.push(`${extraRows} extra task rows (a step run twice)`);
  duplicated += extraRows;
  let unrecorded = 0;
  let unreported = 0;
  const elsewhere = [...reported.keys()].filter((id) => !completedRows.has(id));
  // A start whose answer the driver gave up on (a timeout) may still have
  // created its run: not in the ledger, but its tasks were real work. Those
  // completions are looked up by id (a scan: the table is small here).
  let orphaned = 0;
  for (let i = 0; i < elsewhere.length; i += 5000) {
    const { rows } = await sql<{ id: string }>`
      SELECT /* nf-bench */ "id" FROM "TaskExecutions" WHERE "id" = ANY(${elsewhere.slice(i, i + 5000)}::uuid[]) AND "status" = 'COMPLETED'`.execute(system.db);
    orphaned += rows.length;
  }
  if (orphaned > 0) detail.push(`${orphaned} completions belong to runs whose start timed out at the driver but was made`);
  unrecorded = elsewhere.length - orphaned;
  // Only ended runs' tasks: a task of a run still going may have committed after
  // the workers' flush, its answer still on the way (an undrained bench).
  const endedRuns = new Set(runs.filter((r) => r.status !== "RUNNING").map((r) => r.id));
  for (const task of tasks) if (task.status === "COMPLETED" && endedRuns.has(task.workflowId) && !reported.has(task.id)) unreported += 1;
  if (unrecorded > 0) detail.push(`${unrecorded} completions acknowledged to a worker but not recorded`);
  if (unreported > 0) detail.push(`${unreported} tasks recorded completed that no worker completed`);
  lost += unrecorded + unreported;
  const runsCompleted = runs.filter((r) => r.status === "COMPLETED").length;
  if (runsCompleted < ledger.runIds.length) detail.push(`${ledger.runIds.length - runsCompleted} runs not completed`);
  return { runs: ledger.runIds.length, runsCompleted, lost, duplicated, detail };
}

// ---------------------------------------------------------------------------
// The large workflow

interface Histogram {
  sum: number;
  count: number;
}

async function scrapeDecideHistogram(metricsUrl: string): Promise<Histogram | undefined> {
  try {
    const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) })).text();
    const sum = /^node_flow_decide_duration_seconds_sum(?:\{[^}]*\})? ([\d.e+-]+)$/m.exec(text);
    const count = /^node_flow_decide_duration_seconds_count(?:\{[^}]*\})? ([\d.e+-]+)$/m.exec(text);
    if (!sum || !count) return undefined;
    return { sum: Number(sum[1]), count: Number(count[1]) };
  } catch {
    return undefined;
  }
}

export interface LargeResult {
  tasks: number;
  status: string;
  seconds: number;
  /** Mean evaluation time (ms) of a 5-task chain's evaluations, run alone. */
  fiveTaskEvaluationMs: number;
  /** Mean evaluation time (ms) in windows of the large run's life: the task rows it had, and the evaluations' mean. */
  windows: { tasksFrom: number; tasksTo: number; evaluations: number; meanMs: number }[];
}

async function runLarge(driver: Driver): Promise<LargeResult | undefined> {
  const { system, client, options } = driver;
  if (!system.metricsUrl) {
    say("Large workflow: skipped (the sidecar's /metrics is known only when the bench starts it).");
    return undefined;
  }
  const metricsUrl = system.metricsUrl;
  // The 5-task baseline: one run at a time, so every evaluation in the window is its own.
  await client.registerDefinition(chainDefinition(FIVE, 5));
  const baseBefore = await scrapeDecideHistogram(metricsUrl);
  for (let i = 0; i < 20; i++) {
    progress.update(`large workflow: 5-task baseline ${i + 1}/20`);
    const { id } = await client.startRun({ name: FIVE, input: {} });
    await waitFor("a 5-task run to end", 300_000, async () => (await stillRunning(system.db, [id])).size === 0);
  }
  const baseAfter = await scrapeDecideHistogram(metricsUrl);
  const fiveTaskEvaluationMs = baseBefore && baseAfter ? ((baseAfter.sum - baseBefore.sum) / (baseAfter.count - baseBefore.count)) * 1000 : Number.NaN;

  const iterations = Math.max(1, Math.ceil(options.largeTasks / FORK_WIDTH));
  await client.registerDefinition(largeDefinition(iterations));
  const { id } = await client.startRun({ name: LARGE, input: {} });
  const began = performance.now();
  const samples: { tasks: number; histogram: Histogram }[] = [];
  let status = "RUNNING";
  const deadline = performance.now() + Math.max(600_000, options.largeTasks * 20);
  while (performance.now() < deadline) {
    const { rows } = await sql<{ status: string; tasks: number }>`
      SELECT /* nf-bench */ w."status", (SELECT count(*) FROM "TaskExecutions" t WHERE t."workflowId" = w."id")::int AS tasks
      FROM "WorkflowExecutions" w WHERE w."id" = ${id}::uuid`.execute(system.db);
    const row = rows[0]!;
    status = row.status;
    const histogram = await scrapeDecideHistogram(metricsUrl);
    if (histogram) samples.push({ tasks: row.tasks, histogram });
    progress.update(`large workflow: ${row.tasks} task rows, ${((performance.now() - began) / 1000).toFixed(0)} s, ${status}`);
    if (status !== "RUNNING") break;
    await sleep(2000);
  }
  progress.clear();
  const seconds = (performance.now() - began) / 1000;
  // Group consecutive samples into about five windows of the run's life.
  const windows: LargeResult["windows"] = [];
  const step = Math.max(1, Math.floor((samples.length - 1) / 5));
  for (let i = 0; i + step < samples.length; i += step) {
    const a = samples[i]!;
    const b = samples[Math.min(samples.length - 1, i + step)]!;
    const evaluations = b.histogram.count - a.histogram.count;
    if (evaluations > 0) windows.push({ tasksFrom: a.tasks, tasksTo: b.tasks, evaluations, meanMs: ((b.histogram.sum - a.histogram.sum) / evaluations) * 1000 });
  }
  const { rows } = await sql<{ tasks: number }>`SELECT /* nf-bench */ count(*)::int AS tasks FROM "TaskExecutions" WHERE "workflowId" = ${id}::uuid`.execute(system.db);
  return { tasks: rows[0]!.tasks, status, seconds, fiveTaskEvaluationMs, windows };
}

// ---------------------------------------------------------------------------
// Output

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");

export function markdownTable(points: readonly PointResult[]): string {
  const statements = points.some((p) => p.statementsPerRun !== undefined);
  const header = [
    `| point | offered/s | completed/s | completed | step turnaround p50 / p95 / p99 ms | end-to-end p50 / p99 ms | decide lag p50 / p99 ms | max task q | max decide q | write xacts/run | commits/run | WAL KB/run (full-page images/run; HOT updates, task / run rows) | CPU % web / sidecar / pg / workers / driver | CPU ms/run web / sidecar / pg / workers |${statements ? " statements/run, exec / plan ms/run |" : ""}`,
    `| --- | ---: | ---: | ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |${statements ? " --- |" : ""}`,
  ];
  const rows = points.map((p) =>
    [
      pointLabel(p.mode, p.target, p.sidecars),
      fixed(p.offeredPerSecond),
      fixed(p.completedPerSecond),
      `${p.completed}/${p.started}`,
      `${fixed(p.stepTurnaroundMs.p50)} / ${fixed(p.stepTurnaroundMs.p95)} / ${fixed(p.stepTurnaroundMs.p99)}`,
      `${fixed(p.endToEndMs.p50)} / ${fixed(p.endToEndMs.p99)}`,
      `${fixed(p.decideLagMs.p50)} / ${fixed(p.decideLagMs.p99)}`,
      String(p.maxTaskQueue),
      String(p.maxDecideQueue),
      fixed(p.writeTransactionsPerRun),
      fixed(p.commitsPerRun),
      `${fixed(p.walBytesPerRun / 1024)} (${fixed(p.walFpiPerRun)}; ${fixed(p.hotUpdatePercent.task, 0)}% / ${fixed(p.hotUpdatePercent.run, 0)}%)`,
      CPU_GROUPS.map((g) => (p.cpuPercent[g] === undefined ? "–" : fixed(p.cpuPercent[g], 0))).join(" / "),
      (["web", "sidecar", "postgres", "workers"] as const).map((g) => (p.cpuMsPerRun[g] === undefined ? "–" : fixed(p.cpuMsPerRun[g], 1))).join(" / "),
      ...(statements ? [p.statementsPerRun ? `${fixed(p.statementsPerRun.calls, 0)}, ${fixed(p.statementsPerRun.execMs, 1)} / ${fixed(p.statementsPerRun.planMs, 1)}` : "–"] : []),
    ].join(" | "),
  );
  return [...header, ...rows.map((row) => `| ${row} |`)].join("\n");
}

function largeText(large: LargeResult | undefined): string[] {
  if (!large) return [];
  return [
    "",
    `## Large workflow: ${large.tasks} task rows (a loop of ${FORK_WIDTH}-task dynamic forks), ${large.status} in ${fixed(large.seconds)} s`,
    "",
    `Mean evaluation time, claim to commit (the sidecar's node_flow_decide_duration_seconds): a 5-task chain alone ${fixed(large.fiveTaskEvaluationMs, 2)} ms.`,
    "",
    "| task rows so far | evaluations | mean evaluation ms |",
    "| --- | ---: | ---: |",
    ...large.windows.map((w) => `| ${w.tasksFrom}–${w.tasksTo} | ${w.evaluations} | ${fixed(w.meanMs, 2)} |`),
  ];
}

interface StatementCost {
  calls: number;
  /** Times planned: a prepared statement's generic plan is made once per connection until an invalidation. */
  plans: number;
  execMs: number;
  planMs: number;
  rows: number;
  query: string;
}

async function topStatements(db: Db): Promise<StatementCost[]> {
  const { rows } = await sql<StatementCost>`
    SELECT /* nf-bench */ calls::int AS calls, plans::int AS plans, total_exec_time AS "execMs", total_plan_time AS "planMs", rows::int AS rows,
           regexp_replace(query, '[[:space:]]+', ' ', 'g') AS query
    FROM pg_stat_statements
    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%nf-bench%'
    ORDER BY total_exec_time + total_plan_time DESC LIMIT 25`.execute(db);
  return rows;
}

interface TableScans {
  table: string;
  seqScans: number;
  seqRows: number;
  indexScans: number;
  live: number;
  dead: number;
  vacuums: number;
  analyzes: number;
}

/**
 * The tables most read by sequential scans over the whole run. A key lookup
 * whose cached generic plan was made while its partition was small can read
 * that partition whole on every call (docs/performance.md); this
 * is where that shows, with the dead rows it steps over.
 */
async function tablesReadWhole(db: Db): Promise<TableScans[]> {
  const { rows } = await sql<TableScans>`
    SELECT /* nf-bench */ "relname" AS "table", "seq_scan" AS "seqScans", "seq_tup_read" AS "seqRows", coalesce("idx_scan", 0) AS "indexScans",
           "n_live_tup" AS "live", "n_dead_tup" AS "dead",
           "vacuum_count" + "autovacuum_count" AS "vacuums", "analyze_count" + "autoanalyze_count" AS "analyzes"
    FROM pg_stat_user_tables
    WHERE "schemaname" = current_schema() AND "seq_tup_read" > 0
    ORDER BY "seq_tup_read" DESC LIMIT 10`.execute(db);
  return rows;
}

function tablesText(tables: readonly TableScans[]): string[] {
  if (tables.length === 0) return [];
  return [
    "",
    "## Tables read by sequential scans (pg_stat_user_tables, whole run)",
    "",
    "| table | seq scans | rows they read | index scans | live / dead rows | vacuums / analyzes |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...tables.map((t) => `| ${t.table} | ${t.seqScans} | ${t.seqRows} | ${t.indexScans} | ${t.live} / ${t.dead} | ${t.vacuums} / ${t.analyzes} |`),
  ];
}

/** What the server's backends were doing during each point: the busiest states first. */
function backendsText(points: readonly PointResult[]): string[] {
  if (points.length === 0) return [];
  return [
    "",
    "## The server's active backends (pg_stat_activity every 100 ms: mean count by wait event, CPU = none)",
    "",
    ...points.map((p) => {
      const states = Object.entries(p.activeBackends).slice(0, 6);
      const text = states.length > 0 ? states.map(([state, n]) => `${state} ${fixed(n, 2)}`).join(", ") : "none active";
      return `- ${pointLabel(p.mode, p.target, p.sidecars)}: ${text}`;
    }),
  ];
}

/** The bare queue with and without its NOTIFY, one after the other. */
async function runFloor(driver: Driver): Promise<BareQueueResult[]> {
  const { system, options } = driver;
  if (options.bareQueueSeconds <= 0) return [];
  if (system.ownDatabaseUrl === undefined) {
    say("Bare queue: not run against --url (it creates a table of its own).");
    return [];
  }
  const results: BareQueueResult[] = [];
  for (const notify of [true, false]) {
    const how = notify ? "with" : "without";
    say(`The floor: a bare queue ${how} NOTIFY, ${options.workers} worker processes straight to Postgres, ${options.closedInFlight} jobs in flight, ${options.bareQueueSeconds} s…`);
    const result = await runBareQueue({
      databaseUrl: system.ownDatabaseUrl,
      workers: options.workers,
      inFlight: options.closedInFlight,
      seconds: options.bareQueueSeconds,
      notify,
      postgresPid: system.pids.postgres,
      progress: (line) => progress.update(`${line} (${how} NOTIFY)`),
    });
    say(`bare queue ${how} NOTIFY: ${fixed(result.jobsPerSecond)} jobs/s`);
    results.push(result);
  }
  return results;
}

function bareQueueText(floor: readonly BareQueueResult[], points: readonly PointResult[], options: BenchOptions): string[] {
  const [first] = floor;
  if (first === undefined) return [];
  const closed = points.find((p) => p.mode === "closed");
  const tasksPerSecond = closed === undefined || options.closedInFlight !== first.inFlight ? undefined : closed.completedPerSecond * CHAIN_STEPS;
  return [
    "",
    "## The floor: a bare queue on the same Postgres",
    "",
    `${first.workers} worker processes straight to Postgres (no HTTP, no workflow), ${first.inFlight} jobs in flight, ${first.seconds} s each way: each worker leases a job (\`FOR UPDATE SKIP LOCKED\`, its own transaction) and completes it (delete, enqueue the next, and NOTIFY the parked workers or not: one statement). A ${CHAIN_STEPS}-task run is at least ${CHAIN_STEPS} such jobs.`,
    "",
    `| completion | jobs/s | as ${CHAIN_STEPS}-task runs/s | CPU ms/job pg / workers | node-flow's closed loop: tasks/s, as a share of these jobs/s |`,
    "| --- | ---: | ---: | --- | --- |",
    ...floor.map(
      (bare) =>
        `| ${bare.notify ? "with NOTIFY" : "without NOTIFY"} | ${fixed(bare.jobsPerSecond)} | ${fixed(bare.jobsPerSecond / CHAIN_STEPS)} | ${bare.cpuMsPerJob.postgres === null ? "–" : fixed(bare.cpuMsPerJob.postgres, 2)} / ${fixed(bare.cpuMsPerJob.workers, 2)} | ${tasksPerSecond === undefined ? "–" : `${fixed(tasksPerSecond)} (${fixed((100 * tasksPerSecond) / Math.max(bare.jobsPerSecond, 1e-9), 0)}%)`} |`,
    ),
  ];
}

/** Starts the peer (graphile-peer.ts) on the bench's own Postgres, unless --peer none or --url. */
async function startPeer(system: System, options: BenchOptions): Promise<GraphilePeer | undefined> {
  if (options.peer === "none") return undefined;
  if (system.ownDatabaseUrl === undefined) {
    say("Peer: not run against --url (it installs graphile-worker's schema).");
    return undefined;
  }
  say(`Starting the peer: graphile-worker, ${options.workers * options.slots} slots in one worker process, on the same Postgres…`);
  return startGraphilePeer({
    databaseUrl: system.ownDatabaseUrl,
    concurrency: options.workers * options.slots,
    steps: CHAIN_STEPS,
    postgresPid: system.pids.postgres,
    drainSeconds: options.drainSeconds,
    progress: (line) => progress.update(line),
  });
}

export interface PeerRatios {
  /** node-flow ÷ graphile-worker, closed loop (node-flow's one-sidecar loop): runs/s, WAL per run, CPU per run. */
  closedThroughput: number | null;
  walPerRun: number | null;
  /** node-flow's Postgres + web + sidecar over graphile-worker's Postgres + worker process. */
  cpuPerRun: number | null;
  /** The open-loop rate the latencies are compared at: 50/s when --rates has it, else the first rate. */
  latencyRate: number | null;
  endToEndP50: number | null;
  stepP50: number | null;
}

const ratio = (a: number | undefined, b: number | undefined | null) => (a === undefined || b === undefined || b === null || !Number.isFinite(a) || !Number.isFinite(b) || b <= 0 ? null : a / b);

export function peerRatios(peer: readonly PeerPointResult[], points: readonly PointResult[], options: BenchOptions): PeerRatios {
  const closed = points.find((p) => p.mode === "closed" && p.sidecars === 1);
  const peerClosed = peer.find((p) => p.mode === "closed");
  const latencyRate = options.rates.includes(50) ? 50 : (options.rates[0] ?? null);
  const open = points.find((p) => p.mode === "open" && p.target === latencyRate);
  const peerOpen = peer.find((p) => p.mode === "open" && p.target === latencyRate);
  const nodeFlowCpu = closed ? (["postgres", "web", "sidecar"] as const).reduce<number | undefined>((sum, g) => (sum === undefined || closed.cpuMsPerRun[g] === undefined ? undefined : sum + closed.cpuMsPerRun[g]), 0) : undefined;
  const peerCpu = peerClosed && peerClosed.cpuMsPerRun.postgres !== null ? peerClosed.cpuMsPerRun.postgres + peerClosed.cpuMsPerRun.workers : undefined;
  return {
    closedThroughput: ratio(closed?.completedPerSecond, peerClosed?.completedPerSecond),
    walPerRun: ratio(closed?.walBytesPerRun, peerClosed?.walBytesPerRun),
    cpuPerRun: ratio(nodeFlowCpu, peerCpu),
    latencyRate,
    endToEndP50: ratio(open?.endToEndMs.p50, peerOpen?.endToEndMs.p50),
    stepP50: ratio(open?.stepTurnaroundMs.p50, peerOpen?.stepGapMs.p50),
  };
}

function peerText(peer: readonly PeerPointResult[], points: readonly PointResult[], options: BenchOptions): string[] {
  if (peer.length === 0) return [];
  const r = peerRatios(peer, points, options);
  const x = (value: number | null) => (value === null ? "–" : `${fixed(value, 2)}×`);
  return [
    "",
    "## The peer: graphile-worker on the same Postgres, interleaved",
    "",
    `The same ${CHAIN_STEPS}-step chain with ${options.workers * options.slots} slots in one worker process straight to Postgres, each point run right after node-flow's. End to end: the first job's add → the last step's handler returning; step gap: a step's handler returning → the next one's starting.`,
    "",
    "| point | completed/s | completed | step gap p50 / p95 / p99 ms | end-to-end p50 / p99 ms | WAL KB/run | commits/run | CPU ms/run pg / workers | lost / duplicated |",
    "| --- | ---: | ---: | --- | --- | ---: | ---: | --- | --- |",
    ...peer.map(
      (p) =>
        `| ${pointLabel(p.mode, p.target)} | ${fixed(p.completedPerSecond)} | ${p.completed}/${p.started} | ${fixed(p.stepGapMs.p50)} / ${fixed(p.stepGapMs.p95)} / ${fixed(p.stepGapMs.p99)} | ${fixed(p.endToEndMs.p50)} / ${fixed(p.endToEndMs.p99)} | ${fixed(p.walBytesPerRun / 1024)} | ${fixed(p.commitsPerRun)} | ${p.cpuMsPerRun.postgres === null ? "–" : fixed(p.cpuMsPerRun.postgres, 1)} / ${fixed(p.cpuMsPerRun.workers, 1)} | ${p.lost} / ${p.duplicated} |`,
    ),
    "",
    "node-flow ÷ graphile-worker (closed loop: node-flow's one-sidecar loop; CPU: node-flow's Postgres + web + sidecar over graphile-worker's Postgres + workers):",
    "",
    `| closed-loop runs/s | WAL/run | CPU/run | end-to-end p50 at ${r.latencyRate ?? "–"}/s | step p50 at ${r.latencyRate ?? "–"}/s |`,
    "| ---: | ---: | ---: | ---: | ---: |",
    `| ${x(r.closedThroughput)} | ${x(r.walPerRun)} | ${x(r.cpuPerRun)} | ${x(r.endToEndP50)} | ${x(r.stepP50)} |`,
  ];
}

function statementsText(statements: readonly StatementCost[]): string[] {
  if (statements.length === 0) return [];
  return [
    "",
    "## Costliest statements (pg_stat_statements, whole run)",
    "",
    "| calls | plans | exec ms total | plan ms total | exec+plan µs/call | statement |",
    "| ---: | ---: | ---: | ---: | ---: | --- |",
    ...statements.map((s) => `| ${s.calls} | ${s.plans} | ${fixed(s.execMs, 0)} | ${fixed(s.planMs, 0)} | ${fixed(((s.execMs + s.planMs) / Math.max(1, s.calls)) * 1000, 0)} | \`${s.query.slice(0, 160).replace(/\|/g, "\\|")}\` |`),
  ];
}

// ---------------------------------------------------------------------------

export async function runBench(argv: string[], _env: Env): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(BENCH_USAGE);
    return 0;
  }
  const options = parseBenchArgs(argv);
  const cleanups: (() => Promise<void> | void)[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const cleanup of cleanups.reverse()) {
        try {
          await cleanup();
        } catch {
          // Best effort: the scratch directory goes either way.
        }
      }
    })());
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      say("Interrupted: stopping everything…");
      void cleanUp().then(() => process.exit(130));
    });
  }

  const loadBefore = os.loadavg().map((l) => l.toFixed(2)).join(" ");
  const began = performance.now();
  try {
    const system = await startSystem(options, cleanups);
    const client = createNodeFlowClient({ baseUrl: system.baseUrl, apiKey: system.apiKey, namespace: system.namespace });
    await client.registerDefinition(chainDefinition(CHAIN, CHAIN_STEPS));
    say(`Starting ${options.workers} worker processes (${options.slots} slot${options.slots === 1 ? "" : "s"} each)…`);
    const workers = await startWorkers(system, options, STEP_QUEUE);
    cleanups.push(() => workers.stop());
    const driver: Driver = { system, client, workers, options, ledger: { runIds: [], reportedTaskIds: [] } };

    // Warm-up: JIT, pools, prepared caches; not reported.
    say("Warming up (3 s at 25/s, not reported)…");
    await runPoint(driver, "open", 25, 3, "warm-up");

    const peer = await startPeer(system, options);
    if (peer) cleanups.push(() => peer.stop());
    const peerPoints: PeerPointResult[] = [];
    const runPeerPoint = async (mode: "open" | "closed", target: number, seconds: number) => {
      if (!peer) return;
      const point = await peer.runPoint(mode, target, seconds);
      peerPoints.push(point);
      say(`graphile-worker ${pointLabel(mode, target)}: ${fixed(point.completedPerSecond)} completed/s, step gap p50 ${fixed(point.stepGapMs.p50)} ms, end-to-end p50 ${fixed(point.endToEndMs.p50)} ms${point.lost + point.duplicated > 0 ? `; ${point.lost} lost, ${point.duplicated} duplicated` : ""}`);
    };
    if (peer) {
      say("Warming up graphile-worker (3 s at 25/s, not reported)…");
      await peer.runPoint("open", 25, 3);
    }

    // Interleaved: each of node-flow's points, then the peer's at the same rate or in-flight count.
    const points: PointResult[] = [];
    for (const rate of options.rates) {
      const point = await runPoint(driver, "open", rate, options.duration, pointLabel("open", rate));
      points.push(point);
      say(`${pointLabel("open", rate)}: ${fixed(point.completedPerSecond)} completed/s, step p50 ${fixed(point.stepTurnaroundMs.p50)} ms, end-to-end p50 ${fixed(point.endToEndMs.p50)} ms${point.problems.length > 0 ? `; ${point.problems.join("; ")}` : ""}`);
      await runPeerPoint("open", rate, options.duration);
    }
    if (options.closedSeconds > 0) {
      const point = await runPoint(driver, "closed", options.closedInFlight, options.closedSeconds, pointLabel("closed", options.closedInFlight));
      points.push(point);
      say(`closed loop: ${fixed(point.completedPerSecond)} completed/s${point.problems.length > 0 ? `; ${point.problems.join("; ")}` : ""}`);
      await runPeerPoint("closed", options.closedInFlight, options.closedSeconds);
      if (options.sidecars > 1 && system.addSidecar) {
        say(`Starting ${options.sidecars - 1} more sidecar${options.sidecars > 2 ? "s" : ""} (decider only) for a second closed loop…`);
        const extras = [];
        for (let i = 2; i <= options.sidecars; i++) extras.push(await system.addSidecar(`sidecar ${i}`));
        system.extraSidecarPids.push(...extras.map((e) => e.pid));
        const label = pointLabel("closed", options.closedInFlight, options.sidecars);
        const again = await runPoint(driver, "closed", options.closedInFlight, options.closedSeconds, label);
        points.push(again);
        say(`${label}: ${fixed(again.completedPerSecond)} completed/s${again.problems.length > 0 ? `; ${again.problems.join("; ")}` : ""}`);
        await Promise.all(extras.map((e) => e.stop()));
        system.extraSidecarPids.length = 0;
      } else if (options.sidecars > 1) say("More sidecars: only when the bench starts the system (not with --url).");
    }
    const check = await checkCompletions(driver);
    say(`Completions: ${check.runsCompleted}/${check.runs} runs completed; ${check.lost} lost, ${check.duplicated} duplicated.`);
    let large: LargeResult | undefined;
    let largeProblem: string | undefined;
    try {
      large = options.largeTasks > 0 ? await runLarge(driver) : undefined;
    } catch (error) {
      // The points' figures are still worth writing: an overloaded run leaves a backlog the large workflow waits behind.
      largeProblem = error instanceof Error ? error.message : String(error);
      say(`Large workflow: not measured (${largeProblem}).`);
    }
    const statements = options.pgStatStatements ? await topStatements(system.db) : [];
    const tables = await tablesReadWhole(system.db);
    // Last: its statements stay out of the figures above.
    const floor = await runFloor(driver);
    const loadAfter = os.loadavg().map((l) => l.toFixed(2)).join(" ");

    const { rows: version } = await sql<{ server_version: string }>`SHOW server_version`.execute(system.db);
    const cpus = os.cpus();
    const machine = `${cpus.length} cores (${cpus[0]?.model.trim() ?? "unknown CPU"}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; PostgreSQL ${version[0]?.server_version ?? "?"}`;
    const { lost, duplicated } = check;
    const markdown = [
      "# the system bench",
      "",
      `${machine}; load average ${loadBefore} before, ${loadAfter} after.`,
      `On ${system.where}; ${options.workers} SDK worker processes × ${options.slots} slot${options.slots === 1 ? "" : "s"}; a 3-task chain of SIMPLE tasks; open-loop points ${options.duration} s each, closed loop ${options.closedSeconds} s.`,
      "",
      markdownTable(points),
      "",
      `Completions checked against the rows, over all ${check.runs} runs (${check.runsCompleted} completed): ${lost} lost, ${duplicated} duplicated${check.detail.length > 0 ? ` (${check.detail.join("; ")})` : ""}.`,
      ...points.flatMap((p) => (p.problems.length > 0 ? [`- ${pointLabel(p.mode, p.target, p.sidecars)}: ${p.problems.join("; ")}`] : [])),
      ...backendsText(points),
      ...peerText(peerPoints, points, options),
      ...bareQueueText(floor, points, options),
      ...largeText(large),
      ...(largeProblem ? ["", `Large workflow: not measured (${largeProblem}).`] : []),
      ...statementsText(statements),
      ...tablesText(tables),
      "",
      `Took ${fixed((performance.now() - began) / 1000)} s.`,
      "",
    ].join("\n");
    const out = path.resolve(options.out);
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(`${out}.json`, `${JSON.stringify({ machine, where: system.where, options: { ...options, apiKey: undefined }, loadBefore, loadAfter, points, completions: check, peer: peerPoints.length > 0 ? { name: "graphile-worker", points: peerPoints, ratios: peerRatios(peerPoints, points, options) } : undefined, floor, large, tablesReadWhole: tables }, null, 2)}\n`);
    writeFileSync(`${out}.md`, markdown);
    process.stdout.write(markdown);
    say(`Results: ${out}.json and ${out}.md`);
    const peerBroken = peerPoints.some((p) => p.lost > 0 || p.duplicated > 0);
    return lost > 0 || duplicated > 0 || check.runsCompleted < check.runs || largeProblem !== undefined || peerBroken ? 1 : 0;
  } finally {
    await cleanUp();
  }
}

runBench(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`bench: ${error.message}\n\n${BENCH_USAGE}`);
      process.exit(1);
    }
    console.error(error);
    process.exit(1);
  },
);
