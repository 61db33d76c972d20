/**
 * Hostile definitions and payloads: every case must return a result (asserted
 * here) without overflowing the stack or hanging. Timings are not asserted;
 * the generous timeout is a backstop for a loaded CI machine, not a target.
 */
import { describe, expect, it } from "vitest";
import type { ExpressionContext } from "./expression-context";
import { parseJsonPath } from "./json-path-parser";
import { referencedRefs } from "./referenced-refs";
import { resolveTemplate } from "./resolve-template";
import { parseTemplate } from "./template-parser";

function contextFor(input: Record<string, unknown>): ExpressionContext {
  return {
    workflow: { workflowId: "wf", workflowType: "t", version: 1, status: "RUNNING", input, variables: {}, startTime: 0 },
    task: (ref) =>
      ref === "deep"
        ? { taskId: "d", referenceTaskName: "deep", taskType: "SIMPLE", status: "COMPLETED", input: {}, output: { v: "found" }, iteration: 0, retryCount: 0 }
        : undefined,
  };
}

/** `depth` levels of `{ k: … }` (or `[ … ]`) around `leaf`, built without recursion. */
function nest(depth: number, leaf: unknown, kind: "object" | "array" = "object"): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = kind === "object" ? { k: v } : [v];
  return v;
}

/** Follows `k` (or index 0) `depth` times. */
function dig(value: unknown, depth: number): unknown {
  let v = value;
  for (let i = 0; i < depth; i++) v = Array.isArray(v) ? v[0] : (v as Record<string, unknown>).k;
  return v;
}

describe("hostile input", { timeout: 60_000 }, () => {
  it("a 1 MB string with 100k unclosed `${` stays literal and every one is reported", () => {
    const text = "${abcdefgh".repeat(100_000);
    expect(text.length).toBe(1_000_000);
    expect(resolveTemplate(text, contextFor({}))).toBe(text);
    const { problems, refs } = referencedRefs({ s: text });
    expect(problems).toHaveLength(100_000);
    expect(problems.every((p) => p.code === "unclosed-expression" && p.path[0] === "s")).toBe(true);
    expect(refs.size).toBe(0);
  });

  it("a 1 MB string of 100k closed expressions resolves each one", () => {
    const text = "${workflow.input.x}".repeat(52_632).slice(0, 1_000_000);
    const count = (text.match(/\$\{workflow\.input\.x\}/g) ?? []).length;
    expect(count).toBeGreaterThan(50_000);
    const out = resolveTemplate(text, contextFor({ x: 7 })) as string;
    expect(out.startsWith("7".repeat(count))).toBe(true);
    const { refs, workflowFields } = referencedRefs(text);
    expect(refs.size).toBe(0);
    expect([...workflowFields]).toEqual(["input"]);
  });

  it("100k `${}` and `$${` in one string", () => {
    const text = "${}$${x}".repeat(100_000);
    expect(resolveTemplate(text, contextFor({}))).toBe("${x}".repeat(100_000));
    expect(referencedRefs(text).problems).toHaveLength(100_000);
  });

  it("expressions nested 10k deep resolve to null and are reported once", () => {
    const text = "${".repeat(10_000) + "workflow.input.x" + "}".repeat(10_000);
    expect(resolveTemplate(text, contextFor({ x: 1 }))).toBeNull();
    expect(resolveTemplate(`a ${text} b`, contextFor({ x: 1 }))).toBe("a null b");
    expect(referencedRefs(text).problems.map((p) => p.code)).toEqual(["too-deep"]);
    expect(parseTemplate(text).parts).toHaveLength(1);
  });

  it("a template nested 10k deep in objects and arrays resolves all the way down", () => {
    for (const kind of ["object", "array"] as const) {
      const template = nest(10_000, { leaf: "${deep.output.v} ${workflow.input.x}", bad: "${oops" }, kind);
      const out = resolveTemplate(template, contextFor({ x: 1 }));
      expect(dig(out, 10_000)).toEqual({ leaf: "found 1", bad: "${oops" });
      const { refs, problems } = referencedRefs(template);
      expect([...refs]).toEqual(["deep"]);
      expect(problems).toHaveLength(1);
      expect(problems[0]?.path).toHaveLength(10_001);
      expect(problems[0]?.path[10_000]).toBe("bad");
    }
  });

  it("a payload nested 10k deep can be scanned, filtered and interpolated", () => {
    const input = { doc: nest(10_000, { x: 1 }) };
    const ctx = contextFor(input);
    expect(resolveTemplate("${workflow.input.doc..x}", ctx)).toEqual([1]);
    expect(resolveTemplate("${workflow.input.doc..[?(@.x == 1)]}", ctx)).toEqual([{ x: 1 }]);
    expect(dig(resolveTemplate("${workflow.input.doc}", ctx), 10_000)).toEqual({ x: 1 });
    expect(typeof resolveTemplate("v=${workflow.input.doc}", ctx)).toBe("string");
  });

  it("a runaway scan over a wide payload gives up with []", () => {
    const wide = Array.from({ length: 300 }, (_, i) => ({ i, c: Array.from({ length: 300 }, (_, j) => ({ j })) }));
    expect(resolveTemplate("${workflow.input.w..*..*..*}", contextFor({ w: wide }))).toEqual([]);
  });

  it("a filter over 200k items completes", () => {
    const items = Array.from({ length: 200_000 }, (_, i) => ({ i }));
    expect(resolveTemplate("${workflow.input.items[?(@.i >= 199998)].i}", contextFor({ items }))).toEqual([199_998, 199_999]);
    expect(resolveTemplate("${workflow.input.items[*].i}", contextFor({ items }))).toHaveLength(200_000);
    expect(resolveTemplate("${workflow.input.items.length()}", contextFor({ items }))).toBe(200_000);
  });

  it("a filter of 10k conditions and a 1 MB path parse without recursion trouble", () => {
    const filter = Array.from({ length: 10_000 }, (_, i) => `@.i != ${i}`).join(" && ");
    expect(resolveTemplate(`\${workflow.input.items[?(${filter})].i}`, contextFor({ items: [{ i: 1 }, { i: 20_000 }] }))).toEqual([20_000]);
    const longPath = "workflow.input" + ".a".repeat(500_000);
    expect(parseJsonPath(longPath).ok).toBe(true);
    expect(resolveTemplate(`\${${longPath}}`, contextFor({}))).toBeNull();
    expect(referencedRefs(`\${${longPath}}`).problems).toEqual([]);
  });

  it("deeply nested filter parentheses and literals are refused, not overflowed", () => {
    const parens = "(".repeat(100_000) + "@.x" + ")".repeat(100_000);
    expect(resolveTemplate(`\${workflow.input.a[?(${parens})]}`, contextFor({ a: [{ x: 1 }] }))).toBeNull();
    expect(referencedRefs(`\${workflow.input.a[?(${parens})]}`).problems.map((p) => p.code)).toEqual(["invalid-path"]);
    const literal = "[".repeat(100_000) + "]".repeat(100_000);
    expect(resolveTemplate(`\${workflow.input.a[?(@.x in ${literal})]}`, contextFor({ a: [{ x: 1 }] }))).toBeNull();
  });
});
