import { describe, expect, it } from "vitest";
import { checkCron, dstNotes, dstTransitions, FireTimes, isKnownZone } from "./cron";
import { decideOverlap, MAX_SKIP_ROWS, planFires } from "./plan-fires";
import type { DueSchedule } from "./plan-fires";

const at = (iso: string) => new Date(iso);
const isoList = (dates: readonly Date[]) => dates.map((d) => d.toISOString());

function everySecond(overrides: Partial<DueSchedule> = {}): DueSchedule {
  return { cronExpression: "* * * * * *", zoneId: "UTC", nextFireAt: at("2027-01-01T00:00:00Z"), catchUp: "skip", catchUpLimit: 3, ...overrides };
}

describe("checkCron", () => {
  it("takes 5 and 6 fields and the aliases, in an IANA zone", () => {
    for (const expression of ["*/5 * * * *", "0 0 9 * * MON-FRI", "0 0 2 * * ?", "0 0/15 * * * ?", "@hourly", "@daily", "@weekly", "@monthly", "@yearly"]) {
      expect(checkCron(expression, "Europe/Berlin"), expression).toEqual({ ok: true });
    }
  });

  it("refuses what it cannot fire, naming the field", () => {
    const minute = checkCron("61 * * * *", "UTC");
    expect(minute).toMatchObject({ ok: false, field: "cronExpression" });
    expect(!minute.ok && minute.message).toContain("minute");
    expect(checkCron("* * * *", "UTC")).toMatchObject({ ok: false, field: "cronExpression" });
    expect(checkCron("0 0 0 1 1 * 2030", "UTC")).toMatchObject({ ok: false, field: "cronExpression" });
    expect(checkCron("@reboot", "UTC")).toMatchObject({ ok: false, field: "cronExpression" });
    expect(checkCron("", "UTC")).toMatchObject({ ok: false, field: "cronExpression" });
    expect(checkCron("* * * * *", "Mars/Base")).toMatchObject({ ok: false, field: "zoneId" });
    expect(checkCron("* * * * *", "+02:00")).toMatchObject({ ok: false, field: "zoneId" });
  });

  it("knows zones by their IANA names", () => {
    expect(isKnownZone("UTC")).toBe(true);
    expect(isKnownZone("America/Argentina/Buenos_Aires")).toBe(true);
    expect(isKnownZone("Not/AZone")).toBe(false);
  });
});

describe("FireTimes", () => {
  it("keeps start and end times inclusive", () => {
    const times = new FireTimes({ cronExpression: "* * * * * *", zoneId: "UTC", startAt: at("2027-01-01T00:00:00Z"), endAt: at("2027-01-01T00:00:02Z") });
    expect(isoList(times.nextFew(10, at("2026-12-31T23:59:50Z")))).toEqual(["2027-01-01T00:00:00.000Z", "2027-01-01T00:00:01.000Z", "2027-01-01T00:00:02.000Z"]);
    expect(times.next(at("2027-01-01T00:00:02Z"))).toBeNull();
  });

  it("moves a fixed-time job out of a spring-forward gap and runs an interval job's repeated hour twice (croner's DST rules)", () => {
    // Europe/Berlin, 2027-03-28: 02:00 local becomes 03:00 (01:00 UTC).
    const fixed = new FireTimes({ cronExpression: "30 2 * * *", zoneId: "Europe/Berlin" });
    expect(fixed.fixedTime).toBe(true);
    expect(isoList(fixed.nextFew(3, at("2027-03-27T00:00:00Z")))).toEqual(["2027-03-27T01:30:00.000Z", "2027-03-28T01:00:00.000Z", "2027-03-29T00:30:00.000Z"]);
    // 2027-10-31: 03:00 local goes back to 02:00 (01:00 UTC); 02:00-03:00 happens twice.
    const interval = new FireTimes({ cronExpression: "0,30 2 * * *", zoneId: "Europe/Berlin" });
    expect(interval.fixedTime).toBe(false);
    expect(isoList(interval.nextFew(4, at("2027-10-30T22:00:00Z")))).toEqual([
      "2027-10-31T00:00:00.000Z",
      "2027-10-31T00:30:00.000Z",
      "2027-10-31T01:00:00.000Z",
      "2027-10-31T01:30:00.000Z",
    ]);
    expect(isoList(fixed.nextFew(2, at("2027-10-30T12:00:00Z")))).toEqual(["2027-10-31T00:30:00.000Z", "2027-11-01T01:30:00.000Z"]);
  });

  it("finds a zone's transitions and says what they do to the schedule", () => {
    const transitions = dstTransitions("Europe/Berlin", at("2027-01-01T00:00:00Z"));
    expect(transitions.map((t) => t.at.toISOString())).toEqual(["2027-03-28T01:00:00.000Z", "2027-10-31T01:00:00.000Z"]);
    expect(dstTransitions("UTC", at("2027-01-01T00:00:00Z"))).toEqual([]);
    const notes = dstNotes({ cronExpression: "30 2 * * *", zoneId: "Europe/Berlin" }, at("2027-01-01T00:00:00Z"));
    expect(notes).toHaveLength(2);
    expect(notes[0]).toContain("2027-03-28: clocks in Europe/Berlin go forward at 02:00 to 03:00");
    expect(notes[0]).toContain("runs at the first time after it");
    expect(notes[1]).toContain("runs once");
    const morning = dstNotes({ cronExpression: "0 9 * * *", zoneId: "Europe/Berlin" }, at("2027-01-01T00:00:00Z"));
    expect(morning[0]).toContain("No fire of this schedule falls in it");
  });
});

