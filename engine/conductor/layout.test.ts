import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "../definition";
import { edge, node, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import type { NodeBox } from "./layout";
import { LAYOUT_DEFAULTS, computeLayout, layoutDefinition } from "./layout";

const def = (nodes: Json[], edges: Json[] = []): WorkflowDefinition => workflow(nodes, edges) as unknown as WorkflowDefinition;

const overlaps = (a: NodeBox, b: NodeBox): boolean => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe("computeLayout", () => {
  const d = def(
    [
      simple("a"),
      node("SWITCH", "sw", { cases: ["x", "y"] }),
      simple("x1"),
      simple("y1"),
      node("DO_WHILE", "loop", { loopCondition: "false" }),
      simple("b1", { parent: "loop" }),
      simple("b2", { parent: "loop" }),
      simple("b3", { parent: "loop" }),
      simple("end"),
    ],
    [edge("a", "sw"), edge("sw", "x1", "x"), edge("sw", "y1", "y"), edge("sw", "loop", "default"), edge("x1", "end"), edge("y1", "end"), edge("loop", "end"), edge("b1", "b3"), edge("b2", "b3")],
  );
  const boxes = computeLayout(d);
  const box = (ref: string) => boxes.get(ref)!;

  it("ranks by longest path: every edge points down", () => {
    for (const e of d.edges) expect(box(e.target).y).toBeGreaterThan(box(e.source).y);
  });

  it("puts branches side by side without overlap, centred under their fork", () => {
    const level = ["a", "sw", "x1", "y1", "loop", "end"];
    for (const p of level) for (const q of level) if (p !== q) expect(overlaps(box(p), box(q))).toBe(false);
    expect(box("x1").x).toBeLessThan(box("y1").x);
    expect(box("y1").x).toBeLessThan(box("loop").x);
    const centre = (b: NodeBox) => b.x + b.width / 2;
    expect(Math.abs((centre(box("x1")) + centre(box("loop"))) / 2 - centre(box("sw")))).toBeLessThan(LAYOUT_DEFAULTS.nodeWidth);
  });

  it("sizes a container around its body, children relative to it", () => {
    const { containerPadding: pad, nodeWidth, nodeHeight, rankGap, laneGap } = LAYOUT_DEFAULTS;
    expect(box("b1")).toEqual({ x: pad.left, y: pad.top, width: nodeWidth, height: nodeHeight });
    expect(box("b2")).toEqual({ x: pad.left + nodeWidth + laneGap, y: pad.top, width: nodeWidth, height: nodeHeight });
    expect(box("b3").y).toBe(pad.top + nodeHeight + rankGap);
    expect(box("loop").width).toBe(pad.left + 2 * nodeWidth + laneGap + pad.right);
    expect(box("loop").height).toBe(pad.top + 2 * nodeHeight + rankGap + pad.bottom);
    // The tall container pushes the next rank down.
    expect(box("end").y).toBeGreaterThanOrEqual(box("loop").y + box("loop").height + rankGap);
  });

  it("is deterministic, and layoutDefinition copies positions without touching its input", () => {
    expect(computeLayout(d)).toEqual(boxes);
    const laid = layoutDefinition(d);
    expect(laid.nodes.map((n) => n.position)).toEqual(d.nodes.map((n) => ({ x: box(n.ref).x, y: box(n.ref).y })));
    expect(d.nodes.every((n) => n.position.x === 0 && n.position.y === 0)).toBe(true);
  });

  it("tolerates drafts: cycles, dangling parents, nested loops", () => {
    const draft = def(
      [simple("a"), simple("b"), node("DO_WHILE", "l1"), node("DO_WHILE", "l2", { parent: "l1" }), simple("c", { parent: "l2" }), simple("d", { parent: "ghost" })],
      [edge("a", "b"), edge("b", "a")],
    );
    const laid = computeLayout(draft);
    expect([...laid.keys()].sort()).toEqual(["a", "b", "c", "d", "l1", "l2"]);
  });
});
