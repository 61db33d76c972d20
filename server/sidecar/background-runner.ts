/**
 * The single place that turns a "run a batch" function into a loop. Sweepers in
 * `server/store` expose one batch method and no lifecycle; this adds four
 * properties, each closing an otherwise-silent failure:
 *
 * 1. Passes never overlap: two relays publishing the same batch turn a slow
 *    database into a correctness problem, not just a slow one.
 * 2. A throwing pass does not stop the loop, and it is *counted*: a loop that
 *    survives its own exceptions is by design, so `errors` is the only thing that
 *    reveals a pass throwing every time.
 * 3. A full batch runs again at once: after an outage there may be thousands of
 *    due rows, and sleeping an interval between fixed-size batches would take
 *    hours to drain seconds of work.
 * 4. Intervals are jittered: replicas started by one rollout otherwise sweep in
 *    lockstep forever, turning steady load into a periodic spike.
 * 5. A failing loop is quiet: one line when it starts failing, a summary per
 *    interval, one line when it recovers (failure-streak.ts) — never a stack
 *    trace per pass while the database is down.
 */
import { FailureStreak } from "../lib/failure-streak";


/** The subset of a pino logger the runner uses (a pino `Logger` satisfies it). */
export interface RunnerLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * One batch. Returns the number of items processed (a full batch when it reaches
 * `batchSize`) or directly whether the batch was full.
 */
export type RunBatch = () => Promise<number | boolean>;

/** What {@link BackgroundRunnerOptions.onPass} hears after each pass. */
export interface RunnerPassReport {
  durationMs: number;
  /** The batch's count when it returned one; a boolean result carries none. */
  items?: number;
  /** The thrown value when the pass failed (never undefined then); absent after a success. */
  error?: unknown;
}

/** Resolves after `ms`, or as soon as `signal` aborts; never rejects. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export interface BackgroundRunnerOptions {
  /** Names the loop in logs and metrics. */
  name: string;
  run: RunBatch;
  /** Mean pause between passes that were not full. */
  intervalMs: number;
  /** Relative jitter applied to each pause: 0.2 spreads it over ±20%. Default 0.2. */
  jitter?: number;
  /** A numeric result at or above this is a full batch. Without it only `true` is. */
  batchSize?: number;
  /** Run the first pass immediately on `start()` rather than after one interval. Default true. */
  runAtStart?: boolean;
  logger?: RunnerLogger;
  /** Injectable for tests; defaults to an abortable `setTimeout`. */
  sleep?: Sleep;
  /** Injectable for tests; defaults to `Math.random`. */
  random?: () => number;
  /**
   * Called after every pass, successful or not, with the loop's name. For
   * metrics: the runner stays free of any metrics library, and the caller
   * passes e.g. `recordRunnerPass` from server/lib/metrics.ts. A throwing hook is
   * logged and never stops the loop.
   */
  onPass?: (name: string, pass: RunnerPassReport) => void;
  /** Monotonic milliseconds for pass durations; injectable for tests, defaults to `performance.now`. */
  now?: () => number;
}

/** Counters for health checks and metrics. */
export interface RunnerStats {
  /** Passes finished, successful or not. */
  passes: number;
  /** Passes that threw. */
  errors: number;
  /** Throws in a row since the last successful pass. */
  consecutiveErrors: number;
  lastError: unknown;
  /** A pass is in hand right now. */
  running: boolean;
}

/** Abortable `setTimeout`; the default {@link Sleep}. */
export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });

// A batch function that resolves without real I/O (a stub, a cache hit) and keeps
// reporting "full" would otherwise spin on microtasks and starve timers, sockets
// and `stop()` itself. One macrotask turn between immediate re-runs costs ~nothing.
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

const noopLogger: RunnerLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** A loop around one batch function; see the module comment for its guarantees. */
export class BackgroundRunner {
  readonly name: string;
  private readonly options: Required<Omit<BackgroundRunnerOptions, "batchSize" | "onPass">> &
    Pick<BackgroundRunnerOptions, "batchSize" | "onPass">;
  private readonly counters: RunnerStats = { passes: 0, errors: 0, consecutiveErrors: 0, lastError: undefined, running: false };
  private loopDone: Promise<void> | undefined;
  private stopping = false;
  private wakeRequested = false;
  private sleepAbort: AbortController | undefined;
  private readonly streak: FailureStreak;

