import type { Db } from "../db/pool";
import type { Role } from "./config";
import { BackgroundRunner } from "./background-runner";
import type { BackgroundRunnerOptions, RunnerLogger, Sleep } from "./background-runner";
import type { ScriptEvaluator } from "../engine";
import type { BlobStore } from "./blob-store";
import { evaluateBatch } from "./evaluator";
import { PartitionManager } from "./store/partition-manager";

/** What the loops need from the process that holds them. */
export interface RunnerDeps {
  db: Db;
  logger: RunnerLogger;
  /** The QuickJS sandbox for SWITCH scripts and DO_WHILE conditions; required by the decider loop. */
  scripts?: ScriptEvaluator;
  /** Where offloaded payloads live; the decider resolves them before deciding. */
  blobs?: BlobStore;
  /** The wall clock; tests pass a fixed one. */
  clock?: () => Date;
  /** Per-loop interval overrides in milliseconds, keyed by loop name. */
  intervals?: Partial<Record<LoopName, number>>;
  /** Passed to every runner; tests inject fake timing. */
  sleep?: Sleep;
  random?: () => number;
}

/** The loops a process can hold. */
export type LoopName = "partitions" | "decide";

type LoopFactory = (deps: RunnerDeps) => Omit<BackgroundRunnerOptions, "logger" | "sleep" | "random">;

const partitionsLoop: LoopFactory = (deps) => {
  const manager = new PartitionManager(deps.db, { logger: deps.logger });
  const clock = deps.clock ?? (() => new Date());
  return {
    name: "partitions",
    // Hourly Timers partitions are made 24 ahead, so ten minutes leaves a wide
    // margin; a missed pass costs nothing but the next one.
    intervalMs: deps.intervals?.partitions ?? 10 * 60_000,
    // At start: a process that was down across a period boundary must not wait
    // an interval while new rows pour into DEFAULT.
    runAtStart: true,
    run: () => manager.runOnce(clock()),
  };
};

// A full batch runs again at once (the runner's third property), so a backlog
// drains at full speed; the interval only bounds how long a quiet queue waits.
const DECIDE_BATCH = 50;

const decideLoop: LoopFactory = (deps) => {
  const { scripts } = deps;
  if (!scripts) throw new Error("the decider loop needs a ScriptEvaluator (deps.scripts)");
  return {
    name: "decide",
    intervalMs: deps.intervals?.decide ?? 250,
    batchSize: DECIDE_BATCH,
    run: () => evaluateBatch({ db: deps.db, scripts, blobs: deps.blobs, logger: deps.logger }, { limit: DECIDE_BATCH }),
  };
};

/**
 * Which loops each role holds; adding a loop is one entry here. A loop listed
 * under two roles runs once per process (deduplicated by name), since two copies
 * in one process would overlap passes.
 */
const LOOPS_BY_ROLE: Record<Role, readonly LoopFactory[]> = {
  // The web process serves requests and holds no loops.
  api: [],
  // The evaluator (decide-queue) loop lands here.
  decider: [decideLoop],
  poller: [partitionsLoop],
};

/** Builds (does not start) the runners for a process holding `roles`. */
export function runnersForRoles(roles: readonly Role[], deps: RunnerDeps): BackgroundRunner[] {
  const seen = new Set<string>();
  const runners: BackgroundRunner[] = [];
  for (const role of roles) {
    for (const factory of LOOPS_BY_ROLE[role]) {
      const options = factory(deps);
      if (seen.has(options.name)) continue;
      seen.add(options.name);
      runners.push(
        new BackgroundRunner({
          ...options,
          logger: deps.logger,
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
