import { afterEach, describe, expect, it, vi } from "vitest";
import { debounce, describeFailure, dueText, inboxBadge, isInboxTab } from "./inbox-model";

describe("dueText", () => {
  const now = new Date("2026-01-10T12:00:00Z");
  it("says when, and says overdue", () => {
    expect(dueText(null, false, now)).toBeNull();
    expect(dueText("2026-01-10T14:00:00Z", false, now)).toBe("Due in 2 hours");
    expect(dueText("2026-01-07T12:00:00Z", true, now)).toBe("Overdue: due 3 days ago");
  });
});

describe("describeFailure", () => {
  it("carries the server's field errors on a BAD_REQUEST", () => {
    const f = describeFailure({ message: "Invalid", data: { code: "BAD_REQUEST", fieldErrors: [{ path: "/amount", message: "must be <= 100" }, { bogus: 1 }] } }, "submit");
    expect(f.title).toBe("Some fields need attention");
    expect(f.fieldErrors).toEqual([{ path: "/amount", message: "must be <= 100" }]);
  });
  it("names a conflict and a refusal plainly, keeping the server's reason", () => {
    expect(describeFailure({ message: "Someone else completed this task.", data: { code: "CONFLICT" } }, "submit")).toEqual({
      title: "This task has moved on",
      message: "Someone else completed this task.",
      fieldErrors: [],
    });
    expect(describeFailure({ message: "You started this run", data: { code: "FORBIDDEN" } }, "submit").title).toBe("You cannot complete this task");
    expect(describeFailure({ message: "", data: { code: "CONFLICT" } }, "claim")).toMatchObject({ title: "Someone else has this task", message: "Something went wrong. Try again." });
    expect(describeFailure(new Error("network down"), "release")).toMatchObject({ title: "Not released", message: "network down" });
  });
});

describe("helpers", () => {
  afterEach(() => vi.useRealTimers());
  it("inboxBadge counts what is directed at me, else the unclaimed, never both", () => {
    expect(inboxBadge(undefined)).toBeNull();
    expect(inboxBadge({ mine: 0, groups: 0, unclaimed: 0 })).toBeNull();
    expect(inboxBadge({ mine: 1, groups: 2, unclaimed: 3 })).toEqual({ count: 3, kind: "yours" });
    expect(inboxBadge({ mine: 0, groups: 0, unclaimed: 4 })).toEqual({ count: 4, kind: "unclaimed" });
  });
  it("isInboxTab", () => {
    expect(isInboxTab("closed")).toBe(true);
    expect(isInboxTab("other")).toBe(false);
  });
  it("debounce runs once per burst", () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const d = debounce(fn, 100);
    d.call();
    d.call();
    vi.advanceTimersByTime(50);
    d.call();
    vi.advanceTimersByTime(99);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    d.call();
    d.cancel();
    vi.advanceTimersByTime(200);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});
