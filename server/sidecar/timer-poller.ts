import type { Kysely } from "kysely";
import { ENGINE_TIMER_KINDS } from "../../db/schema";
import type { Database, EngineTimerKind, TimerRow } from "../../db/schema";
import { isTerminalTaskStatus, isTerminalWorkflowStatus } from "../../engine/statuses";
import type { FiredTimer, TaskKey } from "../../engine";
import type { RunnerLogger } from "./background-runner";
import { enqueueDecide } from "../store/decide-queues";
import { escalateHumanTask } from "../human-tasks/escalate-human-task";
import type { EscalationOutcome } from "../human-tasks/escalate-human-task";
import { claimDueTimers, deleteTimers, loadTimerTargets, releaseStaleClaims, releaseTimerClaims } from "../store/timers";

/**
 * The timer poller: turns due timers into evaluations. A timer is only ever a
 * reason to look (timers.ts): the poller enqueues a decide for the timer's
 * workflow and decide re-checks every deadline against its `now`, so a timer
 * that fires late, twice, or after its task finished cannot invent a failure.
 * The decide's reason carries the timer ({@link encodeTimerReason}) so the
 * evaluator can hand it to decide as `firedTimers` (ALERT_ONLY alerts are
 * raised only for a deadline a timer actually fired for).
 */

const REASON_PREFIX = "timer:";

/**
 * The DecideQueues reason for a fired timer: "timer:" + JSON of `{kind,
 * taskId?, key?, fireAt}` (fireAt in epoch ms). Read back by
 * {@link decodeTimerReason}.
 */
export function encodeTimerReason(t: FiredTimer): string {
  return (
    REASON_PREFIX +
    JSON.stringify({
      kind: t.kind,
      ...(t.taskId === undefined ? {} : { taskId: t.taskId }),
      ...(t.key === undefined ? {} : { key: { ref: t.key.ref, iteration: t.key.iteration, attempt: t.key.attempt } }),
      fireAt: t.fireAt,
    })
  );
}

/**
 * The timer a decide reason names, or undefined for any other reason ("task
 * completed", null, junk). Never throws: the reason column is free text that
 * any writer may set, and the last writer wins (ON CONFLICT DO UPDATE), so a
 * reason that is not a well-formed timer is simply not one.
 */
