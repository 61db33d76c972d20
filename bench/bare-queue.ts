/**
 * The floor `npm run bench` measures node-flow against: a bare leased queue on the
 * same Postgres, with the same number of worker processes and jobs in flight
 * as the closed loop, and nothing else — no HTTP, no workflow state, no
 * decisions, no history (bench-bare-queue-sql.ts says what a job costs).
 *
 * Why: the closed loop's runs/s alone cannot say whether the engine is slow or
 * the machine is small. A 3-task run is at least three such jobs, so a third
 * of the bare queue's jobs/s is the most any engine that leases and completes
 * its tasks this way could reach here; the ratio of node-flow's tasks/s to the
 * bare queue's jobs/s is what the engine keeps of the machine.
 *
 * Only on the bench's own throwaway Postgres: it creates a table, and a server
 * given with --url is someone's database.
 */
import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { BARE_QUEUE_TABLE, CREATE_BARE_QUEUE, SEED_BARE_QUEUE } from "./bare-queue-sql";
import type { BareQueueWorkerMessage, BareQueueWorkerRequest } from "./bare-queue-sql";
import { ask, forkReady, stopAll } from "./child-processes";
import { readProcs, treeCpuSeconds } from "./process-cpu";

export interface BareQueueOptions {
  databaseUrl: string;
  workers: number;
  inFlight: number;
  seconds: number;
  /** Whether a completion NOTIFYs the parked workers (bench-bare-queue-sql.ts). */
  notify: boolean;
  /** The postmaster: Postgres's CPU is its tree's. */
  postgresPid: number | undefined;
  /** A progress line now and then. */
  progress: (line: string) => void;
}

export interface BareQueueResult {
  notify: boolean;
  workers: number;
  inFlight: number;
  seconds: number;
  jobs: number;
  jobsPerSecond: number;
  /** CPU per job: Postgres's, and the worker processes'. */
  cpuMsPerJob: { postgres: number | null; workers: number };
}

/** Counted from this long after the workers start, so connecting and the first plans are not in the figure. */
const WARM_UP_MS = 2_000;

export async function runBareQueue(options: BareQueueOptions): Promise<BareQueueResult> {
  const admin = new pg.Client({ connectionString: options.databaseUrl, application_name: "node-flow-bench" });
  await admin.connect();
  const children: ChildProcess[] = [];
  try {
    await admin.query(`DROP TABLE IF EXISTS "${BARE_QUEUE_TABLE}"`);
    await admin.query(CREATE_BARE_QUEUE);
    await admin.query(SEED_BARE_QUEUE, [options.inFlight]);

    const forked = Array.from({ length: options.workers }, (_, i) =>
      forkReady("bare-queue-worker.ts", {
        name: `bare-queue worker ${i}`,
        env: { ...process.env, NF_BARE_QUEUE_URL: options.databaseUrl, NF_BARE_QUEUE_NOTIFY: options.notify ? "1" : "0" },
      }),
    );
    children.push(...forked.map(({ child }) => child));
    await Promise.all(forked.map(({ ready }) => ready));
    // A worker that died answers no more: its last count stands (and the figure is short, not hung).
    const lastCounts = new Map<ChildProcess, number>();
    const total = () =>
      Promise.all(
        children.map(async (child) => {
          if (child.exitCode !== null || child.signalCode !== null) return lastCounts.get(child) ?? 0;
          const { completed } = await ask<BareQueueWorkerMessage, "count">(child, { type: "count" } satisfies BareQueueWorkerRequest, "count");
          lastCounts.set(child, completed);
          return completed;
        }),
      ).then((all) => all.reduce((sum, n) => sum + n, 0));
    const cpu = () => {
      const procs = readProcs();
      return {
        postgres: options.postgresPid === undefined ? null : treeCpuSeconds([options.postgresPid], procs),
        workers: treeCpuSeconds(
          children.flatMap((child) => (child.pid === undefined ? [] : [child.pid])),
          procs,
        ),
      };
    };

    await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS));
    const jobsBefore = await total();
    const cpuBefore = cpu();
    const began = performance.now();
    const ticker = setInterval(() => {
      void total().then((n) => options.progress(`bare queue: ${((performance.now() - began) / 1000).toFixed(0)} s, ${n - jobsBefore} jobs`));
    }, 2_000);
    await new Promise((resolve) => setTimeout(resolve, options.seconds * 1000));
    clearInterval(ticker);
    const jobs = (await total()) - jobsBefore;
    const elapsed = (performance.now() - began) / 1000;
    const cpuAfter = cpu();
    const perJob = (before: number, after: number) => (jobs > 0 ? ((after - before) * 1000) / jobs : 0);
    return {
      notify: options.notify,
      workers: options.workers,
      inFlight: options.inFlight,
      seconds: options.seconds,
      jobs,
      jobsPerSecond: jobs / elapsed,
      cpuMsPerJob: {
        postgres: cpuBefore.postgres === null || cpuAfter.postgres === null ? null : perJob(cpuBefore.postgres, cpuAfter.postgres),
        workers: perJob(cpuBefore.workers, cpuAfter.workers),
      },
    };
  } finally {
    await stopAll(children, 5_000);
    await admin.query(`DROP TABLE IF EXISTS "${BARE_QUEUE_TABLE}"`).catch(() => undefined);
    await admin.end();
  }
}
