import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "../definition";
import { TASK_POLICY_DEFAULTS, validateDefinition } from "../definition";
import { chain, edge, node, simple, workflow } from "../definition/test-fixtures";
import { blueprintNode, compile } from "./compile";
import { BLUEPRINT_VERSION } from "./types";

function valid(def: unknown): WorkflowDefinition {
  const result = validateDefinition(def);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.definition;
}

const diamond = valid(
  workflow(
    [
      simple("a", { input: { id: "${workflow.input.id}" } }),
      node("SWITCH", "s", { cases: ["x", "y"], input: { switchCaseValue: "${a.output.kind}" } }),
      simple("x", { input: { v: "${a.output.v}" }, policy: { retryCount: 1 } }),
      simple("y", { optional: true }),
      node("JOIN", "j", { joinOn: ["x"] }),
      node("DO_WHILE", "loop", { input: { times: 2, last: "${b1.output.n}" } }),
      simple("b1", { parent: "loop", input: { i: "${loop.output.iteration}" } }),
      simple("b2", { parent: "loop", input: { prev: "${b1.output.n}" } }),
      node("TERMINATE", "t", { terminationStatus: "COMPLETED", workflowOutput: { r: "${j.output}" } }),
    ],
    [...chain("a", "s"), edge("s", "x", "x"), edge("s", "y", "y"), edge("x", "j"), edge("y", "j"), edge("j", "loop"), edge("b1", "b2"), edge("loop", "t")],
    { outputParameters: { out: "${x.output.v}", first: "${a.output}" }, timeoutSeconds: 60, timeoutPolicy: "TIME_OUT_WF", failureWorkflow: "on_fail" },
  ),
);

describe("compile", () => {
  it("is deterministic and plain JSON: two compiles are byte-equal and survive a round trip", () => {
    const one = JSON.stringify(compile(diamond));
    const two = JSON.stringify(compile(structuredClone(diamond)));
    expect(one).toBe(two);
    expect(JSON.stringify(JSON.parse(one))).toBe(one);
    expect(one).not.toContain("position");
  });

  it("records the workflow level: start nodes, output and its reads, timeout, failure workflow", () => {
    const bp = compile(diamond);
    expect(bp).toMatchObject({
      blueprintVersion: BLUEPRINT_VERSION,
      name: "test_workflow",
      version: null,
      startNodes: ["a"],
      outputParameters: { out: "${x.output.v}", first: "${a.output}" },
      outputReads: ["a", "x"],
      timeoutSeconds: 60,
      timeoutPolicy: "TIME_OUT_WF",
      failureWorkflow: "on_fail",
    });
    expect(Object.keys(bp.nodes)).toEqual(["a", "s", "x", "y", "j", "loop", "b1", "b2", "t"]);
  });

  it.each([
    // ref, successors, predecessors, reads
    ["a", [{ ref: "s", case: null }], [], []],
    ["s", [{ ref: "x", case: "x" }, { ref: "y", case: "y" }], ["a"], ["a"]],
    ["x", [{ ref: "j", case: null }], ["s"], ["a", "s"]],
    ["j", [{ ref: "loop", case: null }], ["x", "y"], ["x", "y"]],
    ["loop", [{ ref: "t", case: null }], ["j"], ["b1", "b2", "j"]],
    ["b1", [{ ref: "b2", case: null }], [], ["loop"]],
    ["b2", [], ["b1"], ["b1"]],
    ["t", [], ["loop"], ["j", "loop"]],
  ])("node %s: edges and reads", (ref, successors, predecessors, reads) => {
    const n = blueprintNode(compile(diamond), ref)!;
    expect(n.successors).toEqual(successors);
    expect(n.predecessors).toEqual(predecessors);
    expect(n.reads).toEqual(reads);
  });

  it("records containers, parents, body entries, config and input", () => {
    const bp = compile(diamond);
    expect(blueprintNode(bp, "loop")).toMatchObject({ children: ["b1", "b2"], bodyEntries: ["b1"], parent: null, resolvesInDecide: true });
    expect(blueprintNode(bp, "b2")).toMatchObject({ parent: "loop", children: [], bodyEntries: [], resolvesInDecide: false });
    expect(blueprintNode(bp, "s")!.config).toEqual({ cases: ["x", "y"], evaluatorType: "value-param", expression: "switchCaseValue" });
    expect(blueprintNode(bp, "s")!.incoming).toEqual([{ ref: "a", case: null }]);
    expect(blueprintNode(bp, "j")!.incoming).toEqual([
      { ref: "x", case: null },
      { ref: "y", case: null },
    ]);
    expect(blueprintNode(bp, "a")!.input).toEqual({ id: "${workflow.input.id}" });
    expect(blueprintNode(bp, "j")!.input).toBeNull();
    expect(blueprintNode(bp, "y")!.optional).toBe(true);
    expect(blueprintNode(bp, "a")!.taskDefName).toBe("task");
    expect(blueprintNode(bp, "j")!.taskDefName).toBe("JOIN");
  });

  it("layers policy: node over registered task definition over Conductor's defaults", () => {
    const bp = compile(diamond, { taskPolicy: (name) => (name === "task" ? { retryCount: 7, retryDelaySeconds: 5 } : undefined) });
    expect(blueprintNode(bp, "x")!.policy).toMatchObject({ retryCount: 1, retryDelaySeconds: 5, retryLogic: "FIXED" });
    expect(blueprintNode(bp, "a")!.policy).toMatchObject({ retryCount: 7, retryDelaySeconds: 5 });
    expect(blueprintNode(compile(diamond), "a")!.policy.retryCount).toBe(TASK_POLICY_DEFAULTS.retryCount);
  });

  it("keeps refs that name Object.prototype members as plain own keys", () => {
    const def = valid(workflow([simple("__proto__"), simple("constructor"), simple("toString")], chain("__proto__", "constructor", "toString")));
    const bp = JSON.parse(JSON.stringify(compile(def))) as ReturnType<typeof compile>;
    expect(Object.keys(bp.nodes)).toEqual(["__proto__", "constructor", "toString"]);
    expect(blueprintNode(bp, "constructor")!.predecessors).toEqual(["__proto__"]);
    expect(blueprintNode(bp, "hasOwnProperty")).toBeUndefined();
    expect(bp.startNodes).toEqual(["__proto__"]);
  });

  it("refuses a definition with a cycle (validation would have)", () => {
    const def = workflow([simple("a"), simple("b")], [edge("a", "b"), edge("b", "a")]) as unknown as WorkflowDefinition;
    expect(() => compile(def)).toThrow(/cycle/);
  });

  it("compiles a 10,000-node chain quickly", () => {
    const refs = Array.from({ length: 10_000 }, (_, i) => `n${i}`);
    const def = valid(workflow(refs.map((r, i) => simple(r, i === 0 ? {} : { input: { v: `\${n${i - 1}.output.v}` } })), chain(...refs)));
    const bp = compile(def);
    expect(blueprintNode(bp, "n9999")!.reads).toEqual(["n9998"]);
  });
});
