import { describe, expect, it } from "vitest";
import { runLanes } from "./runners";

/** A lane that reports `backlogs` backlogs, one per tick, then ends with `count`. */
function lane(log: { open: number; most: number; started: number }, backlogs: number, count: number) {
  return async (onBacklog: () => void): Promise<number> => {
    log.started++;
    log.open++;
    log.most = Math.max(log.most, log.open);
    for (let i = 0; i < backlogs; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      onBacklog();
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    log.open--;
    return count;
  };
}

describe("runLanes", () => {
  it("runs one lane when it reports no backlog", async () => {
    const log = { open: 0, most: 0, started: 0 };
    expect(await runLanes(4, lane(log, 0, 3))).toBe(3);
    expect(log).toEqual({ open: 0, most: 1, started: 1 });
  });

  it("opens a lane per backlog reported, never more than the maximum at once, and sums their counts", async () => {
    const log = { open: 0, most: 0, started: 0 };
    // Each lane reports two backlogs: 1 → 3 → … until four are open, after which a backlog opens nothing.
    const total = await runLanes(4, lane(log, 2, 5));
    expect(log.most).toBe(4);
    expect(log.open).toBe(0);
    expect(total).toBe(5 * log.started);
  });

  it("lets the other lanes finish, then rejects with the first failure", async () => {
    let calls = 0;
    let finished = 0;
    const result = runLanes(3, async (onBacklog) => {
      const n = calls++;
      onBacklog();
      if (n === 0) throw new Error("lane failed");
      await new Promise((resolve) => setTimeout(resolve, 5));
      finished++;
      return 1;
    });
    await expect(result).rejects.toThrow("lane failed");
    expect([calls, finished]).toEqual([3, 2]);
  });
});
