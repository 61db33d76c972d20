import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "../definition";
import { chain, edge, node, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import type { ConductorWorkflowTask } from "./conductor-schema";
import { exportConductorWorkflow } from "./export-workflow";
import { importConductorWorkflow } from "./import-workflow";
import { graphStructure } from "./structure";
import { edgeList, mustImport, nodeOf } from "./test-helpers";

const def = (nodes: Json[], edges: Json[] = [], extra: Json = {}): WorkflowDefinition => workflow(nodes, edges, extra) as unknown as WorkflowDefinition;

function mustExport(d: WorkflowDefinition) {
  const result = exportConductorWorkflow(d);
  if (!result.ok) throw new Error(`export failed:\n${JSON.stringify(result.problems, null, 2)}`);
  return result.workflowDef;
}

/** Task lists reduced to refs and nesting: `a`, `FORK_JOIN x [[…],[…]]`, `SWITCH s {case: […], default: […]}`, `JOIN j(a,b)`. */
function outline(tasks: readonly ConductorWorkflowTask[]): unknown[] {
  return tasks.map((t) => {
    switch (t.type) {
      case "FORK_JOIN":
        return { [`FORK_JOIN ${t.taskReferenceName}`]: (t.forkTasks ?? []).map(outline) };
      case "JOIN":
        return `JOIN ${t.taskReferenceName}(${(t.joinOn ?? []).join(",")})`;
      case "SWITCH":
        return { [`SWITCH ${t.taskReferenceName}`]: { ...Object.fromEntries(Object.entries(t.decisionCases ?? {}).map(([k, v]) => [k, outline(v)])), default: outline(t.defaultCase ?? []) } };
      case "DO_WHILE":
        return { [`DO_WHILE ${t.taskReferenceName}`]: outline(t.loopOver ?? []) };
      default:
        return t.taskReferenceName;
    }
  });
}

/** Exports, imports back, and checks the structure survived up to the JOINs export generated. */
function roundTrips(d: WorkflowDefinition): void {
  const back = mustImport(mustExport(d));
  const generated = new Set(back.nodes.filter((n) => !d.nodes.some((m) => m.ref === n.ref)).map((n) => n.ref));
  const a = graphStructure(d);
  const b = graphStructure(back, generated);
  expect(new Map(b.nodes)).toEqual(new Map(a.nodes));
  expect([...b.edges].sort()).toEqual([...a.edges].sort());
}

describe("exportConductorWorkflow: structured graphs", () => {
  it("a sequence, with Conductor's workflow-level fields", () => {
    const d = def([simple("a"), simple("b", { input: { x: "${a.output.x}" } })], chain("a", "b"), {
      description: "two steps",
      version: 4,
      inputSchema: { type: "object", properties: { id: { type: "string" } } },
      outputParameters: { out: "${b.output}" },
      timeoutSeconds: 60,
      timeoutPolicy: "TIME_OUT_WF",
      failureWorkflow: "cleanup",
      ownerEmail: "o@example.com",
      tags: [{ key: "team", value: "core" }],
    });
    expect(mustExport(d)).toEqual({
      name: "test_workflow",
      description: "two steps",
      version: 4,
      tasks: [
        { name: "task", taskReferenceName: "a", type: "SIMPLE", inputParameters: {} },
        { name: "task", taskReferenceName: "b", type: "SIMPLE", inputParameters: { x: "${a.output.x}" } },
      ],
      inputParameters: ["id"],
      outputParameters: { out: "${b.output}" },
      schemaVersion: 2,
      restartable: true,
      workflowStatusListenerEnabled: false,
      ownerEmail: "o@example.com",
      timeoutPolicy: "TIME_OUT_WF",
      timeoutSeconds: 60,
      variables: {},
      failureWorkflow: "cleanup",
      inputSchema: { name: "test_workflow_input", version: 1, type: "JSON", data: { type: "object", properties: { id: { type: "string" } } } },
      tags: [{ key: "team", value: "core" }],
    });
  });

  it("a fork merging at a plain node gets a generated FORK_JOIN and JOIN named after the node it leaves", () => {
    const d = def([simple("a"), simple("b"), simple("c"), simple("d")], [edge("a", "b"), edge("a", "c"), edge("b", "d"), edge("c", "d")]);
    expect(outline(mustExport(d).tasks)).toEqual(["a", { "FORK_JOIN a_fork": [["b"], ["c"]] }, "JOIN a_join(b,c)", "d"]);
    roundTrips(d);
  });

  it("several start nodes merging at a JOIN node: the JOIN is used as is", () => {
    const d = def([simple("a"), simple("b"), node("JOIN", "j"), simple("after")], [edge("a", "j"), edge("b", "j"), edge("j", "after")]);
    expect(outline(mustExport(d).tasks)).toEqual([{ "FORK_JOIN start_fork": [["a"], ["b"]] }, "JOIN j(a,b)", "after"]);
    roundTrips(d);
  });

  it("a merge that forks again, and branches that end on their own", () => {
    const d = def([simple("a"), simple("b"), simple("c"), simple("d")], [edge("a", "c"), edge("a", "d"), edge("b", "c"), edge("b", "d")]);
    expect(outline(mustExport(d).tasks)).toEqual([
      { "FORK_JOIN start_fork": [["a"], ["b"]] },
      "JOIN start_join(a,b)",
      { "FORK_JOIN start_join_fork": [["c"], ["d"]] },
      "JOIN start_join_join(c,d)",
    ]);
    roundTrips(d);
  });

  it("branches meeting in stages become nested forks", () => {
    const d = def(
      [simple("s"), simple("a"), simple("b"), simple("c"), simple("m"), simple("n")],
      [edge("s", "a"), edge("s", "b"), edge("s", "c"), edge("a", "m"), edge("b", "m"), edge("m", "n"), edge("c", "n")],
    );
    expect(outline(mustExport(d).tasks)).toEqual([
      "s",
      { "FORK_JOIN s_fork": [[{ "FORK_JOIN s_fork_2": [["a"], ["b"]] }, "JOIN s_join(a,b)", "m"], ["c"]] },
      "JOIN s_join_2(m,c)",
      "n",
    ]);
    roundTrips(d);
  });

  it("a branch that leads nowhere is in the FORK_JOIN but not in joinOn; a mid-branch edge to the JOIN is named", () => {
    const d = def(
      [simple("s"), simple("a"), simple("b1"), simple("b2"), simple("c"), node("JOIN", "j"), simple("after")],
      [edge("s", "a"), edge("s", "b1"), edge("s", "c"), edge("b1", "b2"), edge("a", "j"), edge("b1", "j"), edge("j", "after")],
    );
    expect(outline(mustExport(d).tasks)).toEqual(["s", { "FORK_JOIN s_fork": [["a"], ["b1", "b2"], ["c"]] }, "JOIN j(a,b1)", "after"]);
    roundTrips(d);
  });

  it("a SWITCH's cases up to where they meet; a case whose handle leads straight there is empty", () => {
    const d = def(
      [
        node("SWITCH", "sw", { cases: ["x", "y"] }),
        simple("x1"),
        simple("x2"),
        simple("y1"),
        simple("y2"),
        node("SWITCH", "inner", { cases: ["p"] }),
        simple("p1"),
        node("NOOP", "merge"),
        node("TERMINATE", "stop", { terminationStatus: "FAILED" }),
      ],
      [
        edge("sw", "x1", "x"),
        edge("x1", "x2"),
        edge("sw", "y1", "y"),
        edge("sw", "y2", "y"),
        edge("y1", "inner"),
        edge("y2", "inner"),
        edge("inner", "p1", "p"),
        edge("inner", "stop", "default"),
        edge("x2", "merge"),
        edge("p1", "merge"),
        edge("sw", "merge", "default"),
      ],
    );
    const tasks = mustExport(d).tasks;
    expect(outline(tasks)).toEqual([
      {
        "SWITCH sw": {
          x: ["x1", "x2"],
          y: [{ "FORK_JOIN sw_y_fork": [["y1"], ["y2"]] }, "JOIN sw_y_join(y1,y2)", { "SWITCH inner": { p: ["p1"], default: ["stop"] } }],
          default: [],
        },
      },
      "merge",
    ]);
    expect(tasks[0]).toMatchObject({ evaluatorType: "value-param", expression: "switchCaseValue", inputParameters: { switchCaseValue: "${workflow.input.value}" } });
    roundTrips(d);
  });

  it("a DO_WHILE's body is its loopOver, forks included", () => {
    const d = def(
      [
        node("DO_WHILE", "loop", { loopCondition: "$.loop['iteration'] < 3", keepLastN: 2 }),
        simple("a", { parent: "loop" }),
        simple("b", { parent: "loop" }),
        simple("after"),
      ],
      [edge("loop", "after")],
    );
    const tasks = mustExport(d).tasks;
    expect(outline(tasks)).toEqual([{ "DO_WHILE loop": [{ "FORK_JOIN loop_body_fork": [["a"], ["b"]] }, "JOIN loop_body_join(a,b)"] }, "after"]);
    expect(tasks[0]).toMatchObject({ loopCondition: "$.loop['iteration'] < 3", evaluatorType: "graaljs", inputParameters: { times: 3, keepLastN: 2 } });
    roundTrips(d);
  });

  it("nodes after a TERMINATE (which never run) follow it in its list, as Conductor registers them", () => {
    const d = def(
      [simple("a"), node("SWITCH", "sw", { cases: ["x"] }), node("TERMINATE", "t1"), node("TERMINATE", "t2"), simple("late"), simple("later")],
      [edge("a", "sw"), edge("sw", "t1", "x"), edge("sw", "t2", "default"), edge("t1", "late"), edge("t2", "late"), edge("late", "later")],
    );
    expect(outline(mustExport(d).tasks)).toEqual(["a", { "SWITCH sw": { x: ["t1"], default: ["t2"] } }, "late", "later"]);
    roundTrips(d);
    expect(outline(mustExport(def([simple("a"), node("TERMINATE", "t"), simple("x")], [edge("a", "t"), edge("t", "x")])).tasks)).toEqual(["a", "t", "x"]);
  });
});

describe("exportConductorWorkflow: node configuration", () => {
  it("policies go to retryCount, startDelay, cacheConfig and an inline taskDefinition with only the fields set", () => {
    const d = def([
      simple("a", {
        policy: { retryCount: 2, startDelay: 5, timeoutSeconds: 30, retryLogic: "LINEAR_BACKOFF", cache: { key: "${workflow.input.id}", ttlSeconds: 60 }, inputTemplate: { x: 1 } },
      }),
      simple("b", { policy: { retryCount: 0 } }),
    ]);
    const [a, b] = mustExport(def([...d.nodes], [edge("a", "b")])).tasks;
    expect(a).toMatchObject({
      retryCount: 2,
      startDelay: 5,
      cacheConfig: { key: "${workflow.input.id}", ttlInSecond: 60 },
      // Conductor rejects a response timeout above the timeout; its default is 3600.
      taskDefinition: { name: "task", timeoutSeconds: 30, responseTimeoutSeconds: 30, retryLogic: "LINEAR_BACKOFF", inputTemplate: { x: 1 } },
    });
    expect(a?.taskDefinition).not.toHaveProperty("retryCount");
    // Only the per-task override: the registered TaskDef still applies.
    expect(b).toMatchObject({ retryCount: 0 });
    expect(b).not.toHaveProperty("taskDefinition");
  });

  it("config Conductor has no field for travels under nodeFlow and imports back", () => {
    const d = def([node("HUMAN", "review", { label: "Review", assignee: "group:ops", outcomes: ["ok", "no"], dueIn: "2d", form: { template: { name: "t1", version: 2 } }, title: "Review ${workflow.input.id}", approvals: 2, allowSelfApproval: false, escalation: [{ action: "reassign", assignee: "role:admin", dueIn: "1h" }, { action: "complete", outcome: "no" }] }), node("WAIT", "signal", { duration: undefined, signal: true })], [
      edge("review", "signal"),
    ]);
    const tasks = mustExport(d).tasks;
    expect(tasks[0]).toMatchObject({ type: "HUMAN", nodeFlow: { label: "Review", assignee: "group:ops", outcomes: ["ok", "no"], dueIn: "2d", form: { template: { name: "t1", version: 2 } } } });
    expect(tasks[1]).toMatchObject({ type: "WAIT", inputParameters: {} });
    const back = mustImport(mustExport(d));
    expect(nodeOf(back, "review")).toMatchObject({ label: "Review", assignee: "group:ops", outcomes: ["ok", "no"], dueIn: "2d", form: { template: { name: "t1", version: 2 } }, title: "Review ${workflow.input.id}", approvals: 2, allowSelfApproval: false, escalation: [{ action: "reassign", assignee: "role:admin", dueIn: "1h" }, { action: "complete", outcome: "no" }] });
    expect(nodeOf(back, "signal")).toMatchObject({ signal: true });
  });

  it("a FORK_JOIN_DYNAMIC gets its JOIN; reading the fork's output reads that JOIN", () => {
    const d = def(
      [
        node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "item_worker", items: "${workflow.input.items}" }),
        node("FORK_JOIN_DYNAMIC", "subs", { forkTaskName: "child_flow", forkTaskType: "SUB_WORKFLOW", forkTaskVersion: 2, items: [1, 2] }),
        simple("after", { input: { all: "${fan.output}", one: "${fan.output.x}", asked: "${fan.input.items}" } }),
      ],
      [edge("fan", "subs"), edge("subs", "after")],
      { outputParameters: { r: "${fan.output}" } },
    );
    const out = mustExport(d);
    expect(out.tasks.map((t) => [t.taskReferenceName, t.type])).toEqual([
      ["fan", "FORK_JOIN_DYNAMIC"],
      ["fan_join", "JOIN"],
      ["subs", "FORK_JOIN_DYNAMIC"],
      ["subs_join", "JOIN"],
      ["after", "SIMPLE"],
    ]);
    expect(out.tasks[0]!.inputParameters).toEqual({ forkTaskName: "item_worker", forkTaskInputs: "${workflow.input.items}" });
    expect(out.tasks[2]!.inputParameters).toEqual({ forkTaskWorkflow: "child_flow", forkTaskWorkflowVersion: "2", forkTaskInputs: [1, 2] });
    expect(out.tasks[4]!.inputParameters).toEqual({ all: "${fan_join.output}", one: "${fan_join.output.x}", asked: "${fan.input.items}" });
    expect(out.outputParameters).toEqual({ r: "${fan_join.output}" });
    // The input definition is untouched, and importing back gives the same expressions.
    expect(nodeOf(d, "after").input).toEqual({ all: "${fan.output}", one: "${fan.output.x}", asked: "${fan.input.items}" });
    expect(nodeOf(mustImport(out), "after").input).toEqual(nodeOf(d, "after").input);
  });

  it("an inline sub-workflow is exported too", () => {
    const child = def([simple("c1"), simple("c2")], chain("c1", "c2"), { name: "child", version: 2 });
    const d = def([node("SUB_WORKFLOW", "sub", { subWorkflowParam: undefined, workflowDefinition: child })]);
    const [sub] = mustExport(d).tasks;
    expect(sub).toMatchObject({ subWorkflowParam: { name: "child", version: 2, workflowDefinition: { name: "child", tasks: [{ taskReferenceName: "c1" }, { taskReferenceName: "c2" }] } } });
  });

  it("is deterministic and leaves its input alone", () => {
    const d = def([simple("a"), simple("b"), simple("c")], [edge("a", "b"), edge("a", "c")]);
    const frozen = JSON.parse(JSON.stringify(d)) as WorkflowDefinition;
    expect(mustExport(d)).toEqual(mustExport(d));
    expect(d).toEqual(frozen);
  });
});

