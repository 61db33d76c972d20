import { describe, expect, it } from "vitest";
import { LAYOUT_DEFAULTS } from "@/engine";
import type { WorkflowDefinition, WorkflowNode } from "@/engine";
import { draggedRefs, drawnSize, edgeEnds, loopAt, nodeAt, nodesInside, overviewLayout, switchWidth } from "./overview-geometry";

const W = LAYOUT_DEFAULTS.nodeWidth;
const H = LAYOUT_DEFAULTS.nodeHeight;

const task = (ref: string, x: number, y: number, parent?: string): WorkflowNode =>
  ({ ref, type: "NOOP", position: { x, y }, ...(parent ? { parent } : {}) });
const loop = (ref: string, x: number, y: number, parent?: string): WorkflowNode =>
  ({ ref, type: "DO_WHILE", loopCondition: "false", position: { x, y }, ...(parent ? { parent } : {}) }) as unknown as WorkflowNode;

function definition(nodes: WorkflowNode[], edges: WorkflowDefinition["edges"] = []): WorkflowDefinition {
  return { schemaVersion: 1, name: "geometry", nodes, edges };
}

// A loop at (1000, 0) holding `inner` and a nested loop holding `deep`; `a` and `b` on the top level.
const diagram = definition(
  [
    task("deep", 40, 70, "nested"),
    task("a", 0, 0),
    loop("outer", 1000, 0),
    task("inner", 40, 60, "outer"),
    loop("nested", 40, 200, "outer"),
    task("b", 0, 200),
  ],
  [{ source: "a", target: "b" }],
);
const layout = overviewLayout(diagram, new Map());

describe("overviewLayout", () => {
  it("places body nodes relative to their loops, nested loops included, each after the loop holding it", () => {
    expect(layout.byRef.get("inner")).toMatchObject({ x: 1040, y: 60, width: W, height: H });
    expect(layout.byRef.get("nested")).toMatchObject({ x: 1040, y: 200, isLoop: true });
    expect(layout.byRef.get("deep")).toMatchObject({ x: 1080, y: 270 });
    const order = layout.boxes.map((b) => b.ref);
    expect(order.indexOf("outer")).toBeLessThan(order.indexOf("nested"));
    expect(order.indexOf("nested")).toBeLessThan(order.indexOf("deep"));
  });

  it("sizes a loop around its body as the canvas does, and takes measured sizes over defaults", () => {
    const measured = new Map([["inner", { width: 300, height: 80 }]]);
    const sized = overviewLayout(diagram, measured);
    expect(sized.byRef.get("inner")).toMatchObject({ width: 300, height: 80 });
    const outer = sized.byRef.get("outer")!;
    expect(outer.width).toBeGreaterThanOrEqual(40 + 300 + LAYOUT_DEFAULTS.containerPadding.right);
  });

  it("draws a node whose parent is missing or part of a cycle on the top level instead of losing it", () => {
    const broken = overviewLayout(definition([task("orphan", 5, 6, "gone"), loop("x", 0, 0, "y"), loop("y", 10, 10, "x")]), new Map());
    expect(broken.byRef.get("orphan")).toMatchObject({ x: 5, y: 6 });
    expect(broken.boxes.map((b) => b.ref).sort()).toEqual(["orphan", "x", "y"]);
  });
});

describe("hit-testing", () => {
  it("finds the node on top: a body node before the loop around it, the loop in its empty area, nothing on empty canvas", () => {
    expect(nodeAt(layout, { x: 1080, y: 290 })?.ref).toBe("deep");
    expect(nodeAt(layout, { x: 1050, y: 70 })?.ref).toBe("inner");
    expect(nodeAt(layout, { x: 1010, y: 10 })?.ref).toBe("outer");
    expect(nodeAt(layout, { x: 10, y: 10 })?.ref).toBe("a");
    expect(nodeAt(layout, { x: 500, y: 500 })).toBeNull();
  });

  it("selects the nodes wholly inside a box, not those it only crosses", () => {
    expect(nodesInside(layout, { x: -10, y: -10, width: W + 20, height: 300 })).toEqual(["a", "b"]);
    expect(nodesInside(layout, { x: -10, y: -10, width: W, height: 300 })).toEqual([]);
  });

  it("finds the innermost loop under a point, skipping the one given, with the point relative to it", () => {
    expect(loopAt(layout, { x: 1100, y: 280 })).toEqual({ ref: "nested", relative: { x: 60, y: 80 } });
    expect(loopAt(layout, { x: 1100, y: 280 }, "nested")?.ref).toBe("outer");
    expect(loopAt(layout, { x: 10, y: 10 })).toBeNull();
  });
});

describe("draggedRefs", () => {
  it("moves the grabbed node alone when it is not selected, the selection when it is", () => {
    expect(draggedRefs(layout, new Set(["a", "b"]), "inner")).toEqual(["inner"]);
    expect(draggedRefs(layout, new Set(["a", "b"]), "a")).toEqual(["a", "b"]);
  });

  it("leaves out nodes a moving loop already carries, however deep", () => {
    expect(draggedRefs(layout, new Set(["outer", "inner", "deep", "a"]), "a").sort()).toEqual(["a", "outer"]);
  });
});

describe("edgeEnds", () => {
  it("runs from the bottom centre of the source to the top centre of the target", () => {
    expect(edgeEnds(layout, { source: "a", target: "b" })).toEqual({ from: { x: W / 2, y: H }, to: { x: W / 2, y: 200 } });
    expect(edgeEnds(layout, { source: "a", target: "gone" })).toBeNull();
  });

  it("leaves a SWITCH from its case's slot, default last", () => {
    const sw = { ref: "sw", type: "SWITCH", position: { x: 0, y: 0 }, cases: ["x", "y"] } as unknown as WorkflowNode;
    const withSwitch = overviewLayout(definition([sw, task("t", 0, 300)]), new Map());
    const width = switchWidth(2);
    expect(drawnSize(sw, new Map()).width).toBe(width);
    expect(edgeEnds(withSwitch, { source: "sw", target: "t", case: "x" })?.from.x).toBeCloseTo(width / 6);
    expect(edgeEnds(withSwitch, { source: "sw", target: "t", case: "default" })?.from.x).toBeCloseTo((5 * width) / 6);
  });
});
