import { sql } from "kysely";
import type { RawBuilder } from "kysely";

/**
 * Small SQL pieces the queue-like repositories share (task queues, outbox,
 * semaphores, rate limits): one clock convention and one argument check.
 */

/** `now()` (the transaction's start), or a caller's clock for tests and replays. */
export function at(now: Date | string | undefined): RawBuilder<Date> {
  return now === undefined ? sql<Date>`now()` : sql<Date>`${now}::timestamptz`;
}

/** An interval of `value` seconds (fractions kept). */
export function seconds(value: number): RawBuilder<unknown> {
  return sql`make_interval(secs => ${value}::double precision)`;
}

export function assertPositive(name: string, value: number): void {
  if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`${name} must be a positive number, got ${value}`);
}

/** A batch size: an integer from 1 to `max`. */
export function assertCount(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`${name} must be an integer from 1 to ${max}, got ${value}`);
  }
}