describe("exportConductorWorkflow: refusals name the node and say why", () => {
  const refusal = (d: WorkflowDefinition) => {
    const result = exportConductorWorkflow(d);
    if (result.ok) throw new Error(`exported:\n${JSON.stringify(result.workflowDef, null, 1)}`);
    expect(result.problems).toHaveLength(1);
    return result.problems[0]!;
  };

  it("a cross edge between two fork branches", () => {
    const d = def(
      [simple("s"), simple("a1"), simple("a2"), simple("b1"), simple("b2"), simple("end")],
      [edge("s", "a1"), edge("s", "b1"), edge("a1", "a2"), edge("b1", "b2"), edge("a2", "end"), edge("b2", "end"), edge("a1", "b2")],
    );
    const p = refusal(d);
    expect(p).toMatchObject({ code: "not-structured", ref: "b2" });
    expect(p.message).toContain('"a2"');
    expect(p.message).toContain("meet at one JOIN");
  });

  it("a merge that is not where all its fork's branches meet", () => {
    const d = def(
      [simple("s"), simple("a"), simple("b"), simple("m"), simple("x"), simple("y")],
      [edge("s", "a"), edge("s", "b"), edge("a", "m"), edge("b", "m"), edge("a", "x"), edge("m", "y"), edge("x", "y")],
    );
    const p = refusal(d);
    expect(p).toMatchObject({ code: "not-structured", ref: "m", refs: ["m", "x", "y"] });
    expect(p.message).toContain('"m" joins the branches of its fork, but "x" in one of them also leads to "y" without passing "m"');
  });

  it("a node reached from two SWITCH cases that is not where the cases meet", () => {
    const d = def(
      [node("SWITCH", "sw", { cases: ["x", "y"] }), simple("a"), simple("b"), simple("n"), simple("m")],
      [edge("sw", "a", "x"), edge("sw", "b", "y"), edge("a", "n"), edge("b", "n"), edge("sw", "m", "default"), edge("n", "m")],
    );
    const p = refusal(d);
    expect(p).toMatchObject({ code: "not-structured", ref: "n" });
    expect(p.message).toContain('reached from case "x" and case "y" of the SWITCH "sw"');
  });

  it("a SWITCH case that ends its path while the others continue", () => {
    // Reached from one case only, "m" would simply belong to it; here case "y" leads there too.
    const d = def([node("SWITCH", "sw", { cases: ["x", "y"] }), simple("a"), simple("m")], [edge("sw", "a", "x"), edge("a", "m"), edge("sw", "m", "y")]);
    const p = refusal(d);
    expect(p).toMatchObject({ code: "not-structured", ref: "sw" });
    expect(p.message).toContain('the default case of the SWITCH "sw" ends its path while case "x" and case "y" continue to "m"');
  });

  it("an edge from inside a case to a node outside the SWITCH", () => {
    const d = def(
      [node("SWITCH", "sw", { cases: ["x"] }), simple("a"), simple("b"), simple("m"), simple("z")],
      [edge("sw", "a", "x"), edge("a", "b"), edge("b", "m"), edge("sw", "m", "default"), edge("a", "z"), edge("m", "z")],
    );
    const p = refusal(d);
    expect(p).toMatchObject({ code: "not-structured", ref: "a", refs: ["a", "sw", "z"] });
    expect(p.message).toContain("would wait forever");
  });

  it("a redundant edge", () => {
    const d = def([simple("a"), simple("b"), simple("c")], [edge("a", "b"), edge("b", "c"), edge("a", "c")]);
    const p = refusal(d);
    expect(p).toMatchObject({ code: "not-structured", ref: "a", refs: ["a", "c", "b"] });
    expect(p.message).toContain('The edge "a" → "c" is redundant');
  });

  it("an edge leaving a TERMINATE to a node reached another way too (redundant)", () => {
    const d = def([simple("a"), node("TERMINATE", "t"), simple("x")], [edge("a", "t"), edge("a", "x"), edge("t", "x")]);
    expect(refusal(d)).toMatchObject({ code: "not-structured", ref: "a" });
  });

  it("a definition that does not validate", () => {
    const d = def([simple("a"), simple("b")], [edge("a", "b"), edge("b", "a")]);
    const result = exportConductorWorkflow(d);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => [p.code, p.ref])).toEqual([["invalid-definition", "a"]]);
  });

  it("refusals inside an inline sub-workflow name the SUB_WORKFLOW", () => {
    const child = def([simple("a"), simple("b"), simple("c")], [edge("a", "b"), edge("b", "c"), edge("a", "c")], { name: "child" });
    const p = refusal(def([node("SUB_WORKFLOW", "sub", { subWorkflowParam: undefined, workflowDefinition: child })]));
    expect(p).toMatchObject({ code: "not-structured", ref: "sub", refs: ["sub", "a"] });
  });
});

