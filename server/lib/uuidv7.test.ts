import { describe, expect, it } from "vitest";
import { uuidv7 } from "./uuidv7";

describe("uuidv7", () => {
  it("is a version 7, variant 10 UUID whose first 48 bits are the milliseconds", () => {
    const at = Date.UTC(2026, 11, 2, 4, 14, 0, 123);
    const id = uuidv7(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(at);
  });

  it("sorts by time across milliseconds and differs within one", () => {
    const ids = [uuidv7(1_000), uuidv7(1_001), uuidv7(2_000_000_000_000)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 1000 }, () => uuidv7(5))).size).toBe(1000);
  });

  it("made from the clock, increases strictly, within a millisecond too: a batch of ids sorts in the order it was made", () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7());
    const sorted = [...ids].sort();
    expect(sorted).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Close to the clock: a counter that ran out moves the time on by a millisecond at a time.
    const last = Number.parseInt(ids.at(-1)!.replace(/-/g, "").slice(0, 12), 16);
    expect(Math.abs(last - Date.now())).toBeLessThan(1_000);
  });
});

