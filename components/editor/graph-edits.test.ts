import { describe, expect, it } from "vitest";
import { createNode, validateDefinition } from "@/engine";
import type { WorkflowDefinition } from "@/engine";
import * as edits from "./graph-edits";

const at = { x: 0, y: 0 };

function reasonOf(check: edits.ConnectionCheck): string {
  return check.ok ? "(allowed)" : check.reason;
}

function chain(): WorkflowDefinition {
  return {
    schemaVersion: 1,
    name: "w",
    nodes: [createNode("SIMPLE", "a", at), createNode("SIMPLE", "b", { x: 0, y: 100 }), createNode("SIMPLE", "c", { x: 0, y: 200 })],
    edges: [edits.makeEdge("a", "b"), edits.makeEdge("b", "c")],
  };
}

describe("uniqueRef", () => {
  it("cleans a base into a valid ref and numbers collisions", () => {
    expect(edits.uniqueRef("json_jq_transform", new Set())).toBe("json_jq_transform");
    expect(edits.uniqueRef("simple", new Set(["simple"]))).toBe("simple_2");
    expect(edits.uniqueRef("simple_2", new Set(["simple", "simple_2"]))).toBe("simple_3");
    expect(edits.uniqueRef("9 lives!", new Set())).toBe("_lives_");
    expect(edits.uniqueRef("workflow", new Set())).toBe("node_workflow");
  });
});

describe("checkConnection", () => {
  it("refuses self-loops, duplicates and cycles with a reason", () => {
    const d = chain();
    expect(reasonOf(edits.checkConnection(d, { source: "a", target: "a" }))).toContain("itself");
    expect(reasonOf(edits.checkConnection(d, { source: "a", target: "b" }))).toContain("already");
    expect(reasonOf(edits.checkConnection(d, { source: "c", target: "a" }))).toContain("cycle");
    expect(edits.checkConnection(d, { source: "a", target: "c" })).toMatchObject({ ok: true });
  });

  it("requires a case handle from a SWITCH and refuses one elsewhere", () => {
    const d = chain();
    d.nodes.push({ ...createNode("SWITCH", "s", at), cases: ["yes"] });
    expect(edits.checkConnection(d, { source: "s", target: "a" })).toMatchObject({ ok: false });
    expect(edits.checkConnection(d, { source: "s", target: "a", sourceHandle: "nope" })).toMatchObject({ ok: false });
    const ok = edits.checkConnection(d, { source: "s", target: "a", sourceHandle: "yes" });
    expect(ok).toMatchObject({ ok: true, edge: { source: "s", target: "a", case: "yes" } });
    expect(edits.checkConnection(d, { source: "a", target: "c", sourceHandle: "x" })).toEqual({ ok: true, edge: edits.makeEdge("a", "c") });
  });

  it("refuses edges across a loop's border", () => {
    const d = chain();
    d.nodes.push(createNode("DO_WHILE", "loop", at), createNode("SIMPLE", "inside", at, "loop"));
    expect(reasonOf(edits.checkConnection(d, { source: "a", target: "inside" }))).toContain("border");
    expect(edits.checkConnection(d, { source: "c", target: "loop" })).toMatchObject({ ok: true });
  });
});

describe("insertOnEdge", () => {
  it("splits the edge and keeps a SWITCH case on the first half", () => {
    const d: WorkflowDefinition = {
      schemaVersion: 1,
      name: "w",
      nodes: [{ ...createNode("SWITCH", "s", at), cases: ["yes"] }, createNode("SIMPLE", "t", at)],
      edges: [edits.makeEdge("s", "t", "yes")],
    };
    const result = edits.insertOnEdge(d, "s->t:yes", "NOOP", at);
    if ("reason" in result) throw new Error(result.reason);
    expect(result.ref).toBe("noop");
    expect(result.definition.edges).toEqual([edits.makeEdge("s", "noop", "yes"), edits.makeEdge("noop", "t")]);
  });

  it("refuses containers and unknown edges", () => {
    expect(edits.insertOnEdge(chain(), "a->b", "DO_WHILE", at)).toHaveProperty("reason");
    expect(edits.insertOnEdge(chain(), "x->y", "NOOP", at)).toHaveProperty("reason");
  });
});

describe("removeElements", () => {
  it("removes a loop with its body and every touching edge, sharing untouched nodes", () => {
    const d = chain();
    d.nodes.push(createNode("DO_WHILE", "loop", at), createNode("SIMPLE", "inside", at, "loop"));
    d.edges.push(edits.makeEdge("c", "loop"));
    const next = edits.removeElements(d, ["loop"]);
    expect(next.nodes.map((n) => n.ref)).toEqual(["a", "b", "c"]);
    expect(next.edges).toHaveLength(2);
    expect(next.nodes[0]).toBe(d.nodes[0]);
    expect(edits.removeElements(d, [], ["a->b"]).edges.map(edits.edgeKey)).toEqual(["b->c", "c->loop"]);
  });
});

