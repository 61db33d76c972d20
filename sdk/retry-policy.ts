/**
 * When and how long the client waits before trying a request again.
 *
 * Retried: network errors (no answer at all), 5xx (except 501: the route will
 * not appear on a retry) and 429. Never a 4xx other than 429: the request
 * itself is wrong, and sending it again would get the same answer.
 *
 * A request that is not idempotent (it would act twice if the first attempt
 * landed and only its answer was lost) is retried only where the server
 * certainly did not act: 429, 503, and a connection that was refused.
 */

/** How the client retries. Every field is optional. */
export interface RetryOptions {
  /** Retries after the first attempt; 0 turns retrying off. Default 4. */
  retries?: number;
  /** The first backoff. Default 200 ms. */
  minDelayMs?: number;
  /** The largest backoff. Default 10,000 ms. */
  maxDelayMs?: number;
  /** Growth of the backoff per retry. Default 2. */
  factor?: number;
  /**
   * A Retry-After up to this long is waited out as the server asked (instead of
   * the backoff); a longer one ends the retries, and the error carries
   * `retryAfterMs` so the caller can decide. Default 60,000 ms.
   */
  maxRetryAfterMs?: number;
}

/** {@link RetryOptions} with every default filled in. */
export type ResolvedRetryOptions = Required<RetryOptions>;

/** The defaults: five attempts over about 3 s of backoff, enough to ride out a restart behind a proxy. */
export const DEFAULT_RETRY_OPTIONS: ResolvedRetryOptions = {
  retries: 4,
  minDelayMs: 200,
  maxDelayMs: 10_000,
  factor: 2,
  maxRetryAfterMs: 60_000,
};

/** Fills in defaults and checks the values; `false` is "never retry". */
export function resolveRetryOptions(options: RetryOptions | false | undefined, base: ResolvedRetryOptions = DEFAULT_RETRY_OPTIONS): ResolvedRetryOptions {
  if (options === false) return { ...base, retries: 0 };
  const resolved = { ...base, ...definedOnly(options ?? {}) };
  const check = (name: keyof ResolvedRetryOptions, ok: boolean) => {
    if (!ok) throw new RangeError(`retry.${name} is out of range: ${resolved[name]}`);
  };
  check("retries", Number.isInteger(resolved.retries) && resolved.retries >= 0);
  check("minDelayMs", resolved.minDelayMs >= 0);
  check("maxDelayMs", resolved.maxDelayMs >= resolved.minDelayMs);
  check("factor", resolved.factor >= 1);
  check("maxRetryAfterMs", resolved.maxRetryAfterMs >= 0);
  return resolved;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The wait before retry number `retry` (1 for the first retry): exponential,
 * capped, with "equal jitter" — half of it fixed, half random. Fully random
 * waits can come out near zero and hammer a server that is just coming back;
 * fixed ones make every worker that failed together retry together.
 * `random` returns a number in [0, 1).
 */
export function backoffDelay(retry: number, options: ResolvedRetryOptions, random: () => number = Math.random): number {
  const exponential = options.minDelayMs * options.factor ** Math.max(0, retry - 1);
  const capped = Math.min(options.maxDelayMs, exponential);
  return Math.round(capped / 2 + (capped / 2) * random());
}

/**
 * Retry-After in milliseconds: delta-seconds or an HTTP date (RFC 9110
 * §10.2.3). Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Whether an HTTP status is worth another attempt, given whether the request may be repeated safely. */
export function isRetryableStatus(status: number, idempotent: boolean): boolean {
  if (status === 429 || status === 503) return true;
  return idempotent && status >= 500 && status !== 501;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The reason a signal was aborted with, always an Error (a bare `abort()` gives a DOMException already). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException(typeof reason === "string" ? reason : "This operation was aborted", "AbortError");
}
