import { hostname } from "node:os";
import type { Db } from "../../db/pool";
import type { Role } from "../lib/config";
import { BackgroundRunner } from "./background-runner";
import type { BackgroundRunnerOptions, RunnerLogger, Sleep } from "./background-runner";
import type { ScriptEvaluator } from "../../engine";
import type { BlobStore } from "../lib/blob-store";
import { evaluateBatch } from "../evaluator/evaluator";
import type { EvaluatorDeps } from "../evaluator/evaluator";
import { LoopOutputCache } from "../evaluator/loop-output-cache";
import { relayOutboxBatch } from "./outbox-relay";
import type { JqTransform } from "../sandbox/jq-transform";
import { prunePublishedOutboxEvents } from "../store/outbox-events";
import { PartitionManager } from "../store/partition-manager";
import { analyzeNewPartitions } from "../store/planner-statistics";
import { pruneRateLimitBuckets } from "../store/rate-limits";
import { deleteExpiredSessions } from "../store/sessions";
import { expireSemaphoreHolders } from "../store/semaphores";
import { sweepExpiredLeases } from "./sweep-expired-leases";
import { sweepStuckWorkflows } from "./sweep-stuck-workflows";
import type { StuckSweepCursor } from "./sweep-stuck-workflows";
import { runSystemTaskBatch } from "../system-tasks/run-system-tasks";
import { fireDueTimers, releaseStaleTimerClaims } from "./timer-poller";
import { fireDueSchedules, pruneOldScheduleRuns } from "../schedules/fire-due-schedules";
import type { SecretLookup } from "../lib/secret-lookup";

/** What the loops need from the process that holds them. */
export interface RunnerDeps {
  db: Db;
  logger: RunnerLogger;
  /** The QuickJS sandbox: SWITCH scripts and DO_WHILE conditions (decider), INLINE tasks (system tasks). */
  scripts?: ScriptEvaluator;
  /** The jq sandbox for JSON_JQ_TRANSFORM tasks; required by the system-task loop. */
  jq?: JqTransform;
  /** Where offloaded payloads live; the decider and the system tasks read and write them. */
  blobs?: BlobStore;
  /** Namespace secrets' values: the relay signs status listeners' calls with them; system tasks resolve `${workflow.secrets.NAME}` with them. */
  secrets?: SecretLookup;
  /** HTTP tasks and webhook deliveries may reach loopback and private networks (config httpAllowPrivateNetworks). */
  httpAllowPrivateNetworks?: boolean;
  /** This process's identity for leases and claims ("host:pid"). */
  owner?: string;
  /** The wall clock; tests pass a fixed one. */
  clock?: () => Date;
  /** Per-loop interval overrides in milliseconds, keyed by loop name. */
  intervals?: Partial<Record<LoopName, number>>;
  /** Hold only these of the roles' loops (tests exercising one loop); all by default. */
  only?: readonly LoopName[];
  /** Passed to every runner; tests inject fake timing. */
  sleep?: Sleep;
  random?: () => number;
  /** Told of every pass (metrics.ts recordRunnerPass); tests leave it out. */
  onPass?: BackgroundRunnerOptions["onPass"];
  /** Told of every evaluation (metrics.ts observeEvaluation). */
  onEvaluation?: EvaluatorDeps["onEvaluation"];
  /** Told what each committed evaluation saw and did (evaluator/observe-evaluations.ts: workload metrics, traces). */
  onCommitted?: EvaluatorDeps["onCommitted"];
  /** Evaluations the decide loop runs at once (DECIDE_LANES by default); each takes a pool connection while it runs. */
  decideLanes?: number;
  /** Told how many leases a sweep found expired (metrics.ts countLeaseExpiries). */
  onLeaseExpiries?: (count: number) => void;
}

/** The loops a process can hold. */
export type LoopName =
  | "partitions"
  | "decide"
  | "timers"
  | "timer-claims"
  | "leases"
  | "stuck-workflows"
  | "system-tasks"
  | "outbox"
  | "outbox-prune"
  | "semaphores"
  | "rate-limits"
  | "sessions"
  | "planner-statistics"
  | "schedules"
  | "schedule-runs";

type LoopFactory = ((deps: RunnerDeps) => Omit<BackgroundRunnerOptions, "logger" | "sleep" | "random" | "onPass">) & { loop: LoopName };

