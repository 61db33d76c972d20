import { describe, expect, it } from "vitest";
import { DEFINITION_LIMITS } from "./limits";
import { PROBLEM_CODES } from "./problems";
import type { Problem } from "./problems";
import { brief, chain, simple, workflow } from "./test-fixtures";
import type { Json } from "./test-fixtures";
import { validateDefinition } from "./validate";

/**
 * Hostile input: each case must come back as structured problems — never a
 * throw, never a hang. (Structure is asserted, not timing; the whole file runs
 * in a few seconds.)
 */

function problems(def: unknown, limits?: Parameters<typeof validateDefinition>[1]): Problem[] {
  const result = validateDefinition(def, limits);
  expect(result.ok).toBe(false);
  const list = result.ok ? [] : result.problems;
  for (const p of list) {
    expect(Object.keys(PROBLEM_CODES)).toContain(p.code);
    expect(typeof p.message).toBe("string");
    expect(p.message.length).toBeLessThan(2_000);
    expect(Array.isArray(p.path)).toBe(true);
  }
  return list;
}

function chainOf(count: number): { nodes: Json[]; edges: Json[] } {
  const nodes = Array.from({ length: count }, (_, i) => simple(`n${i}`));
  const edges = Array.from({ length: count - 1 }, (_, i) => ({ source: `n${i}`, target: `n${i + 1}` }));
  return { nodes, edges };
}

describe("hostile definitions", () => {
  it("refuses 100k nodes with one problem, without looking at each", () => {
    const { nodes, edges } = chainOf(100_000);
    expect(brief(problems(workflow(nodes, edges)))).toEqual([{ code: "too-many-nodes", path: ["nodes"] }]);
  });

  it("refuses too many edges", () => {
    const edges = Array.from({ length: DEFINITION_LIMITS.maxEdges + 1 }, () => ({ source: "a", target: "b" }));
    expect(brief(problems(workflow([simple("a"), simple("b")], edges)))).toEqual([{ code: "too-many-edges", path: ["edges"] }]);
  });

  // Correctness, not speed: a 2-core machine under load took 4.6 s, so the default 5 s would make it flaky.
  it("validates a definition at the node limit", { timeout: 30_000 }, () => {
    const { nodes, edges } = chainOf(DEFINITION_LIMITS.maxNodes);
    nodes.forEach((node, i) => {
      if (i > 0) node.input = { previous: `\${n${i - 1}.output.value}`, first: "${n0.output}" };
    });
    expect(validateDefinition(workflow(nodes, edges)).ok).toBe(true);
  });

  it("reports a 10k-deep input value at the depth limit, with its path", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const found = problems(workflow([simple("a"), simple("b", { input: { deep } })], chain("a", "b")));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ code: "too-deep" });
    expect(found[0]?.path.slice(0, 5)).toEqual(["nodes", 1, "input", "deep", "a"]);
    expect(found[0]?.path.length).toBe(DEFINITION_LIMITS.maxDepth);
  });

  it("reports 10k-deep arrays and inline sub-workflows the same way", () => {
    let deepArray: unknown = [];
    for (let i = 0; i < 10_000; i++) deepArray = [deepArray];
    let inline: Json = workflow([simple("leaf")]);
    for (let i = 0; i < 10_000; i++) {
      inline = workflow([{ ref: "s", type: "SUB_WORKFLOW", position: { x: 0, y: 0 }, workflowDefinition: inline }]);
    }
    expect(problems(workflow([simple("a", { input: { deepArray } })])).map((p) => p.code)).toEqual(["too-deep"]);
    expect(problems(inline).map((p) => p.code)).toEqual(["too-deep"]);
  });

  it("limits inline sub-workflow nesting on its own", () => {
    let inline: Json = workflow([simple("leaf")]);
    for (let i = 0; i < 12; i++) inline = workflow([{ ref: "s", type: "SUB_WORKFLOW", position: { x: 0, y: 0 }, workflowDefinition: inline }]);
    const found = problems(inline, { limits: { maxDepth: 1_000 } });
    expect(found.map((p) => p.code)).toEqual(["too-deep"]);
    expect(found[0]?.ref).toBe("s");
  });

  it("reports 10 MB strings (in values, keys and refs) once each, and still checks the rest", () => {
    const huge = "x".repeat(10 * 1024 * 1024);
    const def = workflow([simple("a", { label: huge, input: { [huge]: 1 }, name: undefined }), simple(huge)], [], { name: huge });
    const found = brief(problems(def));
    expect(found).toEqual(
      expect.arrayContaining([
        { code: "string-too-long", path: ["name"] },
        { code: "string-too-long", path: ["nodes", 0, "label"] },
        { code: "string-too-long", path: ["nodes", 0, "input", huge] },
        { code: "string-too-long", path: ["nodes", 1, "ref"] },
        { code: "missing-field", ref: "a", path: ["nodes", 0, "name"] },
      ]),
    );
    expect(found.filter((p) => p.path.length === 1 && p.path[0] === "name")).toHaveLength(1);
    expect(found.filter((p) => p.path[1] === 1 && p.path[2] === "ref")).toHaveLength(1);
  });

  it("reports a long chain closed into a cycle once, listing every node", () => {
    const { nodes, edges } = chainOf(40_000);
    edges.push({ source: "n39999", target: "n1" });
    const found = problems(workflow(nodes, edges));
    expect(brief(found)).toEqual([{ code: "cycle", ref: "n1", path: ["edges", 39_999] }]);
    expect(found[0]?.refs).toHaveLength(39_999);
  });

  it("stops at the value budget with one problem", () => {
    const wide = Array.from({ length: 2_000 }, (_, i) => i);
    const found = problems(workflow([simple("a", { input: { wide } })]), { limits: { maxValues: 1_000 } });
    expect(found.map((p) => p.code)).toEqual(["too-large"]);
  });

  it("survives in-memory graphs JSON cannot express: cycles, shared-reference bombs, throwing getters", () => {
    const cyclic: Json = { name: "loop" };
    cyclic.self = cyclic;
    expect(problems(workflow([simple("a", { input: cyclic })])).map((p) => p.code)).toEqual(["too-deep"]);

    let bomb: Json = { leaf: 1 };
    for (let i = 0; i < 60; i++) bomb = { l: bomb, r: bomb }; // 2^60 paths, 61 objects
    expect(problems(workflow([simple("a", { input: bomb })])).map((p) => p.code)).toEqual(["too-large"]);

    const throwing = new Proxy({}, { ownKeys: () => { throw new Error("boom"); } });
    expect(problems(workflow([simple("a", { input: throwing })])).map((p) => p.code)).toEqual(["not-json"]);
    const getter = Object.defineProperty({}, "x", { enumerable: true, get: () => { throw new Error("boom"); } });
    expect(problems(workflow([simple("a", { input: getter })])).map((p) => p.code)).toEqual(["not-json"]);
  });

  it.each([null, undefined, 42, "text", true, () => 1, Symbol("s"), 10n, new Map(), []])("refuses %s as a definition", (value) => {
    expect(brief(problems(value))).toEqual([{ code: "invalid-field", path: [] }]);
  });

  it("keeps going with garbage nodes and edges mixed in", () => {
    const def = workflow([null, 1, "x", [], { ref: 5 }, { type: "SIMPLE" }, simple("ok")], [null, 7, { source: 1 }, { source: "ok", target: "ok" }]);
    const codes = problems(def).map((p) => p.code);
    expect(codes).toContain("self-loop");
    expect(codes.filter((c) => c === "invalid-field").length).toBeGreaterThanOrEqual(6);
  });
});
