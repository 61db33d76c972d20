import { describe, expect, it } from "vitest";
import { compile } from "../compile";
import type { ScheduleTaskCommand, TaskPolicySnapshot } from "../decide/types";
import { TASK_POLICY_DEFAULTS } from "../definition";
import type { WorkflowDefinition } from "../definition";
import { chain, simple, workflow } from "../definition/test-fixtures";
import { TaskStore } from "./task-store";

const { inputTemplate: _t, ...policy } = TASK_POLICY_DEFAULTS;
const wf = workflow([simple("a"), simple("b"), simple("c"), simple("d")], chain("a", "b", "c", "d")) as unknown as WorkflowDefinition;
const newStore = (): TaskStore => new TaskStore(compile(wf), { workflowId: "w", name: "test_workflow", version: null, input: {}, variables: { v: 1 }, startedAt: 0 });
const schedule = (ref: string, attempt = 0, extra: Partial<ScheduleTaskCommand> = {}): ScheduleTaskCommand => ({
  kind: "scheduleTask",
  key: { ref, iteration: 0, attempt },
  taskType: "SIMPLE",
  taskDefName: "task",
  queueName: "task",
  executor: "worker",
  status: "SCHEDULED",
  input: {},
  output: {},
  priority: 0,
  runAt: 0,
  policy: policy,
  ...extra,
});

describe("TaskStore", () => {
  it("inserts an identity once: a repeat is absorbed, reported, and takes its side effects with it", () => {
    const store = newStore();
    expect(store.applyDecision([schedule("a")], 0)).toMatchObject({ ok: true, duplicateSchedules: [] });
    const again = store.applyDecision([schedule("a", 0, { input: { changed: true } }), { kind: "armTimer", timer: "scheduleToStart", key: { ref: "a", iteration: 0, attempt: 0 }, fireAt: 5 }], 1);
    expect(again).toMatchObject({ ok: true, duplicateSchedules: [{ ref: "a", iteration: 0, attempt: 0 }] });
    expect(store.allTasks()).toHaveLength(1);
    expect(store.allTasks()[0]!.input).toEqual({});
    expect(store.timers()).toEqual([]);
    // A retry is a new attempt, never absorbed.
    store.applyDecision([schedule("a", 1)], 2);
    expect(store.allTasks().map((t) => t.attempt)).toEqual([0, 1]);
  });

  it("rolls a whole evaluation back when a compare-and-set matches no row", () => {
    const store = newStore();
    store.applyDecision([schedule("a")], 0);
    const [a] = store.allTasks();
    const result = store.applyDecision(
      [
        schedule("b"),
        { kind: "setVariables", variables: { v: 2 } },
        { kind: "armTimer", timer: "workflowTimeout", fireAt: 99 },
        { kind: "completeTask", key: { ref: "a", iteration: 0, attempt: 0 }, taskId: a!.taskId, from: "IN_PROGRESS", status: "COMPLETED", taskType: "SIMPLE", taskDefName: "task", output: {} },
      ],
      1,
    );
    expect(result).toMatchObject({ ok: false, commandIndex: 3, reason: "completeTask: task a[0.0] is SCHEDULED, not IN_PROGRESS" });
    expect(store.allTasks().map((t) => t.ref)).toEqual(["a"]);
    expect(store.workflow.variables).toEqual({ v: 1 });
    expect(store.workflow.version).toBe(1);
    expect(store.timers()).toEqual([]);
    // Ids continue where they were: a replay of the same events assigns the same ones.
    store.applyDecision([schedule("b")], 2);
    expect(store.allTasks().map((t) => t.taskId)).toEqual(["w:t1", "w:t2"]);
  });

  it("loads the frontier and the refsToLoad rows only", () => {
    const store = newStore();
    store.applyDecision([schedule("a")], 0);
    const a = store.allTasks()[0]!;
    store.poll(a.taskId, 1, "w1");
    expect(store.update(a.taskId, { status: "COMPLETED", output: { x: 1 } }, 2)).toBe(true);
    expect(store.update(a.taskId, { status: "FAILED", output: {} }, 3)).toBe(false);
    const state = store.evaluationState();
    expect(state.frontier.map((t) => [t.ref, t.status, t.seen])).toEqual([["a", "COMPLETED", false]]);
    expect(state.loaded.map((t) => t.ref)).toEqual(["a"]);
    let previous = a;
    for (const [i, ref] of ["b", "c", "d"].entries()) {
      store.applyDecision([{ kind: "markSeen", taskIds: [previous.taskId] }, schedule(ref)], 3 + i);
      previous = store.allTasks().at(-1)!;
      if (ref === "d") break;
      store.poll(previous.taskId, 3 + i, "w1");
      store.update(previous.taskId, { status: "COMPLETED", output: {} }, 3 + i);
    }
    // d is in flight: refsToLoad names what an evaluation reacting to it may read — never the whole chain.
    const later = store.evaluationState();
    expect(later.frontier.map((t) => t.ref)).toEqual(["d"]);
    expect(later.loaded.map((t) => t.ref)).toContain("d");
    expect(later.loaded.map((t) => t.ref)).not.toContain("b");
    expect(store.evaluationState([], "everyRef").loaded.map((t) => t.ref)).toEqual(["a", "b", "c", "d"]);
  });

  it("hands out copies: changing a state changes no row", () => {
    const store = newStore();
    store.applyDecision([schedule("a", 0, { input: { deep: { x: 1 } } })], 0);
    const state = store.evaluationState();
    (state.frontier[0]!.input.deep as { x: number }).x = 2;
    expect(store.allTasks()[0]!.input).toEqual({ deep: { x: 1 } });
  });

  it("arms startToClose on the first poll of a task with a timeout, and fires timers once", () => {
    const store = newStore();
    store.applyDecision([schedule("a", 0, { policy: { ...(policy as TaskPolicySnapshot), timeoutSeconds: 10 } })], 0);
    const a = store.allTasks()[0]!;
    expect(store.poll(a.taskId, 100, "w")).toBe(true);
    expect(store.timers()).toMatchObject([{ kind: "startToClose", taskId: a.taskId, fireAt: 10_100 }]);
    expect(store.fireTimer("startToClose", a.taskId)).toMatchObject({ kind: "startToClose", taskId: a.taskId, fireAt: 10_100 });
    expect(store.fireTimer("startToClose", a.taskId)).toBeUndefined();
  });
});