describe("copy and paste", () => {
  it("pastes with fresh refs, internal edges and expressions following the rename", () => {
    const d = chain();
    d.nodes[1] = { ...createNode("SIMPLE", "b", at), input: { x: "${a.output.value}", y: "${workflow.input.z}" } };
    const fragment = edits.copyFragment(d, ["a", "b"])!;
    expect(fragment.edges).toEqual([edits.makeEdge("a", "b")]);
    const parsed = edits.parseFragment(JSON.stringify(fragment))!;
    const { definition, refs } = edits.pasteFragment(d, parsed, { x: 40, y: 40 });
    expect(refs).toEqual(["a_2", "b_2"]);
    const pastedB = definition.nodes.find((n) => n.ref === "b_2")!;
    expect(pastedB.input).toEqual({ x: "${a_2.output.value}", y: "${workflow.input.z}" });
    expect(pastedB.position).toEqual({ x: 40, y: 40 });
    expect(definition.edges.at(-1)).toEqual(edits.makeEdge("a_2", "b_2"));
    expect(validateDefinition(definition).ok).toBe(true);
  });

  it("copies a loop with its body and keeps children relative to the pasted loop", () => {
    const d = chain();
    d.nodes.push(createNode("DO_WHILE", "loop", { x: 500, y: 0 }), createNode("SIMPLE", "inside", { x: 30, y: 60 }, "loop"));
    const { definition } = edits.pasteFragment(d, edits.copyFragment(d, ["loop"])!, { x: 10, y: 10 });
    const child = definition.nodes.find((n) => n.ref === "inside_2")!;
    expect(child.parent).toBe("loop_2");
    expect(child.position).toEqual({ x: 30, y: 60 });
  });

  it("ignores clipboard text that is not a fragment", () => {
    expect(edits.parseFragment("hello")).toBeNull();
    expect(edits.parseFragment(JSON.stringify({ kind: "node-flow/fragment", version: 1, nodes: [{ ref: "a", type: "NOPE", position: at }], edges: [] }))).toBeNull();
  });
});

describe("renameRef", () => {
  it("renames edges, children, expressions, joinOn and outputs", () => {
    const d = chain();
    d.nodes[2] = { ...createNode("SIMPLE", "c", at), input: { v: "${a.output}", w: "${ab.output}" } };
    d.nodes.push({ ...createNode("JOIN", "j", at), joinOn: ["a"] });
    d.outputParameters = { result: "${a.output.x}" };
    const result = edits.renameRef(d, "a", "first");
    if ("reason" in result) throw new Error(result.reason);
    const next = result.definition;
    expect(next.nodes[0]!.ref).toBe("first");
    expect(next.edges[0]).toEqual(edits.makeEdge("first", "b"));
    expect(next.nodes[2]!.input).toEqual({ v: "${first.output}", w: "${ab.output}" });
    expect(next.nodes[3]).toMatchObject({ joinOn: ["first"] });
    expect(next.outputParameters).toEqual({ result: "${first.output.x}" });
    expect(next.nodes[1]).toBe(d.nodes[1]);
  });

  it("refuses taken, reserved and malformed refs", () => {
    expect(edits.renameRef(chain(), "a", "b")).toHaveProperty("reason");
    expect(edits.renameRef(chain(), "a", "workflow")).toHaveProperty("reason");
    expect(edits.renameRef(chain(), "a", "1abc")).toHaveProperty("reason");
  });
});

describe("SWITCH cases", () => {
  const d = (): WorkflowDefinition => ({
    schemaVersion: 1,
    name: "w",
    nodes: [{ ...createNode("SWITCH", "s", at), cases: ["yes", "no"] }, createNode("SIMPLE", "t", at), createNode("SIMPLE", "u", at)],
    edges: [edits.makeEdge("s", "t", "yes"), edits.makeEdge("s", "u", "no")],
  });

  it("renames a case and its edges", () => {
    const result = edits.renameCase(d(), "s", "yes", "approved");
    if ("reason" in result) throw new Error(result.reason);
    expect(result.definition.nodes[0]).toMatchObject({ cases: ["approved", "no"] });
    expect(result.definition.edges[0]).toEqual(edits.makeEdge("s", "t", "approved"));
    expect(edits.renameCase(d(), "s", "yes", "no")).toHaveProperty("reason");
    expect(edits.renameCase(d(), "s", "yes", "default")).toHaveProperty("reason");
  });

  it("a case renamed in place through the inspector keeps its edges", () => {
    const def = d();
    const next = edits.replaceNode(def, { ...(def.nodes[0] as Extract<WorkflowDefinition["nodes"][number], { type: "SWITCH" }>), cases: ["approved", "no"] });
    expect(next.edges).toEqual([edits.makeEdge("s", "t", "approved"), edits.makeEdge("s", "u", "no")]);
  });

  it("adds case_N and removing a case drops its edges", () => {
    expect(edits.addCase(d(), "s").nodes[0]).toMatchObject({ cases: ["yes", "no", "case_3"] });
    expect(edits.removeCase(d(), "s", "yes").edges).toEqual([edits.makeEdge("s", "u", "no")]);
  });
});

describe("reparent", () => {
  it("moves an unconnected node into a loop and refuses a connected one", () => {
    const d = chain();
    d.nodes.push(createNode("DO_WHILE", "loop", at), createNode("NOOP", "free", at));
    const moved = edits.reparent(d, "free", "loop", { x: 32, y: 56 });
    if ("reason" in moved) throw new Error(moved.reason);
    expect(moved.definition.nodes.find((n) => n.ref === "free")).toMatchObject({ parent: "loop", position: { x: 32, y: 56 } });
    expect(edits.reparent(d, "a", "loop", at)).toHaveProperty("reason");
    expect(edits.reparent(d, "loop", "loop", at)).toHaveProperty("reason");
  });
});

describe("setPositions", () => {
  it("rounds, and returns the same definition when nothing moved", () => {
    const d = chain();
    expect(edits.setPositions(d, new Map([["a", { x: 0.2, y: 0.4 }]]))).toBe(d);
    const next = edits.setPositions(d, new Map([["a", { x: 10.6, y: 3 }]]));
    expect(next.nodes[0]!.position).toEqual({ x: 11, y: 3 });
    expect(next.nodes[1]).toBe(d.nodes[1]);
  });
});
