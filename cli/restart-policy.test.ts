import { describe, expect, it } from "vitest";
import { RestartPolicy } from "./restart-policy";

describe("RestartPolicy", () => {
  it("backs off 0.5 s doubling to 30 s, and gives up on the sixth death within five minutes", () => {
    let now = 0;
    const policy = new RestartPolicy({ now: () => now });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      now += 1_000;
      const decision = policy.exited();
      expect(decision.restart).toBe(true);
      if (decision.restart) delays.push(decision.delayMs);
      policy.started();
    }
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000]);
    now += 1_000;
    const last = policy.exited();
    expect(last).toEqual({ restart: false, reason: "it died 6 times within 5 minutes" });
  });

  it("caps the backoff at 30 s", () => {
    let now = 0;
    const policy = new RestartPolicy({ now: () => now, maxRestarts: 100 });
    let delay = 0;
    for (let i = 0; i < 10; i++) {
      now += 10;
      const decision = policy.exited();
      if (decision.restart) delay = decision.delayMs;
    }
    expect(delay).toBe(30_000);
  });

  it("starts the backoff over after a minute healthy, and forgets deaths older than the window", () => {
    let now = 0;
    const policy = new RestartPolicy({ now: () => now });
    for (let i = 0; i < 4; i++) {
      now += 1_000;
      policy.exited();
      policy.started();
    }
    now += 61_000;
    expect(policy.exited()).toMatchObject({ restart: true, delayMs: 500 });
    policy.started();
    // Five minutes on, the earlier deaths no longer count towards a crash loop.
    now += 5 * 60_000;
    for (let i = 0; i < 5; i++) {
      now += 1_000;
      expect(policy.exited().restart).toBe(true);
      policy.started();
    }
  });
});
