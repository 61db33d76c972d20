import { describe, expect, it } from "vitest";
import { dashboardWindow, failureRate, toPoints, totalCounts, zeroCounts } from "./dashboard-window";
import { mergeBuckets } from "./read-run-dashboard";

const NOW = new Date("2026-03-04T10:17:42.500Z");

describe("dashboardWindow", () => {
  it("ends with the bucket holding now, aligned to the epoch, one range long", () => {
    expect(dashboardWindow("hour", NOW)).toEqual({ range: "hour", from: new Date("2026-03-04T09:18:00Z"), to: new Date("2026-03-04T10:18:00Z"), stepSeconds: 60, buckets: 60 });
    expect(dashboardWindow("day", NOW)).toMatchObject({ from: new Date("2026-03-03T10:30:00Z"), to: new Date("2026-03-04T10:30:00Z"), stepSeconds: 900, buckets: 96 });
    expect(dashboardWindow("week", NOW)).toMatchObject({ from: new Date("2026-02-25T11:00:00Z"), to: new Date("2026-03-04T11:00:00Z"), stepSeconds: 3600, buckets: 168 });
  });

  it("puts a now on a boundary into the bucket it starts", () => {
    expect(dashboardWindow("hour", new Date("2026-03-04T10:17:00Z")).to).toEqual(new Date("2026-03-04T10:18:00Z"));
  });
});

describe("failureRate", () => {
  it("is failed and timed out over every ended run, terminated included in the ended only", () => {
    expect(failureRate({ ...zeroCounts(), COMPLETED: 6, FAILED: 1, TIMED_OUT: 1, TERMINATED: 2, RUNNING: 5 })).toBeCloseTo(0.2);
  });

  it("is null, not 0, when nothing ended", () => {
    expect(failureRate({ ...zeroCounts(), RUNNING: 3, PAUSED: 1 })).toBeNull();
  });
});

describe("toPoints", () => {
  const window = dashboardWindow("day", NOW);

  it("fills every bucket in order, rates per minute of the bucket", () => {
    const points = toPoints(window, [
      { at: new Date(window.from.getTime() + 900_000 * 3), counts: { COMPLETED: 30, FAILED: 15 }, durationP50Ms: 12, durationP95Ms: 40, queueWaitP50Ms: 1, queueWaitP95Ms: 2 },
    ]);
    expect(points).toHaveLength(96);
    expect(points[0]).toMatchObject({ at: window.from.toISOString(), failureRate: null, durationP50Ms: null, counts: zeroCounts() });
    expect(points[3]).toMatchObject({ failureRate: 1 / 3, durationP95Ms: 40, queueWaitP95Ms: 2 });
    expect(points[3]!.perMinute).toMatchObject({ COMPLETED: 2, FAILED: 1, RUNNING: 0 });
    expect(totalCounts(points)).toMatchObject({ COMPLETED: 30, FAILED: 15 });
  });

  it("refuses a bucket off the window's grid instead of drawing it somewhere", () => {
    const row = { counts: {}, durationP50Ms: null, durationP95Ms: null, queueWaitP50Ms: null, queueWaitP95Ms: null };
    expect(() => toPoints(window, [{ ...row, at: window.to }])).toThrow(RangeError);
    expect(() => toPoints(window, [{ ...row, at: new Date(window.from.getTime() + 1000) }])).toThrow(RangeError);
  });
});

describe("mergeBuckets", () => {
  it("joins runs and waits per bucket, keeps a bucket that has only waits, and drops the window rows", () => {
    const a = new Date("2026-03-04T10:00:00Z");
    const b = new Date("2026-03-04T10:01:00Z");
    const merged = mergeBuckets(
      [
        { at: null, counts: { COMPLETED: 9 }, durationP50Ms: 1, durationP95Ms: 2 },
        { at: a, counts: { COMPLETED: 9 }, durationP50Ms: 5, durationP95Ms: 9 },
      ],
      [
        { at: null, tasks: 4, queueWaitP50Ms: 1, queueWaitP95Ms: 1 },
        { at: a, tasks: 3, queueWaitP50Ms: 7, queueWaitP95Ms: 8 },
        { at: b, tasks: 1, queueWaitP50Ms: 70, queueWaitP95Ms: 70 },
      ],
    );
    expect(merged).toEqual([
      { at: a, counts: { COMPLETED: 9 }, durationP50Ms: 5, durationP95Ms: 9, queueWaitP50Ms: 7, queueWaitP95Ms: 8 },
      { at: b, counts: {}, durationP50Ms: null, durationP95Ms: null, queueWaitP50Ms: 70, queueWaitP95Ms: 70 },
    ]);
  });
});