  constructor(options: BackgroundRunnerOptions) {
    if (!(options.intervalMs > 0)) throw new Error(`Runner "${options.name}": intervalMs must be positive`);
    const jitter = options.jitter ?? 0.2;
    if (!(jitter >= 0 && jitter < 1)) throw new Error(`Runner "${options.name}": jitter must be in [0, 1)`);
    this.name = options.name;
    this.options = {
      name: options.name,
      run: options.run,
      intervalMs: options.intervalMs,
      jitter,
      batchSize: options.batchSize,
      runAtStart: options.runAtStart ?? true,
      logger: options.logger ?? noopLogger,
      sleep: options.sleep ?? sleep,
      random: options.random ?? Math.random,
      onPass: options.onPass,
      now: options.now ?? (() => performance.now()),
    };
    this.streak = new FailureStreak({ what: `runner ${options.name}`, logger: this.options.logger, fields: { runner: options.name } });
  }

  /** A snapshot of the counters. */
  get stats(): Readonly<RunnerStats> {
    return { ...this.counters };
  }

  /** True once `start()` has been called (and still after `stop()`). */
  get started(): boolean {
    return this.loopDone !== undefined;
  }

  /** Starts the loop. Idempotent: a second call never starts a second, overlapping loop. */
  start(): void {
    if (this.loopDone || this.stopping) return;
    this.loopDone = this.loop();
  }

  /**
   * Runs a pass as soon as possible: cuts the current pause short, or, if a pass is
   * in hand, makes the next one follow it at once. Never starts a concurrent pass.
   * For NOTIFY-driven loops; the interval still runs, because a notification can be missed.
   */
  wake(): void {
    this.wakeRequested = true;
    this.sleepAbort?.abort();
  }

  /**
   * Stops the loop: no new pass starts, and the returned promise resolves once the
   * pass in hand has finished (true), or after `timeoutMs` if it has not (false),
   * so a hung query cannot hold shutdown forever.
   */
  async stop(timeoutMs = 30_000): Promise<boolean> {
    this.stopping = true;
    this.sleepAbort?.abort();
    const loopDone = this.loopDone;
    if (!loopDone) return true;
    const deadline = new AbortController();
    const finished = await Promise.race([
      loopDone.then(() => true),
      this.options.sleep(timeoutMs, deadline.signal).then(() => false),
    ]);
    deadline.abort();
    if (!finished) {
      this.options.logger.warn({ runner: this.name, timeoutMs }, "runner pass still in hand at shutdown timeout");
    }
    return finished;
  }

  private async loop(): Promise<void> {
    const { logger } = this.options;
    logger.debug({ runner: this.name }, "runner started");
    try {
      let runNow = this.options.runAtStart;
      while (!this.stopping) {
        if (runNow || this.wakeRequested) {
          await yieldToEventLoop();
        } else {
          await this.pause(this.nextDelay());
        }
        if (this.stopping) break;
        this.wakeRequested = false;
        runNow = await this.pass();
      }
    } catch (error) {
      // Only an injected sleep can get here (pass() catches everything); log
      // rather than leave a rejected promise nobody awaits.
      logger.error({ runner: this.name, err: error }, "runner loop crashed");
    }
    logger.debug({ runner: this.name, ...this.stats }, "runner stopped");
  }

  /** One pass; true when the batch was full and the next should follow at once. */
  private async pass(): Promise<boolean> {
    this.counters.running = true;
    const startedAt = this.options.now();
    const report: RunnerPassReport = { durationMs: 0 };
    try {
      const result = await this.options.run();
      this.counters.consecutiveErrors = 0;
      this.streak.succeeded();
      if (typeof result === "number") report.items = result;
      return this.isFull(result);
    } catch (error) {
      // A bare `throw undefined` must still read as a failure to the hook.
      report.error = error ?? new Error(`runner "${this.name}": pass threw ${String(error)}`);
      this.counters.errors++;
      this.counters.consecutiveErrors++;
      this.counters.lastError = error;
      this.streak.failed(error);
      // Not "full": retrying a failing pass at once would hammer whatever is failing.
      return false;
    } finally {
      this.counters.passes++;
      this.counters.running = false;
      report.durationMs = Math.max(0, this.options.now() - startedAt);
      this.report(report);
    }
  }

  private report(pass: RunnerPassReport): void {
    if (!this.options.onPass) return;
    try {
      this.options.onPass(this.name, pass);
    } catch (error) {
      this.options.logger.warn({ runner: this.name, err: error }, "runner onPass hook threw");
    }
  }

  private isFull(result: number | boolean): boolean {
    if (typeof result === "boolean") return result;
    return this.options.batchSize !== undefined && result >= this.options.batchSize;
  }

  private nextDelay(): number {
    const { intervalMs, jitter, random } = this.options;
    return Math.max(0, Math.round(intervalMs * (1 + jitter * (2 * random() - 1))));
  }

  private async pause(ms: number): Promise<void> {
    const abort = new AbortController();
    this.sleepAbort = abort;
    try {
      await this.options.sleep(ms, abort.signal);
    } finally {
      this.sleepAbort = undefined;
    }
  }
}
