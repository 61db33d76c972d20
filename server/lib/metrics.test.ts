import { describe, expect, it } from "vitest";
import {
  Metrics,
  countLeaseExpiries,
  isScrapeAuthorized,
  observeEvaluation,
  processMetrics,
  recordRunnerPass,
} from "./metrics";

/** The value of the sample `name{labels}` in a text exposition, or undefined when there is no such line. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = [...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]);
    if (JSON.stringify(found.sort()) === wanted) return Number(match[3]);
  }
  return undefined;
}

const quiet = () => new Metrics({ defaultMetrics: false });

describe("Metrics", () => {
  it("counts runner passes, errors and items per loop, and times each pass", async () => {
    const m = quiet();
    m.recordRunnerPass("decide", { durationMs: 3, items: 50 });
    m.recordRunnerPass("decide", { durationMs: 40, items: 7 });
    m.recordRunnerPass("decide", { durationMs: 2_000, error: new Error("boom") });
    m.recordRunnerPass("partitions", { durationMs: 1 });
    const text = await m.registry.metrics();

    expect(sample(text, "node_flow_runner_passes_total", { loop: "decide" })).toBe(3);
    expect(sample(text, "node_flow_runner_errors_total", { loop: "decide" })).toBe(1);
    expect(sample(text, "node_flow_runner_items_total", { loop: "decide" })).toBe(57);
    // A loop that never failed still has its error series, at 0, so the first
    // failure is an increase an alert can see.
    expect(sample(text, "node_flow_runner_errors_total", { loop: "partitions" })).toBe(0);
    expect(sample(text, "node_flow_runner_passes_total", { loop: "partitions" })).toBe(1);

    const bucket = (le: string) => sample(text, "node_flow_runner_pass_duration_seconds_bucket", { loop: "decide", le });
    expect(bucket("0.001")).toBe(0);
    expect(bucket("0.005")).toBe(1);
    expect(bucket("0.05")).toBe(2);
    expect(bucket("1")).toBe(2);
    expect(bucket("2.5")).toBe(3);
    expect(sample(text, "node_flow_runner_pass_duration_seconds_count", { loop: "decide" })).toBe(3);
    expect(sample(text, "node_flow_runner_pass_duration_seconds_sum", { loop: "decide" })).toBeCloseTo(2.043, 9);
  });

  it("counts evaluations by outcome, with every outcome present from the start", async () => {
    const m = quiet();
    const before = await m.registry.metrics();
    for (const outcome of ["committed", "skipped", "conflict", "failed"]) {
      expect(sample(before, "node_flow_evaluations_total", { outcome })).toBe(0);
    }
    m.observeEvaluation(4, "committed");
    m.observeEvaluation(12, "committed");
    m.observeEvaluation(700, "conflict");
    const text = await m.registry.metrics();
    expect(sample(text, "node_flow_evaluations_total", { outcome: "committed" })).toBe(2);
    expect(sample(text, "node_flow_evaluations_total", { outcome: "conflict" })).toBe(1);
    expect(sample(text, "node_flow_evaluations_total", { outcome: "failed" })).toBe(0);
    expect(sample(text, "node_flow_decide_duration_seconds_bucket", { le: "0.005" })).toBe(1);
    expect(sample(text, "node_flow_decide_duration_seconds_bucket", { le: "0.025" })).toBe(2);
    expect(sample(text, "node_flow_decide_duration_seconds_bucket", { le: "1" })).toBe(3);
    expect(sample(text, "node_flow_decide_duration_seconds_count")).toBe(3);
  });

  it("adds up lease expiries and ignores counts that are not positive numbers", async () => {
    const m = quiet();
    m.countLeaseExpiries(3);
    m.countLeaseExpiries(0);
    m.countLeaseExpiries(2);
    // A counter that throws on a bad value would take the sweeper pass down with it.
    expect(() => m.countLeaseExpiries(-1)).not.toThrow();
    expect(() => m.countLeaseExpiries(Number.NaN)).not.toThrow();
    expect(() => m.recordRunnerPass("x", { durationMs: Number.NaN, items: -4 })).not.toThrow();
    const text = await m.registry.metrics();
    expect(sample(text, "node_flow_lease_expiries_total")).toBe(5);
    expect(sample(text, "node_flow_runner_items_total", { loop: "x" })).toBe(0);
  });

  it("scrapes its own registry alone when no database is given", async () => {
    const m = quiet();
    m.countLeaseExpiries(1);
    const scrape = await m.scrape();
    expect(scrape.contentType).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(scrape.body).toBe(await m.registry.metrics());
    expect(scrape.body).not.toContain("node_flow_task_queue_depth");
    expect(sample(scrape.body, "node_flow_scrape_errors_total", { reason: "error" })).toBe(0);
  });

  it("includes the default process metrics, and separate instances keep separate registries", async () => {
    const a = new Metrics();
    const b = new Metrics();
    a.countLeaseExpiries(4);
    const textA = await a.registry.metrics();
    expect(textA).toContain("# TYPE process_cpu_user_seconds_total counter");
    expect(textA).toContain("nodejs_eventloop_lag_seconds");
    expect(sample(textA, "node_flow_lease_expiries_total")).toBe(4);
    expect(sample(await b.registry.metrics(), "node_flow_lease_expiries_total")).toBe(0);
  });
});

describe("the process registry", () => {
  it("is one instance, and the module functions record into it", async () => {
    expect(processMetrics()).toBe(processMetrics());
    const read = async () => {
      const text = await processMetrics().registry.metrics();
      return {
        passes: sample(text, "node_flow_runner_passes_total", { loop: "unit-test" }) ?? 0,
        evaluations: sample(text, "node_flow_evaluations_total", { outcome: "failed" }) ?? 0,
        expiries: sample(text, "node_flow_lease_expiries_total") ?? 0,
      };
    };
    const before = await read();
    recordRunnerPass("unit-test", { durationMs: 1, items: 1 });
    observeEvaluation(1, "failed");
    countLeaseExpiries(2);
    const after = await read();
    expect(after).toEqual({ passes: before.passes + 1, evaluations: before.evaluations + 1, expiries: before.expiries + 2 });
  });
});

describe("isScrapeAuthorized", () => {
  it("lets everyone in when no token is configured", () => {
    expect(isScrapeAuthorized(undefined, undefined)).toBe(true);
    expect(isScrapeAuthorized(null, "")).toBe(true);
    expect(isScrapeAuthorized("Bearer anything", undefined)).toBe(true);
  });

  it("requires the exact bearer token when one is configured", () => {
    const token = "s3cret-token";
    expect(isScrapeAuthorized(`Bearer ${token}`, token)).toBe(true);
    expect(isScrapeAuthorized(`bearer ${token}`, token)).toBe(true);
    expect(isScrapeAuthorized(undefined, token)).toBe(false);
    expect(isScrapeAuthorized(null, token)).toBe(false);
    expect(isScrapeAuthorized("", token)).toBe(false);
    expect(isScrapeAuthorized("Bearer ", token)).toBe(false);
    expect(isScrapeAuthorized("Bearer s3cret-toke", token)).toBe(false);
    expect(isScrapeAuthorized(`Bearer ${token}x`, token)).toBe(false);
    expect(isScrapeAuthorized(`Basic ${token}`, token)).toBe(false);
    expect(isScrapeAuthorized(token, token)).toBe(false);
  });
});
