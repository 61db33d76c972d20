/**
 * How a loop that keeps failing talks about it: one line when it starts
 * failing, one summary per interval while it goes on (how many failures, the
 * last error), and one line when it recovers. While the database is down a
 * loop fails on every pass — several a second across the sidecar's loops —
 * and a stack trace per pass buried the one line that said what was wrong
 * (~9,500 lines in 45 s of a killed Postgres).
 *
 * An error that only says the database cannot be reached is logged as its
 * message; any other keeps its stack on the first line, once per streak,
 * since that one is a bug to read.
 */

/** The part of a pino logger this uses. */
export interface StreakLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface FailureStreakOptions {
  /** Names what fails, in every line ("runner decide", "notifier"). */
  what: string;
  logger: StreakLogger;
  /** Fields every line carries (e.g. `{ runner: "decide" }`). */
  fields?: Record<string, unknown>;
  /** A summary at most this often while the failures go on. Default 30 s. */
  summaryEveryMs?: number;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

/** Node's and Postgres's ways of saying "the database is not there right now". */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOENT", // the Unix socket is gone with its server
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, recovering)
  "53300", // too_many_connections
  "08000",
  "08001",
  "08003",
  "08006",
]);

/** True when `error` only says the database cannot be reached: its message is the whole story. */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && UNREACHABLE_CODES.has(code)) return true;
  if (error instanceof AggregateError) return error.errors.some(isUnreachable);
  return /Connection terminated|connection timeout|the database system is (starting up|shutting down|in recovery mode)|timeout exceeded when trying to connect/i.test(error.message);
}

/** An error as one line. */
export function oneLine(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return oneLine(error.errors[0]);
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.message || error.name}${typeof code === "string" && !error.message.includes(code) ? ` (${code})` : ""}`;
  }
  return String(error);
}

export class FailureStreak {
  private failures = 0;
  private startedAt = 0;
  private lastSummaryAt = 0;
  private readonly summaryEveryMs: number;
  private readonly now: () => number;

  constructor(private readonly options: FailureStreakOptions) {
    this.summaryEveryMs = options.summaryEveryMs ?? 30_000;
    this.now = options.now ?? (() => performance.now());
  }

  /** Failures in the current streak (0 when the last attempt succeeded). */
  get count(): number {
    return this.failures;
  }

  /** One more failure: logged when it starts a streak, summarised once per interval after. */
  failed(error: unknown): void {
    const { logger, what, fields } = this.options;
    const at = this.now();
    this.failures++;
    if (this.failures === 1) {
      this.startedAt = at;
      this.lastSummaryAt = at;
      const detail = isUnreachable(error) ? { error: oneLine(error) } : { err: error };
      logger.error({ ...fields, ...detail }, `${what} failing: ${oneLine(error)}`);
      return;
    }
    if (at - this.lastSummaryAt >= this.summaryEveryMs) {
      this.lastSummaryAt = at;
      logger.warn(
        { ...fields, failures: this.failures, forSeconds: Math.round((at - this.startedAt) / 1000), lastError: oneLine(error) },
        `${what} still failing: ${this.failures} failures in ${Math.round((at - this.startedAt) / 1000)} s, the last: ${oneLine(error)}`,
      );
    }
  }

  /** A success: ends a streak, if one was going on, with one line. */
  succeeded(): void {
    if (this.failures === 0) return;
    const { logger, what, fields } = this.options;
    const forSeconds = Math.round((this.now() - this.startedAt) / 1000);
    logger.info({ ...fields, failures: this.failures, forSeconds }, `${what} recovered after ${this.failures} failure${this.failures === 1 ? "" : "s"} in ${forSeconds} s`);
    this.failures = 0;
  }
}
