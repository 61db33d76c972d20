import { describe, expect, it } from "vitest";
import { compile } from "../compile";
import { decide } from "../decide";
import type { Command, ScheduleTaskCommand, TaskPolicySnapshot } from "../decide/types";
import { TASK_POLICY_DEFAULTS } from "../definition";
import type { WorkflowDefinition } from "../definition";
import { chain, node, simple, workflow } from "../definition/test-fixtures";
import { scriptsUnavailable } from "./setup-error";
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

  describe("a dynamic fork's counters and aggregated output", () => {
    const forkWf = (conductorForm: boolean): WorkflowDefinition =>
      workflow(
        [
          conductorForm
            ? node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: undefined, items: undefined, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs", input: { tasks: "${workflow.input.tasks}", inputs: {} } })
            : node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "work", items: [0, 1, 2] }),
          simple("after", { input: { got: "${fan.output}" } }),
        ],
        chain("fan", "after"),
      ) as unknown as WorkflowDefinition;
    const forkStore = (conductorForm = false): TaskStore =>
      new TaskStore(compile(forkWf(conductorForm)), {
        workflowId: "w",
        name: "test_workflow",
        version: null,
        input: { tasks: ["x", "y", "z"].map((label) => ({ name: "work", taskReferenceName: label })) },
        variables: {},
        startedAt: 0,
      });
    const decideNow = (store: TaskStore, now: number): Command[] => decide(store.blueprint, store.evaluationState(), now, { scripts: scriptsUnavailable("t") }).commands;
    const finish = (store: TaskStore, ref: string, output: Record<string, unknown>, now: number): void => {
      const t = store.allTasks().find((r) => r.ref === ref && !r.pruned)!;
      store.poll(t.taskId, now, "w1");
      expect(store.update(t.taskId, { status: "COMPLETED", output }, now)).toBe(true);
    };
    const fan = (store: TaskStore) => store.allTasks().find((t) => t.ref === "fan")!;

    it("counts exactly across a rolled-back evaluation (crash-safe) and a repeated one (idempotent)", () => {
      const store = forkStore();
      expect(store.applyDecision(decideNow(store, 0), 0).ok).toBe(true);
      expect(fan(store).output).toEqual({ total: 3, completed: 0 });
      finish(store, "fan#0", { v: 0 }, 1);
      finish(store, "fan#2", { v: 2 }, 1);
      const decision = decideNow(store, 2);
      expect(decision.map((c) => c.kind)).toEqual(["updateTask", "markSeen"]);
      // The transaction dies after writing the counter: nothing of it remains, the rows stay unseen…
      const rolledBack = store.applyDecision([...decision, { kind: "cancelTask", key: { ref: "nope", iteration: 0, attempt: 0 }, taskId: "nope", from: "SCHEDULED", reason: "crash" }], 2);
      expect(rolledBack.ok).toBe(false);
      expect(fan(store).output).toEqual({ total: 3, completed: 0 });
      expect(store.frontier().filter((t) => t.status === "COMPLETED").map((t) => t.ref)).toEqual(["fan#0", "fan#2"]);
      // …so the retried evaluation counts them again, exactly once.
      expect(decideNow(store, 3)).toEqual(decision);
      expect(store.applyDecision(decision, 3).ok).toBe(true);
      expect(fan(store).output).toEqual({ total: 3, completed: 2 });
      // Deciding again on what it committed changes nothing: the counted rows are seen.
      expect(decideNow(store, 3)).toEqual([]);
      // Re-applying the same batch (absolute count, markSeen) is harmless too.
      expect(store.applyDecision(decision, 3).ok).toBe(true);
      expect(fan(store).output).toEqual({ total: 3, completed: 2 });
    });

    for (const conductorForm of [false, true]) {
      it(`aggregates the ${conductorForm ? "Conductor form by taskReferenceName" : "items form as results"} from the instance rows, leaving the fork unseen for the next evaluation`, () => {
        const store = forkStore(conductorForm);
        store.applyDecision(decideNow(store, 0), 0);
        finish(store, "fan#1", { v: 1 }, 1);
        store.applyDecision(decideNow(store, 1), 1);
        finish(store, "fan#0", { v: 0 }, 2);
        finish(store, "fan#2", { v: 2 }, 2);
        const last = decideNow(store, 3);
        expect(last.map((c) => c.kind)).toEqual(["aggregateForkOutput", "requestEvaluation", "markSeen"]);
        expect(store.applyDecision(last, 3)).toMatchObject({ ok: true, needsEvaluation: true });
        const expected = conductorForm ? { x: { v: 0 }, y: { v: 1 }, z: { v: 2 } } : { results: [{ v: 0 }, { v: 1 }, { v: 2 }] };
        expect(fan(store)).toMatchObject({ status: "COMPLETED", output: expected, seen: false, endedAt: 3 });
        const next = decideNow(store, 4);
        expect(next.find((c) => c.kind === "scheduleTask")).toMatchObject({ key: { ref: "after" }, input: { got: expected } });
      });
    }

    it("a COMPLETED aggregate that finds an instance not done matches no row: the evaluation rolls back", () => {
      const store = forkStore();
      store.applyDecision(decideNow(store, 0), 0);
      finish(store, "fan#0", { v: 0 }, 1);
      const f = fan(store);
      const result = store.applyDecision([{ kind: "aggregateForkOutput", key: { ref: "fan", iteration: 0, attempt: 0 }, taskId: f.taskId, from: "IN_PROGRESS", status: "COMPLETED", shape: "results", total: 3 }], 2);
      expect(result).toMatchObject({ ok: false, commandIndex: 0, reason: "aggregateForkOutput: 1 of 3 instances of fan[0.0] are done" });
      expect(fan(store)).toMatchObject({ status: "IN_PROGRESS", output: { total: 3, completed: 0 } });
      // COMPLETED_WITH_ERRORS (an optional fork after a final failure) takes what is done, null elsewhere.
      expect(store.applyDecision([{ kind: "aggregateForkOutput", key: { ref: "fan", iteration: 0, attempt: 0 }, taskId: f.taskId, from: "IN_PROGRESS", status: "COMPLETED_WITH_ERRORS", shape: "results", total: 3, reasonForIncompletion: "r" }], 2).ok).toBe(true);
      expect(fan(store)).toMatchObject({ status: "COMPLETED_WITH_ERRORS", reasonForIncompletion: "r", output: { results: [{ v: 0 }, null, null] } });
    });
  });
});
