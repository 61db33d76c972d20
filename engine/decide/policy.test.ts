import { describe, expect, it } from "vitest";
import type { TaskPolicy } from "../definition";
import { TASK_POLICY_DEFAULTS, effectiveTaskPolicy } from "../definition";
import { chain, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import { MAX_DELAY_SECONDS, parseWaitUntil, retryDelaySeconds, waitDurationSeconds } from "./policy";
import { Harness } from "./test-harness";

const harness = (def: Json, options: ConstructorParameters<typeof Harness>[1] = {}): Harness => new Harness(def, { checkPartialState: true, ...options });

describe("retryDelaySeconds (Conductor's DeciderService.retry)", () => {
  const p = (policy: TaskPolicy) => effectiveTaskPolicy(policy);
  it.each([
    // policy, failed attempt, delay
    [{ retryLogic: "FIXED", retryDelaySeconds: 10 }, 0, 10],
    [{ retryLogic: "FIXED", retryDelaySeconds: 10 }, 5, 10],
    [{ retryLogic: "LINEAR_BACKOFF", retryDelaySeconds: 10, backoffScaleFactor: 3 }, 0, 30],
    [{ retryLogic: "LINEAR_BACKOFF", retryDelaySeconds: 10, backoffScaleFactor: 3 }, 2, 90],
    [{ retryLogic: "EXPONENTIAL_BACKOFF", retryDelaySeconds: 10 }, 0, 10],
    [{ retryLogic: "EXPONENTIAL_BACKOFF", retryDelaySeconds: 10 }, 3, 80],
    [{ retryLogic: "EXPONENTIAL_BACKOFF", retryDelaySeconds: 10, maxRetryDelaySeconds: 50 }, 3, 50],
    [{ retryLogic: "LINEAR_BACKOFF", retryDelaySeconds: 10, maxRetryDelaySeconds: 25 }, 4, 25],
    [{ retryLogic: "EXPONENTIAL_BACKOFF", retryDelaySeconds: 10 }, 5000, MAX_DELAY_SECONDS],
    [{}, 0, TASK_POLICY_DEFAULTS.retryDelaySeconds],
  ] as const)("%j after attempt %i waits %is", (policy, attempt, delay) => {
    expect(retryDelaySeconds(p(policy), attempt)).toBe(delay);
  });
});

describe("WAIT time parsing", () => {
  it.each([
    ["2030-01-31T09:30:00Z", Date.UTC(2030, 0, 31, 9, 30)],
    ["2030-01-31T09:30:00.123456Z", Date.UTC(2030, 0, 31, 9, 30, 0, 123)],
    ["2030-01-31 09:30 GMT", Date.UTC(2030, 0, 31, 9, 30)],
    ["2030-01-31 09:30 +0130", Date.UTC(2030, 0, 31, 8)],
    ["2030-01-31 09:30", Date.UTC(2030, 0, 31, 9, 30)],
    ["2030-01-31 09:30 America/New_York", null],
    ["tomorrow", null],
  ])("parseWaitUntil(%j)", (text, ms) => expect(parseWaitUntil(text)).toBe(ms));

  it.each([
    ["1h 30m", 5400],
    [15, 15],
    [-1, null],
    ["soon", null],
    [null, null],
  ])("waitDurationSeconds(%j)", (value, seconds) => expect(waitDurationSeconds(value)).toBe(seconds));
});

describe("retries are new attempts", () => {
  it.each([
    ["FIXED", [10, 10, 10]],
    ["LINEAR_BACKOFF", [20, 40, 60]],
    ["EXPONENTIAL_BACKOFF", [10, 20, 40]],
  ] as const)("%s: each failure schedules attempt n+1 after its delay, never touching the failed row; then the workflow fails", (retryLogic, delays) => {
    const h = harness(workflow([simple("a", { policy: { retryCount: 3, retryLogic, retryDelaySeconds: 10, backoffScaleFactor: 2 } })], [], { failureWorkflow: "on_fail" }));
    h.evaluate();
    for (const [attempt, delay] of delays.entries()) {
      const failed = h.fail("a", `bad ${attempt}`);
      h.evaluate();
      const retry = h.last("scheduleTask")[0]!;
      expect(retry).toMatchObject({ key: { ref: "a", iteration: 0, attempt: attempt + 1 }, runAt: h.now + delay * 1000, input: failed.input });
      expect(retry.reason).toContain(`bad ${attempt}`);
      expect(h.byKey({ ref: "a", iteration: 0, attempt })).toMatchObject({ status: "FAILED", reasonForIncompletion: `bad ${attempt}` });
      h.now += delay * 1000;
    }
    h.fail("a", "last");
    const d = h.evaluate();
    expect(d.commands.at(-1)).toMatchObject({
      kind: "failWorkflow",
      failedTaskRef: "a",
      failedTaskId: h.task("a").taskId,
      failureWorkflow: { name: "on_fail", input: { workflowId: "wf-1", failureStatus: "FAILED", failureTaskId: h.task("a").taskId } },
    });
    expect(h.rows.map((r) => [r.attempt, r.status])).toEqual([
      [0, "FAILED"],
      [1, "FAILED"],
      [2, "FAILED"],
      [3, "FAILED"],
    ]);
  });

  it("FAILED_WITH_TERMINAL_ERROR is never retried", () => {
    const h = harness(workflow([simple("a", { policy: { retryCount: 5 } })]));
    h.evaluate();
    h.fail("a", "fatal", "FAILED_WITH_TERMINAL_ERROR");
    const d = h.evaluate();
    expect(h.last("scheduleTask")).toEqual([]);
    expect(d.commands.at(-1)).toMatchObject({ kind: "failWorkflow", reason: "Task a failed: fatal" });
  });

  it("a retry that succeeds continues the flow with the attempt that succeeded", () => {
    const h = harness(workflow([simple("a", { policy: { retryCount: 1, retryDelaySeconds: 0 } }), simple("b", { input: { v: "${a.output.v}", n: "${a.retryCount}" } })], chain("a", "b")));
    h.evaluate();
    h.fail("a");
    h.evaluate();
    h.complete("a", { v: "second" });
    h.evaluate();
    expect(h.task("b").input).toEqual({ v: "second", n: 1 });
  });
});

describe("optional tasks", () => {
  it("a failed optional task becomes COMPLETED_WITH_ERRORS after its retries, and the flow continues", () => {
    const h = harness(workflow([simple("a", { optional: true, policy: { retryCount: 1, retryDelaySeconds: 0 } }), simple("b")], chain("a", "b")));
    h.evaluate();
    h.fail("a");
    h.evaluate();
    expect(h.scheduled()).toEqual(["a#a1"]);
    h.fail("a", "again");
    h.evaluate();
    expect(h.task("a")).toMatchObject({ attempt: 1, status: "COMPLETED_WITH_ERRORS", reasonForIncompletion: "again" });
    expect(h.scheduled()).toEqual(["b"]);
    h.complete("b");
    h.evaluate();
    expect(h.workflow.status).toBe("COMPLETED");
  });

  it("an optional task's terminal error also continues", () => {
    const h = harness(workflow([simple("a", { optional: true }), simple("b")], chain("a", "b")));
    h.evaluate();
    h.fail("a", "x", "FAILED_WITH_TERMINAL_ERROR");
    h.evaluate();
    expect(h.scheduled()).toEqual(["b"]);
  });
});

describe("task timeouts per policy", () => {
  const def = (policy: TaskPolicy, optional = false): Json => workflow([simple("a", { policy: { retryDelaySeconds: 0, ...policy }, optional }), simple("b")], chain("a", "b"));

  it("RETRY: an attempt running past timeoutSeconds is TIMED_OUT and retried", () => {
    const h = harness(def({ timeoutSeconds: 30, timeoutPolicy: "RETRY", retryCount: 1 }));
    h.evaluate();
    h.poll("a");
    h.now += 29_999;
    expect(h.evaluate().commands).toEqual([]);
    h.now += 1;
    h.evaluate();
    expect(h.byKey({ ref: "a", iteration: 0, attempt: 0 })).toMatchObject({ status: "TIMED_OUT" });
    expect(h.scheduled()).toEqual(["a#a1"]);
    h.poll("a");
    h.now += 30_000;
    h.evaluate();
    expect(h.workflow.status).toBe("FAILED");
  });

  it("TIME_OUT_WF: the task and the workflow time out, with the failure workflow", () => {
    const h = harness(workflow([simple("a", { policy: { timeoutSeconds: 30, timeoutPolicy: "TIME_OUT_WF" } }), simple("other")], [], { failureWorkflow: "fw" }));
    h.evaluate();
    h.poll("a");
    h.now += 30_000;
    const d = h.evaluate();
    expect(d.commands.map((c) => c.kind)).toEqual(["failTask", "cancelTimer", "cancelTask", "timeOutWorkflow"]);
    expect(d.commands.at(-1)).toMatchObject({ timedOutTaskRef: "a", failureWorkflow: { name: "fw", input: { failureStatus: "TIMED_OUT" } } });
    expect(h.workflow.status).toBe("TIMED_OUT");
  });

  it("ALERT_ONLY: the task keeps running; the breach is alerted when its timer fires", () => {
    const h = harness(def({ timeoutSeconds: 30, timeoutPolicy: "ALERT_ONLY" }));
    h.evaluate();
    const a = h.poll("a");
    h.now += 31_000;
    expect(h.evaluate().commands).toEqual([]);
    const d = h.evaluate([{ kind: "startToClose", taskId: a.taskId, fireAt: h.now - 1000 }]);
    expect(d.commands).toEqual([{ kind: "alert", alert: "taskTimeout", key: { ref: "a", iteration: 0, attempt: 0 }, taskId: a.taskId, message: expect.stringContaining("ALERT_ONLY") as unknown }]);
    expect(h.task("a").status).toBe("IN_PROGRESS");
  });

  it("an optional task whose final attempt times out completes with errors and the flow continues", () => {
    const h = harness(def({ timeoutSeconds: 30, timeoutPolicy: "RETRY", retryCount: 0 }, true));
    h.evaluate();
    h.poll("a");
    h.now += 30_000;
    h.evaluate();
    expect(h.task("a").status).toBe("COMPLETED_WITH_ERRORS");
    expect(h.scheduled()).toEqual(["b"]);
  });

  it("pollTimeoutSeconds: a task nobody polls times out and is retried (counted from its start delay)", () => {
    const h = harness(def({ pollTimeoutSeconds: 10, startDelay: 5, retryCount: 1, timeoutPolicy: "TIME_OUT_WF" }));
    h.evaluate();
    expect(h.last("armTimer")).toEqual([{ kind: "armTimer", timer: "scheduleToStart", key: { ref: "a", iteration: 0, attempt: 0 }, fireAt: h.now + 15_000 }]);
    expect(h.last("scheduleTask")[0]!.runAt).toBe(h.now + 5000);
    h.now += 14_999;
    expect(h.evaluate().commands).toEqual([]);
    h.now += 1;
    h.evaluate();
    expect(h.byKey({ ref: "a", iteration: 0, attempt: 0 }).status).toBe("TIMED_OUT");
    // A poll timeout is retried even under TIME_OUT_WF: the worker never started.
    expect(h.scheduled()).toEqual(["a#a1"]);
    expect(h.workflow.status).toBe("RUNNING");
  });

  it("a task that ends cancels its timers", () => {
    const h = harness(def({ timeoutSeconds: 30 }));
    h.evaluate();
    h.poll("a");
    const a = h.complete("a");
    const d = h.evaluate();
    expect(d.commands[0]).toEqual({ kind: "cancelTimer", key: { ref: "a", iteration: 0, attempt: 0 }, taskId: a.taskId });
  });
});

describe("workflow timeout", () => {
  it("TIME_OUT_WF: armed at start; past it the workflow times out and everything in flight is canceled", () => {
    const h = harness(workflow([simple("a"), simple("b")], chain("a", "b"), { timeoutSeconds: 60, timeoutPolicy: "TIME_OUT_WF" }));
    h.evaluate();
    expect(h.last("armTimer")).toEqual([{ kind: "armTimer", timer: "workflowTimeout", fireAt: h.workflow.startedAt + 60_000 }]);
    h.now += 60_000;
    h.complete("a");
    const d = h.evaluate();
    expect(d.commands.map((c) => c.kind)).toEqual(["markSeen", "timeOutWorkflow"]);
    expect(h.has("b")).toBe(false);
  });

  it("ALERT_ONLY: only an alert when the timer fires; the workflow carries on", () => {
    const h = harness(workflow([simple("a")], [], { timeoutSeconds: 60 }));
    h.evaluate();
    h.now += 61_000;
    const d = h.evaluate([{ kind: "workflowTimeout", fireAt: h.now }]);
    expect(d.commands.map((c) => c.kind)).toEqual(["alert"]);
    h.complete("a");
    h.evaluate();
    expect(h.workflow.status).toBe("COMPLETED");
  });
});
