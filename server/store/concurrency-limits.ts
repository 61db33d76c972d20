import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * How many of a queue's tasks workers hold right now: its leased "TaskQueues"
 * rows. This is what concurrentExecLimit bounds (server/tasks/task-gates.ts).
 *
 * Held rows, not TaskExecutions rows with status IN_PROGRESS, for three reasons:
 * - A task keeps status IN_PROGRESS when its lease expires and the sweeper
 *   requeues it, and when a worker defers it (callbackAfterSeconds). Counting
 *   status, such a task counts against the limit while it waits to be leased
 *   again, so with concurrentExecLimit 1 it could never be leased again: the
 *   queue would wedge for good. A held row exists exactly while a worker holds
 *   the task, and every path that ends a hold (acknowledge, complete, release,
 *   defer, the expiry sweep, a cancel) already deletes the row or clears its
 *   lease: the count needs no bookkeeping of its own to drift.
 * - TaskExecutions is hash-partitioned on "workflowId": a per-queue count there
 *   probes all sixteen partitions. "TaskQueues" is partitioned on the queue name,
 *   so this count prunes to one partition.
 * - The count commits with the state it describes: the lease and the
 *   acknowledgement change these rows in the transactions that change the task.
 * So a deferred task frees its slot while it waits out its callback, and may
 * find the queue full when it comes back: it waits, it is not lost.
 *
 * A lease that has expired but is not yet swept still counts: nobody else can
 * have the task, and its worker may still renew it.
 *
 * Reads "TaskQueues_held_idx" (0006_task_gates.sql), the rows of one queue with
 * a lease, so it costs the number of held rows, which the limit keeps small.
 * That index is paid by every lease and heartbeat, gated or not. Measured with
 * a cut-down leaseTasks benchmark (embedded Postgres 18, fsync off, 100,000
 * finished tasks of history, 16 leasers × 10 draining 10,000 queued tasks, then
 * 5,000 single-row renewals, 16 at a time; rounds alternating with and without
 * the index; /tmp scratch script, not committed), on a 2-core machine at load
 * average 12, so throughput is noise: 1,530–2,850 leases/s without the index
 * and 1,870–2,870 with it, renewals overlapping likewise. WAL, which the load
 * does not blur, moved from ~1,130 to ~1,230 bytes per lease (+8%) and not
 * measurably per renewal (~395 vs ~400 bytes). The alternative, counting
 * through "TaskQueues_lease_idx" ("leaseExpiresAt"), costs the ungated nothing
 * but reads every leased row of the partition — all its queues' in-flight work
 * — on every gated lease, under the gate lock.
 *
 * Belongs with the other "TaskQueues" statements in task-queues.ts; it lives
 * here while that file is being changed by someone else.
 */
export async function countHeldTasks(db: Executor, input: { namespaceId: string; queueName: string }): Promise<number> {
  const { rows } = await sql<{ held: number }>`
    SELECT count(*)::int AS "held"
    FROM "TaskQueues"
    WHERE "queueName" = ${input.queueName}
      AND "namespaceId" = ${input.namespaceId}
      AND "leaseExpiresAt" IS NOT NULL`.execute(db);
  return rows[0]?.held ?? 0;
}
