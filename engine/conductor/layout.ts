import type { GraphInput } from "../definition";
import { buildGraph } from "../definition";

/**
 * A tidy first layout for a graph that has none (an import): layered, top to
 * bottom, pure and deterministic. The editor offers elkjs auto-layout; this
 * only has to look orderly without it.
 *
 * Per level (the top level, then each DO_WHILE body — bodies first, since a
 * container's size is its body's):
 * - rank = longest path from the level's start nodes, so every edge points
 *   down;
 * - within a rank, nodes are ordered by the mean centre of their
 *   predecessors (ties in definition order, which for an import is case and
 *   branch order), so a fork's or SWITCH's branches become side-by-side lanes
 *   under it;
 * - each rank is packed left to right without overlap, then shifted so its
 *   nodes sit, on average, where their predecessors are;
 * - a container is sized around its body plus {@link LayoutOptions.containerPadding};
 *   its children's positions are relative to its top-left corner, as React
 *   Flow expects for `parentId` nodes.
 *
 * O(n log n + e) per level. Tolerates drafts: a level with a cycle is laid
 * out in definition order.
 */

/** Box sizes and spacing, in canvas pixels. */
export interface LayoutOptions {
  /** Width of a plain node. */
  readonly nodeWidth: number;
  /** Height of a plain node. */
  readonly nodeHeight: number;
  /** Vertical gap between ranks. */
  readonly rankGap: number;
  /** Horizontal gap between nodes of one rank. */
  readonly laneGap: number;
  /** Space between a container's border and its body: header above, margins around. */
  readonly containerPadding: { readonly top: number; readonly right: number; readonly bottom: number; readonly left: number };
}

/** The sizes the canvas draws nodes at; change them together with the node components. */
export const LAYOUT_DEFAULTS: LayoutOptions = Object.freeze({
  nodeWidth: 220,
  nodeHeight: 64,
  rankGap: 56,
  laneGap: 40,
  containerPadding: Object.freeze({ top: 56, right: 32, bottom: 32, left: 32 }),
});

/** Where a node goes: `x`/`y` relative to its container (or the canvas), and its size. */
export interface NodeBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * A box for every node, keyed by ref. Containers get the size their body
 * needs; use it for the container's width/height on the canvas.
 */
export function computeLayout(graphInput: GraphInput, options: Partial<LayoutOptions> = {}): Map<string, NodeBox> {
  const o: LayoutOptions = { ...LAYOUT_DEFAULTS, ...options };
  const graph = buildGraph(graphInput);
  const boxes = new Map<string, NodeBox>();
  const index = new Map<string, number>();
  graph.refs.forEach((r, i) => index.set(r, i));

  const layoutLevel = (container: string | undefined): { width: number; height: number } => {
    const members = graph.childrenOf(container);
    if (members.length === 0) return { width: 0, height: 0 };
    const size = (ref: string): { width: number; height: number } => {
      const box = boxes.get(ref);
      return box !== undefined ? { width: box.width, height: box.height } : { width: o.nodeWidth, height: o.nodeHeight };
    };
    const order = graph.topologicalOrder(container) ?? members;
    const rank = new Map<string, number>();
    for (const ref of order) {
      let r = 0;
      for (const p of graph.predecessors(ref)) {
        const pr = rank.get(p);
        if (pr !== undefined && pr + 1 > r) r = pr + 1;
      }
      rank.set(ref, r);
    }
    const ranks: string[][] = [];
    for (const ref of order) {
      const r = rank.get(ref)!;
      (ranks[r] ??= []).push(ref);
    }
    const centre = new Map<string, number>();
    let y = 0;
    for (const row of ranks) {
      if (row === undefined) continue;
      const desired = new Map<string, number>();
      for (const ref of row) {
        const preds = graph.predecessors(ref).filter((p) => centre.has(p));
        desired.set(ref, preds.length === 0 ? 0 : preds.reduce((s, p) => s + centre.get(p)!, 0) / preds.length);
      }
      row.sort((a, b) => desired.get(a)! - desired.get(b)! || index.get(a)! - index.get(b)!);
      // Pack left to right, each node as near its desired centre as the previous allows…
      const left: number[] = [];
      let edge = Number.NEGATIVE_INFINITY;
      for (const ref of row) {
        const w = size(ref).width;
        const x = Math.max(desired.get(ref)! - w / 2, edge);
        left.push(x);
        edge = x + w + o.laneGap;
      }
      // …then shift the row so it is, on average, centred where it wants to be.
      let drift = 0;
      row.forEach((ref, i) => (drift += left[i]! + size(ref).width / 2 - desired.get(ref)!));
      const shift = drift / row.length;
      let rowHeight = 0;
      row.forEach((ref, i) => {
        const { width, height } = size(ref);
        const x = left[i]! - shift;
        centre.set(ref, x + width / 2);
        const box = boxes.get(ref);
        if (box === undefined) boxes.set(ref, { x, y, width, height });
        else Object.assign(box, { x, y });
        if (height > rowHeight) rowHeight = height;
      });
      y += rowHeight + o.rankGap;
    }
    // Normalise to the level's origin (inside a container: past its padding).
    let minX = Number.POSITIVE_INFINITY;
    let maxX = Number.NEGATIVE_INFINITY;
    let maxY = 0;
    for (const ref of members) {
      const b = boxes.get(ref)!;
      minX = Math.min(minX, b.x);
      maxX = Math.max(maxX, b.x + b.width);
      maxY = Math.max(maxY, b.y + b.height);
    }
    const dx = (container === undefined ? 0 : o.containerPadding.left) - minX;
    const dy = container === undefined ? 0 : o.containerPadding.top;
    for (const ref of members) {
      const b = boxes.get(ref)!;
      b.x = Math.round(b.x + dx);
      b.y = Math.round(b.y + dy);
    }
    return { width: Math.round(maxX - minX), height: Math.round(maxY) };
  };

  for (const ref of graph.refs) {
    if (!graph.isContainer(ref) || graph.parentOf(ref) !== undefined) continue;
    const body = layoutLevel(ref);
    boxes.set(ref, {
      x: 0,
      y: 0,
      width: Math.max(o.nodeWidth, body.width + o.containerPadding.left + o.containerPadding.right),
      height: Math.max(o.nodeHeight, body.height + o.containerPadding.top + o.containerPadding.bottom),
    });
  }
  layoutLevel(undefined);
  // Nodes no level reached (a draft's nested loop, say) still get a box.
  for (const ref of graph.refs) if (!boxes.has(ref)) boxes.set(ref, { x: 0, y: 0, width: o.nodeWidth, height: o.nodeHeight });
  return boxes;
}

/** `definition` with every node's `position` set from {@link computeLayout}; the input is not modified. */
export function layoutDefinition<D extends GraphInput & { nodes: readonly { ref: string; position: { x: number; y: number } }[] }>(
  definition: D,
  options: Partial<LayoutOptions> = {},
): D {
  const boxes = computeLayout(definition, options);
  return {
    ...definition,
    nodes: definition.nodes.map((n) => {
      const b = boxes.get(n.ref);
      return b === undefined ? n : { ...n, position: { x: b.x, y: b.y } };
    }),
  };
}
