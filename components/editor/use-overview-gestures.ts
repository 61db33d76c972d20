"use client";

import type { ReactFlowInstance } from "@xyflow/react";
import { useCallback, useMemo, useRef } from "react";
import type { PointerEvent as ReactPointerEvent, SyntheticEvent } from "react";
import type { StoreApi } from "zustand";
import type { Position } from "@/engine";
import { dropIntoLoop } from "./drop-into-loop";
import type { EditorStore } from "./editor-store";
import type { CanvasFlowNode, WorkflowFlowEdge } from "./flow-mapping";
import { edgeKey } from "./graph-edits";
import type { MarqueeState } from "./overview-canvas";
import { draggedRefs, nodeAt, nodesInside, overviewLayout } from "./overview-geometry";

/** Pointer travel (screen px) below which a press is a click, as React Flow's default drag threshold. */
const DRAG_THRESHOLD = 1;

/**
 * Pointer gestures on the far-zoom overview, where React Flow has no DOM
 * nodes to press on: a press is hit-tested against the store's node boxes
 * (overview-geometry.ts). On a node it selects (Shift, Ctrl or ⌘ add to the
 * selection) and drags the node or the whole selection through the store's
 * `moveNodes`, so a drag is one undo step and a drop into a loop joins that
 * step, exactly as a drag on React Flow's nodes. Shift on the empty canvas
 * draws a selection box.
 *
 * The box is ours rather than React Flow's: React Flow selects by its
 * internal nodes, and the hidden ones the overview stands in for are skipped
 * by its hit test (getNodesInside), so its box would select nothing and clear
 * the selection. A plain press on the empty canvas is left to React Flow,
 * which pans (and a click clears the selection).
 *
 * The handlers go on React Flow's wrapper in the capture phase: they run
 * before the pane's own (its selection box listens in capture too), and
 * `preventDefault` on pointerdown withholds the mousedown d3-zoom pans on.
 */
export function useOverviewGestures(store: EditorStore, rf: ReactFlowInstance<CanvasFlowNode, WorkflowFlowEdge>, marquee: StoreApi<MarqueeState>) {
  /** Set while a gesture of ours is under way, and until the click that ends it has been swallowed. */
  const active = useRef(false);
  /** The click that follows our pointerup must not reach the pane, whose click clears the selection: the flag outlives it by a task. */
  const release = useCallback(() => {
    setTimeout(() => {
      active.current = false;
    }, 0);
  }, []);

  const dragNodes = useCallback(
    (event: ReactPointerEvent, grabbed: string, additive: boolean) => {
      const s = store.getState();
      const alreadySelected = s.selectedNodes.has(grabbed);
      if (!alreadySelected) s.select(additive ? [...s.selectedNodes, grabbed] : [grabbed], additive ? s.selectedEdges : []);
      const start = { x: event.clientX, y: event.clientY };
      const origin = rf.screenToFlowPosition(start);
      let moving: Map<string, Position> | null = null;
      let last: Map<string, Position> | null = null;

      const move = (e: PointerEvent) => {
        if (!moving) {
          if (Math.hypot(e.clientX - start.x, e.clientY - start.y) < DRAG_THRESHOLD) return;
          const now = store.getState();
          if (now.readOnly) return;
          const layout = overviewLayout(now.definition, now.measured);
          moving = new Map(draggedRefs(layout, now.selectedNodes, grabbed).map((ref) => [ref, layout.byRef.get(ref)!.node.position]));
        }
        const at = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY });
        last = new Map([...moving].map(([ref, p]) => [ref, { x: p.x + at.x - origin.x, y: p.y + at.y - origin.y }]));
        store.getState().moveNodes(last, false);
      };
      const end = (e: PointerEvent) => {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", end);
        window.removeEventListener("pointercancel", end);
        const now = store.getState();
        if (last) {
          now.moveNodes(last, true);
          dropIntoLoop(store.getState(), grabbed);
        } else if (e.type === "pointerup" && additive && alreadySelected) {
          // A modified click on a selected node takes it out of the selection, as on React Flow's nodes.
          now.select([...now.selectedNodes].filter((r) => r !== grabbed), now.selectedEdges);
        }
        release();
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", end);
      window.addEventListener("pointercancel", end);
    },
    [release, rf, store],
  );

  const drawBox = useCallback(
    (event: ReactPointerEvent) => {
      const bounds = event.currentTarget.getBoundingClientRect();
      const start = { x: event.clientX, y: event.clientY };
      let moved = false;
      const rectTo = (e: PointerEvent) => ({
        x: Math.min(start.x, e.clientX) - bounds.left,
        y: Math.min(start.y, e.clientY) - bounds.top,
        width: Math.abs(e.clientX - start.x),
        height: Math.abs(e.clientY - start.y),
      });
      const move = (e: PointerEvent) => {
        moved ||= Math.hypot(e.clientX - start.x, e.clientY - start.y) >= DRAG_THRESHOLD;
        if (moved) marquee.setState({ rect: rectTo(e) });
      };
      const end = (e: PointerEvent) => {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", end);
        window.removeEventListener("pointercancel", end);
        marquee.setState({ rect: null });
        const s = store.getState();
        if (!moved) {
          if (e.type === "pointerup") s.select([], []);
        } else if (e.type === "pointerup") {
          const a = rf.screenToFlowPosition({ x: Math.min(start.x, e.clientX), y: Math.min(start.y, e.clientY) });
          const b = rf.screenToFlowPosition({ x: Math.max(start.x, e.clientX), y: Math.max(start.y, e.clientY) });
          const refs = new Set(nodesInside(overviewLayout(s.definition, s.measured), { x: a.x, y: a.y, width: b.x - a.x, height: b.y - a.y }));
          // React Flow's box also selects every edge touching a selected node.
          const edges = s.definition.edges.filter((edge) => refs.has(edge.source) || refs.has(edge.target)).map(edgeKey);
          s.select(refs, edges);
        }
        release();
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", end);
      window.addEventListener("pointercancel", end);
    },
    [marquee, release, rf, store],
  );

  const onPointerDownCapture = useCallback(
    (event: ReactPointerEvent) => {
      if (event.button !== 0 || !event.isPrimary || active.current) return;
      // Only presses on the canvas itself: the zoom controls and panels keep theirs.
      if (!(event.target as Element).classList.contains("react-flow__pane")) return;
      const s = store.getState();
      const hit = nodeAt(overviewLayout(s.definition, s.measured), rf.screenToFlowPosition({ x: event.clientX, y: event.clientY }));
      if (!hit && !event.shiftKey) return;
      event.stopPropagation();
      event.preventDefault();
      active.current = true;
      (event.target as Element).setPointerCapture(event.pointerId);
      if (hit) dragNodes(event, hit.ref, event.shiftKey || event.metaKey || event.ctrlKey);
      else drawBox(event);
    },
    [dragNodes, drawBox, rf, store],
  );

  const swallow = useCallback((event: SyntheticEvent) => {
    if (active.current) event.stopPropagation();
  }, []);

  // Touch: d3-zoom pans on touchstart, which preventDefault on pointerdown does not withhold.
  return useMemo(() => ({ onPointerDownCapture, onClickCapture: swallow, onTouchStartCapture: swallow }), [onPointerDownCapture, swallow]);
}