describe("exportConductorWorkflow: size", () => {
  it("wide forks and long chains export in linear time; absurd nesting is refused, not thrown", () => {
    const wide = def([simple("s"), ...Array.from({ length: 3_000 }, (_, i) => simple(`b${i}`)), node("JOIN", "j")], Array.from({ length: 3_000 }, (_, i) => [edge("s", `b${i}`), edge(`b${i}`, "j")]).flat());
    const tasks = mustExport(wide).tasks;
    expect(tasks.map((t) => t.type)).toEqual(["SIMPLE", "FORK_JOIN", "JOIN"]);
    expect(tasks[1]!.forkTasks).toHaveLength(3_000);
    expect(tasks[2]!.joinOn).toHaveLength(3_000);
    const chained = def(Array.from({ length: 20_000 }, (_, i) => simple(`t${i}`)), chain(...Array.from({ length: 20_000 }, (_, i) => `t${i}`)));
    expect(mustExport(chained).tasks).toHaveLength(20_000);
    // Each SWITCH's only case leads to the next: 20,000 levels of decisionCases.
    const deep = def(
      Array.from({ length: 20_000 }, (_, i) => node("SWITCH", `s${i}`, { cases: ["c"] })),
      Array.from({ length: 19_999 }, (_, i) => edge(`s${i}`, `s${i + 1}`, "c")),
    );
    const result = exportConductorWorkflow(deep);
    expect(result.ok === false && result.problems.map((p) => p.code)).toEqual(["too-deep"]);
  }, 30_000);
});

