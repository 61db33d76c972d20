import { describe, expect, it } from "vitest";
import { parseInline, parseNoteMarkdown } from "./note-markdown";

describe("a note's markdown", () => {
  it("parses headings, paragraphs and lists", () => {
    expect(parseNoteMarkdown("# Why\nfirst line\nsame paragraph\n\n- one\n- two\n1. a")).toEqual([
      { kind: "heading", level: 1, children: [{ kind: "text", text: "Why" }] },
      { kind: "paragraph", children: [{ kind: "text", text: "first line same paragraph" }] },
      { kind: "list", ordered: false, items: [[{ kind: "text", text: "one" }], [{ kind: "text", text: "two" }]] },
      { kind: "list", ordered: true, items: [[{ kind: "text", text: "a" }]] },
    ]);
  });

  it("parses emphasis, code and safe links", () => {
    expect(parseInline("**bold** and *it* with `x<y` see [docs](https://example.com/a)")).toEqual([
      { kind: "strong", children: [{ kind: "text", text: "bold" }] },
      { kind: "text", text: " and " },
      { kind: "em", children: [{ kind: "text", text: "it" }] },
      { kind: "text", text: " with " },
      { kind: "code", text: "x<y" },
      { kind: "text", text: " see " },
      { kind: "link", href: "https://example.com/a", children: [{ kind: "text", text: "docs" }] },
    ]);
  });

  it("keeps HTML and script links as plain text", () => {
    expect(parseInline('<img src=x onerror="alert(1)"> [x](javascript:alert(1))')).toEqual([
      { kind: "text", text: '<img src=x onerror="alert(1)"> [x](javascript:alert(1))' },
    ]);
  });

  it("leaves unclosed marks as text", () => {
    expect(parseInline("2 * 3 and **open")).toEqual([{ kind: "text", text: "2 * 3 and **open" }]);
  });
});
