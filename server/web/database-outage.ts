import { FailureStreak, isUnreachable } from "../lib/failure-streak";
import type { StreakLogger } from "../lib/failure-streak";

/**
 * What the worker and automation APIs do while the database is away: answer
 * 503 with Retry-After (a worker's SDK retries it, a report included, as it
 * would not a 500's unknown cause), and log the outage as one streak per
 * process — a line when requests start failing, a summary per 30 s, a line when
 * they succeed again — instead of a stack trace per request.
 */
export const OUTAGE_RETRY_AFTER_SECONDS = 1;
export const OUTAGE_MESSAGE = "The database cannot be reached right now; try again in a moment";

const streaks = new WeakMap<StreakLogger, FailureStreak>();

function streakOf(logger: StreakLogger): FailureStreak {
  let streak = streaks.get(logger);
  if (!streak) {
    streak = new FailureStreak({ what: "API requests", logger });
    streaks.set(logger, streak);
  }
  return streak;
}

/** True (and the outage noted) when `error` says only that the database cannot be reached. */
export function isDatabaseOutage(error: unknown, logger: StreakLogger | undefined): boolean {
  if (!isUnreachable(error)) return false;
  if (logger) streakOf(logger).failed(error);
  return true;
}

/** A request was answered: ends an outage streak, if one was going on. */
export function noteAnswered(logger: StreakLogger | undefined): void {
  if (logger) streaks.get(logger)?.succeeded();
}