/** Names a factory, so a loop can be left out before it is built (and before it checks its deps). */
const loop = (name: LoopName, build: (deps: RunnerDeps) => Omit<BackgroundRunnerOptions, "name" | "logger" | "sleep" | "random" | "onPass">): LoopFactory =>
  Object.assign((deps: RunnerDeps) => ({ name, ...build(deps) }), { loop: name });

const defaultOwner = (): string => `${hostname()}:${process.pid}`;
const clockOf = (deps: RunnerDeps): (() => Date) => deps.clock ?? (() => new Date());
const interval = (deps: RunnerDeps, name: LoopName, ms: number): number => deps.intervals?.[name] ?? ms;

const partitionsLoop = loop("partitions", (deps) => {
  const manager = new PartitionManager(deps.db, { logger: deps.logger });
  const clock = clockOf(deps);
  return {
    // Hourly Timers partitions are made 24 ahead, so ten minutes leaves a wide
    // margin; a missed pass costs nothing but the next one.
    intervalMs: interval(deps, "partitions", 10 * 60_000),
    // At start: a process that was down across a period boundary must not wait
    // an interval while new rows pour into DEFAULT.
    runAtStart: true,
    run: () => manager.runOnce(clock()),
  };
});

// A full batch runs again at once (the runner's third property), so a backlog
// drains at full speed; the interval only bounds how long a quiet queue waits.
const DECIDE_BATCH = 50;

/**
 * Evaluation transactions in flight at once in one decider process at most,
 * each on its own connection, claiming with SKIP LOCKED exactly as separate
 * decider processes would (decide-queues.ts): two lanes never claim one
 * workflow, and the workflow row lock serialises anything else.
 *
 * Why: an evaluation is a few round trips to Postgres and little CPU, so one
 * lane leaves the decider waiting on the network most of the time; the
 * sidecar's profile was over 90% idle while the decide queue grew. Measured
 * with the system bench (node web, 4 workers, 25 runs/s, machine at load 17-22 from
 * other work), back to back: one lane, decide lag p50 0.56-2.6 s, p99 2.8-4.1
 * s, up to 44-68 runs waiting for a decision; four lanes, p50 0.22 s, p99 1.6
 * s, at most 34 waiting. CPU per run unchanged.
 *
 * A pass starts with one lane and opens another only when a lane's claim came
 * back full — more is waiting than one transaction takes. Opening all four at
 * once cost a quiet queue three claims that found nothing (a transaction
 * each) on every pass.
 */
const DECIDE_LANES = 4;

const decideLoop = loop("decide", (deps) => {
  const { scripts } = deps;
  if (!scripts) throw new Error("the decider loop needs a ScriptEvaluator (deps.scripts)");
  const evaluator: EvaluatorDeps = {
    db: deps.db,
    scripts,
    blobs: deps.blobs,
    logger: deps.logger,
    loopOutputs: new LoopOutputCache(),
    ...(deps.onEvaluation ? { onEvaluation: deps.onEvaluation } : {}),
    ...(deps.onCommitted ? { onCommitted: deps.onCommitted } : {}),
  };
  const lanes = deps.decideLanes ?? DECIDE_LANES;
  const perLane = Math.ceil(DECIDE_BATCH / lanes);
  return {
    // The DecideQueues trigger's NOTIFY wakes this loop at once (worker.ts);
    // the interval is what bounds a missed notification (invariant 7).
    intervalMs: interval(deps, "decide", 250),
    batchSize: perLane * lanes,
    // One pass = every lane it opened; the pass ends when all lanes have, so
    // passes still never overlap. A lane that fails does not cut the others
    // short: their evaluations commit, and the first error is the pass's.
    run: () => runLanes(lanes, (onBacklog) => evaluateBatch(evaluator, { limit: perLane, onBacklog })),
  };
});

/**
 * Runs `lane` once, and once more (up to `max` at a time) each time a running
 * lane reports a backlog; resolves with their summed counts when all have
 * ended. A lane that fails does not cut the others short: theirs is counted,
 * and the first failure rejects once all have ended.
 */
export function runLanes(max: number, lane: (onBacklog: () => void) => Promise<number>): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let open = 0;
    let total = 0;
    let failure: { error: unknown } | undefined;
    const openLane = (): void => {
      open++;
      const onBacklog = () => {
        if (open < max) openLane();
      };
      lane(onBacklog)
        .then(
          (count) => {
            total += count;
          },
          (error: unknown) => {
            failure ??= { error };
          },
        )
        .finally(() => {
          if (--open > 0) return;
          if (failure) reject(failure.error instanceof Error ? failure.error : new Error(String(failure.error)));
          else resolve(total);
        });
    };
    openLane();
  });
}

