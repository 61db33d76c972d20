import { describe, expect, it } from "vitest";
import { MAX_EXPRESSION_NESTING, parseTemplate } from "./template-parser";
import type { TemplatePart } from "./template-parser";

/** A compact rendering of parts: text as "t:…", expressions as "e:[…]" with their inner parts. */
function shape(parts: TemplatePart[]): string[] {
  return parts.map((p) => (p.kind === "text" ? `t:${p.text}` : `e:[${shape(p.parts).join(",")}]`));
}

describe("parseTemplate", () => {
  it.each<[string, string[], number[]]>([
    ["", [], []],
    ["plain text", ["t:plain text"], []],
    ["${a.b}", ["e:[t:a.b]"], []],
    ["x ${a} y", ["t:x ", "e:[t:a]", "t: y"], []],
    ["${a}${b}", ["e:[t:a]", "e:[t:b]"], []],
    ["${}", ["e:[]"], []],
    // `$${` is the escape for a literal `${`.
    ["$${a}", ["t:${a}"], []],
    ["pre $${a} ${b}", ["t:pre ${a} ", "e:[t:b]"], []],
    ["$$${a}", ["t:$${a}"], []],
    ["$", ["t:$"], []],
    ["$$", ["t:$$"], []],
    // Nesting, innermost resolved first.
    ["${a.${b}}", ["e:[t:a.,e:[t:b]]"], []],
    ["${map.b[${map.${k}[${i}]}]}", ["e:[t:map.b[,e:[t:map.,e:[t:k],t:[,e:[t:i],t:]],t:]]"], []],
    // Unclosed: literal text, reported.
    ["${a", ["t:${a"], [0]],
    ["x ${a ${b}", ["t:x ${a ", "e:[t:b]"], [2]],
    ["${a {b}", ["t:${a {b}"], [0]],
    // Stray braces.
    ["${a}}", ["e:[t:a]", "t:}"], []],
    ["{${a}", ["t:{", "e:[t:a]"], []],
    ["${a{b}c}", ["e:[t:a{b}c]"], []],
    // Every brace counts, quoted or not, as in Conductor's balanced-brace regex.
    ["${x['}']}", ["e:[t:x[']", "t:']}"], []],
    // An escape inside an expression is still a balanced brace, and unescaped in the body.
    ["${a $${b} c}", ["e:[t:a ${b} c]"], []],
    ["a\nb ${x}\r\n", ["t:a\nb ", "e:[t:x]", "t:\r\n"], []],
  ])("%j", (text, expected, unclosed) => {
    const parsed = parseTemplate(text);
    expect(shape(parsed.parts)).toEqual(expected);
    expect(parsed.unclosed).toEqual(unclosed);
  });

  it("records offsets, bodies and depth", () => {
    const { parts } = parseTemplate("ab${x.${y}}cd");
    expect(parts).toHaveLength(3);
    const expr = parts[1];
    if (expr?.kind !== "expression") throw new Error("expected an expression");
    expect(expr).toMatchObject({ start: 2, end: 11, body: "x.${y}", depth: 0, tooDeep: false });
    expect(expr.parts[1]).toMatchObject({ kind: "expression", start: 6, end: 10, body: "y", depth: 1 });
    expect(parts[2]).toMatchObject({ kind: "text", start: 11, end: 13 });
  });

  it("marks an expression nested past the limit as too deep, and only that one", () => {
    const deep = "${".repeat(MAX_EXPRESSION_NESTING + 2) + "x" + "}".repeat(MAX_EXPRESSION_NESTING + 2);
    const ok = "${".repeat(MAX_EXPRESSION_NESTING + 1) + "x" + "}".repeat(MAX_EXPRESSION_NESTING + 1);
    const { parts } = parseTemplate(`${deep} ${ok}`);
    expect(parts.map((p) => p.kind === "expression" && p.tooDeep)).toEqual([true, false, false]);
    expect(parts[0]?.kind === "expression" && parts[0].parts).toEqual([]);
  });
});
