import { sql } from "kysely";
import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../db/schema";
import { countHeldTasks } from "../store/concurrency-limits";
import { rateLimitAllowance, takeRateLimitTokens } from "../store/rate-limits";
import { acquireSemaphorePermits, lockSemaphore, semaphoreUsage } from "../store/semaphores";
import { getQueueGates } from "../store/task-definitions";
import type { QueueGates } from "../store/task-definitions";
import { leaseTasks } from "../store/task-queues";
import type { LeasedTask, LeaseTasksInput } from "../store/task-queues";

/**
 * Gates hold work back without losing it. A gated queue's lease admits at most
 * min(requested, rate-limit tokens left in the window, concurrentExecLimit −
 * tasks held, free semaphore permits) tasks; the rest stay queued, untouched,
 * for a later lease. Configuration is per queue, Conductor's model: the task
 * definition named like the queue (server/store/task-definitions.ts).
 *
 * Ungated queues — the common case — pay one in-process cache lookup per lease
 * and take the plain path: no lock, no extra statement.
 */

export { releaseTaskGates, renewSemaphorePermits as renewTaskGates } from "../store/semaphores";
export type { QueueGates } from "../store/task-definitions";

/** A Kysely instance or a transaction. */
type Executor = Kysely<Database>;

/**
 * The first key of the two-int advisory locks gated leases take; the second is
 * hashtext(namespace:queue). The two-int key space does not overlap the bigint
 * one the migrator locks in. A hash collision only makes two gated queues
 * share a lock (they serialise; nothing is over-admitted).
 */
export const GATE_LOCK_CLASS = 0x6e66_6774; // "nfgt"

/** Default time a gate configuration is trusted in process. */
export const GATE_CACHE_TTL_MS = 5000;

/**
 * Gate configuration per queue, cached in process for a few seconds. A
 * definition changed elsewhere takes effect here within the TTL; for that long
 * this process may still lease a newly gated queue ungated (over-admitting a
 * little), or hold back a queue whose gates were just lifted.
 *
 * Only a read that has finished is shared. Concurrent misses for one queue
 * each read with their own executor: a worker's report asks inside its
 * transaction, which by then holds the workflow's decide row, and handing it
 * a read still waiting for a pool connection — one a long poll began on the
 * pool while every connection was queued behind that very row lock — stalled
 * the web process for good (found by the system bench's 30,000-task workflow, whose
 * completions all wait on one decide row). A miss costs one indexed read per
 * caller at most once per TTL. An invalidation during a read keeps that read
 * out of the cache, so an older read never outlives an invalidation.
 */
export class QueueGateCache {
  private readonly entries = new Map<string, { expiresAt: number; gates: QueueGates | null }>();
  /** Bumped by every invalidation, so a read that began before one is not cached after it. */
  private generation = 0;

  constructor(
    private readonly ttlMs = GATE_CACHE_TTL_MS,
    private readonly maxEntries = 10_000,
  ) {}

