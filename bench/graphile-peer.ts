/**
 * The peer `npm run bench` sets node-flow beside, in the same invocation and
 * on the same Postgres: graphile-worker running the same 3-step chain with
 * the same worker slots (node-flow's workers × slots), its workers in one
 * process of their own (graphile-peer-worker.ts), straight to the database.
 * Each of node-flow's points is followed by the peer's at the same arrival
 * rate or in-flight count, so the two share whatever else the machine does.
 *
 * The driver (this process) adds each run's first job with graphile-worker's
 * own addJob; the worker process says when each run's last step ended. What
 * is compared (the ratio table in system-bench.ts):
 * - completed runs/s, over first add → last end, as node-flow's;
 * - end to end: the add leaving the driver → the last step's handler returning
 *   (node-flow's ends later still: at the run's "endedAt", after a decide);
 * - step gap: a step's handler returning → the next one's starting;
 * - WAL per run (pg_current_wal_lsn), commits per run, and CPU per run of
 *   Postgres and of the worker process, from /proc.
 *
 * Only on the bench's own throwaway Postgres: it installs graphile-worker's
 * schema.
 */
import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { makeWorkerUtils } from "graphile-worker";
import type { WorkerUtils } from "graphile-worker";
import { ask, forkReady, stopAll } from "./child-processes";
import { GRAPHILE_SCHEMA, GRAPHILE_TASK } from "./graphile-peer-protocol";
import type { GraphilePeerMessage, GraphilePeerRequest, GraphileStepPayload } from "./graphile-peer-protocol";
import { readProcs, treeCpuSeconds } from "./process-cpu";

export interface PeerPointResult {
  peer: "graphile-worker";
  mode: "open" | "closed";
  target: number;
  offeredPerSecond: number;
  completedPerSecond: number;
  started: number;
  completed: number;
  stepGapMs: { p50: number; p95: number; p99: number };
  endToEndMs: { p50: number; p99: number };
  walBytesPerRun: number;
  commitsPerRun: number;
  /** CPU ms per completed run: Postgres's tree and the worker process's. */
  cpuMsPerRun: { postgres: number | null; workers: number };
  /** Runs not ended within the drain, and steps a run ran twice. */
  lost: number;
  duplicated: number;
  seconds: number;
}

export interface GraphilePeer {
  runPoint(mode: "open" | "closed", target: number, seconds: number): Promise<PeerPointResult>;
  stop(): Promise<void>;
}

