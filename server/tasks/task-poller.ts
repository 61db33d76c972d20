import type { Db } from "../../db/pool";
import type { Notifier } from "../lib/notifier";
import { TASKS_CHANNEL, hasVisibleTask, releaseLease, taskAvailableKey } from "../store/task-queues";
import type { LeasedTask } from "../store/task-queues";
import { gatesHaveRoom, leaseGatedTasks, queueGateCache, releaseTaskGates } from "./task-gates";
import type { QueueGateCache } from "./task-gates";

/**
 * Long-poll: a worker's poll is parked until a task arrives or its timeout
 * passes, instead of the worker polling on a short interval. An idle worker
 * then costs one held HTTP request and a cheap re-check now and then, not a
 * query every 100 ms, and a task starts as soon as its enqueue commits.
 *
 * Every lease goes through the queue's gates (task-gates.ts). A poll the gates
 * hold back is not an error: it parks like a poll of an empty queue, and is
 * woken when capacity comes back — a gated task's end and an expired permit
 * notify the queue — or when the rate limit's next window opens, or at its
 * re-check interval, whichever is first.
 */

/** Upper bound for `timeoutMs`: under common proxies' idle timeouts (60 s), with room. */
export const MAX_POLL_TIMEOUT_MS = 30_000;

export interface TaskPollerDeps {
  db: Db;
  /**
   * The process's notifier, or null to run with notifications off entirely. It
   * need not be connected: a poll that hears nothing still re-checks.
   */
  notifier: Notifier | null;
  /** Gate configuration cache; the process's own by default. */
  gateCache?: QueueGateCache;
}

export interface PollTasksOptions {
  namespaceId: string;
  queueName: string;
  /** Tasks to lease at most, 1 to 1000. */
  count: number;
  /** How long to park when nothing is there, 0 to MAX_POLL_TIMEOUT_MS; 0 is a plain poll. */
  timeoutMs: number;
  workerId: string;
  leaseSeconds: number;
  /** The task whose report this poll rides on (a report's `next` that waits); see LeaseTasksInput's `report`. */
  report?: string;
  /** Aborts the poll (the client went away); resolves [] promptly. */
  signal?: AbortSignal;
  /**
   * While parked, re-check this often even without a notification. NOTIFY is
   * an optimisation, never a guarantee: this interval is what bounds the cost of
   * a missed one (a notifier mid-reconnect, a deferred task becoming visible,
   * which notifies nobody). Jittered ±20% so parked polls do not re-check in
   * lockstep. Default 1000.
   */
  recheckIntervalMs?: number;
}

/**
 * Leases up to `count` tasks of one queue, waiting up to `timeoutMs` for one to
 * arrive. Resolves as soon as at least one is leased, or with [] at the timeout
 * or on abort.
 *
 * Order matters: subscribe, *then* lease. A task committed after the lease's
 * snapshot but before a subscription would notify nobody, and the poll would
 * sleep through work that is already there. Likewise the wake flag is cleared
 * before each lease attempt, never after, so a notification that lands while a
 * lease query is in flight is not lost.
 *
 * Concurrent polls of one queue in this process are woken one at a time
 * ({@link QueueWaiters}): a notification wakes the poll parked longest, and a
 * woken poll that leased all it asked for passes the wake on, since more may be
 * there; one that found nothing ends the chain. Polls in other processes hear
 * the notification themselves; SKIP LOCKED splits the tasks between everyone
 * and no task is leased twice.
 */
