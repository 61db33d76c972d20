import { describe, expect, it } from "vitest";
import { compile } from "../compile";
import { MAX_NOTES, MAX_NOTE_TEXT_LENGTH } from "./limits";
import { brief, chain, simple, workflow } from "./test-fixtures";
import type { Json } from "./test-fixtures";
import { validateDefinition } from "./validate";
import type { WorkflowDefinition } from "./schema";

const note = (id: string, extra: Json = {}): Json => ({ id, text: "**Why** this step", position: { x: 10, y: -80 }, ...extra });
const withNotes = (notes: unknown): Json => workflow([simple("a"), simple("b")], chain("a", "b"), { notes });

describe("sticky notes in a definition", () => {
  it("accepts notes with text, colour and size", () => {
    const result = validateDefinition(withNotes([note("n1", { color: "blue", width: 300, height: 200 }), note("n2")]));
    expect(result.ok).toBe(true);
  });

  it("refuses what the canvas could not draw, naming the note's field", () => {
    const result = validateDefinition(
      withNotes([
        note("n1", { color: "orange" }),
        note("n2", { width: 10 }),
        note("bad id"),
        note("n4", { text: "x".repeat(MAX_NOTE_TEXT_LENGTH + 1) }),
        note("n5", { extra: true }),
      ]),
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(brief(result.problems)).toEqual([
      { code: "invalid-field", path: ["notes", 0, "color"] },
      { code: "invalid-field", path: ["notes", 1, "width"] },
      { code: "invalid-field", path: ["notes", 2, "id"] },
      { code: "invalid-field", path: ["notes", 3, "text"] },
      { code: "unknown-field", path: ["notes", 4, "extra"] },
    ]);
  });

  it("refuses two notes with one id and more notes than the limit", () => {
    const dup = validateDefinition(withNotes([note("n1"), note("n1")]));
    expect(dup.ok ? [] : brief(dup.problems)).toEqual([{ code: "duplicate-note-id", path: ["notes", 1, "id"] }]);
    const many = validateDefinition(withNotes(Array.from({ length: MAX_NOTES + 1 }, (_, i) => note(`n${i}`))));
    expect(many.ok ? [] : brief(many.problems)).toEqual([{ code: "invalid-field", path: ["notes"] }]);
  });

  it("leaves the compiled blueprint exactly as without notes: the engine ignores them", () => {
    const plain = workflow([simple("a"), simple("b")], chain("a", "b")) as unknown as WorkflowDefinition;
    const noted = { ...plain, notes: [note("n1")] } as unknown as WorkflowDefinition;
    expect(JSON.stringify(compile(noted))).toBe(JSON.stringify(compile(plain)));
  });
});