const TIMER_BATCH = 200;

const timersLoop = loop("timers", (deps) => ({
  // Deadlines, WAITs and retry delays are due to the second; 250 ms keeps a
  // WAIT's lateness well under that, and an idle pass is one index probe.
  intervalMs: interval(deps, "timers", 250),
  batchSize: TIMER_BATCH,
  run: () => fireDueTimers(deps.db, { limit: TIMER_BATCH, owner: deps.owner ?? defaultOwner(), now: clockOf(deps)(), logger: deps.logger }),
}));

const timerClaimsLoop = loop("timer-claims", (deps) => ({
  intervalMs: interval(deps, "timer-claims", 60_000),
  run: () => releaseStaleTimerClaims(deps.db, { now: clockOf(deps)() }),
}));

const LEASE_BATCH = 500;

const leasesLoop = loop("leases", (deps) => ({
  intervalMs: interval(deps, "leases", 1000),
  batchSize: LEASE_BATCH,
  run: () =>
    sweepExpiredLeases(deps.db, {
      limit: LEASE_BATCH,
      logger: deps.logger,
      ...(deps.onLeaseExpiries ? { onExpired: (tasks: readonly unknown[]) => deps.onLeaseExpiries?.(tasks.length) } : {}),
    }),
}));

const stuckWorkflowsLoop = loop("stuck-workflows", (deps) => {
  // The walk's position survives between passes, so every RUNNING workflow is looked at in turn.
  const cursor: StuckSweepCursor = {};
  return {
    intervalMs: interval(deps, "stuck-workflows", 30_000),
    batchSize: 500,
    run: () => sweepStuckWorkflows(deps.db, { limit: 500, cursor, now: clockOf(deps)(), logger: deps.logger }),
  };
});

const SYSTEM_TASK_BATCH = 20;

const systemTasksLoop = loop("system-tasks", (deps) => {
  const { scripts, jq, blobs } = deps;
  if (!scripts || !jq || !blobs) throw new Error("the system-task loop needs deps.scripts, deps.jq and deps.blobs");
  const owner = `system:${deps.owner ?? defaultOwner()}`;
  return {
    intervalMs: interval(deps, "system-tasks", 250),
    batchSize: SYSTEM_TASK_BATCH,
    run: () =>
      runSystemTaskBatch(
        { db: deps.db, blobs, scripts, jq, http: { allowPrivateNetworks: deps.httpAllowPrivateNetworks ?? false }, logger: deps.logger, secrets: deps.secrets },
        { limit: SYSTEM_TASK_BATCH, owner },
      ),
  };
});

const OUTBOX_BATCH = 50;

const outboxLoop = loop("outbox", (deps) => {
  const { scripts, blobs } = deps;
  // Internal events run the event handlers, whose conditions are scripts and whose starts may offload input.
  if (!scripts || !blobs) throw new Error("the outbox loop needs deps.scripts and deps.blobs");
  const relay = { db: deps.db, http: { allowPrivateNetworks: deps.httpAllowPrivateNetworks ?? false }, logger: deps.logger, events: { db: deps.db, blobs, scripts }, secrets: deps.secrets };
  return {
    intervalMs: interval(deps, "outbox", 1000),
    batchSize: OUTBOX_BATCH,
    run: () => relayOutboxBatch(relay, { limit: OUTBOX_BATCH }),
  };
});

/** Published events are kept a week for inspection; dead letters are kept until replayed or deleted by hand. */
const OUTBOX_RETENTION_MS = 7 * 86_400_000;

const outboxPruneLoop = loop("outbox-prune", (deps) => ({
  intervalMs: interval(deps, "outbox-prune", 3_600_000),
  batchSize: 10_000,
  run: () => prunePublishedOutboxEvents(deps.db, { before: new Date(clockOf(deps)().getTime() - OUTBOX_RETENTION_MS), limit: 10_000 }),
}));

const semaphoresLoop = loop("semaphores", (deps) => ({
  intervalMs: interval(deps, "semaphores", 5000),
  batchSize: 1000,
  run: async () => (await expireSemaphoreHolders(deps.db, { limit: 1000 })).count,
}));

