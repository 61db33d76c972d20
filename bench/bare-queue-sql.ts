/**
 * What a job of `npm run bench`'s bare queue costs, shared by its runner
 * (bare-queue.ts) and its worker processes (bare-queue-worker.ts):
 * the least a leased queue does for a job.
 *
 * - Lease: one job, `FOR UPDATE SKIP LOCKED`, marked leased in its own
 *   transaction (a worker that dies holding it leaves it to a sweeper).
 * - Complete: delete it, enqueue the next job (the closed loop keeps the same
 *   number in flight) and NOTIFY the parked workers, in one statement and one
 *   transaction. Or without the NOTIFY: workers then find new jobs only when
 *   they next look (at once when busy, within their 100 ms park when idle).
 *   Postgres serialises the commits of notifying transactions on one lock, so
 *   the two bound what immediate wake-ups cost.
 */

export const BARE_QUEUE_TABLE = "nf_bench_bare_queue";
const CHANNEL = "nf_bench_bare_queue";

/** fillfactor 70, as node-flow's queues (data-model.md): room for the lease's HOT update. */
export const CREATE_BARE_QUEUE = `CREATE TABLE "${BARE_QUEUE_TABLE}" ("id" BIGSERIAL PRIMARY KEY, "payload" JSONB NOT NULL,
  "leasedBy" TEXT, "leaseExpiresAt" TIMESTAMPTZ) WITH (fillfactor = 70)`;

/** $1: the number of jobs to keep in flight. */
export const SEED_BARE_QUEUE = `INSERT INTO "${BARE_QUEUE_TABLE}" ("payload") SELECT jsonb_build_object('n', g) FROM generate_series(1, $1::int) AS g`;

export const LISTEN_BARE_QUEUE = `LISTEN "${CHANNEL}"`;

/** $1: the worker. */
export const LEASE_JOB = `UPDATE "${BARE_QUEUE_TABLE}" SET "leasedBy" = $1, "leaseExpiresAt" = now() + interval '5 minutes'
  WHERE "id" = (SELECT "id" FROM "${BARE_QUEUE_TABLE}" WHERE "leasedBy" IS NULL ORDER BY "id" LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING "id", "payload"`;

/** $1: the job, $2: the worker that leased it. */
export function completeJob(notify: boolean): string {
  return `WITH "done" AS (DELETE FROM "${BARE_QUEUE_TABLE}" WHERE "id" = $1 AND "leasedBy" = $2 RETURNING "payload"),
  "next" AS (INSERT INTO "${BARE_QUEUE_TABLE}" ("payload") SELECT "payload" FROM "done" RETURNING "id")
  ${notify ? `SELECT pg_notify('${CHANNEL}', '') FROM "next"` : `SELECT count(*) FROM "next"`}`;
}

export type BareQueueWorkerMessage = { type: "ready" } | { type: "count"; completed: number };
export type BareQueueWorkerRequest = { type: "count" } | { type: "stop" };
