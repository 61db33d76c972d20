import { describe, expect, it } from "vitest";
import { chain, node, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import type { Command } from "./types";
import { Harness } from "./test-harness";

const harness = (def: Json, options: ConstructorParameters<typeof Harness>[1] = {}): Harness => new Harness(def, { checkPartialState: true, ...options });
const kinds = (commands: readonly Command[]): string[] => commands.map((c) => c.kind);
const T0 = 1_000_000;

describe("totalTimeoutSeconds: the time a task may take across all its attempts", () => {
  // retryDelaySeconds 10, totalTimeoutSeconds 25: attempt 0 scheduled at T0; each failure at `failAt` seconds (after T0).
  it.each([
    ["retry fits: the retry runs before T0+25", "RETRY", [5], ["a[1]"], "RUNNING"],
    ["second retry would start at T0+30 ≥ T0+25: refused, TIMED_OUT, workflow fails", "RETRY", [5, 20], ["a[1]"], "FAILED"],
    ["failure after the deadline: no retry", "RETRY", [26], [], "FAILED"],
    ["retry would start exactly at the deadline: refused", "ALERT_ONLY", [15], [], "FAILED"],
    ["refused under TIME_OUT_WF (Conductor's default): the workflow times out", "TIME_OUT_WF", [5, 20], ["a[1]"], "TIMED_OUT"],
  ] as const)("%s", (_name, timeoutPolicy, failAts, retried, status) => {
    const h = harness(workflow([simple("a", { policy: { retryCount: 5, retryDelaySeconds: 10, totalTimeoutSeconds: 25, timeoutPolicy } })]), { now: T0 });
    h.evaluate();
    const scheduled: string[] = [];
    let last: readonly Command[] = [];
    for (const at of failAts) {
      h.now = T0 + at * 1000;
      h.poll("a");
      h.fail("a", `bad at ${at}`);
      last = h.evaluate().commands;
      scheduled.push(...h.last("scheduleTask").map((c) => `${c.key.ref}[${c.key.attempt}]`));
    }
    expect(scheduled).toEqual(retried);
    expect(h.workflow.status).toBe(status);
    if (status !== "RUNNING") {
      expect(kinds(last)).toEqual(["cancelTimer", "failTask", "markSeen", status === "FAILED" ? "failWorkflow" : "timeOutWorkflow"]);
      expect(last[1]).toMatchObject({ kind: "failTask", from: "FAILED", status: "TIMED_OUT" });
      const failed = h.task("a");
      expect(failed.status).toBe("TIMED_OUT");
      expect(failed.reasonForIncompletion).toMatch(/totalTimeoutSeconds \(25s\).*bad at/);
      expect(h.workflow.end).toMatchObject(status === "FAILED" ? { kind: "failWorkflow", failedTaskRef: "a" } : { kind: "timeOutWorkflow", timedOutTaskRef: "a" });
    }
  });

  it("a retry carries the first attempt's scheduledAt forward, and its taskTimeout timer fires at the same total deadline", () => {
    const h = harness(workflow([simple("a", { policy: { retryCount: 3, retryDelaySeconds: 1, totalTimeoutSeconds: 100 } })]), { now: T0 });
    h.evaluate();
    expect(h.last("armTimer")).toEqual([{ kind: "armTimer", timer: "taskTimeout", key: { ref: "a", iteration: 0, attempt: 0 }, fireAt: T0 + 100_000 }]);
    for (const attempt of [1, 2]) {
      h.now += 10_000;
      h.fail("a");
      h.evaluate();
      const [schedule] = h.last("scheduleTask");
      expect(schedule).toMatchObject({ key: { attempt }, firstScheduledAt: T0 });
      expect(h.task("a")).toMatchObject({ attempt, firstScheduledAt: T0, scheduledAt: h.now });
      expect(h.last("armTimer")).toEqual([{ kind: "armTimer", timer: "taskTimeout", key: { ref: "a", iteration: 0, attempt }, fireAt: T0 + 100_000 }]);
    }
  });

  // An attempt still running (or waiting on its queue) when the total runs out, per timeoutPolicy.
  it.each([
    ["RETRY", "IN_PROGRESS", ["failTask", "cancelTimer", "failWorkflow"], "FAILED", "TIMED_OUT"],
    ["RETRY", "SCHEDULED", ["failTask", "cancelTimer", "failWorkflow"], "FAILED", "TIMED_OUT"],
    ["TIME_OUT_WF", "IN_PROGRESS", ["failTask", "cancelTimer", "timeOutWorkflow"], "TIMED_OUT", "TIMED_OUT"],
    ["ALERT_ONLY", "IN_PROGRESS", ["alert"], "RUNNING", "IN_PROGRESS"],
  ] as const)("timeoutPolicy %s, attempt %s past the total: %j", (timeoutPolicy, taskStatus, commands, workflowStatus, finalTaskStatus) => {
    const h = harness(workflow([simple("a", { policy: { retryCount: 5, retryDelaySeconds: 0, totalTimeoutSeconds: 60, timeoutPolicy } })]), { now: T0 });
    h.evaluate();
    h.now = T0 + 30_000;
    h.poll("a");
    h.fail("a");
    h.evaluate(); // attempt 1, at once
    if (taskStatus === "IN_PROGRESS") h.poll("a");
    h.now = T0 + 59_999;
    expect(h.evaluate().commands).toEqual([]);
    h.now = T0 + 60_000;
    const d = h.evaluate([{ kind: "taskTimeout", taskId: h.task("a").taskId, key: { ref: "a", iteration: 0, attempt: 1 }, fireAt: T0 + 60_000 }]);
    expect(kinds(d.commands)).toEqual(commands);
    expect(h.workflow.status).toBe(workflowStatus);
    expect(h.task("a")).toMatchObject({ attempt: 1, status: finalTaskStatus });
    if (finalTaskStatus === "TIMED_OUT") expect(h.task("a").reasonForIncompletion).toContain("totalTimeoutSeconds (60s)");
    if (timeoutPolicy === "ALERT_ONLY") expect(d.commands[0]).toMatchObject({ kind: "alert", alert: "taskTimeout", message: expect.stringContaining("totalTimeoutSeconds") as unknown });
  });

  it("an optional task out of total time completes with errors and the flow carries on", () => {
    const h = harness(workflow([simple("a", { optional: true, policy: { retryCount: 5, retryDelaySeconds: 30, totalTimeoutSeconds: 20, timeoutPolicy: "RETRY" } }), simple("b")], chain("a", "b")), { now: T0 });
    h.evaluate();
    h.now += 5_000;
    h.fail("a");
    h.evaluate();
    expect(h.task("a")).toMatchObject({ attempt: 0, status: "COMPLETED_WITH_ERRORS" });
    expect(h.task("a").reasonForIncompletion).toContain("totalTimeoutSeconds");
    expect(h.scheduled()).toEqual(["b"]);
  });

  it("without totalTimeoutSeconds nothing changes: retries run out by count only", () => {
    const h = harness(workflow([simple("a", { policy: { retryCount: 1, retryDelaySeconds: 1000 } })]), { now: T0 });
    h.evaluate();
    expect(h.last("armTimer")).toEqual([]);
    h.now += 1_000_000;
    h.fail("a");
    h.evaluate();
    expect(h.scheduled()).toEqual(["a#a1"]);
    expect(h.last("scheduleTask")[0]!.firstScheduledAt).toBe(T0);
  });
});

describe("start and retry delays of tasks nothing polls", () => {
  const subWorkflow = (policy: Json): Json => node("SUB_WORKFLOW", "t", { subWorkflowParam: { name: "child" }, policy });
  const human = (policy: Json): Json => node("HUMAN", "t", { policy });
  const signalWait = (policy: Json): Json => node("WAIT", "t", { duration: undefined, signal: true, policy });
  const startWorkflow = (policy: Json): Json => node("START_WORKFLOW", "t", { startWorkflow: { name: "other" }, policy });
  const cases = [
    ["SUB_WORKFLOW", subWorkflow, ["startTask", "startSubWorkflow"]],
    ["HUMAN", human, ["startTask"]],
    ["WAIT (signal)", signalWait, ["startTask"]],
    ["START_WORKFLOW", startWorkflow, ["startTask", "startWorkflow"]],
  ] as const;

  it.each(cases)("%s with startDelay 30s: SCHEDULED with a startDelay timer, started when it fires", (_type, make, started) => {
    const h = harness(workflow([make({ startDelay: 30 })]), { now: T0 });
    const first = h.evaluate().commands;
    expect(kinds(first)).toEqual(["scheduleTask", "armTimer"]);
    expect(first[0]).toMatchObject({ status: "SCHEDULED", executor: "external", runAt: T0 + 30_000 });
    expect(first[1]).toEqual({ kind: "armTimer", timer: "startDelay", key: { ref: "t", iteration: 0, attempt: 0 }, fireAt: T0 + 30_000 });
    h.now = T0 + 29_999;
    expect(h.evaluate().commands).toEqual([]);
    h.now = T0 + 30_000;
    const d = h.evaluate([{ kind: "startDelay", key: { ref: "t", iteration: 0, attempt: 0 }, fireAt: T0 + 30_000 }]);
    expect(kinds(d.commands)).toEqual(started);
    expect(d.commands[0]).toMatchObject({ kind: "startTask", from: "SCHEDULED", taskId: h.task("t").taskId });
    expect(h.task("t")).toMatchObject({ status: "IN_PROGRESS", startedAt: T0 + 30_000 });
  });

  it.each(cases)("%s retried with retryDelaySeconds 5: attempt 1 waits for its retry timer", (_type, make, started) => {
    const h = harness(workflow([make({ retryCount: 1, retryDelaySeconds: 5 })]), { now: T0 });
    h.evaluate();
    if (h.task("t").status === "COMPLETED") return; // START_WORKFLOW is completed by the shell: nothing to fail
    h.fail("t");
    // (A WAIT's own timers are dropped when it ends: cancelTimer.)
    const d = h.evaluate().commands.filter((c) => c.kind !== "cancelTimer");
    expect(kinds(d)).toEqual(["scheduleTask", "armTimer", "markSeen"]);
    expect(d[0]).toMatchObject({ key: { attempt: 1 }, status: "SCHEDULED", runAt: T0 + 5_000, firstScheduledAt: T0 });
    expect(d[1]).toEqual({ kind: "armTimer", timer: "retry", key: { ref: "t", iteration: 0, attempt: 1 }, fireAt: T0 + 5_000 });
    h.now = T0 + 5_000;
    expect(kinds(h.evaluate().commands)).toEqual(started);
    expect(h.task("t")).toMatchObject({ attempt: 1, status: "IN_PROGRESS" });
  });

  it("a delayed duration WAIT counts its duration from when it starts", () => {
    const h = harness(workflow([node("WAIT", "w", { duration: "10s", policy: { startDelay: 30 } }), simple("after")], chain("w", "after")), { now: T0 });
    h.evaluate();
    expect(h.task("w").status).toBe("SCHEDULED");
    h.now = T0 + 30_000;
    const d = h.evaluate().commands;
    expect(kinds(d)).toEqual(["startTask", "armTimer"]);
    expect(d[1]).toMatchObject({ timer: "wait", fireAt: T0 + 40_000 });
    h.now = T0 + 40_000;
    h.evaluate();
    expect(h.task("w").status).toBe("COMPLETED");
    expect(h.scheduled()).toEqual(["after"]);
  });

  it("a delayed task still waiting when the workflow ends is canceled, never started", () => {
    const h = harness(workflow([human({ startDelay: 60 }), simple("x", { policy: { retryCount: 0 } })]), { now: T0 });
    h.evaluate();
    h.now = T0 + 1_000;
    h.fail("x", "no", "FAILED_WITH_TERMINAL_ERROR");
    const d = h.evaluate().commands;
    expect(kinds(d)).toEqual(["markSeen", "cancelTask", "failWorkflow"]);
    expect(d[1]).toMatchObject({ key: { ref: "t" }, from: "SCHEDULED" });
  });
});