const rateLimitsLoop = loop("rate-limits", (deps) => ({
  intervalMs: interval(deps, "rate-limits", 60_000),
  batchSize: 5000,
  // Windows an hour old can no longer be counted against (no rate-limit window is longer).
  run: async () => (await pruneRateLimitBuckets(deps.db, { olderThan: new Date(clockOf(deps)().getTime() - 3_600_000), limit: 5000 })).count,
}));

const sessionsLoop = loop("sessions", (deps) => ({
  // Expired sessions are refused at sign-in time already; this only reclaims their rows.
  intervalMs: interval(deps, "sessions", 3_600_000),
  run: () => deleteExpiredSessions(deps.db),
}));

const plannerStatisticsLoop = loop("planner-statistics", (deps) => ({
  // A partition's first statistics, within seconds of its first hundreds of rows, a table's partitions together (store/planner-statistics.ts).
  intervalMs: interval(deps, "planner-statistics", 10_000),
  batchSize: 64,
  run: async () => (await analyzeNewPartitions(deps.db, { minChanges: 200, limit: 64 })).length,
}));

const SCHEDULE_BATCH = 50;

const schedulesLoop = loop("schedules", (deps) => ({
  // Cron fires are due to the second; half a second keeps a fire's lateness
  // well inside its grace (plan-fires.ts), and an idle pass is one index probe.
  intervalMs: interval(deps, "schedules", 500),
  batchSize: SCHEDULE_BATCH,
  run: () => fireDueSchedules({ db: deps.db, blobs: deps.blobs, now: clockOf(deps) }, { limit: SCHEDULE_BATCH }),
}));

const scheduleRunsLoop = loop("schedule-runs", (deps) => ({
  intervalMs: interval(deps, "schedule-runs", 3_600_000),
  batchSize: 10_000,
  run: () => pruneOldScheduleRuns(deps.db, { now: clockOf(deps)(), limit: 10_000 }),
}));

/**
 * Which loops each role holds; adding a loop is one entry here. A loop listed
 * under two roles runs once per process (deduplicated by name), since two copies
 * in one process would overlap passes.
 */
const LOOPS_BY_ROLE: Record<Role, readonly LoopFactory[]> = {
  // The web process serves requests and holds no loops.
  api: [],
  decider: [decideLoop],
  // Everything time-driven (architecture.md "Process topology").
  poller: [
    partitionsLoop,
    timersLoop,
    timerClaimsLoop,
    leasesLoop,
    stuckWorkflowsLoop,
    systemTasksLoop,
    outboxLoop,
    outboxPruneLoop,
    semaphoresLoop,
    rateLimitsLoop,
    sessionsLoop,
    plannerStatisticsLoop,
    schedulesLoop,
    scheduleRunsLoop,
  ],
};

/** Builds (does not start) the runners for a process holding `roles`. */
export function runnersForRoles(roles: readonly Role[], deps: RunnerDeps): BackgroundRunner[] {
  const seen = new Set<string>();
  const runners: BackgroundRunner[] = [];
  for (const role of roles) {
    for (const factory of LOOPS_BY_ROLE[role]) {
      if (seen.has(factory.loop) || (deps.only !== undefined && !deps.only.includes(factory.loop))) continue;
      seen.add(factory.loop);
      const options = factory(deps);
      runners.push(
        new BackgroundRunner({
          ...options,
          logger: deps.logger,
          ...(deps.onPass ? { onPass: deps.onPass } : {}),
          ...(deps.sleep ? { sleep: deps.sleep } : {}),
          ...(deps.random ? { random: deps.random } : {}),
        }),
      );
    }
  }
  return runners;
}

/** Builds and starts the runners for `roles`; pass the result to {@link stopRunners} at shutdown. */
export function startRunners(roles: readonly Role[], deps: RunnerDeps): BackgroundRunner[] {
  const runners = runnersForRoles(roles, deps);
  for (const runner of runners) runner.start();
  deps.logger.info({ roles, runners: runners.map((r) => r.name) }, "runners started");
  return runners;
}

/**
 * Stops every runner at once, each finishing the pass in hand, under one shared
 * deadline. Resolves true when all finished in time; false means the caller should
 * force the exit (after closing the pool).
 */
export async function stopRunners(runners: readonly BackgroundRunner[], timeoutMs = 30_000): Promise<boolean> {
  const results = await Promise.all(runners.map((runner) => runner.stop(timeoutMs)));
  return results.every(Boolean);
}
