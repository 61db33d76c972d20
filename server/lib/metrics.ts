import { createHash, timingSafeEqual } from "node:crypto";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Db } from "../../db/pool";
import type { RunnerLogger, RunnerPassReport } from "../sidecar/background-runner";
import { readMetricsSnapshot } from "../store/metrics-queries";
import type { MetricsSnapshot } from "../store/metrics-queries";
import { LabelFolder } from "./workload-labels";

/**
 * Prometheus metrics for one process. Everything else calls the small functions
 * below (`recordRunnerPass`, `observeEvaluation`, `countLeaseExpiries`) and
 * never touches prom-client, so the metric names, labels and units live here
 * only.
 *
 * Two kinds of metric:
 * - in-process counters and histograms, updated as the engine works, kept in the
 *   process's one registry;
 * - database gauges (queue depths, outbox backlog), read at scrape time, because
 *   another process (or nobody) may be doing the work they describe. They are
 *   rendered from a registry built per scrape, so when the read fails they are
 *   *absent* rather than a stale or zero value that looks like an empty queue.
 */

/** How one evaluation (claim to commit) ended. */
export type EvaluationOutcome = "committed" | "skipped" | "conflict" | "failed";
const EVALUATION_OUTCOMES: readonly EvaluationOutcome[] = ["committed", "skipped", "conflict", "failed"];

/** Why a scrape went without its database gauges. */
export type ScrapeErrorReason = "timeout" | "error";
const SCRAPE_ERROR_REASONS: readonly ScrapeErrorReason[] = ["timeout", "error"];

/** What the background runner reports after each pass (its `onPass` hook). */
export type RunnerPass = RunnerPassReport;

// Runner passes range from a sub-millisecond empty poll to a partition roll
// that creates tables, so the buckets span 1 ms to a minute.
const PASS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
// One evaluation is a handful of indexed statements plus decide(): a few ms
// when healthy; the upper buckets are there to show lock waits.
const DECIDE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// A run lasts from milliseconds (a chain of system tasks) to days (a human
// approval); a task from a millisecond (INLINE) to hours (a long worker job).
const RUN_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21_600, 86_400, 604_800];
const TASK_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** A worker that polled within this window counts as active on its queue. */
export const ACTIVE_WORKER_WINDOW_MS = 60_000;
/** Workers remembered per queue at most: a worker id is client-chosen, so the map is bounded like a label. */
const MAX_WORKERS_PER_QUEUE = 10_000;

/** Default bound on the scrape-time database read. Prometheus' own scrape timeout defaults to 10 s. */
export const DEFAULT_SCRAPE_TIMEOUT_MS = 3_000;

export class ScrapeTimeoutError extends Error {
  override name = "ScrapeTimeoutError";
}

export interface MetricsOptions {
  /** Process CPU, memory, event-loop lag, GC, handles. Default true; tests turn it off for a small exposition. */
  defaultMetrics?: boolean;
  /** Allow-lists of workflow and task names for the workload labels (config.ts); undefined: the first names seen. */
  workflows?: readonly string[] | undefined;
  tasks?: readonly string[] | undefined;
  /** Epoch ms, for the active-workers window; Date.now by default. */
  now?: () => number;
}

/** A task the decider saw ended, for the task-duration histogram. */
export interface EndedTaskObservation {
  workflow: string;
  taskType: string;
  /** The queue's task name; a worker task's label (SIMPLE), where a system task's type is its label. */
  taskDefName: string;
  status: string;
  durationMs: number;
}

export interface ScrapeOptions {
  /** Where the database gauges are read from; without one they are left out. */
  db?: Db;
  /** Bound on the database read (Postgres' statement_timeout and our own wait). */
  timeoutMs?: number;
  logger?: Pick<RunnerLogger, "warn">;
}

export interface Scrape {
  contentType: string;
  body: string;
}