export async function pollTasks(deps: TaskPollerDeps, options: PollTasksOptions): Promise<LeasedTask[]> {
  const { namespaceId, queueName, count, timeoutMs, workerId, leaseSeconds, report, signal } = options;
  if (!(Number.isFinite(timeoutMs) && timeoutMs >= 0 && timeoutMs <= MAX_POLL_TIMEOUT_MS)) {
    throw new RangeError(`timeoutMs must be from 0 to ${MAX_POLL_TIMEOUT_MS}, got ${timeoutMs}`);
  }
  const recheckIntervalMs = options.recheckIntervalMs ?? 1000;
  if (!(recheckIntervalMs > 0)) throw new RangeError(`recheckIntervalMs must be positive, got ${recheckIntervalMs}`);
  if (signal?.aborted) return [];

  const deadline = performance.now() + timeoutMs;
  const wake = new WakeSignal();
  const leave = deps.notifier ? queueWaiters(deps.notifier, namespaceId, queueName).join(wake) : undefined;
  const onAbort = () => wake.set();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    // The first attempt and any after a notification go straight to the lease:
    // work is likely there. A re-check the interval timer woke usually finds
    // nothing, so it probes first (read-only, no transaction, ~3x cheaper).
    let probeFirst = false;
    // Set while the gates hold this poll back. Whatever wakes it next — often
    // just another enqueue on a queue at its limit — checks the gates
    // lock-free first, instead of every parked poll running a gated lease,
    // serialised on the queue's gate lock, only to find the gate still shut.
    let gatedOut = false;
    // When a rate limit held it back: when the next window opens (the
    // performance.now() clock). Nothing notifies that, so the wait is cut to it.
    let windowOpensAt: number | undefined;
    const gateCache = deps.gateCache ?? queueGateCache;
    for (;;) {
      wake.clear();
      // A wake handed to this poll is spent by this attempt: passed on below if
      // it leased all it asked for, dropped if it found less.
      const handedWake = wake.takeHanded();
      let leased: LeasedTask[] = [];
      if (
        (!gatedOut || (await gatesHaveRoom(deps.db, { namespaceId, queueName }, gateCache))) &&
        (!probeFirst || (await hasVisibleTask(deps.db, { namespaceId, queueName })))
      ) {
        const result = await leaseGatedTasks(deps.db, { namespaceId, queueName, count, leaseSeconds, owner: workerId, ...(report ? { report } : {}) }, gateCache);
        leased = result.leased;
        gatedOut = result.heldBy !== null;
        windowOpensAt = result.retryAfterMs === undefined ? undefined : performance.now() + result.retryAfterMs;
      }
      if (signal?.aborted) {
        // Nobody is left to hand these to: give them back now rather than leave
        // them leased until the sweeper finds the lease expired.
        await releaseAll(deps.db, namespaceId, workerId, leased);
        return [];
      }
      if (handedWake && leased.length >= count) wake.passOn?.();
      if (leased.length > 0) return leased;
      const now = performance.now();
      const remaining = deadline - now;
      if (remaining <= 0) return [];
      if (windowOpensAt !== undefined && windowOpensAt <= now) windowOpensAt = undefined;
      const untilWindow = windowOpensAt === undefined ? Number.POSITIVE_INFINITY : windowOpensAt - now;
      const waitMs = Math.min(remaining, jitter(recheckIntervalMs), untilWindow);
      const woken = await wake.wait(waitMs);
      if (signal?.aborted) return [];
      // The wait that ran to the deadline heard nothing: done, without one more
      // query. Decided by which bound the wait had, not by re-reading the clock:
      // a timer may fire a fraction of a millisecond before performance.now()
      // reaches the deadline, and that extra query made a test flaky.
      if (!woken && waitMs === remaining) return [];
      // A window that opened is as good as a notification: no visibility probe.
      probeFirst = !woken && waitMs !== untilWindow;
    }
  } finally {
    // A wake handed over while this poll was leaving (aborted, or its lease
    // threw) goes to the next parked poll rather than with it.
    if (wake.takeHanded()) wake.passOn?.();
    leave?.();
    signal?.removeEventListener("abort", onAbort);
  }
}

async function releaseAll(db: Db, namespaceId: string, owner: string, leased: readonly LeasedTask[]): Promise<void> {
  for (const { queue } of leased) {
    try {
      // With its gates: a semaphore permit would otherwise stay taken until its
      // lease ran out. (A rate-limit token stays spent: the lease did happen.)
      await db.transaction().execute(async (trx) => {
        if (await releaseLease(trx, { namespaceId, queueName: queue.queueName, taskId: queue.taskId, owner })) {
          await releaseTaskGates(trx, { namespaceId, taskId: queue.taskId, queueName: queue.queueName });
        }
      });
    } catch {
      // Best effort: an unreleased lease expires and the sweeper requeues it;
      // its permits expire with it.
    }
  }
}

function jitter(ms: number): number {
  return Math.max(1, Math.round(ms * (0.8 + 0.4 * Math.random())));
}

/**
 * A latch: `set()` before or during `wait()` ends the wait, and stays set until
 * `clear()`. A plain "resolve the current promise" would drop a notification
 * that arrives while nobody is waiting yet (during a lease query).
 *
 * `hand()` is a set that also gives the poll the duty to pass the wake on
 * ({@link QueueWaiters}); `passOn` is filled in by the poll's queue.
 */
