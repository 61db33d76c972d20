import type { EffectiveTaskPolicy } from "../definition";
import { parseWaitDuration } from "../definition";

/**
 * Policy arithmetic with Conductor's meaning (DeciderService.retry), pure so
 * the testkit and the UI can show "next retry in …" with the same numbers.
 */

/** Upper bound on any computed delay: Conductor clamps an overflowing delay to Integer.MAX_VALUE seconds. */
export const MAX_DELAY_SECONDS = 2_147_483_647;

/**
 * Seconds to wait before retrying after attempt `failedAttempt` (0-based) failed:
 * FIXED `retryDelaySeconds`; LINEAR_BACKOFF `retryDelaySeconds × backoffScaleFactor × (failedAttempt + 1)`;
 * EXPONENTIAL_BACKOFF `retryDelaySeconds × 2^failedAttempt`; then capped by
 * `maxRetryDelaySeconds` when that is positive.
 */
export function retryDelaySeconds(policy: Pick<EffectiveTaskPolicy, "retryLogic" | "retryDelaySeconds" | "backoffScaleFactor" | "maxRetryDelaySeconds">, failedAttempt: number): number {
  const base = policy.retryDelaySeconds;
  let delay: number;
  switch (policy.retryLogic) {
    case "LINEAR_BACKOFF":
      delay = base * policy.backoffScaleFactor * (failedAttempt + 1);
      break;
    case "EXPONENTIAL_BACKOFF":
      delay = base * 2 ** failedAttempt;
      break;
    default:
      delay = base;
  }
  if (!Number.isFinite(delay) || delay > MAX_DELAY_SECONDS) delay = MAX_DELAY_SECONDS;
  if (policy.maxRetryDelaySeconds > 0) delay = Math.min(delay, policy.maxRetryDelaySeconds);
  return delay;
}

/** Seconds attempt `attempt` waits before it may be polled: startDelay for the first, the retry delay after that. */
export function attemptDelaySeconds(policy: EffectiveTaskPolicy, attempt: number): number {
  return attempt === 0 ? policy.startDelay : retryDelaySeconds(policy, attempt - 1);
}

const DATE_ONLY = /^(\d{4}-\d{2}-\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2}(?:\.\d{1,9})?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * A WAIT `until` as epoch milliseconds, or null when it is not one of the forms
 * decide can read without a time-zone database: ISO-8601 with `Z` or an
 * offset, `yyyy-MM-dd`, `yyyy-MM-dd HH:mm[:ss]` (UTC) and the same with `UTC`/`GMT`.
 * (A named zone such as `Europe/Paris` is null: the engine has no tz data.)
 */
export function parseWaitUntil(text: string): number | null {
  const trimmed = text.trim();
  let iso: string;
  const d = DATE_ONLY.exec(trimmed);
  if (d !== null) {
    iso = `${d[1]}T00:00:00Z`;
  } else {
    const m = DATE_TIME.exec(trimmed);
    if (m === null) return null;
    const zone = m[4]?.toUpperCase();
    let offset = "Z";
    if (zone !== undefined && zone !== "Z" && zone !== "UTC" && zone !== "GMT") {
      const digits = zone.replace(":", "");
      offset = digits.length === 3 ? `${digits}:00` : `${digits.slice(0, 3)}:${digits.slice(3)}`;
    }
    const seconds = m[3] ?? ":00";
    // Date.parse accepts at most millisecond precision portably.
    const secs = seconds.replace(/^(:\d{2}\.\d{3})\d+$/, "$1");
    iso = `${m[1]}T${m[2]}${secs}${offset}`;
  }
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : null;
}

/** A WAIT `duration` value as seconds: a duration text ("1h 30m") or a non-negative number of seconds; null otherwise. */
export function waitDurationSeconds(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : null;
  if (typeof value === "string") return parseWaitDuration(value);
  return null;
}
