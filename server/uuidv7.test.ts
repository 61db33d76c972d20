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
});
