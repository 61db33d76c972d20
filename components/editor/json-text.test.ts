import { describe, expect, it } from "vitest";
import { createNode, validateDefinition } from "@/engine";
import type { WorkflowDefinition } from "@/engine";
import { definitionText, drawableProblem, locateProblems, parseJsonText, shareUnchanged } from "./json-text";

const definition: WorkflowDefinition = {
  schemaVersion: 1,
  name: "w",
  nodes: [createNode("SIMPLE", "a", { x: 0, y: 0 }), createNode("SIMPLE", "b", { x: 0, y: 100 })],
  edges: [{ source: "a", target: "b" }],
};

describe("parseJsonText", () => {
  it("says where the text breaks, by line and column", () => {
    const text = '{\n  "name": "w",\n  "nodes": [}\n';
    const result = parseJsonText(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.line).toBe(3);
    expect(result.problem.column).toBeGreaterThan(1);
    expect(result.problem.message).not.toMatch(/position/);
  });
});

describe("drawableProblem", () => {
  it("accepts a definition and names what cannot be drawn", () => {
    expect(drawableProblem(definition)).toBeNull();
    expect(drawableProblem([])).toMatch(/object/);
    expect(drawableProblem({ nodes: [{ ref: "a", type: "SIMPLE" }], edges: [] })).toMatch(/position/);
    expect(drawableProblem({ nodes: [{ ref: "a", type: "WHAT", position: { x: 0, y: 0 } }], edges: [] })).toMatch(/type/);
    expect(drawableProblem({ nodes: [{ ref: "s", type: "SWITCH", position: { x: 0, y: 0 } }], edges: [] })).toMatch(/cases/);
    expect(drawableProblem({ nodes: [], edges: [{ source: "a" }] })).toMatch(/target/);
  });
});

describe("shareUnchanged", () => {
  it("keeps the identity of nodes and edges the text repeats", () => {
    const edited = JSON.parse(definitionText(definition)) as WorkflowDefinition;
    edited.nodes[1]!.label = "B";
    const shared = shareUnchanged(definition, edited);
    expect(shared.nodes[0]).toBe(definition.nodes[0]);
    expect(shared.nodes[1]).not.toBe(definition.nodes[1]);
    expect(shared.edges[0]).toBe(definition.edges[0]);
  });
});

describe("locateProblems", () => {
  it("points at the offending value in the text", () => {
    const bad = { ...definition, edges: [{ source: "a", target: "nowhere" }] };
    const text = definitionText(bad);
    const result = validateDefinition(bad);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const located = locateProblems(text, result.problems);
    expect(located.length).toBe(result.problems.length);
    const snippet = text.slice(located[0]!.from, located[0]!.to);
    expect(snippet).toContain("nowhere");
  });
});
