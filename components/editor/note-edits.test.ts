import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "@/engine";
import { validateDefinition } from "@/engine";
import { addNote, moveNotes, noteFlowId, noteIdOf, reconcilePins, removeNotes, setPin, updateNote } from "./note-edits";

const base: WorkflowDefinition = { schemaVersion: 1, name: "w", nodes: [{ ref: "a", type: "NOOP", position: { x: 0, y: 0 } }], edges: [] };

describe("note edits", () => {
  it("adds notes with fresh ids that validate", () => {
    const one = addNote(base, { x: 10, y: 20 }, "hi");
    const two = addNote(one.definition, { x: 0, y: 0 });
    expect([one.id, two.id]).toEqual(["note_1", "note_2"]);
    expect(validateDefinition(two.definition).ok).toBe(true);
  });

  it("updates text, colour and size, clamping the size to the schema's bounds", () => {
    const { definition, id } = addNote(base, { x: 0, y: 0 });
    const next = updateNote(definition, id, { text: "**x**", color: "blue", width: 5, height: 99_999 });
    expect(next.notes?.[0]).toMatchObject({ text: "**x**", color: "blue", width: 120, height: 4000 });
    expect(validateDefinition(next).ok).toBe(true);
    expect(updateNote(next, id, { text: "**x**" })).toBe(next);
    expect(updateNote(next, id, { color: "yellow" }).notes?.[0]?.color).toBeUndefined();
  });

  it("moves and removes notes, dropping the key with the last one", () => {
    const { definition, id } = addNote(base, { x: 0, y: 0 });
    expect(moveNotes(definition, new Map([[id, { x: 5, y: 6 }]])).notes?.[0]?.position).toEqual({ x: 5, y: 6 });
    expect(removeNotes(definition, new Set([id]))).toEqual(base);
  });

  it("keeps note ids apart from refs on the canvas", () => {
    expect(noteIdOf(noteFlowId("note_1"))).toBe("note_1");
    expect(noteIdOf("a")).toBeNull();
  });
});

describe("pins", () => {
  it("set, clear, follow a rename and go with their node", () => {
    const pinned = setPin(base, "a", { ok: true });
    expect(pinned.pins).toEqual({ a: { ok: true } });
    expect(validateDefinition(pinned).ok).toBe(true);
    expect(setPin(pinned, "a", null)).toEqual(base);
    const renamed = { ...pinned, nodes: [{ ...pinned.nodes[0]!, ref: "b" }] };
    expect(reconcilePins(renamed, { from: "a", to: "b" }).pins).toEqual({ b: { ok: true } });
    expect(reconcilePins({ ...pinned, nodes: [] }).pins).toBeUndefined();
  });
});
