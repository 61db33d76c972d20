import { describe, expect, it } from "vitest";
import { chain, edge, node, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import { compile } from "../compile";
import { decide } from "./decide";
import { Harness, fakeScripts } from "./test-harness";
import type { TaskSnapshot, WorkflowSnapshot } from "./types";
import type { WorkflowDefinition } from "../definition";

/** Every harness here also checks that the partial state refsToLoad describes decides like the full one. */
const harness = (def: Json, options: ConstructorParameters<typeof Harness>[1] = {}): Harness => new Harness(def, { checkPartialState: true, ...options });

describe("start and chains", () => {
  it("schedules only the start nodes, in parallel, then each successor as its predecessor completes", () => {
    const h = harness(workflow([simple("a"), simple("b"), simple("c"), simple("d")], [...chain("a", "c", "d"), edge("b", "c")]));
    h.evaluate();
    expect(h.scheduled()).toEqual(["a", "b"]);
    h.complete("a");
    h.evaluate();
    expect(h.scheduled()).toEqual([]);
    h.complete("b");
    h.evaluate();
    expect(h.scheduled()).toEqual(["c"]);
    expect(h.last("markSeen")).toEqual([{ kind: "markSeen", taskIds: [h.task("b").taskId] }]);
    h.complete("c");
    h.evaluate();
    h.complete("d", { done: true });
    h.evaluate();
    expect(h.workflow.status).toBe("COMPLETED");
    expect(h.workflow.output).toEqual({ done: true });
  });

  it("resolves inputs from the workflow, variables and upstream outputs", () => {
    const h = harness(
      workflow([simple("a", { input: { id: "${workflow.input.id}" } }), simple("b", { input: { fromA: "${a.output.v}", all: "${a.output}", wf: "${workflow.workflowId}", x: "${workflow.variables.x}" } })], chain("a", "b"), {
        variables: { x: 5 },
      }),
      { input: { id: 42 } },
    );
    h.evaluate();
    expect(h.task("a").input).toEqual({ id: 42 });
    h.complete("a", { v: [1, 2] });
    h.evaluate();
    expect(h.task("b").input).toEqual({ fromA: [1, 2], all: { v: [1, 2] }, wf: "wf-1", x: 5 });
  });

  it("merges the policy's inputTemplate under the node's input", () => {
    const h = harness(workflow([simple("a", { input: { b: 2 }, policy: { inputTemplate: { a: 1, b: 1 } } })]));
    h.evaluate();
    expect(h.task("a").input).toEqual({ a: 1, b: 2 });
  });

  it("completes with outputParameters when defined, else with the last task's output", () => {
    const h = harness(workflow([simple("a"), simple("b")], chain("a", "b"), { outputParameters: { fromA: "${a.output.n}", fromB: "${b.output.n}" } }));
    h.evaluate();
    h.complete("a", { n: 1 });
    h.evaluate();
    h.complete("b", { n: 2 });
    const d = h.evaluate();
    expect(d.commands.at(-1)).toEqual({ kind: "completeWorkflow", output: { fromA: 1, fromB: 2 } });
  });

  it("does nothing while paused or once finished", () => {
    const h = harness(workflow([simple("a")]));
    h.workflow.status = "PAUSED";
    expect(h.evaluate().commands).toEqual([]);
    h.workflow.status = "RUNNING";
    h.evaluate();
    h.complete("a");
    h.workflow.status = "TERMINATED";
    expect(h.evaluate().commands).toEqual([]);
  });

  it("ignores an unseen attempt a retry has superseded", () => {
    const h = harness(workflow([simple("a"), simple("b")], chain("a", "b")));
    h.evaluate();
    h.fail("a");
    h.now += 60_000;
    h.evaluate();
    expect(h.scheduled()).toEqual(["a#a1"]);
    // A late completion of attempt 0 changes nothing: attempt 1 is the latest.
    const stale = h.byKey({ ref: "a", iteration: 0, attempt: 0 });
    stale.status = "COMPLETED";
    stale.seen = false;
    const d = h.evaluate();
    expect(d.commands).toEqual([{ kind: "markSeen", taskIds: [stale.taskId] }]);
  });
});

describe("SWITCH and dead-path elimination", () => {
  // a → s ─x→ x1 → x2 ─┐
  //       ─y→ y1 ──────┼→ m → after
  //       ─default→ d1 ┘
  const def = (evaluatorType = "value-param", expression = "switchCaseValue"): Json =>
    workflow(
      [
        simple("a"),
        node("SWITCH", "s", { cases: ["x", "y"], evaluatorType, expression, input: { switchCaseValue: "${a.output.kind}" } }),
        simple("x1"),
        simple("x2"),
        simple("y1"),
        simple("d1"),
        node("NOOP", "m"),
        simple("after", { input: { x2: "${x2.output}", y1: "${y1.output}" } }),
      ],
      [edge("a", "s"), edge("s", "x1", "x"), ...chain("x1", "x2", "m"), edge("s", "y1", "y"), edge("y1", "m"), edge("s", "d1", "default"), edge("d1", "m"), edge("m", "after")],
    );

  it.each([
    ["x", ["x1"], ["y1", "d1"]],
    ["y", ["y1"], ["x1", "x2", "d1"]],
    ["zzz", ["d1"], ["x1", "x2", "y1"]],
    [null, ["d1"], ["x1", "x2", "y1"]],
  ])("value-param %j takes its case's edges and skips the other branches' exclusive nodes", (kind, runs, skipped) => {
    const h = harness(def());
    h.evaluate();
    h.complete("a", { kind });
    h.evaluate();
    expect(h.scheduled()).toEqual(runs);
    expect(h.last("skipTask").map((c) => c.key.ref).sort()).toEqual([...skipped].sort());
    expect(h.task("s").output).toEqual({ evaluationResult: [kind] });
    // Run the taken branch; the merge node joins it with the skipped ones.
    for (let guard = 0; guard < 5 && !h.has("after"); guard++) {
      for (const r of h.runnable()) h.complete(r.ref, { from: r.ref });
      h.evaluate();
    }
    expect(h.task("m").status).toBe("COMPLETED");
    // A skipped node has a row (dead-path elimination), so reading it gives its empty output, as in Conductor.
    expect(h.task("after").input).toEqual({ x2: kind === "x" ? { from: "x2" } : {}, y1: kind === "y" ? { from: "y1" } : {} });
    h.complete("after");
    h.evaluate();
    expect(h.workflow.status).toBe("COMPLETED");
  });

  it("javascript SWITCH evaluates its script with $ = the resolved input", () => {
    const scripts = fakeScripts({ "$.switchCaseValue == 1 ? 'x' : 'y'": ($) => ($.switchCaseValue === 1 ? "x" : "y") });
    const h = harness(def("javascript", "$.switchCaseValue == 1 ? 'x' : 'y'"), { scripts });
    h.evaluate();
    h.complete("a", { kind: 1 });
    h.evaluate();
    expect(h.scheduled()).toEqual(["x1"]);
  });

  it("a failing script fails the SWITCH with a terminal error, and the workflow", () => {
    const h = harness(def("javascript", "throw 1"));
    h.evaluate();
    h.complete("a");
    const d = h.evaluate();
    expect(h.task("s").status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(d.commands.at(-1)).toMatchObject({ kind: "failWorkflow", failedTaskRef: "s" });
  });

  it("an unconnected case ends that path: a node after only other cases is skipped, and the workflow completes", () => {
    const h = harness(
      workflow(
        [simple("a"), node("SWITCH", "s", { cases: ["x", "y"], input: { switchCaseValue: "${a.output.kind}" } }), simple("x1"), simple("x2")],
        [edge("a", "s"), edge("s", "x1", "x"), edge("x1", "x2")],
      ),
    );
    h.evaluate();
    h.complete("a", { kind: "y" });
    h.evaluate();
    expect(h.task("x1").status).toBe("SKIPPED");
    expect(h.task("x2").status).toBe("SKIPPED");
    expect(h.workflow.status).toBe("COMPLETED");
  });

  it("a join after a SWITCH and a parallel branch waits for the branch, not the skipped case", () => {
    // a → s ─x→ x1 ─┐
    //   → p ───────┴→ j (JOIN)
    const h = harness(
      workflow(
        [simple("a"), node("SWITCH", "s", { cases: ["x"], input: { switchCaseValue: "${a.output.kind}" } }), simple("x1"), simple("p"), node("JOIN", "j")],
        [edge("a", "s"), edge("a", "p"), edge("s", "x1", "x"), edge("x1", "j"), edge("p", "j")],
      ),
    );
    h.evaluate();
    h.complete("a", { kind: "nope" });
    h.evaluate();
    expect(h.scheduled()).toEqual(["p"]);
    expect(h.task("x1").status).toBe("SKIPPED");
    expect(h.has("j")).toBe(false);
    h.complete("p", { n: 1 });
    h.evaluate();
    expect(h.task("j")).toMatchObject({ status: "COMPLETED", output: { p: { n: 1 } } });
    expect(h.workflow.status).toBe("COMPLETED");
  });

  it("EXCLUSIVE_JOIN outputs the branch that ran", () => {
    const h = harness(
      workflow(
        [simple("a"), node("SWITCH", "s", { cases: ["x", "y"], input: { switchCaseValue: "${a.output.kind}" } }), simple("x1"), simple("y1"), node("EXCLUSIVE_JOIN", "ej", { joinOn: ["x1", "y1"] })],
        [edge("a", "s"), edge("s", "x1", "x"), edge("s", "y1", "y"), edge("x1", "ej"), edge("y1", "ej")],
      ),
    );
    h.evaluate();
    h.complete("a", { kind: "y" });
    h.evaluate();
    h.complete("y1", { picked: "y" });
    h.evaluate();
    expect(h.task("ej").output).toEqual({ picked: "y" });
  });
});

describe("fork and join by edges", () => {
  it("several outgoing edges fork; several incoming edges join; JOIN reports its joinOn", () => {
    const h = harness(
      workflow([simple("a"), simple("b"), simple("c"), node("JOIN", "j", { joinOn: ["b", "c"] }), simple("z")], [edge("a", "b"), edge("a", "c"), edge("b", "j"), edge("c", "j"), edge("j", "z")]),
    );
    h.evaluate();
    h.complete("a");
    h.evaluate();
    expect(h.scheduled()).toEqual(["b", "c"]);
    h.complete("c", { c: 1 });
    h.evaluate();
    expect(h.scheduled()).toEqual([]);
    h.complete("b", { b: 1 });
    h.evaluate();
    expect(h.task("j").output).toEqual({ b: { b: 1 }, c: { c: 1 } });
    expect(h.scheduled()).toEqual(["z"]);
  });

  it("both branches finishing in the same evaluation join once", () => {
    const h = harness(workflow([simple("a"), simple("b"), simple("c"), simple("z")], [edge("a", "b"), edge("a", "c"), edge("b", "z"), edge("c", "z")]));
    h.evaluate();
    h.complete("a");
    h.evaluate();
    h.complete("b");
    h.complete("c");
    h.evaluate();
    expect(h.scheduled()).toEqual(["z"]);
  });
});

describe("decider-resolved nodes", () => {
  it("SET_VARIABLE merges into variables, visible downstream in the same evaluation", () => {
    const h = harness(
      workflow([node("SET_VARIABLE", "sv", { input: { count: "${workflow.input.n}", tag: "t" } }), simple("a", { input: { c: "${workflow.variables.count}", old: "${workflow.variables.keep}" } })], chain("sv", "a"), {
        variables: { keep: 1, tag: "old" },
      }),
      { input: { n: 3 } },
    );
    const d = h.evaluate();
    expect(d.commands.find((c) => c.kind === "setVariables")).toEqual({ kind: "setVariables", variables: { keep: 1, tag: "t", count: 3 } });
    expect(h.task("a").input).toEqual({ c: 3, old: 1 });
  });

  it.each([
    ["COMPLETED", "completeWorkflow", { r: 1 }],
    ["FAILED", "failWorkflow", { r: 1 }],
    ["TERMINATED", "terminateWorkflow", { r: 1 }],
  ] as const)("TERMINATE %s ends the workflow with its workflowOutput and cancels what runs", (terminationStatus, kind, output) => {
    const h = harness(
      workflow(
        [simple("a"), simple("slow"), node("TERMINATE", "t", { terminationStatus, terminationReason: "because ${a.output.why}", workflowOutput: { r: "${a.output.r}" } }), simple("after_slow")],
        [edge("a", "t"), edge("slow", "after_slow")],
        { failureWorkflow: "cleanup" },
      ),
    );
    h.evaluate();
    h.complete("a", { r: 1, why: "done" });
    const d = h.evaluate();
    expect(d.commands.find((c) => c.kind === "cancelTask")).toMatchObject({ key: { ref: "slow" }, from: "SCHEDULED" });
    const end = d.commands.at(-1)!;
    expect(end).toMatchObject({ kind, output });
    if (kind !== "completeWorkflow") expect(end).toMatchObject({ reason: "because done" });
    if (kind === "failWorkflow") expect(end).toMatchObject({ failureWorkflow: { name: "cleanup", input: { workflowId: "wf-1", reason: "because done", failureStatus: "FAILED" } } });
    expect(h.has("after_slow")).toBe(false);
    expect(h.task("t").status).toBe("COMPLETED");
  });

  it("DYNAMIC runs the task its input names, and fails terminally when it names none", () => {
    const ok = harness(workflow([node("DYNAMIC", "d", { input: { taskToExecute: "${workflow.input.t}" } })]), { input: { t: "resize" } });
    ok.evaluate();
    expect(ok.last("scheduleTask")[0]).toMatchObject({ taskType: "SIMPLE", taskDefName: "resize", queueName: "resize", executor: "worker" });
    const bad = harness(workflow([node("DYNAMIC", "d", { input: { taskToExecute: "${workflow.input.t}" } })]));
    bad.evaluate();
    expect(bad.workflow.status).toBe("FAILED");
  });

  it.each([
    ["HTTP", { httpRequest: { uri: "https://x/${workflow.input.id}", method: "GET" } }, { http_request: { uri: "https://x/7", method: "GET" } }],
    ["INLINE", { evaluatorType: "graaljs", expression: "$.v + 1", input: { v: 1 } }, { v: 1, evaluatorType: "graaljs", expression: "$.v + 1" }],
    ["JSON_JQ_TRANSFORM", { queryExpression: ".a", input: { a: 1 } }, { a: 1, queryExpression: ".a" }],
    ["EVENT", { sink: "conductor:q", input: { e: 1 } }, { e: 1, sink: "conductor:q" }],
  ] as const)("%s is a system task for the system-task runner, not run by decide", (type, extra, input) => {
    const h = harness(workflow([node(type, "sys", extra)]), { input: { id: 7 } });
    h.evaluate();
    expect(h.last("scheduleTask")[0]).toMatchObject({ taskType: type, executor: "system", queueName: type, status: "SCHEDULED", input });
  });
});

describe("external tasks", () => {
  it("WAIT duration arms a timer and completes when it is due", () => {
    const h = harness(workflow([node("WAIT", "w", { duration: "${workflow.input.d}" }), simple("after")], chain("w", "after")), { input: { d: "1m 30s" } });
    h.evaluate();
    expect(h.last("scheduleTask")[0]).toMatchObject({ executor: "external", status: "IN_PROGRESS", input: { duration: "1m 30s", waitUntil: h.now + 90_000 } });
    expect(h.last("armTimer")).toEqual([{ kind: "armTimer", timer: "wait", key: { ref: "w", iteration: 0, attempt: 0 }, fireAt: h.now + 90_000 }]);
    h.now += 89_999;
    expect(h.evaluate().commands).toEqual([]);
    h.now += 1;
    h.evaluate();
    expect(h.task("w").status).toBe("COMPLETED");
    expect(h.scheduled()).toEqual(["after"]);
  });

  it.each([
    ["2030-01-31T09:00:00Z", Date.UTC(2030, 0, 31, 9)],
    ["2030-01-31 09:00 UTC", Date.UTC(2030, 0, 31, 9)],
    ["2030-01-31", Date.UTC(2030, 0, 31)],
    ["2030-01-31T09:00:00+02:00", Date.UTC(2030, 0, 31, 7)],
  ])("WAIT until %s", (until, fireAt) => {
    const h = harness(workflow([node("WAIT", "w", { duration: undefined, until })]));
    h.evaluate();
    expect(h.last("armTimer")[0]?.fireAt).toBe(fireAt);
  });

  it("WAIT until a past time completes at once; an unreadable zone fails terminally", () => {
    const past = harness(workflow([node("WAIT", "w", { duration: undefined, until: "2000-01-01" })]), { now: Date.UTC(2020, 0, 1) });
    past.evaluate();
    expect(past.workflow.status).toBe("COMPLETED");
    const zone = harness(workflow([node("WAIT", "w", { duration: undefined, until: "2030-01-31 09:00 Europe/Paris" })]));
    zone.evaluate();
    expect(zone.task("w").status).toBe("FAILED_WITH_TERMINAL_ERROR");
  });

  it("WAIT for a signal and HUMAN wait for their completion through the API", () => {
    const h = harness(workflow([node("WAIT", "w", { duration: undefined, signal: true }), node("HUMAN", "hu", { assignee: "${workflow.input.who}" }), simple("z")], [edge("w", "z"), edge("hu", "z")]), {
      input: { who: "ann" },
    });
    h.evaluate();
    expect(h.last("armTimer")).toEqual([]);
    expect(h.task("hu").input).toMatchObject({ assignee: "ann", outcomes: ["approve", "reject"] });
    h.complete("w", { signal: 1 });
    h.complete("hu", { outcome: "approve" });
    h.evaluate();
    expect(h.scheduled()).toEqual(["z"]);
  });

  it("HUMAN resolves its title, assignee, deadline and escalation assignees, and passes the rest as written", () => {
    const h = harness(
      workflow([
        {
          ...node("HUMAN", "hu", {
            title: "Expense ${workflow.input.id}",
            assignee: "user:${workflow.input.manager}",
            approvals: 2,
            allowSelfApproval: false,
            form: { schema: { type: "object", properties: { note: { type: "string", title: "${not.resolved}" } } } },
            dueIn: "${workflow.input.due}",
            escalation: [{ action: "reassign", assignee: "group:${workflow.input.team}", dueIn: "1h" }, { action: "timeout" }],
            input: { amount: "${workflow.input.amount}" },
          }),
          label: "Approve it",
        },
      ]),
      { input: { id: 7, manager: "m@x.io", due: "2d", team: "finance", amount: 12 } },
    );
    h.evaluate();
    expect(h.task("hu").input).toEqual({
      amount: 12,
      title: "Expense 7",
      assignee: "user:m@x.io",
      approvals: 2,
      allowSelfApproval: false,
      form: { schema: { type: "object", properties: { note: { type: "string", title: "${not.resolved}" } } } },
      outcomes: ["approve", "reject"],
      dueIn: "2d",
      escalation: [{ action: "reassign", assignee: "group:finance", dueIn: "1h" }, { action: "timeout" }],
    });
    const labelled = harness(workflow([{ ...node("HUMAN", "hu"), label: "Approve it" }]));
    labelled.evaluate();
    expect(labelled.task("hu").input).toMatchObject({ title: "Approve it" });
  });

  it("SUB_WORKFLOW starts a child; its completion continues the parent", () => {
    const h = harness(
      workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: "child", version: 2 }, input: { x: "${workflow.input.x}" } }), simple("after", { input: { r: "${sub.output.r}" } })], chain("sub", "after")),
      { input: { x: 1 } },
    );
    h.workflow.correlationId = "corr";
    const d = h.evaluate();
    expect(d.commands.filter((c) => c.kind === "startSubWorkflow")).toEqual([
      { kind: "startSubWorkflow", key: { ref: "sub", iteration: 0, attempt: 0 }, name: "child", version: 2, input: { x: 1 }, correlationId: "corr", priority: 0 },
    ]);
    expect(h.task("sub").input).toEqual({ x: 1, subWorkflowName: "child", subWorkflowVersion: 2 });
    h.complete("sub", { r: 9 });
    h.evaluate();
    expect(h.task("after").input).toEqual({ r: 9 });
  });

  it("a failed SUB_WORKFLOW is retried as a new attempt with a new child, after its retry delay", () => {
    const h = harness(workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: "child" }, policy: { retryCount: 1 } })]));
    h.evaluate();
    h.fail("sub");
    h.evaluate();
    // The default retryDelaySeconds (60): the new attempt waits SCHEDULED, its `retry` timer wakes the decider.
    expect(h.started.map((s) => [s.key.attempt, s.name])).toEqual([[0, "child"]]);
    expect(h.task("sub")).toMatchObject({ attempt: 1, status: "SCHEDULED" });
    expect(h.last("armTimer")).toEqual([{ kind: "armTimer", timer: "retry", key: { ref: "sub", iteration: 0, attempt: 1 }, fireAt: h.now + 60_000 }]);
    h.now += 60_000;
    h.evaluate([{ kind: "retry", key: { ref: "sub", iteration: 0, attempt: 1 }, fireAt: h.now }]);
    expect(h.started.map((s) => [s.key.attempt, s.name])).toEqual([
      [0, "child"],
      [1, "child"],
    ]);
    expect(h.task("sub")).toMatchObject({ attempt: 1, status: "IN_PROGRESS", startedAt: h.now });
  });

  it("START_WORKFLOW asks the shell to start a workflow and is completed by it", () => {
    const h = harness(workflow([node("START_WORKFLOW", "sw", { startWorkflow: { name: "other", input: { a: "${workflow.input.a}" }, correlationId: "c1" } }), simple("z")], chain("sw", "z")), {
      input: { a: 5 },
    });
    const d = h.evaluate();
    expect(d.commands.find((c) => c.kind === "startWorkflow")).toEqual({ kind: "startWorkflow", key: { ref: "sw", iteration: 0, attempt: 0 }, name: "other", input: { a: 5 }, correlationId: "c1" });
    h.complete("sw", { workflowId: "wf-2" });
    h.evaluate();
    expect(h.scheduled()).toEqual(["z"]);
  });
});