describe("exportConductorWorkflow: what import reads, export writes back", () => {
  it("edges survive import → export → import for the shapes import makes", () => {
    const d = def(
      [simple("s"), simple("a"), simple("b1"), simple("b2"), node("JOIN", "j"), simple("after")],
      [edge("s", "a"), edge("s", "b1"), edge("b1", "b2"), edge("a", "j"), edge("j", "after")],
    );
    expect(mustExport(d).tasks.map((t) => t.type)).toEqual(["SIMPLE", "FORK_JOIN", "JOIN", "SIMPLE"]);
    expect(edgeList(mustImport(mustExport(d))).sort()).toEqual(edgeList(d).sort());
  });
});

describe("sticky notes", () => {
  const notes = [
    { id: "why", text: "# Why\nCharge **after** the check", color: "pink" as const, position: { x: 300, y: -40 }, width: 260, height: 140 },
    { id: "todo", text: "- ask finance", position: { x: -200, y: 0 } },
  ];

  it("travel under metadata.nodeFlow.notes and import back as they were", () => {
    const d = def([simple("a"), simple("b")], chain("a", "b"), { notes });
    const out = mustExport(d);
    expect(out.metadata).toEqual({ nodeFlow: { notes } });
    expect(mustImport(out).notes).toEqual(notes);
  });

  it("leave metadata out when there are none", () => {
    expect(mustExport(def([simple("a")])).metadata).toBeUndefined();
  });

  it("are dropped with a warning when metadata holds something that is not notes", () => {
    const out = { ...mustExport(def([simple("a")])), metadata: { nodeFlow: { notes: [{ id: "x", text: 3 }] }, owner: "team-a" } };
    const back = importConductorWorkflow(out);
    expect(back.ok).toBe(true);
    if (!back.ok) return;
    expect(back.definition.notes).toBeUndefined();
    expect(back.warnings.map((w) => [w.code, w.path.join(".")])).toContainEqual(["field-dropped", "metadata.nodeFlow.notes"]);
  });
});
