import { describe, expect, it } from "vitest";
import { formatRelativeTime, pluralize } from "./format";

const now = new Date("2025-06-15T12:00:00Z");
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

describe("formatRelativeTime", () => {
  it("says just now under 45 seconds, either way", () => {
    expect(formatRelativeTime(ago(10), now)).toBe("just now");
    expect(formatRelativeTime(ago(-10), now)).toBe("just now");
  });

  it("picks the largest unit that fits", () => {
    expect(formatRelativeTime(ago(60), now)).toBe("1 minute ago");
    expect(formatRelativeTime(ago(5 * 60), now)).toBe("5 minutes ago");
    expect(formatRelativeTime(ago(3 * 3600), now)).toBe("3 hours ago");
    expect(formatRelativeTime(ago(24 * 3600), now)).toBe("yesterday");
    expect(formatRelativeTime(ago(14 * 24 * 3600), now)).toBe("2 weeks ago");
    expect(formatRelativeTime(ago(400 * 24 * 3600), now)).toBe("last year");
  });

  it("phrases the future as in …", () => {
    expect(formatRelativeTime(ago(-2 * 3600), now)).toBe("in 2 hours");
  });
});

describe("pluralize", () => {
  it("uses the singular for exactly one", () => {
    expect(pluralize(1, "workflow")).toBe("1 workflow");
    expect(pluralize(0, "workflow")).toBe("0 workflows");
    expect(pluralize(2, "match", "matches")).toBe("2 matches");
  });
});
