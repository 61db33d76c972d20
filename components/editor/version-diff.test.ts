import { describe, expect, it } from "vitest";
import { createNode } from "@/engine";
import type { WorkflowDefinition } from "@/engine";
import { makeEdge } from "./graph-edits";
import { changedPaths, diffDefinitions } from "./version-diff";

describe("diffDefinitions", () => {
  const v1: WorkflowDefinition = {
    schemaVersion: 1,
    name: "w",
    version: 1,
    nodes: [createNode("SIMPLE", "a", { x: 0, y: 0 }), createNode("SIMPLE", "b", { x: 0, y: 100 }), createNode("NOOP", "gone", { x: 0, y: 200 })],
    edges: [makeEdge("a", "b"), makeEdge("b", "gone")],
  };
  const v2: WorkflowDefinition = {
    ...v1,
    version: 2,
    description: "now with c",
    nodes: [
      { ...createNode("SIMPLE", "a", { x: 50, y: 0 }) },
      { ...createNode("SIMPLE", "b", { x: 0, y: 100 }), name: "charge", policy: { retryCount: 5 } },
      createNode("HTTP", "c", { x: 0, y: 200 }),
    ],
    edges: [makeEdge("a", "b"), makeEdge("b", "c")],
  };

  it("lists added, removed and changed nodes with their fields, and moves apart", () => {
    const diff = diffDefinitions(v1, v2);
    expect(diff.nodes).toEqual([
      { ref: "b", kind: "changed", fields: ["name", "policy"] },
      { ref: "c", kind: "added", fields: [] },
      { ref: "gone", kind: "removed", fields: [] },
    ]);
    expect(diff.moved).toEqual(["a"]);
    expect(diff.edgesAdded).toEqual([makeEdge("b", "c")]);
    expect(diff.edgesRemoved).toEqual([makeEdge("b", "gone")]);
    expect(diff.workflowFields).toEqual(["description"]);
    expect(diff.merged.nodes.map((n) => n.ref)).toEqual(["a", "b", "c", "gone"]);
    expect(diff.marks.get("gone")).toBe("removed");
    expect(diff.marks.get("edge:b->gone")).toBe("removed");
  });

  it("finds nothing between identical versions", () => {
    const diff = diffDefinitions(v1, { ...v1, version: 9 });
    expect(diff.nodes).toEqual([]);
    expect(diff.workflowFields).toEqual([]);
  });

  it("descends into objects for paths", () => {
    expect(changedPaths({ input: { url: "a", x: 1 } }, { input: { url: "b", x: 1 } })).toEqual(["input.url"]);
  });
});
