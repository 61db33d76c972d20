import { describe, expect, it } from "vitest";
import { formatJson, locateError, parseJson } from "./json-text";

describe("parseJson", () => {
  it("parses JSON, and reads blank as no value", () => {
    expect(parseJson('{"a": [1, true, null, "x"]}')).toEqual({ ok: true, value: { a: [1, true, null, "x"] } });
    expect(parseJson("  \n")).toEqual({ ok: true, value: undefined });
    expect(parseJson('"${workflow.input.items}"')).toEqual({ ok: true, value: "${workflow.input.items}" });
  });

  it("refuses a non-object where an object is expected", () => {
    const result = parseJson(" [1] ", true);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ from: 1, to: 4 });
  });

  it.each([
    ['{"a": }', 6, "Expected a value"],
    ['{"a": 1,}', 8, "property name"],
    ['{"a" 1}', 5, "Expected ':'"],
    ["[1, 2", 5, "']' is missing"],
    ['{\n  "a": tru\n}', 9, "line 2, column 8"],
    ["{'a': 1}", 1, "property name"],
    ['"open', 5, "Unterminated string"],
    ["1 2", 2, "after the value"],
  ])("locates the error in %j", (text, at, message) => {
    const result = parseJson(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.from).toBe(at);
    expect(result.error.to).toBeGreaterThanOrEqual(at);
    expect(result.error.to).toBeLessThanOrEqual(text.length);
    expect(result.error.message).toContain(message);
  });

  it("never throws on deep nesting", () => {
    expect(locateError("[".repeat(10_000)).message).toContain("Nested too deeply");
  });
});

describe("formatJson", () => {
  it("pretty-prints, and shows nothing for an absent value", () => {
    expect(formatJson({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(formatJson(undefined)).toBe("");
    expect(formatJson(0)).toBe("0");
  });
});
