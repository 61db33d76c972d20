import { describe, expect, it } from "vitest";
import { chain, edge, node, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import { MAX_LOOP_ADVANCES_PER_EVALUATION } from "./decide";
import { Harness, fakeScripts } from "./test-harness";

const harness = (def: Json, options: ConstructorParameters<typeof Harness>[1] = {}): Harness => new Harness(def, { checkPartialState: true, ...options });

/** pre → loop{ b1 → b2 } → post */
const loopDef = (loop: Json): Json =>
  workflow(
    [
      simple("pre"),
      node("DO_WHILE", "loop", loop),
      simple("b1", { parent: "loop", input: { i: "${loop.output.iteration}", item: "${loop.output.item}" } }),
      simple("b2", { parent: "loop", input: { fromB1: "${b1.output.n}" } }),
      simple("post", { input: { last: "${b2.output.n}", loop: "${loop.output}" } }),
    ],
    [...chain("pre", "loop", "post"), edge("b1", "b2")],
  );

/** Runs every runnable task, completing it with `{ n: "<ref>@<iteration>" }`, until the workflow ends. */
function runAll(h: Harness, limit = 100): void {
  for (let step = 0; step < limit && h.workflow.status === "RUNNING"; step++) {
    for (const r of h.runnable()) h.complete(r.ref, { n: `${r.ref}@${r.iteration}` }, r.iteration);
    h.evaluate();
  }
}

describe("DO_WHILE", () => {
  it("condition form: iterations are part of task identity; the body runs until the condition is false", () => {
    const h = harness(loopDef({ loopCondition: '$["loop"].iteration < $.times', input: { times: 3 } }));
    h.evaluate();
    h.complete("pre");
    h.evaluate();
    expect(h.scheduled()).toEqual(["loop", "b1@1"]);
    expect(h.task("loop")).toMatchObject({ status: "IN_PROGRESS", output: { iteration: 1 } });
    expect(h.task("b1").input).toEqual({ i: 1, item: null });
    h.complete("b1", { n: "b1@1" });
    h.evaluate();
    expect(h.scheduled()).toEqual(["b2@1"]);
    expect(h.task("b2").input).toEqual({ fromB1: "b1@1" });
    h.complete("b2", { n: "b2@1" });
    h.evaluate();
    expect(h.scheduled()).toEqual(["b1@2"]);
    expect(h.task("loop").output).toEqual({ iteration: 2, "1": { b1: { n: "b1@1" }, b2: { n: "b2@1" } } });
    runAll(h);
    expect(h.workflow.status).toBe("COMPLETED");
    expect(h.rows.filter((r) => r.ref === "b1").map((r) => r.iteration)).toEqual([1, 2, 3]);
    expect(h.task("loop")).toMatchObject({ status: "COMPLETED", output: { iteration: 3 } });
    expect(Object.keys(h.task("loop").output).sort()).toEqual(["1", "2", "3", "iteration"]);
    expect(h.task("post").input).toMatchObject({ last: "b2@3" });
  });

  it("the condition sees the loop's input re-resolved, its output and each body task's latest output", () => {
    const seen: unknown[] = [];
    const scripts = fakeScripts({
      cond: ($) => {
        seen.push(JSON.parse(JSON.stringify($)));
        return ($.b2 as { n: string }).n !== "b2@2";
      },
    });
    const h = harness(loopDef({ loopCondition: "cond", input: { limit: "${workflow.input.limit}", pre: "${pre.output.n}" } }), { scripts, input: { limit: 9 } });
    h.evaluate();
    runAll(h);
    expect(h.workflow.status).toBe("COMPLETED");
    // The harness decides more than once per evaluation (partial, full, idempotence check): take iteration 2's.
    expect(seen.find((x) => (x as { loop: { iteration: number } }).loop.iteration === 2)).toEqual({ limit: 9, pre: "pre@0", loop: { iteration: 2, "1": { b1: { n: "b1@1" }, b2: { n: "b2@1" } }, "2": { b1: { n: "b1@2" }, b2: { n: "b2@2" } } }, b1: { n: "b1@2" }, b2: { n: "b2@2" } });
  });

  it("items form: one iteration per element, the element as output.item", () => {
    const h = harness(loopDef({ loopCondition: undefined, input: {}, items: "${workflow.input.list}" }), { input: { list: ["a", "b"] } });
    h.evaluate();
    h.complete("pre");
    h.evaluate();
    expect(h.task("b1").input).toEqual({ i: 1, item: "a" });
    runAll(h);
    expect(h.workflow.status).toBe("COMPLETED");
    expect(h.rows.filter((r) => r.ref === "b1").map((r) => r.input.item)).toEqual(["a", "b"]);
    expect(h.task("loop").output).toMatchObject({ iteration: 2, index: 1, item: "b" });
  });

  it("items form with an empty list completes without running the body; not a list fails terminally", () => {
    const empty = harness(loopDef({ loopCondition: undefined, input: {}, items: "${workflow.input.list}" }), { input: { list: [] } });
    empty.evaluate();
    empty.complete("pre");
    empty.evaluate();
    expect(empty.task("loop")).toMatchObject({ status: "COMPLETED", output: { iteration: 0 } });
    expect(empty.has("b1")).toBe(false);
    expect(empty.scheduled()).toEqual(["post"]);
    const bad = harness(loopDef({ loopCondition: undefined, input: {}, items: "${workflow.input.list}" }), { input: { list: "x" } });
    bad.evaluate();
    bad.complete("pre");
    bad.evaluate();
    expect(bad.task("loop").status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(bad.workflow.status).toBe("FAILED");
  });

  it("keepLastN prunes older iterations' rows and outputs; decide never needs them", () => {
    const h = harness(loopDef({ loopCondition: '$["loop"].iteration < $.times', input: { times: 5 }, keepLastN: 2 }));
    h.evaluate();
    runAll(h);
    expect(h.workflow.status).toBe("COMPLETED");
    expect(h.rows.filter((r) => r.ref === "b1").map((r) => r.iteration)).toEqual([4, 5]);
    expect(Object.keys(h.task("loop").output).sort()).toEqual(["4", "5", "iteration"]);
    const prunes = h.history.flat().filter((c) => c.kind === "pruneIterations");
    expect(prunes.at(-1)).toEqual({ kind: "pruneIterations", loopRef: "loop", refs: ["b1", "b2"], belowIteration: 4 });
  });

  it("a failing body task is retried within its iteration; a final failure fails the workflow", () => {
    const h = harness(loopDef({ loopCondition: '$["loop"].iteration < $.times', input: { times: 2 } }));
    h.evaluate();
    h.complete("pre");
    h.evaluate();
    h.fail("b1");
    h.now += 60_000;
    h.evaluate();
    expect(h.scheduled()).toEqual(["b1@1#a1"]);
    h.fail("b1", "x", "FAILED_WITH_TERMINAL_ERROR");
    const d = h.evaluate();
    expect(d.commands.map((c) => c.kind)).toEqual(["markSeen", "cancelTask", "failWorkflow"]);
    expect(d.commands.find((c) => c.kind === "cancelTask")).toMatchObject({ key: { ref: "loop" } });
  });

  it("a SWITCH in the body skips per iteration", () => {
    const def = workflow(
      [
        node("DO_WHILE", "loop", { loopCondition: '$["loop"].iteration < $.times', input: { times: 2 } }),
        node("SWITCH", "s", { parent: "loop", cases: ["odd"], input: { switchCaseValue: "${workflow.variables.mode}" } }),
        simple("o", { parent: "loop" }),
        node("SET_VARIABLE", "flip", { parent: "loop", input: { mode: "odd" } }),
      ],
      [edge("s", "o", "odd"), edge("s", "flip", "default")],
    );
    const h = harness(def);
    h.evaluate();
    // Iteration 1: default → flip (sets mode=odd), o skipped; iteration 2 starts at once: odd → o.
    expect(h.rows.map((r) => `${r.ref}@${r.iteration}:${r.status}`)).toEqual(["loop@0:IN_PROGRESS", "s@1:COMPLETED", "o@1:SKIPPED", "flip@1:COMPLETED", "s@2:COMPLETED", "o@2:SCHEDULED", "flip@2:SKIPPED"]);
    h.complete("o", {}, 2);
    h.evaluate();
    expect(h.workflow.status).toBe("COMPLETED");
  });

  it("a body decide resolves alone advances at most MAX_LOOP_ADVANCES_PER_EVALUATION iterations, then asks for another evaluation", () => {
    const def = workflow([node("DO_WHILE", "loop", { loopCondition: '$["loop"].iteration < $.times', input: { times: 250 } }), node("NOOP", "n", { parent: "loop" })]);
    const h = harness(def);
    const d = h.evaluate();
    expect(d.commands.at(-1)).toEqual({ kind: "requestEvaluation", reason: expect.stringContaining("loop") as unknown });
    expect(h.task("loop").output.iteration).toBe(MAX_LOOP_ADVANCES_PER_EVALUATION + 1);
    h.evaluate();
    h.evaluate();
    expect(h.workflow.status).toBe("COMPLETED");
    expect(h.task("loop").output.iteration).toBe(250);
  });
});

describe("FORK_JOIN_DYNAMIC", () => {
  const fanKey = { ref: "fan", iteration: 0, attempt: 0 };

  it("items form: N instances with instance refs; counters while running; the shell aggregates the output; the flow continues next evaluation", () => {
    const h = harness(
      workflow([node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "resize", items: "${workflow.input.images}" }), simple("after", { input: { all: "${fan.output.results}", second: "${fan.output.results[1].r}" } })], chain("fan", "after")),
      { input: { images: [{ url: "a" }, "b", { url: "c" }] } },
    );
    h.evaluate();
    expect(h.scheduled()).toEqual(["fan", "fan#0", "fan#1", "fan#2"]);
    expect(h.last("scheduleTask")[0]!.output).toEqual({ total: 3, completed: 0 });
    expect(h.last("scheduleTask").slice(1).map((c) => [c.taskDefName, c.queueName, c.parentRef, c.forkIndex, c.input])).toEqual([
      ["resize", "resize", "fan", 0, { url: "a" }],
      ["resize", "resize", "fan", 1, { item: "b" }],
      ["resize", "resize", "fan", 2, { url: "c" }],
    ]);
    h.complete("fan#2", { r: 2 });
    h.complete("fan#0", { r: 0 });
    h.evaluate();
    // Two instances reacted to: one small counter write, no instance output copied into the fork.
    expect(h.last("updateTask")).toEqual([{ kind: "updateTask", key: fanKey, taskId: h.task("fan").taskId, from: "IN_PROGRESS", output: { total: 3, completed: 2 } }]);
    h.fail("fan#1");
    h.now += 60_000;
    h.evaluate();
    expect(h.scheduled()).toEqual(["fan#1#a1"]);
    expect(h.last("updateTask")).toEqual([]);
    h.complete("fan#1", { r: 1 });
    const last = h.evaluate();
    expect(last.commands.map((c) => c.kind)).toEqual(["aggregateForkOutput", "requestEvaluation", "markSeen"]);
    expect(last.commands[0]).toEqual({ kind: "aggregateForkOutput", key: fanKey, taskId: h.task("fan").taskId, from: "IN_PROGRESS", status: "COMPLETED", shape: "results", total: 3 });
    // The shell ended the fork with the aggregate, unseen: the next evaluation reacts to it like to a worker's completion.
    expect(h.task("fan")).toMatchObject({ status: "COMPLETED", seen: false, output: { results: [{ r: 0 }, { r: 1 }, { r: 2 }] } });
    expect(h.has("after")).toBe(false);
    h.evaluate();
    expect(h.scheduled()).toEqual(["after"]);
    expect(h.task("after").input).toEqual({ all: [{ r: 0 }, { r: 1 }, { r: 2 }], second: 1 });
    expect(h.task("fan").seen).toBe(true);
  });

  it("Conductor form: tasks and inputs from the input, output keyed by taskReferenceName", () => {
    const h = harness(
      workflow(
        [
          node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: undefined, items: undefined, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs", input: { tasks: "${workflow.input.tasks}", inputs: "${workflow.input.inputs}" } }),
          node("NOOP", "then"),
        ],
        chain("fan", "then"),
        { outputParameters: { joined: "${fan.output}", x: "${fan.output.one.x}" } },
      ),
      { input: { tasks: [{ name: "t1", taskReferenceName: "one" }, { name: "child", taskReferenceName: "two", type: "SUB_WORKFLOW" }], inputs: { one: { a: 1 }, two: { b: 2 } } } },
    );
    h.evaluate();
    expect(h.task("fan").input.forkedTasks).toEqual(["one", "two"]);
    expect(h.started).toEqual([{ kind: "startSubWorkflow", key: { ref: "fan#1", iteration: 0, attempt: 0 }, name: "child", input: { b: 2 } }]);
    h.complete("fan#0", { x: 1 });
    h.complete("fan#1", { y: 2 });
    h.evaluate();
    expect(h.last("aggregateForkOutput")).toMatchObject([{ status: "COMPLETED", shape: "byTaskReferenceName", total: 2 }]);
    expect(h.task("fan")).toMatchObject({ status: "COMPLETED", output: { one: { x: 1 }, two: { y: 2 } } });
    expect(h.workflow.status).toBe("RUNNING");
    h.evaluate();
    expect(h.workflow).toMatchObject({ status: "COMPLETED", output: { joined: { one: { x: 1 }, two: { y: 2 } }, x: 1 } });
  });

  it("without outputParameters, a fork that finishes last gives the workflow its aggregated output (Conductor's last task)", () => {
    const h = harness(workflow([node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "t", items: [1, 2] })]));
    h.evaluate();
    h.complete("fan#0", { v: 0 });
    h.complete("fan#1", { v: 1 });
    h.evaluate();
    expect(h.workflow.status).toBe("RUNNING");
    h.evaluate();
    expect(h.workflow).toMatchObject({ status: "COMPLETED", output: { results: [{ v: 0 }, { v: 1 }] } });
  });

  it("zero instances complete at once; a bad task list fails terminally", () => {
    const empty = harness(workflow([node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "t", items: [] })]));
    empty.evaluate();
    expect(empty.task("fan")).toMatchObject({ status: "COMPLETED", output: { results: [] } });
    const bad = harness(
      workflow([node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: undefined, items: undefined, dynamicForkTasksParam: "tasks", dynamicForkTasksInputParamName: "inputs", input: { inputs: {}, tasks: [{ name: "t", taskReferenceName: "dup" }, { name: "t", taskReferenceName: "dup" }] } })]),
    );
    bad.evaluate();
    expect(bad.workflow.status).toBe("FAILED");
  });

  it("an instance's final failure fails the fork and the workflow, canceling its siblings; an optional fork continues with what completed", () => {
    const def = (optional: boolean, n = 2): Json => workflow([node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "t", items: Array.from({ length: n }, (_, i) => i), optional, policy: { retryCount: 0 } }), simple("after", { input: { r: "${fan.output.results}" } })], chain("fan", "after"));
    const h = harness(def(false));
    h.evaluate();
    h.fail("fan#0");
    const d = h.evaluate();
    expect(d.commands.map((c) => c.kind)).toEqual(["cancelTask", "failTask", "markSeen", "failWorkflow"]);
    expect(d.commands[0]).toMatchObject({ key: { ref: "fan#1" } });
    expect(h.task("fan").output).toEqual({ total: 2, completed: 0 });

    const o = harness(def(true, 3));
    o.evaluate();
    o.complete("fan#2", { v: 2 });
    o.fail("fan#0");
    const od = o.evaluate();
    expect(od.commands.map((c) => c.kind)).toEqual(["cancelTask", "aggregateForkOutput", "requestEvaluation", "markSeen"]);
    expect(od.commands[1]).toMatchObject({ status: "COMPLETED_WITH_ERRORS", reasonForIncompletion: "instance fan#0 FAILED: boom" });
    expect(o.task("fan")).toMatchObject({ status: "COMPLETED_WITH_ERRORS", output: { results: [null, null, { v: 2 }] } });
    expect(o.task("fan#1").status).toBe("CANCELED");
    o.evaluate();
    expect(o.scheduled()).toEqual(["after"]);
    expect(o.task("after").input).toEqual({ r: [null, null, { v: 2 }] });
  });

  it("two instances failing for good in one evaluation end an optional fork once (the second changes nothing)", () => {
    const h = harness(workflow([node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "t", items: [1, 2, 3], optional: true, policy: { retryCount: 0 } }), simple("after")], chain("fan", "after")));
    h.evaluate();
    h.fail("fan#0");
    h.fail("fan#1");
    const d = h.evaluate();
    expect(d.commands.map((c) => c.kind)).toEqual(["cancelTask", "aggregateForkOutput", "requestEvaluation", "markSeen"]);
    h.evaluate();
    expect(h.scheduled()).toEqual(["after"]);
    expect(h.workflow.status).toBe("RUNNING");
  });

  it("a workflow ending in the evaluation the last instance completes cancels the fork instead of aggregating it", () => {
    const h = harness(
      workflow([node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "t", items: [1] }), simple("other", { policy: { retryCount: 0 } }), simple("after")], [edge("fan", "after"), edge("other", "after")]),
    );
    h.evaluate();
    h.complete("fan#0", { v: 0 });
    h.fail("other", "no", "FAILED_WITH_TERMINAL_ERROR");
    const d = h.evaluate();
    expect(d.commands.map((c) => c.kind)).toEqual(["markSeen", "cancelTask", "failWorkflow"]);
    expect(d.commands[1]).toMatchObject({ key: fanKey, from: "IN_PROGRESS" });
    expect(h.task("fan").status).toBe("CANCELED");
  });

  it("a body task failing for good while a fork in the same loop iteration runs: the loop, the fork and every running instance are canceled", () => {
    const h = harness(
      workflow([
        node("DO_WHILE", "loop", { loopCondition: '$["loop"].iteration < $.times', input: { times: 2 } }),
        node("FORK_JOIN_DYNAMIC", "fan", { parent: "loop", forkTaskName: "t", items: [10, 20, 30] }),
        simple("x", { parent: "loop", policy: { retryCount: 0 } }),
      ]),
    );
    h.evaluate();
    h.complete("fan#1", {}, 1);
    h.fail("x", "no", "FAILED_WITH_TERMINAL_ERROR", 1);
    const d = h.evaluate();
    expect(d.commands.filter((c) => c.kind === "cancelTask").map((c) => `${c.key.ref}@${c.key.iteration}`).sort()).toEqual(["fan#0@1", "fan#2@1", "fan@1", "loop@0"]);
    expect(d.commands.at(-1)).toMatchObject({ kind: "failWorkflow", failedTaskRef: "x" });
    expect(h.rows.filter((r) => r.status === "IN_PROGRESS" || r.status === "SCHEDULED")).toEqual([]);
  });

  it("a fork in a loop counts and aggregates per iteration; the loop sees each iteration's aggregated output", () => {
    const h = harness(
      workflow([node("DO_WHILE", "loop", { loopCondition: '$["loop"].iteration < $.times', input: { times: 2 } }), node("FORK_JOIN_DYNAMIC", "fan", { parent: "loop", forkTaskName: "t", items: [10, 20] })]),
    );
    h.evaluate();
    for (let i = 1; i <= 2; i++) {
      h.complete("fan#0", { i, k: 0 }, i);
      h.evaluate();
      expect(h.task("fan", i).output).toEqual({ total: 2, completed: 1 });
      h.complete("fan#1", { i, k: 1 }, i);
      h.evaluate();
      expect(h.task("fan", i)).toMatchObject({ status: "COMPLETED", output: { results: [{ i, k: 0 }, { i, k: 1 }] } });
      h.evaluate();
    }
    expect(h.workflow.status).toBe("COMPLETED");
    expect(h.task("loop").output).toMatchObject({ "1": { fan: { results: [{ i: 1, k: 0 }, { i: 1, k: 1 }] } }, "2": { fan: { results: [{ i: 2, k: 0 }, { i: 2, k: 1 }] } } });
  });
});