/** One registry and the engine's instruments. Use {@link processMetrics} outside tests. */
export class Metrics {
  readonly registry = new Registry();
  private readonly runnerPasses: Counter<"loop">;
  private readonly runnerErrors: Counter<"loop">;
  private readonly runnerPassDuration: Histogram<"loop">;
  private readonly runnerItems: Counter<"loop">;
  private readonly decideDuration: Histogram;
  private readonly evaluations: Counter<"outcome">;
  private readonly leaseExpiries: Counter;
  private readonly scrapeErrors: Counter<"reason">;
  private readonly runsStarted: Counter<"workflow">;
  private readonly runsFinished: Counter<"workflow" | "status">;
  private readonly runDuration: Histogram<"workflow" | "status">;
  private readonly taskDuration: Histogram<"workflow" | "task_type" | "status">;
  private readonly workerPolls: Counter<"queue">;
  private workflowLabels: LabelFolder;
  private taskLabels: LabelFolder;
  private readonly now: () => number;
  /** Last poll (epoch ms) by worker id, by queue label: the active-workers gauge, computed when scraped. */
  private readonly workersSeen = new Map<string, Map<string, number>>();
  // Keyed by the Db: scrapes arriving while a read is still out share it rather
  // than each taking another pooled connection, so a hung database costs one
  // connection, not one per scrape interval.
  private readonly snapshotsInFlight = new WeakMap<Db, Promise<MetricsSnapshot>>();

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    this.workflowLabels = new LabelFolder(options.workflows);
    this.taskLabels = new LabelFolder(options.tasks);
    this.now = options.now ?? Date.now;
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.runnerPasses = new Counter({
      name: "node_flow_runner_passes_total",
      help: "Background runner passes finished, successful or not.",
      labelNames: ["loop"],
      registers,
    });
    this.runnerErrors = new Counter({
      name: "node_flow_runner_errors_total",
      help: "Background runner passes that threw. The loop survives them, so this is what shows a pass failing every time.",
      labelNames: ["loop"],
      registers,
    });
    this.runnerPassDuration = new Histogram({
      name: "node_flow_runner_pass_duration_seconds",
      help: "Duration of one background runner pass.",
      labelNames: ["loop"],
      buckets: PASS_BUCKETS,
      registers,
    });
    this.runnerItems = new Counter({
      name: "node_flow_runner_items_total",
      help: "Items processed by background runner passes (evaluations, timers, events...).",
      labelNames: ["loop"],
      registers,
    });
    this.decideDuration = new Histogram({
      name: "node_flow_decide_duration_seconds",
      help: "Duration of one workflow evaluation, from claiming its decide-queue row to commit.",
      buckets: DECIDE_BUCKETS,
      registers,
    });
    this.evaluations = new Counter({
      name: "node_flow_evaluations_total",
      help: "Workflow evaluations by outcome: committed, skipped (terminal or gone), conflict (compare-and-set miss), failed.",
      labelNames: ["outcome"],
      registers,
    });
    this.leaseExpiries = new Counter({
      name: "node_flow_lease_expiries_total",
      help: "Task leases that expired and were put back on their queue by the sweeper.",
      registers,
    });
    this.scrapeErrors = new Counter({
      name: "node_flow_scrape_errors_total",
      help: "Scrapes that answered without the database gauges, by reason (timeout, error).",
      labelNames: ["reason"],
      registers,
    });
    this.runsStarted = new Counter({
      name: "node_flow_runs_started_total",
      help: "Runs started by this process, by workflow (names outside NODE_FLOW_METRICS_WORKFLOWS are \"other\").",
      labelNames: ["workflow"],
      registers,
    });
    this.runsFinished = new Counter({
      name: "node_flow_runs_finished_total",
      help: "Runs this process ended, by workflow and status (COMPLETED, FAILED, TIMED_OUT, TERMINATED).",
      labelNames: ["workflow", "status"],
      registers,
    });
    this.runDuration = new Histogram({
      name: "node_flow_run_duration_seconds",
      help: "Duration of a run, start to end, observed when it ends, by workflow and status.",
      labelNames: ["workflow", "status"],
      buckets: RUN_BUCKETS,
      registers,
    });
    this.taskDuration = new Histogram({
      name: "node_flow_task_duration_seconds",
      help: "Duration of a task attempt, start (or schedule) to end, observed when the decider reacts to its end; task_type is a worker task's name or a system task's type.",
      labelNames: ["workflow", "task_type", "status"],
      buckets: TASK_BUCKETS,
      registers,
    });
    this.workerPolls = new Counter({
      name: "node_flow_worker_polls_total",
      help: "Worker polls this process answered, by queue (names outside NODE_FLOW_METRICS_TASKS are \"other\").",
      labelNames: ["queue"],
      registers,
    });
    const workersSeen = this.workersSeen;
    const now = this.now;
    new Gauge({
      name: "node_flow_active_workers",
      help: `Distinct worker ids that polled this process within the last ${ACTIVE_WORKER_WINDOW_MS / 1000} s, by queue.`,
      labelNames: ["queue"],
      registers,
      collect() {
        this.reset();
        const since = now() - ACTIVE_WORKER_WINDOW_MS;
        for (const [queue, workers] of workersSeen) {
          for (const [worker, at] of workers) if (at < since) workers.delete(worker);
          if (workers.size === 0) workersSeen.delete(queue);
          else this.set({ queue }, workers.size);
        }
      },
    });
    // Every known label value starts at 0: `increase()` cannot see the first
    // increment of a series that did not exist before it.
    for (const outcome of EVALUATION_OUTCOMES) this.evaluations.inc({ outcome }, 0);
    for (const reason of SCRAPE_ERROR_REASONS) this.scrapeErrors.inc({ reason }, 0);
  }

  recordRunnerPass(loop: string, pass: RunnerPass): void {
    const labels = { loop };
    this.runnerPasses.inc(labels);
    // Created at 0 on the first pass, for the reason given in the constructor.
    this.runnerErrors.inc(labels, pass.error === undefined ? 0 : 1);
    this.runnerItems.inc(labels, nonNegative(pass.items));
    this.runnerPassDuration.observe(labels, nonNegative(pass.durationMs) / 1000);
  }

  observeEvaluation(durationMs: number, outcome: EvaluationOutcome): void {
    this.evaluations.inc({ outcome });
    this.decideDuration.observe(nonNegative(durationMs) / 1000);
  }

  countLeaseExpiries(count: number): void {
    this.leaseExpiries.inc(nonNegative(count));
  }

  /** Replaces the label allow-lists (at boot, from the config); names already admitted stay only if listed. */
  configureLabels(options: Pick<MetricsOptions, "workflows" | "tasks">): void {
    this.workflowLabels = new LabelFolder(options.workflows);
    this.taskLabels = new LabelFolder(options.tasks);
  }

  countRunStarted(workflow: string): void {
    this.runsStarted.inc({ workflow: this.workflowLabels.fold(workflow) });
  }

  observeRunFinished(workflow: string, status: string, durationMs: number): void {
    const labels = { workflow: this.workflowLabels.fold(workflow), status };
    this.runsFinished.inc(labels);
    this.runDuration.observe(labels, nonNegative(durationMs) / 1000);
  }

  observeTaskEnded(task: EndedTaskObservation): void {
    const taskType = task.taskType === "SIMPLE" ? this.taskLabels.fold(task.taskDefName) : task.taskType;
    this.taskDuration.observe({ workflow: this.workflowLabels.fold(task.workflow), task_type: taskType, status: task.status }, nonNegative(task.durationMs) / 1000);
  }

  /** One poll answered for `queue` by `workerId`: a counter and a map entry, nothing that waits. */
  countWorkerPoll(queue: string, workerId: string): void {
    const label = this.taskLabels.fold(queue);
    this.workerPolls.inc({ queue: label });
    let workers = this.workersSeen.get(label);
    if (!workers) this.workersSeen.set(label, (workers = new Map<string, number>()));
    // Re-inserted so the map stays in last-seen order and the bound drops the longest silent first.
    workers.delete(workerId);
    workers.set(workerId, this.now());
    if (workers.size > MAX_WORKERS_PER_QUEUE) {
      const oldest = workers.keys().next();
      if (!oldest.done) workers.delete(oldest.value);
    }
  }

  /**
   * The text exposition: this registry, then the database gauges when `db` is
   * given and answers within the timeout. Never rejects for the database; a
   * failed read is counted in `node_flow_scrape_errors_total` and logged.
   */
  async scrape(options: ScrapeOptions = {}): Promise<Scrape> {
    let gauges = "";
    if (options.db) {
      try {
        const snapshot = await this.snapshot(options.db, options.timeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS);
        gauges = await renderSnapshot(snapshot, this.now(), (queue) => this.taskLabels.fold(queue));
      } catch (error) {
        const reason: ScrapeErrorReason = error instanceof ScrapeTimeoutError ? "timeout" : "error";
        this.scrapeErrors.inc({ reason });
        options.logger?.warn({ err: error, reason }, "metrics: database gauges left out of this scrape");
      }
    }
    // After the read, so a failure of this very scrape is already counted in it.
    const own = await this.registry.metrics();
    return { contentType: this.registry.contentType, body: gauges ? `${own}\n${gauges}` : own };
  }

  private snapshot(db: Db, timeoutMs: number): Promise<MetricsSnapshot> {
    let read = this.snapshotsInFlight.get(db);
    if (!read) {
      read = readMetricsSnapshot(db, { statementTimeoutMs: timeoutMs });
      this.snapshotsInFlight.set(db, read);
      // Nobody may be waiting any more when it settles (they timed out): the
      // catch keeps that late rejection from being an unhandled one.
      read.finally(() => this.snapshotsInFlight.delete(db)).catch(() => undefined);
    }
    return withTimeout(read, timeoutMs);
  }
}

