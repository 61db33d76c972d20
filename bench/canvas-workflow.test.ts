import { describe, expect, it } from "vitest";
import { validateDefinition } from "@/engine";
import { generateCanvasWorkflow } from "./canvas-workflow";

describe("generateCanvasWorkflow", () => {
  it.each([1, 7, 8, 50, 1000, 2500])("makes a valid definition of exactly %i nodes", (nodes) => {
    const definition = generateCanvasWorkflow({ nodes, seed: 3 });
    expect(definition.nodes).toHaveLength(nodes);
    expect(validateDefinition(definition)).toMatchObject({ ok: true });
  });

  it("is deterministic for a seed, and another seed draws another diagram", () => {
    const a = generateCanvasWorkflow({ nodes: 1000, seed: 42 });
    expect(generateCanvasWorkflow({ nodes: 1000, seed: 42 })).toEqual(a);
    expect(generateCanvasWorkflow({ nodes: 1000, seed: 43 })).not.toEqual(a);
  });

  it("at 1,000 nodes has the shapes a big real workflow has: SWITCH branches, loops with bodies, forks joining", () => {
    const definition = generateCanvasWorkflow({ nodes: 1000 });
    const count = (type: string) => definition.nodes.filter((n) => n.type === type).length;
    expect(count("SWITCH")).toBeGreaterThan(10);
    expect(count("EXCLUSIVE_JOIN")).toBe(count("SWITCH"));
    expect(count("JOIN")).toBeGreaterThan(10);
    const loops = definition.nodes.filter((n) => n.type === "DO_WHILE").map((n) => n.ref);
    expect(loops.length).toBeGreaterThanOrEqual(3);
    for (const loop of loops) expect(definition.nodes.filter((n) => n.parent === loop).length).toBeGreaterThanOrEqual(2);
    expect(definition.edges.filter((e) => e.case !== undefined && e.case !== "default").length).toBe(count("SWITCH"));
    // Laid out: not everything piled at the origin.
    expect(new Set(definition.nodes.map((n) => `${n.position.x},${n.position.y}`)).size).toBeGreaterThan(900);
  });

  it("refuses a size that is not a positive integer", () => {
    expect(() => generateCanvasWorkflow({ nodes: 0 })).toThrow(/positive integer/);
    expect(() => generateCanvasWorkflow({ nodes: 2.5 })).toThrow(/positive integer/);
  });
});
