import { sql } from "kysely";
import type { Kysely, RawBuilder } from "kysely";
import type { Database } from "../../db/schema";
import { at } from "./sql-helpers";

/**
 * Rate limits: "RateLimitBuckets", one row per (namespace, queue, fixed window)
 * counting the leases admitted in it. A table of its own rather than a count of
 * queue rows, because those are deleted on acknowledgement. Fixed windows, not
 * sliding: up to 2x a limit can pass around a boundary, the price of one upsert
 * on the hot path.
 *
 * Windows are aligned to the Unix epoch (a 10 s window starts at :00, :10, …)
 * so every process computes the same window for the same instant, and the
 * instant is the database's `now()` (or the caller's, for tests), never a
 * process clock.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

export interface RateLimitWindowInput {
  namespaceId: string;
  queueName: string;
  /** Leases admitted per window, ≥ 1. */
  limit: number;
  /** Window length in seconds, ≥ 1. */
  windowSeconds: number;
  /** Defaults to the transaction's `now()`. */
  now?: Date | string;
}

function assertWindow(input: RateLimitWindowInput): void {
  if (!Number.isInteger(input.limit) || input.limit < 1) throw new RangeError(`limit must be an integer ≥ 1, got ${input.limit}`);
  if (!Number.isInteger(input.windowSeconds) || input.windowSeconds < 1) {
    throw new RangeError(`windowSeconds must be an integer ≥ 1, got ${input.windowSeconds}`);
  }
}

/** The start of the fixed window holding `now`. */
function windowStart(input: RateLimitWindowInput): RawBuilder<Date> {
  return sql<Date>`to_timestamp((floor(extract(epoch FROM ${at(input.now)}) / ${input.windowSeconds}::int) * ${input.windowSeconds}::int)::double precision)`;
}

export interface RateLimitAllowance {
  /** Tokens left in the current window. */
  remaining: number;
  /** Milliseconds from `now` until the next window opens (and tokens come back). */
  windowEndsInMs: number;
}

/**
 * How many leases the current window still admits, without taking any: a
 * read of one primary-key row. Exact only under the queue's gate lock
 * (server/tasks/task-gates.ts), which is where it is used: it lets a gated lease
 * size itself first and then take exactly what it leased, so an empty poll
 * writes nothing.
 */
export async function rateLimitAllowance(db: Executor, input: RateLimitWindowInput): Promise<RateLimitAllowance> {
  assertWindow(input);
  const { rows } = await sql<RateLimitAllowance>`
    SELECT GREATEST(${input.limit}::int - COALESCE("b"."count", 0), 0)::int AS "remaining",
      (extract(epoch FROM "w"."windowStart" + make_interval(secs => ${input.windowSeconds}::int) - ${at(input.now)}) * 1000)::float8
        AS "windowEndsInMs"
    FROM (SELECT ${windowStart(input)} AS "windowStart") AS "w"
    LEFT JOIN "RateLimitBuckets" AS "b"
      ON "b"."namespaceId" = ${input.namespaceId}
      AND "b"."queueName" = ${input.queueName}
      AND "b"."windowStart" = "w"."windowStart"`.execute(db);
  const row = rows[0];
  if (!row) throw new Error("rateLimitAllowance: no row");
  return row;
}

/**
 * Takes up to `count` tokens from the current window and returns how many it
 * got (0 when the window is spent). One upsert, safe against any number of
 * concurrent takers without further locking: the conflict takes the bucket's
 * row lock, and "count" never passes `limit`. The row lock is held until the
 * caller's transaction ends, so a rollback gives the tokens back.
 *
 * "count" is the only column the update changes and it is in no index, so the
 * update is HOT (the table's fillfactor 70 leaves the room). An exhausted
 * window is not written at all (the DO UPDATE's WHERE fails), so pollers of a
 * spent queue make no dead tuples. RETURNING OLD (Postgres 18) gives the count
 * before this take without a second read; it is null for a fresh window.
 */
export async function takeRateLimitTokens(db: Executor, input: RateLimitWindowInput & { count: number }): Promise<number> {
  assertWindow(input);
  if (!Number.isInteger(input.count) || input.count < 1) throw new RangeError(`count must be an integer ≥ 1, got ${input.count}`);
  const { rows } = await sql<{ granted: number }>`
    INSERT INTO "RateLimitBuckets" ("namespaceId", "queueName", "windowStart", "count")
    VALUES (${input.namespaceId}, ${input.queueName}, ${windowStart(input)}, LEAST(${input.count}::int, ${input.limit}::int))
    ON CONFLICT ("namespaceId", "queueName", "windowStart") DO UPDATE
      SET "count" = LEAST("RateLimitBuckets"."count" + ${input.count}::int, ${input.limit}::int)
      WHERE "RateLimitBuckets"."count" < ${input.limit}::int
    RETURNING ("RateLimitBuckets"."count" - COALESCE(OLD."count", 0))::int AS "granted"`.execute(db);
  return rows[0]?.granted ?? 0;
}

/**
 * Deletes up to `limit` buckets of windows that started before `olderThan` and
 * have ended. A bucket of a window still open is never deleted, whatever
 * `olderThan` says: that would reset its count and admit the window's limit
 * again. Which windows have ended depends on each queue's window length, which
 * the bucket does not record, so the cut-off is also held to before `now` minus
 * the longest rateLimitFrequencyInSeconds of any definition (one aggregate over
 * TaskDefinitions per pass). A definition's window length shortened since only
 * makes its old buckets linger one pass longer.
 *
 * Oldest first, by "RateLimitBuckets_window_idx"; SKIP LOCKED, so a bucket a
 * lease is taking tokens from right now (it can only be current anyway) is
 * passed over rather than waited on, and two pruners take disjoint batches.
 * Returns how many were deleted; `count === limit` means run again at once.
 */
export async function pruneRateLimitBuckets(
  db: Executor,
  input: { olderThan: Date | string; limit: number; now?: Date | string },
): Promise<{ count: number }> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > 10_000) {
    throw new RangeError(`limit must be an integer from 1 to 10000, got ${input.limit}`);
  }
  const { rows } = await sql<{ count: number }>`
    WITH "cutoff" AS (
      SELECT LEAST(${input.olderThan}::timestamptz,
        ${at(input.now)} - make_interval(secs => COALESCE(max("rateLimitFrequencyInSeconds"), 1))) AS "before"
      FROM "TaskDefinitions"
      WHERE "rateLimitPerFrequency" > 0
    ),
    "old" AS (
      SELECT "namespaceId", "queueName", "windowStart"
      FROM "RateLimitBuckets"
      WHERE "windowStart" < (SELECT "before" FROM "cutoff")
      ORDER BY "windowStart"
      LIMIT ${input.limit}
      FOR UPDATE SKIP LOCKED
    ),
    "deleted" AS (
      DELETE FROM "RateLimitBuckets" AS "b"
      USING "old" AS "o"
      WHERE "b"."namespaceId" = "o"."namespaceId"
        AND "b"."queueName" = "o"."queueName"
        AND "b"."windowStart" = "o"."windowStart"
      RETURNING 1
    )
    SELECT count(*)::int AS "count" FROM "deleted"`.execute(db);
  return { count: rows[0]?.count ?? 0 };
}
