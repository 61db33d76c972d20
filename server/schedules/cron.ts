import { Cron } from "croner";

/**
 * Cron expressions as schedules read them, through croner (no hand-written
 * parsing): 5 fields (minute precision), 6 (seconds first, Conductor's Spring
 * shape, `?` allowed) or an alias (`@hourly`, `@daily`, `@weekly`, `@monthly`,
 * `@yearly`), in an IANA time zone, between optional start and end times (both
 * inclusive). Seven fields (a year) and `@reboot` are refused.
 *
 * DST is croner's, which follows Vixie cron (its README, "DST handling"):
 * - a fixed-time job (one value in each of second, minute and hour, e.g.
 *   `30 2 * * *`) whose time falls in a spring-forward gap runs at the first
 *   valid time after the gap, and once when a fall-back repeats its time;
 * - any other job (a wildcard, step, range or list in those fields) skips the
 *   times in a gap and runs on both occurrences of a repeated time.
 * {@link dstNotes} says which applies to a schedule around its zone's next
 * transitions, for the console.
 */

export interface CronSpec {
  cronExpression: string;
  zoneId: string;
  startAt?: Date | null;
  endAt?: Date | null;
}

export type CronCheck = { ok: true } | { ok: false; field: "cronExpression" | "zoneId"; message: string };

const ZONE_PATTERN = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;

/** Whether `zone` is an IANA zone this runtime knows (`UTC`, `Europe/Berlin`); offsets like `+02:00` are refused. */
export function isKnownZone(zone: string): boolean {
  if (!ZONE_PATTERN.test(zone)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Why croner refuses an expression, in words a form can show next to the field. */
function cronMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^CronPattern:\s*/, "").replace(/^./, (c) => c.toUpperCase());
}

function build(spec: CronSpec): Cron {
  return new Cron(spec.cronExpression.trim(), {
    timezone: spec.zoneId,
    mode: "5-or-6-parts",
    // Quartz's and Spring's "0/15" (from 0, every 15), which Conductor's own examples use.
    sloppyRanges: true,
    ...(spec.startAt ? { startAt: spec.startAt } : {}),
    // croner's stopAt is exclusive; a schedule's end time is its last possible fire.
    ...(spec.endAt ? { stopAt: new Date(spec.endAt.getTime() + 1) } : {}),
  });
}

/** Checks an expression and a zone; a refusal names the field. */
export function checkCron(expression: string, zone: string): CronCheck {
  if (!isKnownZone(zone)) return { ok: false, field: "zoneId", message: `"${zone}" is not an IANA time zone (e.g. UTC, Europe/Berlin, America/New_York)` };
  const trimmed = expression.trim();
  if (trimmed === "") return { ok: false, field: "cronExpression", message: "A cron expression is required" };
  if (/^@reboot$/i.test(trimmed)) return { ok: false, field: "cronExpression", message: "@reboot has no fire times; use a cron expression or @hourly, @daily, @weekly, @monthly, @yearly" };
  try {
    build({ cronExpression: trimmed, zoneId: zone });
    return { ok: true };
  } catch (error) {
    return { ok: false, field: "cronExpression", message: cronMessage(error) };
  }
}

/**
 * A parsed schedule's fire times. Construct only from a spec {@link checkCron}
 * accepted; the constructor throws otherwise.
 */
export class FireTimes {
  private readonly job: Cron;

  constructor(readonly spec: CronSpec) {
    this.job = build(spec);
  }

  /** The first fire strictly after `after`, or null when the end time has passed. */
  next(after: Date): Date | null {
    return this.job.nextRun(after);
  }

  /** Up to `count` fires strictly after `after`, earliest first. */
  nextFew(count: number, after: Date): Date[] {
    return this.job.nextRuns(count, after);
  }

  /** Up to `count` fires strictly before `before`, latest first. */
  previous(count: number, before: Date): Date[] {
    return this.job.previousRuns(count, before);
  }

  /** The first fire at or after `at` (a fire exactly at `at` included). */
  firstFrom(at: Date): Date | null {
    return this.next(new Date(at.getTime() - 1));
  }

  /** True for a fixed-time job (see the module comment): DST gaps shift it, repeats run it once. */
  get fixedTime(): boolean {
    // croner keeps the parsed pattern private; its flag is the rule it applies, so read it rather than re-derive it.
    const states = (this.job as unknown as { _states?: { pattern?: { isFixedTime?: boolean } } })._states;
    return states?.pattern?.isFixedTime === true;
  }
}

