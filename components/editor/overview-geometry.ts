import { DEFAULT_CASE, LAYOUT_DEFAULTS, NODE_TYPES } from "@/engine";
import type { WorkflowDefinition, WorkflowNode } from "@/engine";
import { loopSize } from "./flow-mapping";

/**
 * Where every node of a definition is on the canvas, for the far-zoom
 * overview (overview-canvas.tsx), which draws the diagram on one <canvas>
 * and hit-tests pointers itself because React Flow's DOM nodes are
 * unmounted there. Pure: positions come from the definition, sizes from what
 * React Flow measured (or the size a node is drawn at when it was never
 * measured), loop sizes from the same `loopSize` React Flow is given.
 */

/**
 * Below this zoom the canvas draws the overview instead of React Flow's DOM.
 * At 0.3 a node is 66×19 px and its text is unreadable anyway; from fit view
 * of 1,000 nodes (zoom 0.05) the DOM's ~2,000 elements cost Chromium
 * 70–120 ms a frame in hit-testing, layerisation and style (bench:canvas).
 */
export const FAR_ZOOM = 0.3;

/** The width a SWITCH needs for its handles: one slot per case plus default. */
export function switchWidth(caseCount: number): number {
  return Math.max(LAYOUT_DEFAULTS.nodeWidth, (caseCount + 1) * 96 + (caseCount > 0 ? 0 : 40));
}

/** A SWITCH's height as drawn (title row plus the row of case labels), until React Flow has measured it. */
const SWITCH_HEIGHT = 96;

export interface OverviewBox {
  ref: string;
  node: WorkflowNode;
  /** Absolute canvas coordinates of the top-left corner (a loop body's nodes are stored relative to it). */
  x: number;
  y: number;
  width: number;
  height: number;
  isLoop: boolean;
}

export interface OverviewLayout {
  /** In drawing order: a loop before the nodes in its body, so the last box under a point is the one on top. */
  boxes: readonly OverviewBox[];
  byRef: ReadonlyMap<string, OverviewBox>;
}

export interface Point {
  x: number;
  y: number;
}

export interface Rect extends Point {
  width: number;
  height: number;
}

type Sizes = ReadonlyMap<string, { width: number; height: number }>;

/** The size the canvas draws a node at: as React Flow measured it, else as the node component lays it out. */
export function drawnSize(node: WorkflowNode, measured: Sizes): { width: number; height: number } {
  const size = measured.get(node.ref);
  if (size) return size;
  if (node.type === "SWITCH") return { width: switchWidth(node.cases.length), height: SWITCH_HEIGHT };
  return { width: LAYOUT_DEFAULTS.nodeWidth, height: LAYOUT_DEFAULTS.nodeHeight };
}

/** Every node's absolute box. A node whose parent is unknown (or part of a parent cycle) is placed as top-level, as the canvas does. */
export function overviewLayout(definition: WorkflowDefinition, measured: Sizes): OverviewLayout {
  const byRefNode = new Map(definition.nodes.map((n) => [n.ref, n]));
  const children = new Map<string, WorkflowNode[]>();
  for (const n of definition.nodes) {
    if (n.parent === undefined || !byRefNode.has(n.parent)) continue;
    const list = children.get(n.parent);
    if (list) list.push(n);
    else children.set(n.parent, [n]);
  }
  const boxes: OverviewBox[] = [];
  const byRef = new Map<string, OverviewBox>();
  const place = (node: WorkflowNode, originX: number, originY: number) => {
    if (byRef.has(node.ref)) return;
    const body = children.get(node.ref) ?? [];
    const box: OverviewBox = {
      ref: node.ref,
      node,
      x: originX + node.position.x,
      y: originY + node.position.y,
      ...(NODE_TYPES[node.type].isContainer ? loopSize(body, measured) : drawnSize(node, measured)),
      isLoop: NODE_TYPES[node.type].isContainer,
    };
    boxes.push(box);
    byRef.set(node.ref, box);
    for (const child of body) place(child, box.x, box.y);
  };
  for (const n of definition.nodes) if (n.parent === undefined || !byRefNode.has(n.parent)) place(n, 0, 0);
  // What is left hangs off a parent cycle, which the validator reports; draw it rather than lose it.
  for (const n of definition.nodes) place(n, 0, 0);
  return { boxes, byRef };
}

const contains = (box: Rect, p: Point) => p.x >= box.x && p.x <= box.x + box.width && p.y >= box.y && p.y <= box.y + box.height;

/** The node drawn on top at a canvas point: a body node before the loop around it. */
export function nodeAt(layout: OverviewLayout, point: Point): OverviewBox | null {
  for (let i = layout.boxes.length - 1; i >= 0; i--) {
    const box = layout.boxes[i]!;
    if (contains(box, point)) return box;
  }
  return null;
}

/** The nodes lying wholly inside a rectangle, as React Flow's box selection ("full" mode) picks them. */
export function nodesInside(layout: OverviewLayout, rect: Rect): string[] {
  const right = rect.x + rect.width;
  const bottom = rect.y + rect.height;
  return layout.boxes.filter((b) => b.x >= rect.x && b.y >= rect.y && b.x + b.width <= right && b.y + b.height <= bottom).map((b) => b.ref);
}

/** The innermost loop (other than `except`) whose area holds a canvas point, and the point relative to that loop. */
export function loopAt(layout: OverviewLayout, point: Point, except?: string): { ref: string; relative: Point } | null {
  for (let i = layout.boxes.length - 1; i >= 0; i--) {
    const box = layout.boxes[i]!;
    if (box.isLoop && box.ref !== except && contains(box, point)) return { ref: box.ref, relative: { x: point.x - box.x, y: point.y - box.y } };
  }
  return null;
}

/**
 * What a drag that starts on `grabbed` moves: the whole selection when it is
 * selected, else just it; a node whose loop also moves is carried by the loop,
 * so it is left out (moving both would move it twice).
 */
export function draggedRefs(layout: OverviewLayout, selected: ReadonlySet<string>, grabbed: string): string[] {
  const moving = selected.has(grabbed) ? selected : new Set([grabbed]);
  const carried = (ref: string): boolean => {
    const seen = new Set<string>();
    for (let parent = layout.byRef.get(ref)?.node.parent; parent !== undefined && !seen.has(parent); parent = layout.byRef.get(parent)?.node.parent) {
      if (moving.has(parent)) return true;
      seen.add(parent);
    }
    return false;
  };
  return [...moving].filter((ref) => layout.byRef.has(ref) && !carried(ref));
}

/**
 * Where an edge leaves its source and enters its target: the bottom of the
 * source (a SWITCH's case slot, evenly spread as the node lays them out) and
 * the top centre of the target. Null when either end is missing.
 */
export function edgeEnds(layout: OverviewLayout, edge: WorkflowDefinition["edges"][number]): { from: Point; to: Point } | null {
  const source = layout.byRef.get(edge.source);
  const target = layout.byRef.get(edge.target);
  if (!source || !target) return null;
  let fromX = source.x + source.width / 2;
  if (source.node.type === "SWITCH") {
    const slots = [...source.node.cases, DEFAULT_CASE];
    const slot = slots.indexOf(edge.case ?? DEFAULT_CASE);
    if (slot >= 0) fromX = source.x + ((slot + 0.5) * source.width) / slots.length;
  }
  return { from: { x: fromX, y: source.y + source.height }, to: { x: target.x + target.width / 2, y: target.y } };
}
