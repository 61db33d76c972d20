import { describe, expect, it } from "vitest";
import { createNode } from "@/engine";
import type { WorkflowDefinition } from "@/engine";
import { makeEdge } from "../editor/graph-edits";
import { applyHistory, applySnapshot, availableActions, overlayModel } from "./run-model";
import type { RunTask } from "./run-model";

const at = { x: 0, y: 0 };
const definition: WorkflowDefinition = {
  schemaVersion: 1,
  name: "w",
  nodes: [createNode("SIMPLE", "a", at), createNode("DO_WHILE", "loop", at), createNode("SIMPLE", "body", at, "loop"), createNode("NOOP", "z", at)],
  edges: [makeEdge("a", "loop"), makeEdge("loop", "z")],
};

function row(id: string, ref: string, status: RunTask["status"], extra: Partial<RunTask> = {}): RunTask {
  return {
    id,
    ref,
    type: "SIMPLE",
    iteration: 0,
    attempt: 0,
    status,
    scheduledAt: "2026-01-01T00:00:00.000Z",
    startedAt: null,
    endedAt: null,
    workerId: null,
    pollCount: 0,
    reasonForIncompletion: null,
    subWorkflowId: null,
    parentRef: null,
    forkIndex: null,
    ...extra,
  };
}

describe("overlayModel", () => {
  it("shows the newest attempt with the attempt count, the loop's iterations, and the path taken", () => {
    const tasks = [
      row("1", "a", "FAILED"),
      row("2", "a", "COMPLETED", { attempt: 1 }),
      row("3", "loop", "IN_PROGRESS"),
      row("4", "body", "COMPLETED", { iteration: 1 }),
      row("5", "body", "IN_PROGRESS", { iteration: 2 }),
    ];
    const model = overlayModel(definition, tasks, new Map());
    expect(model.nodes.get("a")).toMatchObject({ status: "COMPLETED", attempts: 2 });
    expect(model.nodes.get("loop")).toMatchObject({ status: "IN_PROGRESS", iterations: 2 });
    expect(model.nodes.get("body")).toMatchObject({ status: "IN_PROGRESS" });
    expect(model.nodes.has("z")).toBe(false);
    expect([...model.takenEdges]).toEqual(["a->loop"]);
    // Picking iteration 1 shows the body as it was then.
    expect(overlayModel(definition, tasks, new Map([["loop", 1]])).nodes.get("body")).toMatchObject({ status: "COMPLETED" });
  });

  it("counts a dynamic fork's instances", () => {
    const tasks = [row("f", "a", "IN_PROGRESS"), row("i1", "a_0", "COMPLETED", { parentRef: "a", forkIndex: 0 }), row("i2", "a_1", "IN_PROGRESS", { parentRef: "a", forkIndex: 1 })];
    expect(overlayModel(definition, tasks, new Map()).nodes.get("a")?.instances).toEqual({ total: 2, ended: 1 });
  });
});

describe("folding the stream in", () => {
  it("adds a scheduled task, ends it, and ignores events that change nothing", () => {
    const scheduled = applyHistory(new Map(), { seq: 2, at: "2026-01-01T00:00:01.000Z", type: "TASK_SCHEDULED", ref: "a", taskId: "t", status: "SCHEDULED", iteration: 0, attempt: 0 })!;
    expect(scheduled.get("t")).toMatchObject({ ref: "a", status: "SCHEDULED", startedAt: null });
    const running = applySnapshot(scheduled, [{ id: "t", status: "IN_PROGRESS", startedAt: "2026-01-01T00:00:02.000Z", workerId: "w1" }]);
    expect(running.get("t")).toMatchObject({ status: "IN_PROGRESS", workerId: "w1" });
    const done = applyHistory(running, { seq: 3, at: "2026-01-01T00:00:03.000Z", type: "TASK_COMPLETED", ref: "a", taskId: "t", status: "COMPLETED" })!;
    expect(done.get("t")).toMatchObject({ status: "COMPLETED", startedAt: "2026-01-01T00:00:02.000Z", endedAt: "2026-01-01T00:00:03.000Z" });
    expect(applyHistory(done, { seq: 4, at: "x", type: "TASK_COMPLETED", ref: "a", taskId: "t", status: "COMPLETED" })).toBeNull();
    expect(applyHistory(done, { seq: 5, at: "x", type: "WORKFLOW_COMPLETED", ref: null, taskId: null, status: "COMPLETED" })).toBeNull();
  });

  it("takes a task's times from its event, not the event's own time", () => {
    // A worker leased and failed the task between two snapshots: the page never saw it start, and the
    // decider recorded the failure later. The badge must read what a reload reads: the row's 16 ms.
    const scheduled = applyHistory(new Map(), { seq: 2, at: "2026-01-01T00:00:01.000Z", type: "TASK_SCHEDULED", ref: "a", taskId: "t", status: "SCHEDULED" })!;
    const failed = applyHistory(scheduled, {
      seq: 3,
      at: "2026-01-01T00:00:05.000Z",
      type: "TASK_FAILED",
      ref: "a",
      taskId: "t",
      status: "FAILED",
      startedAt: "2026-01-01T00:00:02.000Z",
      endedAt: "2026-01-01T00:00:02.016Z",
    })!;
    expect(failed.get("t")).toMatchObject({ status: "FAILED", startedAt: "2026-01-01T00:00:02.000Z", endedAt: "2026-01-01T00:00:02.016Z" });
    // A task first met ended (the page opened late) takes them too.
    const late = applyHistory(new Map(), { seq: 3, at: "2026-01-01T00:00:05.000Z", type: "TASK_FAILED", ref: "a", taskId: "t", status: "FAILED", startedAt: "2026-01-01T00:00:02.000Z", endedAt: "2026-01-01T00:00:02.016Z" })!;
    expect(late.get("t")).toMatchObject({ startedAt: "2026-01-01T00:00:02.000Z", endedAt: "2026-01-01T00:00:02.016Z" });
    // A snapshot's start that the event corrects is replaced, even with no change of status.
    const running = applySnapshot(scheduled, [{ id: "t", status: "FAILED", startedAt: "2026-01-01T00:00:02.000Z" }]);
    const corrected = applyHistory(running, { seq: 3, at: "2026-01-01T00:00:05.000Z", type: "TASK_FAILED", ref: "a", taskId: "t", status: "FAILED", endedAt: "2026-01-01T00:00:02.016Z" })!;
    expect(corrected.get("t")).toMatchObject({ endedAt: "2026-01-01T00:00:02.016Z" });
  });

  it("offers the actions a run's status allows", () => {
    expect([...availableActions("RUNNING")]).toEqual(["pause", "terminate"]);
    expect(availableActions("FAILED").has("retry")).toBe(true);
  });
});