/** A zone's UTC offset at `at`, in minutes (east positive). */
export function zoneOffsetMinutes(zone: string, at: Date): number {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" }).formatToParts(at);
  const name = parts.find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const match = /GMT([+-])(\d{2}):?(\d{2})?/.exec(name);
  if (!match) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3] ?? 0);
  return match[1] === "-" ? -minutes : minutes;
}

export interface DstTransition {
  /** The instant the offset changes. */
  at: Date;
  fromOffsetMinutes: number;
  toOffsetMinutes: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The zone's offset changes in [from, from + horizonMs), found by a daily scan and a bisection to the minute. */
export function dstTransitions(zone: string, from: Date, horizonMs = 366 * DAY): DstTransition[] {
  const out: DstTransition[] = [];
  let previousAt = from.getTime();
  let previousOffset = zoneOffsetMinutes(zone, from);
  for (let t = previousAt + DAY; t <= from.getTime() + horizonMs; t += DAY) {
    const offset = zoneOffsetMinutes(zone, new Date(t));
    if (offset !== previousOffset) {
      let lo = previousAt;
      let hi = t;
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 2);
        if (zoneOffsetMinutes(zone, new Date(mid)) === previousOffset) lo = mid;
        else hi = mid;
      }
      out.push({ at: new Date(hi - (hi % 60_000)), fromOffsetMinutes: previousOffset, toOffsetMinutes: offset });
      previousOffset = offset;
    }
    previousAt = t;
  }
  return out;
}

/** The wall-clock time `at` shows in `zone`, as "YYYY-MM-DD HH:mm". */
export function localTime(zone: string, at: Date): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

/**
 * What the zone's DST transitions in the next year do to this schedule, one
 * sentence each, with whether a fire of the schedule falls in the hour
 * affected. Empty for a zone without DST (UTC).
 */
export function dstNotes(spec: CronSpec, from: Date): string[] {
  const times = new FireTimes(spec);
  const notes: string[] = [];
  for (const transition of dstTransitions(spec.zoneId, from)) {
    const shiftMinutes = Math.abs(transition.toOffsetMinutes - transition.fromOffsetMinutes);
    const forward = transition.toOffsetMinutes > transition.fromOffsetMinutes;
    // The local wall-clock time at the change, as people read it ("02:00 becomes 03:00").
    const before = localTime(spec.zoneId, new Date(transition.at.getTime() - 1));
    const wallBefore = addMinutesToWall(before, 1);
    const wallAfter = localTime(spec.zoneId, transition.at);
    // Fires within the affected hour(s) on either side of the change.
    const window = times.nextFew(200, new Date(transition.at.getTime() - shiftMinutes * 60_000 - 1)).filter((t) => t.getTime() <= transition.at.getTime() + shiftMinutes * 60_000);
    const affected = window.length > 0;
    const day = wallBefore.slice(0, 10);
    if (forward) {
      notes.push(
        `${day}: clocks in ${spec.zoneId} go forward at ${wallBefore.slice(11)} to ${wallAfter.slice(11)}; ` +
          (times.fixedTime
            ? "a fire set inside the skipped time runs at the first time after it."
            : "fires set inside the skipped time do not happen.") +
          (affected ? "" : " No fire of this schedule falls in it."),
      );
    } else {
      notes.push(
        `${day}: clocks in ${spec.zoneId} go back at ${wallBefore.slice(11)} to ${wallAfter.slice(11)}, so that hour happens twice; ` +
          (times.fixedTime ? "a fire set in it runs once, at the first occurrence." : "fires set in it run in both occurrences.") +
          (affected ? "" : " No fire of this schedule falls in it."),
      );
    }
  }
  return notes;
}

function addMinutesToWall(wall: string, minutes: number): string {
  const [date, time] = wall.split(" ") as [string, string];
  const [h, m] = time.split(":").map(Number) as [number, number];
  const total = h * 60 + m + minutes;
  if (total >= 24 * 60) return `${date} 24:00`;
  return `${date} ${String(Math.floor(total / 60)).padStart(2, "0")}:${String(total % 60).padStart(2, "0")}`;
}
