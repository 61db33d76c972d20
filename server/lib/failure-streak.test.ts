import { describe, expect, it, vi } from "vitest";
import { FailureStreak, isUnreachable, oneLine } from "./failure-streak";

function logger() {
  return { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
}

function refused(): Error {
  return Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
}

describe("FailureStreak", () => {
  it("logs the start of an outage once, a summary per interval, and the recovery once", () => {
    let now = 0;
    const log = logger();
    const streak = new FailureStreak({ what: "runner decide", logger: log, fields: { runner: "decide" }, summaryEveryMs: 30_000, now: () => now });
    // A pass every 250 ms for 65 s: 260 failures.
    for (let i = 0; i < 260; i++, now += 250) streak.failed(refused());
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(log.error.mock.calls[0]).toEqual([{ runner: "decide", error: "connect ECONNREFUSED 127.0.0.1:5432" }, "runner decide failing: connect ECONNREFUSED 127.0.0.1:5432"]);
    expect(log.warn).toHaveBeenCalledTimes(2);
    expect(log.warn.mock.calls[0]?.[0]).toMatchObject({ runner: "decide", failures: 121, forSeconds: 30, lastError: "connect ECONNREFUSED 127.0.0.1:5432" });
    streak.succeeded();
    streak.succeeded();
    expect(log.info).toHaveBeenCalledTimes(1);
    expect(log.info.mock.calls[0]?.[0]).toMatchObject({ runner: "decide", failures: 260, forSeconds: 65 });
    expect(streak.count).toBe(0);
    // A new outage starts a new streak with its own first line.
    streak.failed(refused());
    expect(log.error).toHaveBeenCalledTimes(2);
  });

  it("keeps the stack of an error that is not the database being away, on the first line only", () => {
    const log = logger();
    const streak = new FailureStreak({ what: "runner timers", logger: log });
    const bug = new TypeError("cannot read properties of undefined");
    streak.failed(bug);
    streak.failed(bug);
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(log.error.mock.calls[0]?.[0]).toEqual({ err: bug });
  });
});

describe("isUnreachable", () => {
  it("knows the database being away from a bug", () => {
    expect(isUnreachable(refused())).toBe(true);
    expect(isUnreachable(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }))).toBe(true);
    expect(isUnreachable(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isUnreachable(new AggregateError([refused()], ""))).toBe(true);
    expect(isUnreachable(new TypeError("x is undefined"))).toBe(false);
    expect(isUnreachable("ECONNREFUSED")).toBe(false);
  });

  it("says an error in one line, with its code", () => {
    expect(oneLine(Object.assign(new Error("the database system is starting up"), { code: "57P03" }))).toBe("the database system is starting up (57P03)");
    expect(oneLine(new AggregateError([refused()], ""))).toBe("connect ECONNREFUSED 127.0.0.1:5432");
  });
});