export function decodeTimerReason(reason: string | null): FiredTimer | undefined {
  if (typeof reason !== "string" || !reason.startsWith(REASON_PREFIX)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(reason.slice(REASON_PREFIX.length));
  } catch {
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const { kind, taskId, key, fireAt } = value;
  if (!isTimerKind(kind)) return undefined;
  if (typeof fireAt !== "number" || !Number.isFinite(fireAt)) return undefined;
  if (taskId !== undefined && (typeof taskId !== "string" || taskId.length === 0)) return undefined;
  let taskKey: TaskKey | undefined;
  if (key !== undefined) {
    taskKey = asTaskKey(key);
    if (taskKey === undefined) return undefined;
  }
  return { kind, ...(taskId === undefined ? {} : { taskId }), ...(taskKey === undefined ? {} : { key: taskKey }), fireAt };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isTimerKind(value: unknown): value is FiredTimer["kind"] {
  return typeof value === "string" && (ENGINE_TIMER_KINDS as readonly string[]).includes(value);
}

function asTaskKey(value: unknown): TaskKey | undefined {
  if (!isRecord(value)) return undefined;
  const { ref, iteration, attempt } = value;
  const count = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0;
  if (typeof ref !== "string" || ref.length === 0 || !count(iteration) || !count(attempt)) return undefined;
  return { ref, iteration, attempt };
}

/** A claimed row as decide sees it; the task key comes from the payload the evaluator armed it with ({ key }). */
export function firedTimerOf(row: TimerRow): FiredTimer {
  const key = isRecord(row.payload) ? asTaskKey(row.payload.key) : undefined;
  return {
    // fireDueTimerBatch hands humanEscalation timers to escalate-human-task; only the engine's kinds reach here.
    kind: row.kind as EngineTimerKind,
    ...(row.taskId === null ? {} : { taskId: row.taskId }),
    ...(key === undefined ? {} : { key }),
    fireAt: row.fireAt.getTime(),
  };
}

export interface FireDueTimersOptions {
  /** Timers to claim at most, 1 to 1000. */
  limit: number;
  /** Who claims ("hostname:pid"), stamped as "claimedBy". */
  owner: string;
  /** Due means "fireAt" at or before this; the application's clock by default. */
  now?: Date;
  logger?: Pick<RunnerLogger, "debug" | "warn">;
}

/** Why a due timer was deleted without an evaluation. */
export type DroppedTimerReason = "workflow-missing" | "workflow-ended" | "task-ended";

export interface FireDueTimersResult {
  /** Timers claimed and handled (fired or dropped): `limit` means a full batch. */
  claimed: number;
  /** One decide per workflow, however many of its timers were due. */
  decides: { workflowId: string; reason: string; timerIds: string[] }[];
  dropped: { timerId: string; workflowId: string; why: DroppedTimerReason }[];
  /** humanEscalation timers handed to escalate-human-task, with what each did. */
  escalations?: ({ timerId: string } & EscalationOutcome)[];
}

/**
 * One pass of the timer poller: claims up to `limit` due timers and, in one
 * transaction, enqueues a decide for each live workflow among them and deletes
 * the whole batch. Returns the number claimed. See {@link fireDueTimerBatch}.
 */
export async function fireDueTimers(db: Kysely<Database>, options: FireDueTimersOptions): Promise<number> {
  return (await fireDueTimerBatch(db, options)).claimed;
}

/**
 * {@link fireDueTimers} with what it did, for tests and logs.
 *
 * The claim (claimDueTimers, SKIP LOCKED) commits on its own before anything
 * else: concurrent pollers take disjoint batches, a timer is never claimed
 * twice, and no row lock on "Timers" is held while the batch is acted on.
 * Holding one would deadlock with the decider: an evaluation that ends its
 * workflow deletes its claim, locks the workflow and then cancels the
 * workflow's timers (waiting for our lock), while our enqueueDecide for that
 * workflow waits for its claim's deletion to commit. For the same reason the
 * act transaction enqueues every decide *before* it deletes a timer, and in
 * workflow-id order, so two pollers lock DecideQueues rows in one order.
 *
 * Re-check before acting (the timers.ts rule), with plain reads:
 * - the workflow is gone (its partition dropped) or ended: the timer is
 *   dropped. Ending a workflow cancels its timers anyway (the evaluator's
 *   cancelTimers); this covers a timer that slipped past, and an operator's
 *   retry or restart arms what the new run needs.
 * - the timer names a task that has ended or no longer exists: dropped. Every
 *   task timer (poll, run and total timeouts, WAIT, retry and start delays) is
 *   about a task that has not ended; decide re-checks deadlines only for
 *   non-terminal tasks, so an evaluation would find nothing to do. Skipping it
 *   saves an evaluation per completed task with a timeout, which is most of
 *   them: deadlines armed at schedule time usually outlive their use.
 * - otherwise a decide is enqueued, PAUSED workflows included: the evaluator
 *   skips a paused workflow, and resuming one enqueues a decide that re-checks
 *   every deadline against the time then.
 *
 * Several timers of one workflow in one batch become one decide, whose reason
 * names one of them (a task timer before a workflow one, then the earliest):
 * DecideQueues keeps one reason per workflow, and decide re-checks every
 * deadline whichever timer woke it.
 *
 * If the act transaction fails, the batch's claims are handed back at once
 * (not after releaseStaleTimerClaims' cutoff) and the error is rethrown for
 * the background runner to count.
 *
 * Pass the pool, not a transaction: the claim must commit on its own.
 */
export async function fireDueTimerBatch(db: Kysely<Database>, options: FireDueTimersOptions): Promise<FireDueTimersResult> {
  if (db.isTransaction) throw new Error("fireDueTimers opens its own transactions: pass the pool, not a transaction");
  const { limit, owner, logger } = options;
  const now = options.now ?? new Date();
  const all = await claimDueTimers(db, { now, limit, owner });
  if (all.length === 0) return { claimed: 0, decides: [], dropped: [] };
  // A human task's deadline is not the engine's: it goes to escalate-human-task
  // (each in its own transaction, which deletes it), never into decide.
  const claimed = all.filter((t): t is TimerRow & { kind: EngineTimerKind } => t.kind !== "humanEscalation");
  const escalations: NonNullable<FireDueTimersResult["escalations"]> = [];
  for (const timer of all) {
    if (timer.kind !== "humanEscalation") continue;
    try {
      escalations.push({ timerId: timer.id, ...(await escalateHumanTask({ db, now: () => now.getTime() }, timer, owner)) });
    } catch (error) {
      await releaseTimerClaims(db, [timer], owner).catch(() => undefined);
      logger?.warn({ err: error, timerId: timer.id }, "timer poller: human task escalation failed; the timer is handed back");
    }
  }
  if (claimed.length === 0) return { claimed: all.length, decides: [], dropped: [], escalations };
  let result: FireDueTimersResult;
  try {
    result = await db.transaction().execute(async (trx) => {
      const targets = await loadTimerTargets(trx, claimed);
      const live = new Map<string, { namespaceId: string; timers: TimerRow[] }>();
      const dropped: FireDueTimersResult["dropped"] = [];
      for (const timer of claimed) {
        const drop = (why: DroppedTimerReason) => dropped.push({ timerId: timer.id, workflowId: timer.workflowId, why });
        const workflow = targets.workflows.get(timer.workflowId);
        if (workflow === undefined) {
          drop("workflow-missing");
          continue;
        }
        if (isTerminalWorkflowStatus(workflow.status)) {
          drop("workflow-ended");
          continue;
        }
        if (timer.taskId !== null) {
          const taskStatus = targets.tasks.get(timer.taskId);
          if (taskStatus === undefined || isTerminalTaskStatus(taskStatus)) {
            drop("task-ended");
            continue;
          }
        }
        const entry = live.get(timer.workflowId) ?? { namespaceId: workflow.namespaceId, timers: [] };
        entry.timers.push(timer);
        live.set(timer.workflowId, entry);
      }
      const decides: FireDueTimersResult["decides"] = [];
      for (const workflowId of [...live.keys()].sort()) {
        const { namespaceId, timers } = live.get(workflowId)!;
        const reason = encodeTimerReason(firedTimerOf(reasonTimer(timers)));
        await enqueueDecide(trx, { workflowId, namespaceId, reason });
        decides.push({ workflowId, reason, timerIds: timers.map((timer) => timer.id) });
      }
      await deleteTimers(trx, claimed, { owner });
      return { claimed: all.length, decides, dropped, escalations };
    });
  } catch (error) {
    await releaseTimerClaims(db, claimed, owner).catch((releaseError: unknown) => {
      logger?.warn({ err: releaseError, timers: claimed.length }, "timer poller: could not hand back claims; releaseStaleTimerClaims will");
    });
    throw error;
  }
  logger?.debug(
    { claimed: result.claimed, decides: result.decides.length, dropped: result.dropped.length },
    "timer poller: fired due timers",
  );
  return result;
}

/** The timer a workflow's decide reason names: a task's before a workflow's (ALERT_ONLY reads task timers), then the earliest. */
function reasonTimer(timers: readonly TimerRow[]): TimerRow {
  return [...timers].sort(
    (a, b) => Number(a.taskId === null) - Number(b.taskId === null) || a.fireAt.getTime() - b.fireAt.getTime(),
  )[0]!;
}

/**
 * One pass of the stale-claim sweep: hands back timers claimed more than
 * `staleAfterMs` ago (default two minutes) and never deleted, because their
 * poller died between claim and delete. Returns how many. Handing back a
 * claim of a poller that was merely slow is harmless: acting on a timer twice
 * enqueues one decide more, and decide re-checks state.
 */
export async function releaseStaleTimerClaims(
  db: Kysely<Database>,
  options: { staleAfterMs?: number; now?: Date } = {},
): Promise<number> {
  const staleAfterMs = options.staleAfterMs ?? 120_000;
  if (!(Number.isFinite(staleAfterMs) && staleAfterMs > 0)) throw new RangeError(`staleAfterMs must be positive, got ${staleAfterMs}`);
  const now = options.now ?? new Date();
  return releaseStaleClaims(db, { olderThan: new Date(now.getTime() - staleAfterMs) });
}
