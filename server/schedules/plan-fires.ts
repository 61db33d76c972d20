import type { ScheduleCatchUp, ScheduleOverlap } from "../../db/schema";
import { FireTimes } from "./cron";
import type { CronSpec } from "./cron";

/**
 * What a pass of the scheduler does with one due schedule, decided without
 * I/O: the clock comes in as `now`.
 *
 * A fire is *missed* when the scheduler reaches it later than its grace: the
 * time to the schedule's following fire, at least `minGraceMs` (2 s) and at
 * most `maxGraceMs` (60 s). A fixed grace cannot serve both ends: 60 s would
 * turn a 10 s outage of an every-second schedule into ten "on time" fires,
 * while 2 s would call an hourly job missed when a busy poller reaches it 3 s
 * late — losing a nightly run is worse than an extra one. Fires within their
 * grace always run; the catch-up policy decides the missed ones:
 * - `skip`: none of them runs;
 * - `latest`: the latest of them runs once;
 * - `all`: the latest `catchUpLimit` of them run, the older are skipped.
 *
 * A schedule down for longer than {@link MAX_ENUMERATED_FIRES} fires is not
 * walked fire by fire: croner jumps to the last minute, and the fires before
 * it are one skipped range of unknown count.
 */

export interface DueSchedule extends CronSpec {
  /** The earliest fire not yet handled; at or before `now` when due. */
  nextFireAt: Date;
  catchUp: ScheduleCatchUp;
  catchUpLimit: number;
}

export interface GraceOptions {
  minGraceMs?: number;
  maxGraceMs?: number;
}

export const DEFAULT_MIN_GRACE_MS = 2_000;
export const DEFAULT_MAX_GRACE_MS = 60_000;
/** Due fires walked one by one in a pass before the rest counts as one long outage. */
export const MAX_ENUMERATED_FIRES = 1_000;
/** Skipped fires recorded one row each; older ones in the same pass share a row. */
export const MAX_SKIP_ROWS = 100;

export interface SkippedFire {
  fireAt: Date;
  reason: string;
}

export interface SkippedRange {
  fireAt: Date;
  throughFireAt: Date;
  /** null when the outage was too long to count. */
  count: number | null;
  reason: string;
}