describe("planFires", () => {
  it("starts the fires that are due on time and advances past now", () => {
    const plan = planFires(everySecond(), at("2027-01-01T00:00:01.300Z"));
    expect(isoList(plan.start)).toEqual(["2027-01-01T00:00:00.000Z", "2027-01-01T00:00:01.000Z"]);
    expect(plan.skipped).toEqual([]);
    expect(plan.nextFireAt?.toISOString()).toBe("2027-01-01T00:00:02.000Z");
  });

  it("does nothing before the fire time", () => {
    const plan = planFires(everySecond(), at("2026-12-31T23:59:59.900Z"));
    expect(plan).toMatchObject({ start: [], skipped: [], skippedRange: null });
    expect(plan.nextFireAt?.toISOString()).toBe("2027-01-01T00:00:00.000Z");
  });

  // Ten seconds down: fires 00:00:00-00:00:09 are due at 00:00:10.5; a fire more than 2 s late is missed.
  const afterOutage = at("2027-01-01T00:00:10.500Z");
  const onTime = ["2027-01-01T00:00:09.000Z", "2027-01-01T00:00:10.000Z"];

  it("catch-up skip: runs none of the missed fires, and says why for each", () => {
    const plan = planFires(everySecond({ catchUp: "skip" }), afterOutage);
    expect(isoList(plan.start)).toEqual(onTime);
    expect(plan.skipped).toHaveLength(9);
    expect(plan.skipped[0]!.fireAt).toEqual(at("2027-01-01T00:00:00Z"));
    expect(plan.skipped[0]!.reason).toMatch(/^missed: reached 11 s late .*skips missed fires$/);
    expect(plan.nextFireAt?.toISOString()).toBe("2027-01-01T00:00:11.000Z");
  });

  it("catch-up latest: runs the latest missed fire once", () => {
    const plan = planFires(everySecond({ catchUp: "latest" }), afterOutage);
    expect(isoList(plan.start)).toEqual(["2027-01-01T00:00:08.000Z", ...onTime]);
    expect(plan.caughtUp.map((c) => c.fireAt)).toEqual([at("2027-01-01T00:00:08Z")]);
    expect(plan.caughtUp[0]!.reason).toMatch(/^caught up: reached 2\.5 s late; .*latest missed fire$/);
    expect(plan.skipped.map((s) => s.fireAt.getUTCSeconds())).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("catch-up all: runs the latest missed fires up to the limit", () => {
    const plan = planFires(everySecond({ catchUp: "all", catchUpLimit: 3 }), afterOutage);
    expect(isoList(plan.start)).toEqual(["2027-01-01T00:00:06.000Z", "2027-01-01T00:00:07.000Z", "2027-01-01T00:00:08.000Z", ...onTime]);
    expect(plan.skipped.map((s) => s.fireAt.getUTCSeconds())).toEqual([0, 1, 2, 3, 4, 5]);
    expect(plan.skipped[0]!.reason).toContain("beyond the catch-up limit of 3");
  });

  it("gives an hourly fire a minute's grace, so a slow pass does not lose it", () => {
    const hourly = { cronExpression: "@hourly", zoneId: "UTC", nextFireAt: at("2027-01-01T01:00:00Z"), catchUp: "skip" as const, catchUpLimit: 1 };
    expect(isoList(planFires(hourly, at("2027-01-01T01:00:45Z")).start)).toEqual(["2027-01-01T01:00:00.000Z"]);
    expect(planFires(hourly, at("2027-01-01T01:01:01Z")).skipped).toHaveLength(1);
  });

  it("records a long run of skipped fires as one row beyond the first hundred", () => {
    const plan = planFires(everySecond({ catchUp: "skip" }), at("2027-01-01T00:05:00.500Z"));
    expect(plan.skipped).toHaveLength(MAX_SKIP_ROWS);
    expect(plan.skippedRange).toMatchObject({ fireAt: at("2027-01-01T00:00:00Z"), count: 299 - MAX_SKIP_ROWS });
    expect(plan.skippedRange!.throughFireAt.getTime()).toBe(plan.skipped[0]!.fireAt.getTime() - 1000);
    expect(isoList(plan.start)).toEqual(["2027-01-01T00:04:59.000Z", "2027-01-01T00:05:00.000Z"]);
  });

  it("jumps over an outage too long to walk, keeping the policy's fires", () => {
    const days = everySecond({ catchUp: "all", catchUpLimit: 2, nextFireAt: at("2027-01-01T00:00:00Z") });
    const now = at("2027-01-03T00:00:00.500Z");
    const plan = planFires(days, now);
    expect(isoList(plan.start)).toEqual(["2027-01-02T23:59:57.000Z", "2027-01-02T23:59:58.000Z", "2027-01-02T23:59:59.000Z", "2027-01-03T00:00:00.000Z"]);
    const recorded = plan.skipped.length + 1;
    expect(recorded).toBeLessThan(200);
    expect(plan.skippedRange).toMatchObject({ fireAt: at("2027-01-01T00:00:00Z"), count: null });
    // Nothing between the range and the recorded fires is lost or counted twice.
    const handled = [plan.skippedRange!.throughFireAt, ...plan.skipped.map((s) => s.fireAt), ...plan.start].map((d) => d.getTime()).sort((a, b) => a - b);
    for (let i = 1; i < handled.length; i++) expect(handled[i]! - handled[i - 1]!).toBe(1000);
    expect(plan.nextFireAt?.toISOString()).toBe("2027-01-03T00:00:01.000Z");
  });

  it("ends at the end time", () => {
    const plan = planFires(everySecond({ endAt: at("2027-01-01T00:00:01Z") }), at("2027-01-01T00:00:05Z"));
    expect(plan.nextFireAt).toBeNull();
  });
});

describe("decideOverlap", () => {
  const running = { workflowId: "w1", running: true };
  it("allow starts regardless; every policy starts when nothing runs", () => {
    expect(decideOverlap("allow", running, false)).toEqual({ action: "start" });
    expect(decideOverlap("skip", { workflowId: "w1", running: false }, false)).toEqual({ action: "start" });
    expect(decideOverlap("queue", null, false)).toEqual({ action: "start" });
  });
  it("skip skips while the previous run runs; queue holds one fire and skips the next", () => {
    const skip = decideOverlap("skip", running, false);
    expect(skip.action === "skip" && skip.reason).toContain("w1 is still running");
    expect(decideOverlap("queue", running, false)).toMatchObject({ action: "queue" });
    const second = decideOverlap("queue", running, true);
    expect(second.action === "skip" && second.reason).toContain("already queued");
  });
});
