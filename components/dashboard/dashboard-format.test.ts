import { describe, expect, it } from "vitest";
import { dashboardHref, dashboardQueryFrom, formatPerMinute, formatRate, isLonePoint } from "./dashboard-format";

describe("dashboard formats", () => {
  it("reads a failure rate as a percentage, and no rate as a dash", () => {
    expect(formatRate(null)).toBe("—");
    expect(formatRate(0)).toBe("0 %");
    expect(formatRate(0.0125)).toBe("1.3 %");
    expect(formatRate(0.25)).toBe("25 %");
    expect(formatRate(1)).toBe("100 %");
  });

  it("reads runs per minute with the precision its size needs", () => {
    expect(formatPerMinute(0)).toBe("0/min");
    expect(formatPerMinute(0.0667)).toBe("0.07/min");
    expect(formatPerMinute(2.5)).toBe("2.5/min");
    expect(formatPerMinute(42.4)).toBe("42/min");
  });

  it("reads the range and workflow from the URL, falling back to the last hour of every workflow", () => {
    expect(dashboardQueryFrom({})).toEqual({ range: "hour", workflow: null });
    expect(dashboardQueryFrom({ range: "week", workflow: " orders " })).toEqual({ range: "week", workflow: "orders" });
    expect(dashboardQueryFrom({ range: "year", workflow: "" })).toEqual({ range: "hour", workflow: null });
    expect(dashboardQueryFrom({ range: ["day", "week"], workflow: ["a", "b"] })).toEqual({ range: "day", workflow: "a" });
  });

  it("writes a URL that reads back as the same view", () => {
    expect(dashboardHref({ range: "hour", workflow: null })).toBe("/dashboard");
    expect(dashboardHref({ range: "day", workflow: "orders & co" })).toBe("/dashboard?range=day&workflow=orders+%26+co");
    for (const q of [{ range: "week", workflow: "a b" }, { range: "hour", workflow: "x" }] as const) {
      const url = new URL(dashboardHref(q), "http://x");
      expect(dashboardQueryFrom(Object.fromEntries(url.searchParams))).toEqual(q);
    }
  });

  it("marks a measured point with no measured neighbour, at the edges too", () => {
    const values = [1, null, 2, 3, null, 0];
    expect(values.map((_, i) => isLonePoint(values, i))).toEqual([true, false, false, false, false, true]);
    expect(isLonePoint([null, null], 0)).toBe(false);
  });
});
