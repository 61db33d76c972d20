import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import type { Db } from "../../db/pool";
import { BackgroundRunner } from "./background-runner";
import type { RunnerLogger, RunnerPassReport, Sleep } from "./background-runner";
import type { BlobStore } from "../lib/blob-store";
import { runnersForRoles } from "./runners";
import type { JqTransform } from "../sandbox/jq-transform";

/**
 * Fake timing: every sleep is recorded and parked until the test releases it (or
 * the runner aborts it). Nothing here waits on a real clock.
 */
function fakeTiming() {
  const parked: { ms: number; release: () => void }[] = [];
  const requested: number[] = [];
  const sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve) => {
      requested.push(ms);
      if (signal.aborted) return resolve();
      const entry = {
        ms,
        release: () => {
          const i = parked.indexOf(entry);
          if (i >= 0) parked.splice(i, 1);
          resolve();
        },
      };
      parked.push(entry);
      signal.addEventListener("abort", entry.release, { once: true });
    });
  return {
    sleep,
    requested,
    parked,
    /** Ends the oldest parked sleep, as if its time had passed. */
    elapse() {
      const next = parked[0];
      if (!next) throw new Error("no sleep is parked");
      next.release();
    },
  };
}

/** Lets the loop run until `condition` holds (macrotask turns, no real clock). */
async function until(condition: () => boolean, what = "condition"): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (condition()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Lets the loop make whatever progress it can. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function fakeLogger() {
  return {
    debug: vi.fn<RunnerLogger["debug"]>(),
    info: vi.fn<RunnerLogger["info"]>(),
    warn: vi.fn<RunnerLogger["warn"]>(),
    error: vi.fn<RunnerLogger["error"]>(),
  } satisfies RunnerLogger;
}

describe("BackgroundRunner", () => {
  it("never overlaps passes, however often it is started or woken", async () => {
    const timing = fakeTiming();
    let inFlight = 0;
    let maxInFlight = 0;
    let calls = 0;
    const gates: ReturnType<typeof deferred<boolean>>[] = [];
    const runner = new BackgroundRunner({
      name: "t",
      intervalMs: 1000,
      sleep: timing.sleep,
      run: async () => {
        calls++;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const gate = deferred<boolean>();
        gates.push(gate);
        try {
          return await gate.promise;
        } finally {
          inFlight--;
        }
      },
    });
    runner.start();
    runner.start();
    await until(() => calls === 1, "first pass");
    // A pass is in hand: neither start() nor wake() may begin another.
    runner.start();
    for (let i = 0; i < 5; i++) runner.wake();
    await settle();
    expect(calls).toBe(1);
    expect(runner.stats.running).toBe(true);

    // A full batch re-runs at once, still one at a time.
    gates[0]?.resolve(true);
    await until(() => calls === 2, "second pass");
    runner.wake();
    await settle();
    expect(calls).toBe(2);

    // The wake() during pass 2 makes pass 3 follow it without a pause.
    gates[1]?.resolve(false);
    await until(() => calls === 3, "third pass");
    expect(timing.requested).toEqual([]);
    gates[2]?.resolve(false);
    await until(() => timing.parked.length === 1, "pause");
    expect(maxInFlight).toBe(1);
    await runner.stop();
  });

  it("counts a throwing pass and keeps looping after a pause", async () => {
    const timing = fakeTiming();
    const logger = fakeLogger();
    const failures = [new Error("boom 1"), new Error("boom 2")];
    let calls = 0;
    const runner = new BackgroundRunner({
      name: "flaky",
      intervalMs: 1000,
      jitter: 0,
      sleep: timing.sleep,
      logger,
      run: () => {
        calls++;
        const failure = failures.shift();
        return failure ? Promise.reject(failure) : Promise.resolve(0);
      },
    });
    runner.start();
    await until(() => timing.parked.length === 1, "pause after first failure");
    expect(runner.stats).toMatchObject({ passes: 1, errors: 1, consecutiveErrors: 1 });
    expect((runner.stats.lastError as Error).message).toBe("boom 1");
    // A failed pass is not "full": the retry waits an interval rather than hammering.
    expect(timing.requested).toEqual([1000]);

    timing.elapse();
    await until(() => runner.stats.passes === 2 && timing.parked.length === 1, "second pass");
    expect(runner.stats).toMatchObject({ passes: 2, errors: 2, consecutiveErrors: 2 });
    expect((runner.stats.lastError as Error).message).toBe("boom 2");

    timing.elapse();
    await until(() => runner.stats.passes === 3 && timing.parked.length === 1, "third pass");
    expect(calls).toBe(3);
    // The total survives recovery; only the streak resets.
    expect(runner.stats).toMatchObject({ passes: 3, errors: 2, consecutiveErrors: 0 });
    // One line when it started failing (a bug keeps its stack, once), none for the second, one when it recovered.
    expect(logger.error).toHaveBeenCalledTimes(1);
    const fields = logger.error.mock.calls[0]?.[0];
    expect(fields).toMatchObject({ runner: "flaky" });
    expect((fields as { err?: unknown } | undefined)?.err).toBeInstanceOf(Error);
    expect(logger.info).toHaveBeenCalledWith(expect.objectContaining({ runner: "flaky", failures: 2 }), expect.stringMatching(/^runner flaky recovered after 2 failures/));
    await runner.stop();
  });

  it("runs a full batch again at once and pauses after a partial one", async () => {
    const timing = fakeTiming();
    const results: (number | boolean)[] = [100, 100, 30, true, false];
    let calls = 0;
    const runner = new BackgroundRunner({
      name: "drain",
      intervalMs: 1000,
      jitter: 0,
      batchSize: 100,
      sleep: timing.sleep,
      run: () => {
        calls++;
        return Promise.resolve(results.shift() ?? 0);
      },
    });
    runner.start();
    await until(() => timing.parked.length === 1, "pause after the partial batch");
    // 100, 100 (full) then 30 (partial): three passes, no pause between them.
    expect(calls).toBe(3);
    expect(timing.requested).toEqual([1000]);

    timing.elapse();
    await until(() => calls === 5 && timing.parked.length === 1, "true then false");
    expect(timing.requested).toEqual([1000, 1000]);
    await runner.stop();
  });

  it("treats a number as never full without a batchSize", async () => {
    const timing = fakeTiming();
    let calls = 0;
    const runner = new BackgroundRunner({
      name: "count",
      intervalMs: 1000,
      sleep: timing.sleep,
      run: () => {
        calls++;
        return Promise.resolve(1_000_000);
      },
    });
    runner.start();
    await until(() => timing.parked.length === 1, "pause");
    expect(calls).toBe(1);
    await runner.stop();
  });

  it("jitters each pause within ±jitter of the interval", async () => {
    const timing = fakeTiming();
    const randoms = [0, 0.5, 0.9999, 0.25];
    const runner = new BackgroundRunner({
      name: "jitter",
      intervalMs: 1000,
      jitter: 0.2,
      sleep: timing.sleep,
      random: () => randoms.shift() ?? 0.5,
      run: () => Promise.resolve(0),
    });
    runner.start();
    for (let i = 0; i < 4; i++) {
      await until(() => timing.parked.length === 1, `pause ${i}`);
      timing.elapse();
    }
    await until(() => timing.requested.length === 5, "fifth pause");
    expect(timing.requested.slice(0, 4)).toEqual([800, 1000, 1200, 900]);
    await runner.stop();
  });

  it("spreads default Math.random pauses across the band instead of a fixed interval", async () => {
    const timing = fakeTiming();
    const runner = new BackgroundRunner({ name: "spread", intervalMs: 10_000, sleep: timing.sleep, run: () => Promise.resolve(0) });
    runner.start();
    for (let i = 0; i < 50; i++) {
      await until(() => timing.parked.length === 1, `pause ${i}`);
      timing.elapse();
    }
    await runner.stop();
    const pauses = timing.requested.filter((ms) => ms !== 30_000);
    expect(pauses.every((ms) => ms >= 8_000 && ms <= 12_000)).toBe(true);
    expect(new Set(pauses).size).toBeGreaterThan(10);
  });

  it("waits an interval before the first pass when runAtStart is false", async () => {
    const timing = fakeTiming();
    let calls = 0;
    const runner = new BackgroundRunner({
      name: "late",
      intervalMs: 1000,
      jitter: 0,
      runAtStart: false,
      sleep: timing.sleep,
      run: () => Promise.resolve(++calls),
    });
    runner.start();
    await until(() => timing.parked.length === 1, "first pause");
    expect(calls).toBe(0);
    timing.elapse();
    await until(() => calls === 1, "first pass");
    await runner.stop();
  });

  describe("stop()", () => {
    it("resolves only after the pass in hand finishes, and starts no other", async () => {
      const timing = fakeTiming();
      const gate = deferred<boolean>();
      let calls = 0;
      const runner = new BackgroundRunner({
        name: "graceful",
        intervalMs: 1000,
        sleep: timing.sleep,
        run: () => {
          calls++;
          return gate.promise;
        },
      });
      runner.start();
      await until(() => calls === 1, "pass in hand");
      let stopped: boolean | undefined;
      const stopping = runner.stop(5000).then((result) => (stopped = result));
      await settle();
      expect(stopped).toBeUndefined();
      // The batch was full, which would normally run again at once: stopping wins.
      gate.resolve(true);
      await stopping;
      expect(stopped).toBe(true);
      expect(calls).toBe(1);
      expect(timing.parked).toEqual([]); // the shutdown deadline was cancelled, not left pending
    });

    it("interrupts a pause at once", async () => {
      const timing = fakeTiming();
      let calls = 0;
      const runner = new BackgroundRunner({ name: "idle", intervalMs: 60_000, sleep: timing.sleep, run: () => Promise.resolve(++calls) });
      runner.start();
      await until(() => timing.parked.length === 1, "pause");
      await expect(runner.stop()).resolves.toBe(true);
      await settle();
      expect(calls).toBe(1);
    });

    it("gives up after the timeout when the pass hangs", async () => {
      const timing = fakeTiming();
      const logger = fakeLogger();
      let calls = 0;
      const runner = new BackgroundRunner({
        name: "hung",
        intervalMs: 1000,
        sleep: timing.sleep,
        logger,
        run: () => {
          calls++;
          return new Promise<number>(() => {});
        },
      });
      runner.start();
      await until(() => calls === 1, "pass in hand");
      let stopped: boolean | undefined;
      const stopping = runner.stop(5000).then((result) => (stopped = result));
      await until(() => timing.parked.length === 1, "shutdown deadline");
      expect(timing.parked[0]?.ms).toBe(5000);
      await settle();
      expect(stopped).toBeUndefined();
      timing.elapse();
      await stopping;
      expect(stopped).toBe(false);
      expect(logger.warn).toHaveBeenCalledWith(expect.objectContaining({ runner: "hung", timeoutMs: 5000 }), expect.any(String));
    });

    it("is a no-op for a runner never started", async () => {
      const runner = new BackgroundRunner({ name: "never", intervalMs: 1000, run: () => Promise.resolve(0) });
      await expect(runner.stop()).resolves.toBe(true);
      runner.start(); // a stopped runner stays stopped
      expect(runner.started).toBe(false);
    });
  });

  it("works against the real clock with the default sleep", async () => {
    let calls = 0;
    const runner = new BackgroundRunner({ name: "real", intervalMs: 5, run: () => Promise.resolve(++calls) });
    runner.start();
    await vi.waitFor(() => expect(calls).toBeGreaterThanOrEqual(3), { timeout: 2000 });
    await expect(runner.stop(1000)).resolves.toBe(true);
  });

  it("reports every pass to onPass: duration, items when counted, the error when it threw", async () => {
    const timing = fakeTiming();
    const logger = fakeLogger();
    const failure = new Error("boom");
    const results: (() => Promise<number | boolean>)[] = [
      () => Promise.resolve(7),
      () => Promise.reject(failure),
      () => Promise.resolve(true),
    ];
    // Each pass reads the clock twice (start, end): 10→25, 100→160, 200→201.
    const clock = [10, 25, 100, 160, 200, 201];
    const reports: [string, RunnerPassReport][] = [];
    let hookCalls = 0;
    const runner = new BackgroundRunner({
      name: "reported",
      intervalMs: 1000,
      jitter: 0,
      sleep: timing.sleep,
      logger,
      now: () => clock.shift() ?? Number.NaN,
      onPass: (name, pass) => {
        reports.push([name, pass]);
        // A broken hook (a metrics bug) must not cost the loop its next pass.
        if (++hookCalls === 2) throw new Error("hook bug");
      },
      run: () => (results.shift() ?? (() => Promise.resolve(0)))(),
    });
    runner.start();
    await until(() => reports.length === 1 && timing.parked.length === 1, "first pass");
    timing.elapse();
    await until(() => reports.length === 2 && timing.parked.length === 1, "second pass");
    timing.elapse();
    // `true` is a full batch: the next pass follows at once, so stop right after it.
    await until(() => reports.length >= 3, "third pass");
    await runner.stop();

    expect(reports.slice(0, 3)).toEqual([
      ["reported", { durationMs: 15, items: 7 }],
      ["reported", { durationMs: 60, error: failure }],
      ["reported", { durationMs: 1 }],
    ]);
    // toEqual overlooks undefined keys: a boolean result must carry no count, a success no error.
    expect(reports[2]?.[1]).not.toHaveProperty("items");
    expect(reports[2]?.[1]).not.toHaveProperty("error");
    expect(runner.stats).toMatchObject({ errors: 1 });
    expect(logger.warn).toHaveBeenCalledWith(expect.objectContaining({ runner: "reported" }), "runner onPass hook threw");
  });

  it("accepts a pino logger", () => {
    const logger: RunnerLogger = pino({ level: "silent" });
    expect(() => new BackgroundRunner({ name: "pino", intervalMs: 1, logger, run: () => Promise.resolve(0) })).not.toThrow();
  });
});

describe("runnersForRoles", () => {
  // Building runners touches no database; each loop's SQL is covered by its own integration test.
  const scripts = { evaluate: () => ({ ok: true as const, value: null }) };
  const jq = {} as JqTransform;
  const blobs = {} as BlobStore;
  const deps = { db: {} as Db, logger: fakeLogger(), scripts, jq, blobs };
  const names = (roles: Parameters<typeof runnersForRoles>[0]) => runnersForRoles(roles, deps).map((r) => r.name);
  const POLLER = ["partitions", "timers", "timer-claims", "leases", "stuck-workflows", "system-tasks", "outbox", "outbox-prune", "semaphores", "rate-limits", "sessions", "planner-statistics", "schedules", "schedule-runs"];

  it("gives the poller every time-driven loop, the decider the decide loop, and api none", () => {
    expect(names(["poller"])).toEqual(POLLER);
    expect(names(["decider"])).toEqual(["decide"]);
    expect(names(["api"])).toEqual([]);
    expect(names(["api", "decider", "poller"])).toEqual(["decide", ...POLLER]);
  });

  it("refuses a decider without a script sandbox, and a poller without the system tasks' sandboxes", () => {
    expect(() => runnersForRoles(["decider"], { db: {} as Db, logger: fakeLogger() })).toThrow(/ScriptEvaluator/);
    expect(() => runnersForRoles(["poller"], { db: {} as Db, logger: fakeLogger(), scripts })).toThrow(/deps\.jq/);
  });

  it("holds each loop once per process", () => {
    expect(names(["poller", "poller"])).toEqual(POLLER);
  });

  it("holds only the loops asked for, without building the others", () => {
    expect(runnersForRoles(["poller"], { db: {} as Db, logger: fakeLogger(), only: ["partitions", "leases"] }).map((r) => r.name)).toEqual(["partitions", "leases"]);
  });

  it("builds runners without starting them", () => {
    expect(runnersForRoles(["poller"], deps).every((r) => !r.started)).toBe(true);
  });
});