export interface FirePlan {
  /** Fires to start (subject to the overlap policy), earliest first. */
  start: Date[];
  /** Of those, the missed fires the catch-up policy runs, with why (recorded on their ScheduleRuns rows). */
  caughtUp: SkippedFire[];
  /** Skipped fires recorded one row each, earliest first. */
  skipped: SkippedFire[];
  /** Older skipped fires as one row, when there are more than {@link MAX_SKIP_ROWS}. */
  skippedRange: SkippedRange | null;
  /** The schedule's next unhandled fire after this pass; null when none is left. */
  nextFireAt: Date | null;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

export function planFires(schedule: DueSchedule, now: Date, options: GraceOptions = {}): FirePlan {
  const minGrace = options.minGraceMs ?? DEFAULT_MIN_GRACE_MS;
  const maxGrace = options.maxGraceMs ?? DEFAULT_MAX_GRACE_MS;
  const times = new FireTimes(schedule);
  const nowMs = now.getTime();

  // The due fires, each with the one after it (its grace).
  const due: { at: Date; following: Date | null }[] = [];
  let cursor: Date | null = schedule.nextFireAt;
  let overflow = false;
  while (cursor !== null && cursor.getTime() <= nowMs) {
    if (due.length === MAX_ENUMERATED_FIRES) {
      overflow = true;
      break;
    }
    const following = times.next(cursor);
    due.push({ at: cursor, following });
    cursor = following;
  }

  // In a long outage, only the last maxGrace can hold a fire within its grace: walk from there; every fire
  // before it is missed, and croner finds the ones the policy keeps without walking them.
  let olderThan: Date | null = null;
  if (overflow) {
    const recentFrom = new Date(nowMs - maxGrace);
    due.length = 0;
    let t = times.firstFrom(recentFrom);
    while (t !== null && t.getTime() <= nowMs) {
      const following = times.next(t);
      due.push({ at: t, following });
      t = following;
    }
    cursor = t;
    olderThan = due[0]?.at ?? recentFrom;
  }

  const onTime: Date[] = [];
  const missed: { at: Date; lateMs: number }[] = [];
  for (const fire of due) {
    const period = fire.following === null ? maxGrace : fire.following.getTime() - fire.at.getTime();
    const grace = Math.min(maxGrace, Math.max(minGrace, period));
    const lateMs = nowMs - fire.at.getTime();
    if (lateMs > grace) missed.push({ at: fire.at, lateMs });
    else onTime.push(fire.at);
  }

  // The latest missed fires the policy runs; the rest are skipped.
  let keep = 0;
  if (schedule.catchUp === "latest") keep = 1;
  else if (schedule.catchUp === "all") keep = Math.max(1, schedule.catchUpLimit);
  let caughtUp = missed.slice(Math.max(0, missed.length - keep)).map((m) => m.at);
  let longOutage: { from: Date; through: Date } | null = null;
  if (olderThan !== null) {
    const extra = keep > caughtUp.length ? times.previous(keep - caughtUp.length, olderThan).filter((d) => d >= schedule.nextFireAt).reverse() : [];
    caughtUp = [...extra, ...caughtUp];
    const through = times.previous(1, extra[0] ?? olderThan)[0];
    if (through !== undefined && through >= schedule.nextFireAt) longOutage = { from: schedule.nextFireAt, through };
  }
  const kept = new Set(caughtUp.map((d) => d.getTime()));
  const why = (lateMs: number): string => {
    const late = `missed: reached ${seconds(lateMs)} late (the scheduler was not running)`;
    if (schedule.catchUp === "skip") return `${late}; the catch-up policy skips missed fires`;
    if (schedule.catchUp === "latest") return `${late}; the catch-up policy runs only the latest missed fire`;
    return `${late}; beyond the catch-up limit of ${schedule.catchUpLimit} missed fires`;
  };
  const skippedAll: SkippedFire[] = missed.filter((m) => !kept.has(m.at.getTime())).map((m) => ({ fireAt: m.at, reason: why(m.lateMs) }));

  let skippedRange: SkippedRange | null = null;
  if (longOutage !== null) {
    skippedRange = { fireAt: longOutage.from, throughFireAt: longOutage.through, count: null, reason: why(nowMs - longOutage.from.getTime()) };
  }
  let skipped = skippedAll;
  if (skippedAll.length > MAX_SKIP_ROWS) {
    const older = skippedAll.slice(0, skippedAll.length - MAX_SKIP_ROWS);
    skipped = skippedAll.slice(skippedAll.length - MAX_SKIP_ROWS);
    const first = older[0]!;
    const last = older[older.length - 1]!;
    skippedRange =
      skippedRange === null
        ? { fireAt: first.fireAt, throughFireAt: last.fireAt, count: older.length, reason: first.reason }
        : { ...skippedRange, throughFireAt: last.fireAt, count: null };
  }

  const start = [...caughtUp, ...onTime].sort((a, b) => a.getTime() - b.getTime());
  const policy = schedule.catchUp === "latest" ? "the catch-up policy runs the latest missed fire" : `the catch-up policy runs the latest ${schedule.catchUpLimit} missed fires`;
  const caughtUpReasons = caughtUp.map((fireAt) => ({ fireAt, reason: `caught up: reached ${seconds(nowMs - fireAt.getTime())} late; ${policy}` }));
  return { start, caughtUp: caughtUpReasons, skipped, skippedRange, nextFireAt: cursor };
}

export type OverlapDecision = { action: "start" } | { action: "skip"; reason: string } | { action: "queue"; reason: string };

/**
 * What the overlap policy makes of one fire, given the run this schedule
 * started last (`running` when it has not ended) and whether a fire is
 * already queued behind it.
 */
export function decideOverlap(policy: ScheduleOverlap, previous: { workflowId: string; running: boolean } | null, queued: boolean): OverlapDecision {
  if (policy === "allow" || previous === null || !previous.running) return { action: "start" };
  if (policy === "skip") return { action: "skip", reason: `the previous run ${previous.workflowId} is still running (overlap policy skip)` };
  if (queued) return { action: "skip", reason: `a fire is already queued behind the running ${previous.workflowId} (overlap policy queue holds one)` };
  return { action: "queue", reason: `queued until the running ${previous.workflowId} ends (overlap policy queue)` };
}