function nonNegative(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}

// Our own wait bound on top of statement_timeout: a database that is down or
// unreachable can hang in connect, where no statement timeout applies yet.
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new ScrapeTimeoutError(`the database read took longer than ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

const QUEUE_STATES = ["ready", "deferred", "leased"] as const;

/** `foldQueue`: the queue's label (workload-labels.ts); queues folded into one label are added up, their oldest task kept. */
async function renderSnapshot(snapshot: MetricsSnapshot, nowMs: number, foldQueue: (queue: string) => string): Promise<string> {
  const registry = new Registry();
  const registers = [registry];
  const depth = new Gauge({
    name: "node_flow_task_queue_depth",
    help: "Rows in a task queue by state: ready (pollable now), deferred (visible later), leased (held by a worker).",
    labelNames: ["namespace", "queue", "state"],
    registers,
  });
  const oldest = new Gauge({
    name: "node_flow_task_queue_oldest_ready_age_seconds",
    help: "Age of the oldest pollable task in a queue (since it was enqueued); 0 when none is ready.",
    labelNames: ["namespace", "queue"],
    registers,
  });
  const ages = new Map<string, { labels: { namespace: string; queue: string }; seconds: number }>();
  for (const queue of snapshot.queues) {
    const labels = { namespace: queue.namespace, queue: foldQueue(queue.queueName) };
    for (const state of QUEUE_STATES) depth.inc({ ...labels, state }, queue[state]);
    const seconds = queue.oldestReadyAt === null ? 0 : Math.max(0, nowMs - new Date(queue.oldestReadyAt).getTime()) / 1000;
    const key = `${labels.namespace}\u0000${labels.queue}`;
    ages.set(key, { labels, seconds: Math.max(seconds, ages.get(key)?.seconds ?? 0) });
  }
  for (const { labels, seconds } of ages.values()) oldest.set(labels, seconds);
  new Gauge({ name: "node_flow_decide_queue_depth", help: "Workflows waiting for an evaluation.", registers }).set(
    snapshot.decideQueueDepth,
  );
  new Gauge({ name: "node_flow_outbox_backlog", help: "Outbox events not yet published nor dead-lettered.", registers }).set(
    snapshot.outbox.backlog,
  );
  new Gauge({ name: "node_flow_outbox_dead_letters", help: "Outbox events given up on, kept for replay.", registers }).set(
    snapshot.outbox.deadLetters,
  );
  return registry.metrics();
}

// Cached on globalThis, not in a module variable: `next dev` re-evaluates
// modules on edits, and prom-client refuses to register a metric name twice in
// one registry; one registry per process is also what a scrape should see.
const holder = globalThis as typeof globalThis & { __nodeFlowMetrics?: Metrics };

/** The process's registry and instruments, created on first use. */
export function processMetrics(): Metrics {
  holder.__nodeFlowMetrics ??= new Metrics();
  return holder.__nodeFlowMetrics;
}

/** Records one background-runner pass; matches the runner's `onPass` hook. */
export function recordRunnerPass(loop: string, pass: RunnerPass): void {
  processMetrics().recordRunnerPass(loop, pass);
}

/** Records one evaluation, claim to commit. */
export function observeEvaluation(durationMs: number, outcome: EvaluationOutcome): void {
  processMetrics().observeEvaluation(durationMs, outcome);
}

/** Counts one run started by this process. */
export function countRunStarted(workflow: string): void {
  processMetrics().countRunStarted(workflow);
}

/** Counts one run this process ended, with its duration. */
export function observeRunFinished(workflow: string, status: string, durationMs: number): void {
  processMetrics().observeRunFinished(workflow, status, durationMs);
}

/** Counts one poll a worker made of a queue. */
export function countWorkerPoll(queue: string, workerId: string): void {
  processMetrics().countWorkerPoll(queue, workerId);
}

/** Counts leases the sweeper found expired and requeued. */
export function countLeaseExpiries(count: number): void {
  processMetrics().countLeaseExpiries(count);
}

/**
 * Whether a scrape may see the metrics. No token configured: public by
 * decision (queue names and counts, nothing secret). Otherwise `Authorization:
 * Bearer <token>`, compared in constant time; hashing both sides first makes
 * the lengths equal, which `timingSafeEqual` requires, without the early exit a
 * length check would leak.
 */
export function isScrapeAuthorized(authorization: string | null | undefined, token: string | undefined): boolean {
  if (token === undefined || token === "") return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  const presented = match?.[1] ?? "";
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(presented), digest(token));
}