export interface GraphilePeerOptions {
  databaseUrl: string;
  /** Worker slots in all: node-flow's worker processes × slots. */
  concurrency: number;
  steps: number;
  postgresPid: number | undefined;
  drainSeconds: number;
  progress: (line: string) => void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const wallMs = () => performance.timeOrigin + performance.now();

function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function lsnBytes(lsn: string): bigint {
  const [high, low] = lsn.split("/");
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

export async function startGraphilePeer(options: GraphilePeerOptions): Promise<GraphilePeer> {
  const admin = new pg.Client({ connectionString: options.databaseUrl, application_name: "node-flow-bench" });
  await admin.connect();
  let utils: WorkerUtils | undefined;
  const children: ChildProcess[] = [];
  try {
    utils = await makeWorkerUtils({ connectionString: options.databaseUrl, schema: GRAPHILE_SCHEMA, maxPoolSize: 4 });
    await utils.migrate();
    const forked = forkReady("graphile-peer-worker.ts", {
      name: "graphile-worker peer",
      env: { ...process.env, NF_GRAPHILE_URL: options.databaseUrl, NF_GRAPHILE_CONCURRENCY: String(options.concurrency), NF_GRAPHILE_STEPS: String(options.steps) },
    });
    children.push(forked.child);
    await forked.ready;
  } catch (error) {
    await stopAll(children, 5_000);
    await utils?.release();
    await admin.end();
    throw error;
  }
  const workerUtils = utils;
  const [worker] = children as [ChildProcess];

  let onEnded: ((runs: { run: number; endMs: number; gaps: number[] }[]) => void) | undefined;
  worker.on("message", (raw) => {
    const message = raw as GraphilePeerMessage;
    if (message.type === "ended") onEnded?.(message.runs);
  });
  let nextRun = 0;

  const snapshot = async () => {
    await admin.query("SELECT /* nf-bench */ pg_stat_force_next_flush()");
    const { rows } = await admin.query<{ lsn: string; commits: string }>(
      "SELECT /* nf-bench */ pg_current_wal_lsn()::text AS lsn, xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()",
    );
    const procs = readProcs();
    return {
      walBytes: lsnBytes(rows[0]!.lsn),
      commits: Number(rows[0]!.commits),
      postgres: options.postgresPid === undefined ? null : treeCpuSeconds([options.postgresPid], procs),
      workers: worker.pid === undefined ? 0 : treeCpuSeconds([worker.pid], procs),
    };
  };

  async function runPoint(mode: "open" | "closed", target: number, seconds: number): Promise<PeerPointResult> {
    const sentAt = new Map<number, number>();
    const endedAt = new Map<number, number>();
    const gaps: number[] = [];
    const { duplicated: duplicatedBefore } = await ask<GraphilePeerMessage, "count">(worker, { type: "count" } satisfies GraphilePeerRequest, "count");
    let wake: (() => void) | undefined;
    onEnded = (runs) => {
      for (const r of runs) {
        if (!sentAt.has(r.run)) continue;
        endedAt.set(r.run, r.endMs);
        gaps.push(...r.gaps);
      }
      const resolve = wake;
      wake = undefined;
      resolve?.();
    };
    // Settle: the previous point's last commits reach pg_stat_database.
    await sleep(1200);
    const before = await snapshot();
    const startOne = async () => {
      const id = nextRun++;
      sentAt.set(id, wallMs());
      await workerUtils.addJob(GRAPHILE_TASK, { run: id, step: 1 } satisfies GraphileStepPayload);
    };
    const began = performance.now();
    const pending = new Set<Promise<void>>();
    const track = (promise: Promise<void>) => {
      pending.add(promise);
      void promise.finally(() => pending.delete(promise));
    };
    const ticker = setInterval(() => options.progress(`graphile-worker ${mode} ${target}: ${((performance.now() - began) / 1000).toFixed(0)} s, ${sentAt.size} started, ${endedAt.size} ended`), 2_000);
    if (mode === "open") {
      const total = Math.max(1, Math.round(target * seconds));
      for (let i = 0; i < total; i++) {
        const wait = began + (i * 1000) / target - performance.now();
        if (wait > 1) await sleep(wait);
        track(startOne());
      }
    } else {
      const deadline = began + seconds * 1000;
      while (performance.now() < deadline) {
        while (sentAt.size - endedAt.size < target) track(startOne());
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 20);
        });
      }
    }
    await Promise.all(pending);
    const arrivalsEnded = performance.now();
    const drainDeadline = performance.now() + options.drainSeconds * 1000;
    while (endedAt.size < sentAt.size && performance.now() < drainDeadline) await sleep(20);
    clearInterval(ticker);
    await sleep(1200);
    const after = await snapshot();
    onEnded = undefined;
    const { duplicated } = await ask<GraphilePeerMessage, "count">(worker, { type: "count" } satisfies GraphilePeerRequest, "count");

    const endToEnd = [...endedAt].map(([id, end]) => end - sentAt.get(id)!).sort((a, b) => a - b);
    gaps.sort((a, b) => a - b);
    const completed = endedAt.size;
    const firstSent = Math.min(...sentAt.values());
    const lastEnd = Math.max(...endedAt.values(), 0);
    const windowSeconds = (arrivalsEnded - began) / 1000;
    const perRun = (value: number) => (completed > 0 ? value / completed : Number.NaN);
    return {
      peer: "graphile-worker",
      mode,
      target,
      offeredPerSecond: sentAt.size / windowSeconds,
      completedPerSecond: completed > 0 ? completed / ((lastEnd - firstSent) / 1000) : 0,
      started: sentAt.size,
      completed,
      stepGapMs: { p50: nearestRank(gaps, 50), p95: nearestRank(gaps, 95), p99: nearestRank(gaps, 99) },
      endToEndMs: { p50: nearestRank(endToEnd, 50), p99: nearestRank(endToEnd, 99) },
      walBytesPerRun: perRun(Number(after.walBytes - before.walBytes)),
      commitsPerRun: perRun(after.commits - before.commits),
      cpuMsPerRun: {
        postgres: before.postgres === null || after.postgres === null ? null : perRun((after.postgres - before.postgres) * 1000),
        workers: perRun((after.workers - before.workers) * 1000),
      },
      lost: sentAt.size - completed,
      duplicated: duplicated - duplicatedBefore,
      seconds: windowSeconds,
    };
  }

  return {
    runPoint,
    stop: async () => {
      await stopAll(children, 10_000);
      await workerUtils.release();
      await admin.end();
    },
  };
}