class WakeSignal {
  private isSet = false;
  private handed = false;
  private resolve: (() => void) | undefined;
  passOn: (() => void) | undefined;

  /** Whether the poll is parked in `wait()` right now. */
  get parked(): boolean {
    return this.resolve !== undefined;
  }

  set(): void {
    this.isSet = true;
    this.resolve?.();
  }

  hand(): void {
    this.handed = true;
    this.set();
  }

  /** True once per `hand()`: the caller now owes the pass-on. */
  takeHanded(): boolean {
    const handed = this.handed;
    this.handed = false;
    return handed;
  }

  clear(): void {
    this.isSet = false;
  }

  /** Resolves true when set (now or within `ms`), false when `ms` passed first. */
  wait(ms: number): Promise<boolean> {
    if (this.isSet) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.resolve = undefined;
        resolve(false);
      }, ms);
      this.resolve = () => {
        clearTimeout(timer);
        this.resolve = undefined;
        resolve(true);
      };
    });
  }
}

/**
 * The polls of one queue parked in this process, woken one at a time.
 *
 * Waking every parked poll on each notification made each task cost one
 * successful lease plus a lease transaction that found nothing for every other
 * idle worker: with 16 workers parked, ~15 wasted BEGIN/SELECT/COMMITs per
 * task, the web process's and Postgres's biggest cost at low rates. One
 * notification may stand for many tasks (Postgres delivers a payload once per
 * transaction, and a fork enqueues a hundred), so the woken poll passes the
 * wake on when it leased all it asked for, and the chain stops at the first
 * poll that finds less: one empty lease per burst instead of one per poll.
 *
 * Invariant 7 is unchanged: a chain broken by a crash or a miscount costs only
 * latency, since every parked poll still re-checks on its own interval.
 */
class QueueWaiters {
  /** Insertion order is the order polls parked: the longest-parked is woken first. */
  private readonly polls = new Set<WakeSignal>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly notifier: Notifier,
    private readonly key: string,
    private readonly onEmpty: () => void,
  ) {}

  /** Adds a poll; subscribes the queue on its first. Returns the poll's leave function. */
  join(wake: WakeSignal): () => void {
    // Subscribe before the poll's first lease (the order pollTasks documents).
    this.unsubscribe ??= this.notifier.subscribe(TASKS_CHANNEL, this.key, (event) => {
      if (event.kind === "resync") for (const poll of this.polls) poll.set();
      else this.wakeOne();
    });
    this.polls.add(wake);
    wake.passOn = () => this.wakeOne();
    return () => {
      this.polls.delete(wake);
      wake.passOn = undefined;
      if (this.polls.size > 0) return;
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      this.onEmpty();
    };
  }

  /**
   * Hands the wake to the longest-parked poll. With none parked, every poll is
   * mid-lease, and each may have read before the task committed: all are told
   * to look again, as before.
   */
  private wakeOne(): void {
    for (const poll of this.polls) {
      if (!poll.parked) continue;
      // Re-inserted at the back: the next wake goes to the one parked longest.
      this.polls.delete(poll);
      this.polls.add(poll);
      poll.hand();
      return;
    }
    for (const poll of this.polls) poll.hand();
  }

  /** Polls parked (waiting, not mid-lease) right now. */
  get parkedCount(): number {
    let parked = 0;
    for (const poll of this.polls) if (poll.parked) parked++;
    return parked;
  }
}

const queuesByNotifier = new WeakMap<Notifier, Map<string, QueueWaiters>>();

function queueWaiters(notifier: Notifier, namespaceId: string, queueName: string): QueueWaiters {
  let queues = queuesByNotifier.get(notifier);
  if (!queues) {
    queues = new Map();
    queuesByNotifier.set(notifier, queues);
  }
  const key = taskAvailableKey(namespaceId, queueName);
  let waiters = queues.get(key);
  if (!waiters) {
    const owner = queues;
    waiters = new QueueWaiters(notifier, key, () => owner.delete(key));
    queues.set(key, waiters);
  }
  return waiters;
}

/** How many polls of a queue are parked in this process on `notifier` (tests wait on it). */
export function parkedPolls(notifier: Notifier, namespaceId: string, queueName: string): number {
  return queuesByNotifier.get(notifier)?.get(taskAvailableKey(namespaceId, queueName))?.parkedCount ?? 0;
}
