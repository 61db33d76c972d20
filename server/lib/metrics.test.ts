import { describe, expect, it } from "vitest";
import {
  ACTIVE_WORKER_WINDOW_MS,
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

describe("Metrics: the workload", () => {
  it("counts runs started and finished by workflow and status, with their durations", async () => {
    const m = quiet();
    m.countRunStarted("orders");
    m.countRunStarted("orders");
    m.observeRunFinished("orders", "COMPLETED", 1_500);
    m.observeRunFinished("orders", "FAILED", 20);
    const text = await m.registry.metrics();
    expect(sample(text, "node_flow_runs_started_total", { workflow: "orders" })).toBe(2);
    expect(sample(text, "node_flow_runs_finished_total", { workflow: "orders", status: "COMPLETED" })).toBe(1);
    expect(sample(text, "node_flow_run_duration_seconds_sum", { workflow: "orders", status: "COMPLETED" })).toBe(1.5);
    expect(sample(text, "node_flow_run_duration_seconds_bucket", { workflow: "orders", status: "FAILED", le: "0.01" })).toBe(0);
    expect(sample(text, "node_flow_run_duration_seconds_bucket", { workflow: "orders", status: "FAILED", le: "0.05" })).toBe(1);
  });

  it("labels a worker task by its name and a system task by its type", async () => {
    const m = quiet();
    m.observeTaskEnded({ workflow: "orders", taskType: "SIMPLE", taskDefName: "charge", status: "COMPLETED", durationMs: 250 });
    m.observeTaskEnded({ workflow: "orders", taskType: "INLINE", taskDefName: "anything", status: "COMPLETED", durationMs: 1 });
    const text = await m.registry.metrics();
    expect(sample(text, "node_flow_task_duration_seconds_count", { workflow: "orders", task_type: "charge", status: "COMPLETED" })).toBe(1);
    expect(sample(text, "node_flow_task_duration_seconds_sum", { workflow: "orders", task_type: "charge", status: "COMPLETED" })).toBe(0.25);
    expect(sample(text, "node_flow_task_duration_seconds_count", { workflow: "orders", task_type: "INLINE", status: "COMPLETED" })).toBe(1);
  });

  it("folds names outside the allow-list into \"other\"", async () => {
    const m = new Metrics({ defaultMetrics: false, workflows: ["orders"], tasks: ["charge"] });
    m.countRunStarted("orders");
    m.countRunStarted("generated-1");
    m.countRunStarted("generated-2");
    m.observeTaskEnded({ workflow: "generated-1", taskType: "SIMPLE", taskDefName: "made-up", status: "FAILED", durationMs: 5 });
    m.countWorkerPoll("made-up", "w1");
    const text = await m.registry.metrics();
    expect(sample(text, "node_flow_runs_started_total", { workflow: "orders" })).toBe(1);
    expect(sample(text, "node_flow_runs_started_total", { workflow: "other" })).toBe(2);
    expect(text).not.toContain("generated-");
    expect(sample(text, "node_flow_task_duration_seconds_count", { workflow: "other", task_type: "other", status: "FAILED" })).toBe(1);
    expect(sample(text, "node_flow_worker_polls_total", { queue: "other" })).toBe(1);
    expect(text).not.toContain("made-up");
  });

  it("admits the first names seen without an allow-list, then counts the rest as \"other\"", async () => {
    const m = quiet();
    for (let i = 0; i < 60; i++) m.countRunStarted(`wf-${i}`);
    const text = await m.registry.metrics();
    expect(sample(text, "node_flow_runs_started_total", { workflow: "wf-0" })).toBe(1);
    expect(sample(text, "node_flow_runs_started_total", { workflow: "wf-49" })).toBe(1);
    expect(sample(text, "node_flow_runs_started_total", { workflow: "wf-50" })).toBeUndefined();
    expect(sample(text, "node_flow_runs_started_total", { workflow: "other" })).toBe(10);
  });

  it("counts polls per queue, and workers as active while they polled within the window", async () => {
    let now = 1_000_000;
    const m = new Metrics({ defaultMetrics: false, now: () => now });
    m.countWorkerPoll("charge", "w1");
    m.countWorkerPoll("charge", "w1");
    m.countWorkerPoll("charge", "w2");
    m.countWorkerPoll("ship", "w1");
    let text = await m.registry.metrics();
    expect(sample(text, "node_flow_worker_polls_total", { queue: "charge" })).toBe(3);
    expect(sample(text, "node_flow_active_workers", { queue: "charge" })).toBe(2);
    expect(sample(text, "node_flow_active_workers", { queue: "ship" })).toBe(1);

    now += ACTIVE_WORKER_WINDOW_MS / 2;
    m.countWorkerPoll("charge", "w2");
    now += ACTIVE_WORKER_WINDOW_MS / 2 + 1;
    text = await m.registry.metrics();
    expect(sample(text, "node_flow_active_workers", { queue: "charge" })).toBe(1);
    // A queue whose workers all went quiet leaves the gauge, not a series stuck at its last value.
    expect(sample(text, "node_flow_active_workers", { queue: "ship" })).toBeUndefined();
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
