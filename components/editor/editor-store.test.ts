import { describe, expect, it } from "vitest";
import { createNode } from "@/engine";
import type { WorkflowDefinition } from "@/engine";
import { createEditorStore } from "./editor-store";
import { makeEdge } from "./graph-edits";

function start(): WorkflowDefinition {
  return { schemaVersion: 1, name: "w", nodes: [createNode("SIMPLE", "a", { x: 0, y: 0 })], edges: [] };
}

describe("editor store", () => {
  it("undoes and redoes one step per action, and a drag is one step", () => {
    const store = createEditorStore({ definition: start() });
    const s = () => store.getState();
    s().addNode("NOOP", { x: 0, y: 200 });
    expect(s().definition.nodes).toHaveLength(2);
    expect(s().selectedNodes).toEqual(new Set(["noop"]));
    for (let i = 1; i <= 30; i++) s().moveNodes(new Map([["noop", { x: i, y: 200 }]]), false);
    s().moveNodes(new Map(), true);
    expect(s().definition.nodes[1]!.position).toEqual({ x: 30, y: 200 });
    expect(s().past).toHaveLength(2);
    s().undo();
    expect(s().definition.nodes[1]!.position).toEqual({ x: 0, y: 200 });
    s().undo();
    expect(s().definition.nodes).toHaveLength(1);
    s().redo();
    s().redo();
    expect(s().definition.nodes[1]!.position).toEqual({ x: 30, y: 200 });
  });

  it("merges consecutive edits of one field into one step", () => {
    const store = createEditorStore({ definition: start() });
    const s = () => store.getState();
    for (const name of ["o", "or", "ord", "orders"]) s().updateNode({ ...s().definition.nodes[0]!, name }, "name");
    s().updateNode({ ...s().definition.nodes[0]!, label: "L" }, "label");
    expect(s().past).toHaveLength(2);
    s().undo();
    expect(s().definition.nodes[0]).toMatchObject({ name: "orders" });
    s().undo();
    expect(s().definition.nodes[0]).toMatchObject({ name: "my_task" });
  });

  it("validates every commit and reports refused connections", () => {
    const store = createEditorStore({ definition: { ...start(), nodes: [] } });
    const s = () => store.getState();
    expect(s().problems.map((p) => p.code)).toContain("empty-workflow");
    s().addNode("SIMPLE", { x: 0, y: 0 });
    expect(s().problems).toEqual([]);
    expect(s().connect({ source: "simple", target: "simple" })).toBe(false);
    expect(s().notice?.message).toMatch(/itself/);
  });

  it("is dirty until saved, and clean again when undone back to the saved state", () => {
    const initial = start();
    const store = createEditorStore({ definition: initial });
    const s = () => store.getState();
    expect(s().definition).toBe(s().saved);
    s().addNode("NOOP", { x: 0, y: 0 });
    expect(s().definition).not.toBe(s().saved);
    s().undo();
    expect(s().definition).toBe(s().saved);
  });

  it("refuses every edit when read-only", () => {
    const store = createEditorStore({ definition: start(), readOnly: true });
    const s = () => store.getState();
    expect(s().addNode("NOOP", { x: 0, y: 0 })).toBeNull();
    s().replaceDefinition({ ...start(), edges: [makeEdge("a", "a")] }, "x");
    s().moveNodes(new Map([["a", { x: 5, y: 5 }]]), true);
    expect(s().definition.nodes[0]!.position).toEqual({ x: 0, y: 0 });
    expect(s().definition.edges).toEqual([]);
  });

  it("a drop into a loop after a drag is part of the drag's step", () => {
    const d = start();
    d.nodes.push(createNode("DO_WHILE", "loop", { x: 400, y: 0 }));
    const store = createEditorStore({ definition: d });
    const s = () => store.getState();
    s().moveNodes(new Map([["a", { x: 420, y: 60 }]]), false);
    s().moveNodes(new Map(), true);
    expect(s().reparent("a", "loop", { x: 20, y: 60 })).toBe(true);
    expect(s().past).toHaveLength(1);
    s().undo();
    expect(s().definition.nodes[0]).toEqual(d.nodes[0]);
  });
});

describe("sticky notes in the editor store", () => {
  it("adds, moves with a node in one step, edits and deletes notes", () => {
    const store = createEditorStore({ definition: start() });
    const s = () => store.getState();
    const id = s().addNote({ x: 100.4, y: -50 });
    expect(id).toBe("note_1");
    expect(s().selectedNodes).toEqual(new Set(["note:note_1"]));
    s().moveNodes(new Map([["note:note_1", { x: 120, y: -40 }], ["a", { x: 5, y: 5 }]]), false);
    s().moveNodes(new Map(), true);
    expect(s().definition.notes?.[0]?.position).toEqual({ x: 120, y: -40 });
    expect(s().definition.nodes[0]!.position).toEqual({ x: 5, y: 5 });
    for (const text of ["#", "# H", "# Hi"]) s().updateNote("note_1", { text }, "note_1:text");
    expect(s().past).toHaveLength(3);
    s().select(["note:note_1"]);
    s().deleteSelection();
    expect(s().definition.notes).toBeUndefined();
    s().undo();
    expect(s().definition.notes?.[0]?.text).toBe("# Hi");
    expect(s().problems).toEqual([]);
  });
});