describe("the state has no room for every task (invariant 6)", () => {
  it("decides a 30,000-node chain's next step from a handful of rows", () => {
    const refs = Array.from({ length: 30_000 }, (_, i) => `n${i}`);
    const bp = compile(workflow(refs.map((r) => simple(r)), chain(...refs)) as unknown as WorkflowDefinition);
    const wf: WorkflowSnapshot = { id: "w", defName: "big", defVersion: 1, status: "RUNNING", input: {}, variables: {}, startedAt: 0, version: 3 };
    const done = (ref: string, i: number): TaskSnapshot => ({ taskId: `t${i}`, ref, iteration: 0, attempt: 0, status: "COMPLETED", taskType: "SIMPLE", input: {}, output: {}, scheduledAt: 0, endedAt: 1, seen: i !== 20_000 });
    const state = { workflow: wf, frontier: [done("n20000", 20_000)], loaded: [done("n0", 0), done("n20000", 20_000)] };
    const d = decide(bp, state, 5, { scripts: fakeScripts({}) });
    expect(d.commands.map((c) => c.kind)).toEqual(["scheduleTask", "markSeen"]);
    expect(d.commands[0]).toMatchObject({ key: { ref: "n20001" } });
  });

  describe("a 30,000-instance dynamic fork: one completion costs O(instances that changed), not O(N)", () => {
    const N = 30_000;
    const bp = compile(workflow([node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "work", items: "${workflow.input.items}" }), simple("after", { input: { all: "${fan.output.results}" } })], chain("fan", "after")) as unknown as WorkflowDefinition);
    const wf: WorkflowSnapshot = { id: "w", defName: "fan", defVersion: 1, status: "RUNNING", input: {}, variables: {}, startedAt: 0, version: 9 };
    /** The fork's labels, rigged to throw if decide walks them: reading `length` is all it may do. */
    const labels = new Proxy(
      Array.from({ length: N }, (_, k) => `fan#${k}`),
      {
        get(target, p, receiver) {
          if (typeof p === "string" && /^\d+$/.test(p)) throw new Error(`decide read label ${p}`);
          if (p === Symbol.iterator || p === "map" || p === "forEach") throw new Error(`decide walked the ${N} labels`);
          return Reflect.get(target, p, receiver) as unknown;
        },
      },
    );
    const forkRow = (completed: number): TaskSnapshot => ({ taskId: "fork", ref: "fan", iteration: 0, attempt: 0, status: "IN_PROGRESS", taskType: "FORK_JOIN_DYNAMIC", input: { forkedTasks: labels }, output: { total: N, completed }, scheduledAt: 0, seen: false });
    const instance = (k: number, status: TaskSnapshot["status"], seen = false): TaskSnapshot => ({
      taskId: `i${k}`,
      ref: `fan#${k}`,
      iteration: 0,
      attempt: 0,
      status,
      taskType: "SIMPLE",
      taskDefName: "work",
      input: { k },
      output: status === "COMPLETED" ? { v: k } : {},
      scheduledAt: 0,
      ...(status === "COMPLETED" ? { endedAt: 1 } : {}),
      seen,
      parentRef: "fan",
      forkIndex: k,
    });

    it("one instance completes while another runs: a counter write of a few bytes, whatever N is", () => {
      const state = { workflow: wf, frontier: [forkRow(N - 2), instance(N - 2, "COMPLETED"), instance(N - 1, "IN_PROGRESS")], loaded: [forkRow(N - 2)] };
      const d = decide(bp, state, 5, { scripts: fakeScripts({}) });
      expect(d.commands).toEqual([
        { kind: "updateTask", key: { ref: "fan", iteration: 0, attempt: 0 }, taskId: "fork", from: "IN_PROGRESS", output: { total: N, completed: N - 1 } },
        { kind: "markSeen", taskIds: [`i${N - 2}`] },
      ]);
      expect(JSON.stringify(d.commands).length).toBeLessThan(300);
      // The evaluator may load a running fork without its O(N) input (EvaluationState.frontier): same decision.
      const bare = { ...forkRow(N - 2), input: {} };
      expect(decide(bp, { ...state, frontier: [bare, ...state.frontier.slice(1)], loaded: [bare] }, 5, { scripts: fakeScripts({}) })).toEqual(d);
    });

    it("the last instance completes: the shell aggregates (one command naming no instance), the next evaluation continues", () => {
      const state = { workflow: wf, frontier: [forkRow(N - 1), instance(N - 1, "COMPLETED")], loaded: [forkRow(N - 1)] };
      const d = decide(bp, state, 5, { scripts: fakeScripts({}) });
      expect(d.commands).toEqual([
        { kind: "aggregateForkOutput", key: { ref: "fan", iteration: 0, attempt: 0 }, taskId: "fork", from: "IN_PROGRESS", status: "COMPLETED", shape: "results", total: N },
        { kind: "requestEvaluation", reason: "FORK_JOIN_DYNAMIC fan ended: react to its aggregated output" },
        { kind: "markSeen", taskIds: [`i${N - 1}`] },
      ]);
    });

    it("deciding again on the committed state counts nothing twice: seen instances are not counted", () => {
      const state = { workflow: wf, frontier: [forkRow(N - 1), instance(N - 1, "IN_PROGRESS")], loaded: [forkRow(N - 1), instance(N - 2, "COMPLETED", true)] };
      expect(decide(bp, state, 5, { scripts: fakeScripts({}) }).commands).toEqual([]);
    });
  });
});