  async get(db: Executor, namespaceId: string, queueName: string): Promise<QueueGates | null> {
    const key = cacheKey(namespaceId, queueName);
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > performance.now()) return hit.gates;
    const generation = this.generation;
    // A failed read throws here and is not cached: the next lease asks again.
    const gates = await getQueueGates(db, namespaceId, queueName);
    if (generation === this.generation) {
      // Bounded by dropping everything, not by LRU: it only happens on installs
      // with more live queues than maxEntries, and costs one query per queue.
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { expiresAt: performance.now() + this.ttlMs, gates });
    }
    return gates;
  }

  /** Forget one queue's gates (after changing its definition in this process). */
  invalidate(namespaceId: string, queueName: string): void {
    this.generation++;
    this.entries.delete(cacheKey(namespaceId, queueName));
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

function cacheKey(namespaceId: string, queueName: string): string {
  return `${namespaceId}:${queueName}`;
}

/** The process's gate cache. */
export const queueGateCache = new QueueGateCache();

/** After a definition changes in this process: its queue's next lease reads the new gates. */
export function invalidateQueueGates(namespaceId: string, queueName: string): void {
  queueGateCache.invalidate(namespaceId, queueName);
}

/** The gate that bound a lease below what was asked. */
export type GateKind = "rateLimit" | "concurrency" | "semaphore";

export interface GatedLeaseResult {
  leased: LeasedTask[];
  /**
   * The gate that admitted fewer than `count` tasks, or null when none did (the
   * queue is ungated, or simply held fewer visible tasks than the allowance).
   */
  heldBy: GateKind | null;
  /** When the rate limit held work back: milliseconds until its next window opens. */
  retryAfterMs?: number;
}

/** A lease's accounting disagreed with its own allowance; the transaction rolls back, so nothing is lost. */
export class GateAccountingError extends Error {
  override name = "GateAccountingError";
}

/**
 * Leases up to `input.count` tasks of a queue through its gates. Runs in the
 * caller's transaction when given one (its gate lock is then held until that
 * transaction ends), or opens its own for a gated queue.
 *
 * For a gated queue, in one transaction:
 * 1. Take the queue's transaction-scoped advisory lock. Every gated lease of the
 *    queue serialises here, so the counts below cannot be read by two leasers
 *    at once: two transactions counting the same 2 of 3 slots free would each
 *    lease 1 and commit 4 held tasks. The lock is per queue, so leases of
 *    other queues never wait for it.
 * 2. Read the allowance, each count in a statement of its own after the lock,
 *    so under READ COMMITTED it sees everything the previous holder committed:
 *    tokens left in the rate-limit window; concurrentExecLimit − held rows;
 *    free permits of the semaphore (its row lock, which also serialises the
 *    other queues sharing it).
 * 3. Lease at most the allowance (`leaseTasks` in this transaction).
 * 4. Record exactly what was leased: take that many tokens, and acquire permits
 *    for those tasks.
 *
 * Why size first and take tokens after, rather than take tokens first and give
 * back the unused: under the lock both are exact, but taking first writes the
 * bucket on every poll, also the empty ones a parked poller makes each second,
 * and then writes it again to give tokens back. Sizing first means a poll that
 * leases nothing writes nothing. Neither order loses work: tasks not leased are
 * never touched. Neither over-admits: tokens and permits are only ever taken
 * under these locks, with the same `now`, so the take and the acquire grant
 * exactly what was leased. That is checked, as a tripwire for anything that
 * takes them some other way: a shortfall throws {@link GateAccountingError},
 * the transaction rolls back, and the tasks stay queued.
 *
 * The queue's concurrency slot is counted from held "TaskQueues" rows
 * (countHeldTasks explains why not from TaskExecutions' status): it is freed by
 * whatever ends the hold, with no bookkeeping here. Semaphore permits are
 * leased for `leaseSeconds`, like the task; `releaseTaskGates` returns them when
 * the task ends and `renewTaskGates` extends them with a heartbeat.
 *
 * The gate lock is held until commit, so keep the caller's transaction short.
 */
export async function leaseGatedTasks(
  db: Executor,
  input: LeaseTasksInput,
  cache: QueueGateCache = queueGateCache,
): Promise<GatedLeaseResult> {
  const gates = await cache.get(db, input.namespaceId, input.queueName);
  if (!gates) return { leased: await leaseTasks(db, input), heldBy: null };
  if (!db.isTransaction) return db.transaction().execute((trx) => leaseThroughGates(trx, input, gates));
  return leaseThroughGates(db as Transaction<Database>, input, gates);
}

async function leaseThroughGates(
  trx: Transaction<Database>,
  input: LeaseTasksInput,
  gates: QueueGates,
): Promise<GatedLeaseResult> {
  const { namespaceId, queueName, now } = input;
  await sql`SELECT pg_advisory_xact_lock(${GATE_LOCK_CLASS}::int, hashtext(${namespaceId}::text || ':' || ${queueName}::text))`.execute(
    trx,
  );

  // Each gate in turn narrows the allowance; `heldBy` names the one that bound
  // it last. A gate is not read once the allowance is 0.
  let allowance = input.count;
  let heldBy: GateKind | null = null;
  let retryAfterMs: number | undefined;

  const window = gates.rateLimit
    ? { namespaceId, queueName, limit: gates.rateLimit.perFrequency, windowSeconds: gates.rateLimit.frequencySeconds, now }
    : undefined;
  if (window) {
    const { remaining, windowEndsInMs } = await rateLimitAllowance(trx, window);
    if (remaining < allowance) {
      allowance = remaining;
      heldBy = "rateLimit";
      retryAfterMs = Math.max(1, Math.ceil(windowEndsInMs));
    }
  }
  if (gates.concurrentExecLimit !== null && allowance > 0) {
    const free = Math.max(0, gates.concurrentExecLimit - (await countHeldTasks(trx, { namespaceId, queueName })));
    if (free < allowance) {
      allowance = free;
      heldBy = "concurrency";
    }
  }
  const semaphore = gates.semaphoreName;
  if (semaphore !== null && allowance > 0) {
    const usage = await lockSemaphore(trx, { namespaceId, name: semaphore, now });
    if (usage && usage.free < allowance) {
      allowance = usage.free;
      heldBy = "semaphore";
    }
  }
  // The rate limit's hint matters only while it is what holds work back.
  if (heldBy !== "rateLimit") retryAfterMs = undefined;
  if (allowance === 0) return withHint({ leased: [], heldBy }, retryAfterMs);

  const leased = await leaseTasks(trx, { ...input, count: allowance });
  if (leased.length > 0) {
    if (window) {
      const granted = await takeRateLimitTokens(trx, { ...window, count: leased.length });
      if (granted !== leased.length) {
        throw new GateAccountingError(`rate limit of ${queueName}: leased ${leased.length}, window granted ${granted}`);
      }
    }
    if (semaphore !== null) {
      const { granted } = await acquireSemaphorePermits(trx, {
        namespaceId,
        name: semaphore,
        tasks: leased.map(({ task }) => ({ taskId: task.id, workflowId: task.workflowId })),
        // As long as the longest task lease just granted (a task's lease runs
        // for its responseTimeoutSeconds when it has one, not the poll's
        // leaseSeconds): a permit lapsing while its task is still held would
        // over-admit. Heartbeats renew both.
        leaseSeconds: Math.max(input.leaseSeconds, ...leased.map(({ queue }) => permitSecondsUntil(queue.leaseExpiresAt, now))),
        now,
      });
      if (granted.length !== leased.length) {
        throw new GateAccountingError(`semaphore ${semaphore}: leased ${leased.length}, permits granted ${granted.length}`);
      }
    }
  }
  // Fewer than the allowance means the queue ran dry, not that a gate held it.
  if (leased.length < allowance) return { leased, heldBy: null };
  return withHint({ leased, heldBy }, retryAfterMs);
}

function withHint(result: GatedLeaseResult, retryAfterMs: number | undefined): GatedLeaseResult {
  return retryAfterMs === undefined ? result : { ...result, retryAfterMs };
}

/**
 * Whether a gated lease of the queue could admit anything now, read without
 * the gate lock or a transaction: true for an ungated queue, else whether each
 * gate shows room. A hint, not a promise — the lease itself decides, under the
 * lock. For pollers the gates held back: every enqueue on a busy queue wakes
 * its parked pollers, and without this each of them would run a full gated
 * lease, all serialised on the queue's lock, only to find the gate still shut.
 */
export async function gatesHaveRoom(
  db: Executor,
  input: { namespaceId: string; queueName: string; now?: Date | string },
  cache: QueueGateCache = queueGateCache,
): Promise<boolean> {
  const { namespaceId, queueName, now } = input;
  const gates = await cache.get(db, namespaceId, queueName);
  if (!gates) return true;
  if (gates.rateLimit) {
    const window = { namespaceId, queueName, limit: gates.rateLimit.perFrequency, windowSeconds: gates.rateLimit.frequencySeconds, now };
    if ((await rateLimitAllowance(db, window)).remaining === 0) return false;
  }
  if (gates.concurrentExecLimit !== null && (await countHeldTasks(db, { namespaceId, queueName })) >= gates.concurrentExecLimit) {
    return false;
  }
  if (gates.semaphoreName !== null) {
    const usage = await semaphoreUsage(db, { namespaceId, name: gates.semaphoreName, now });
    if (usage && usage.free === 0) return false;
  }
  return true;
}

function permitSecondsUntil(expiresAt: Date | null, now: Date | string | undefined): number {
  if (expiresAt === null) return 0;
  const from = now === undefined ? Date.now() : new Date(now).getTime();
  return Math.max(1, Math.ceil((expiresAt.getTime() - from) / 1000));
}
