"use client";

import { Panel, useReactFlow, useStoreApi } from "@xyflow/react";
import type { ReactFlowState } from "@xyflow/react";
import { useCallback, useContext, useEffect, useRef } from "react";
import type { PointerEvent as ReactPointerEvent, RefObject } from "react";
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand";
import { NODE_TYPES } from "@/engine";
import type { NodeCategory, TaskStatus, WorkflowDefinition } from "@/engine";
import { useCanvasColorMode } from "./use-canvas-color-mode";
import { useEditor, useEditorStore } from "./editor-context";
import type { DiffKind } from "./editor-store";
import { edgeKey } from "./graph-edits";
import { edgeEnds, overviewLayout } from "./overview-geometry";
import type { OverviewLayout, Rect } from "./overview-geometry";
import { RunOverlayContext } from "./run-overlay";

/**
 * The far-zoom overview: the whole diagram painted on one <canvas> — nodes as
 * boxes tinted by type (by status on a run's page), loops as dashed
 * outlines, edges as stepped lines, selection, validation problems and
 * compare rings as outlines — while React Flow's DOM nodes and edges are
 * unmounted (editor-canvas.tsx). Panning or zooming then repaints one canvas
 * instead of making Chromium hit-test, restyle and re-layer ~2,000 elements
 * a frame. React Flow's minimap skips hidden nodes, so a minimap painted the
 * same way stands in for it.
 */

/** The box-selection rectangle being drawn, in pixels relative to the canvas; null when none is. */
export interface MarqueeState {
  rect: Rect | null;
}

export function createMarqueeStore(): StoreApi<MarqueeState> {
  return createStore<MarqueeState>()(() => ({ rect: null }));
}

/** The hues of the palette's groups (node-icon.tsx's tiles, Tailwind's 500 shades), so a glance still tells work from flow control. */
const CATEGORY_COLOUR: Readonly<Record<NodeCategory, string>> = {
  work: "#0ea5e9",
  ai: "#d946ef",
  data: "#8b5cf6",
  flow: "#f59e0b",
  wait: "#10b981",
  workflow: "#f43f5e",
};

const EMERALD = "#10b981";
const AMBER = "#f59e0b";

interface Colours {
  /** React Flow's minimap mask, light or dark. */
  mask: string;
  surface: string;
  accent: string;
  danger: string;
  muted: string;
  foreground: string;
}

/** The theme's tokens as the browser resolved them (they are oklch and color-mix expressions, which a canvas takes once resolved). */
function readColours(host: HTMLElement): Colours {
  const probe = document.createElement("span");
  probe.style.display = "none";
  host.appendChild(probe);
  const read = (token: string) => {
    probe.style.color = `var(${token})`;
    return getComputedStyle(probe).color;
  };
  const colours = { mask: read("--xy-minimap-mask-background-color-default"), surface: read("--surface"), accent: read("--accent"), danger: read("--danger"), muted: read("--muted"), foreground: read("--foreground") };
  probe.remove();
  return colours;
}

/** How a node is filled on a run's page: its status, grey and faded where the run never reached it (as the nodes' rings say). */
function runFill(status: TaskStatus | null, colours: Colours): { colour: string; alpha: number } {
  switch (status) {
    case "COMPLETED":
      return { colour: EMERALD, alpha: 0.85 };
    case "COMPLETED_WITH_ERRORS":
      return { colour: AMBER, alpha: 0.85 };
    case "IN_PROGRESS":
      return { colour: colours.accent, alpha: 0.9 };
    case "FAILED":
    case "FAILED_WITH_TERMINAL_ERROR":
    case "TIMED_OUT":
      return { colour: colours.danger, alpha: 0.9 };
    case "SCHEDULED":
      return { colour: colours.muted, alpha: 0.55 };
    default:
      return { colour: colours.muted, alpha: 0.2 };
  }
}

const DIFF_COLOUR = (kind: DiffKind, colours: Colours) => (kind === "added" ? EMERALD : kind === "changed" ? AMBER : colours.danger);

/** Shapes sharing one style, painted with a single fill or stroke. */
class Batches {
  private readonly batches = new Map<string, { colour: string; alpha: number; width: number; dash: boolean; path: Path2D }>();

  path(colour: string, alpha: number, width = 0, dash = false): Path2D {
    const key = `${colour}|${alpha}|${width}|${dash}`;
    let batch = this.batches.get(key);
    if (!batch) {
      batch = { colour, alpha, width, dash, path: new Path2D() };
      this.batches.set(key, batch);
    }
    return batch.path;
  }

  fill(ctx: CanvasRenderingContext2D) {
    for (const b of this.batches.values()) {
      ctx.globalAlpha = b.alpha;
      ctx.fillStyle = b.colour;
      ctx.fill(b.path);
    }
  }

  stroke(ctx: CanvasRenderingContext2D, zoom: number) {
    for (const b of this.batches.values()) {
      ctx.globalAlpha = b.alpha;
      ctx.strokeStyle = b.colour;
      // Widths are in screen pixels; the context is scaled by the zoom.
      ctx.lineWidth = b.width / zoom;
      ctx.setLineDash(b.dash ? [4 / zoom, 3 / zoom] : []);
      ctx.stroke(b.path);
    }
  }
}

interface Scene {
  layout: OverviewLayout;
  definition: WorkflowDefinition;
  selectedNodes: ReadonlySet<string>;
  selectedEdges: ReadonlySet<string>;
  problemsByRef: ReadonlyMap<string, unknown>;
  diff: ReadonlyMap<string, DiffKind> | null;
  /** On a run's page: each node's status (null: not reached) and the edges taken; undefined in the editor. */
  run: { status: (ref: string) => TaskStatus | null; taken: ReadonlySet<string> } | undefined;
}

/** What part of the canvas a <canvas> shows: the translation (px) and zoom, as React Flow's viewport, and its size in CSS px. */
interface View {
  x: number;
  y: number;
  zoom: number;
  width: number;
  height: number;
}

/** Clears the canvas and scales it to `view`; returns whether a canvas rectangle is (partly) on it, so the rest is skipped. */
function frameView(ctx: CanvasRenderingContext2D, view: View): (x: number, y: number, w: number, h: number) => boolean {
  const ratio = ctx.canvas.width / Math.max(1, view.width);
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.setTransform(ratio * view.zoom, 0, 0, ratio * view.zoom, ratio * view.x, ratio * view.y);
  const left = -view.x / view.zoom;
  const top = -view.y / view.zoom;
  const right = left + view.width / view.zoom;
  const bottom = top + view.height / view.zoom;
  return (x, y, w, h) => x <= right && y <= bottom && x + w >= left && y + h >= top;
}

function paintEdges(ctx: CanvasRenderingContext2D, scene: Scene, view: View, onScreen: ReturnType<typeof frameView>, colours: Colours) {
  const { layout, selectedEdges, diff, run } = scene;
  const edges = new Batches();
  for (const edge of scene.definition.edges) {
    const ends = edgeEnds(layout, edge);
    if (!ends) continue;
    const { from, to } = ends;
    if (!onScreen(Math.min(from.x, to.x), Math.min(from.y, to.y), Math.abs(to.x - from.x), Math.abs(to.y - from.y))) continue;
    const id = edgeKey(edge);
    const kind = diff?.get(`edge:${id}`);
    const taken = run?.taken.has(id);
    const path = kind
      ? edges.path(DIFF_COLOUR(kind, colours), 1, 1.5, kind === "removed")
      : selectedEdges.has(id)
        ? edges.path(colours.accent, 1, 1.5)
        : run
          ? taken
            ? edges.path(EMERALD, 1, 1.5)
            : edges.path(colours.muted, 0.3, 1)
          : edges.path(colours.muted, 0.6, 1);
    // A step, as the canvas draws edges: down, across half way, down.
    const middle = (from.y + to.y) / 2;
    path.moveTo(from.x, from.y);
    path.lineTo(from.x, middle);
    path.lineTo(to.x, middle);
    path.lineTo(to.x, to.y);
  }
  edges.stroke(ctx, view.zoom);
}

function paintNodes(ctx: CanvasRenderingContext2D, scene: Scene, view: View, onScreen: ReturnType<typeof frameView>, colours: Colours) {
  const { layout, selectedNodes, problemsByRef, diff, run } = scene;
  const loopTints = new Batches();
  // Nodes are opaque, as on the canvas: an edge passing behind one must not show through its tint.
  const grounds = new Batches();
  const fills = new Batches();
  const rings = new Batches();
  for (const box of layout.boxes) {
    if (!onScreen(box.x, box.y, box.width, box.height)) continue;
    const selected = selectedNodes.has(box.ref);
    const invalid = problemsByRef.has(box.ref);
    const kind = diff?.get(box.ref);
    if (box.isLoop) {
      const status = run ? run.status(box.ref) : undefined;
      loopTints.path(status === undefined ? colours.accent : runFill(status, colours).colour, 0.07).rect(box.x, box.y, box.width, box.height);
      const outline = kind ? DIFF_COLOUR(kind, colours) : invalid ? colours.danger : colours.accent;
      rings.path(outline, kind || invalid || selected ? 1 : 0.55, selected || invalid || kind ? 2 : 1, true).rect(box.x, box.y, box.width, box.height);
      continue;
    }
    const fill = selected
      ? { colour: colours.accent, alpha: 1 }
      : run
        ? runFill(run.status(box.ref), colours)
        : invalid
          ? { colour: colours.danger, alpha: 0.75 }
          : { colour: CATEGORY_COLOUR[NODE_TYPES[box.node.type].category], alpha: 0.55 };
    grounds.path(colours.surface, 1).rect(box.x, box.y, box.width, box.height);
    fills.path(fill.colour, fill.alpha).rect(box.x, box.y, box.width, box.height);
    // Compare rings first (that view is about changes); else an invalid node keeps its red ring whatever its fill, as zoomed in.
    if (kind) rings.path(DIFF_COLOUR(kind, colours), 1, 2, kind === "removed").rect(box.x, box.y, box.width, box.height);
    else if (invalid) rings.path(colours.danger, 1, 2).rect(box.x, box.y, box.width, box.height);
    else if (selected) rings.path(colours.foreground, 0.6, 1).rect(box.x, box.y, box.width, box.height);
  }
  loopTints.fill(ctx);
  grounds.fill(ctx);
  fills.fill(ctx);
  rings.stroke(ctx, view.zoom);
  ctx.globalAlpha = 1;
  ctx.setLineDash([]);
}

/** A rectangle in CSS px of the canvas, over whatever the view shows. */
function paintScreenRect(ctx: CanvasRenderingContext2D, view: View, rect: Rect, fill: string, fillAlpha: number, stroke: string | null) {
  const ratio = ctx.canvas.width / Math.max(1, view.width);
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.globalAlpha = fillAlpha;
  ctx.fillStyle = fill;
  ctx.fillRect(rect.x, rect.y, rect.width, rect.height);
  if (stroke) {
    ctx.globalAlpha = 0.8;
    ctx.strokeStyle = stroke;
    ctx.lineWidth = 1;
    ctx.strokeRect(rect.x + 0.5, rect.y + 0.5, rect.width, rect.height);
  }
  ctx.globalAlpha = 1;
}

/**
 * Repaints a canvas in the animation frame after anything it shows changes,
 * reading the stores directly, so React does not re-render per pan frame.
 * `size` is the canvas's CSS size; `paint` draws the scene with the theme's colours.
 */
function useScenePainter(
  canvasRef: RefObject<HTMLCanvasElement | null>,
  extra: StoreApi<MarqueeState> | null,
  size: (flow: ReactFlowState) => { width: number; height: number },
  paint: (ctx: CanvasRenderingContext2D, scene: Scene, flow: ReactFlowState, colours: Colours) => void,
) {
  const editor = useEditorStore();
  const flow = useStoreApi();
  const run = useContext(RunOverlayContext);
  const colorMode = useCanvasColorMode();

  useEffect(() => {
    const canvas = canvasRef.current;
    const ctx = canvas?.getContext("2d");
    if (!canvas || !ctx) return;
    // Read in the first frame, not here: on a theme switch this effect runs before next-themes has swapped the page's class.
    let colours: Colours | null = null;
    let layout: OverviewLayout | null = null;
    let layoutInputs: readonly unknown[] = [];
    let drawn: readonly unknown[] = [];
    let frame = 0;

    const draw = () => {
      frame = 0;
      const e = editor.getState();
      const f = flow.getState();
      const r = run?.getState();
      const { width, height } = size(f);
      // Stores notify on changes this picture does not show (a connection's hover, a notice): repaint only for ours.
      const inputs = [f.transform[0], f.transform[1], f.transform[2], width, height, e.definition, e.measured, e.selectedNodes, e.selectedEdges, e.problemsByRef, e.diff, r?.nodes, r?.takenEdges, extra?.getState().rect];
      if (inputs.length === drawn.length && inputs.every((v, i) => v === drawn[i])) return;
      drawn = inputs;
      const ratio = window.devicePixelRatio || 1;
      if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
        canvas.width = Math.round(width * ratio);
        canvas.height = Math.round(height * ratio);
      }
      colours ??= readColours(canvas.parentElement ?? document.body);
      if (!layout || layoutInputs[0] !== e.definition || layoutInputs[1] !== e.measured) {
        layout = overviewLayout(e.definition, e.measured);
        layoutInputs = [e.definition, e.measured];
      }
      const scene: Scene = {
        layout,
        definition: e.definition,
        selectedNodes: e.selectedNodes,
        selectedEdges: e.selectedEdges,
        problemsByRef: e.problemsByRef,
        diff: e.diff,
        run: r ? { status: (ref) => r.nodes.get(ref)?.status ?? null, taken: r.takenEdges } : undefined,
      };
      paint(ctx, scene, f, colours);
    };
    const schedule = () => {
      frame ||= requestAnimationFrame(draw);
    };
    const unsubscribe = [editor.subscribe(schedule), flow.subscribe(schedule), extra?.subscribe(schedule), run?.subscribe(schedule)];
    schedule();
    return () => {
      cancelAnimationFrame(frame);
      for (const stop of unsubscribe) stop?.();
    };
    // A switch between light and dark runs the effect again, which reads the theme's colours afresh.
  }, [canvasRef, editor, flow, run, extra, size, paint, colorMode]);
}

const paneSize = (f: ReactFlowState) => ({ width: f.width, height: f.height });

/**
 * Mounted by the canvas below FAR_ZOOM, beneath React Flow's (empty)
 * viewport and pane: presses still reach the pane, where
 * use-overview-gestures.ts hit-tests them against the same layout.
 */
export function OverviewCanvas({ marquee }: { marquee: StoreApi<MarqueeState> }) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const count = useEditor((s) => s.definition.nodes.length);
  const paint = useCallback(
    (ctx: CanvasRenderingContext2D, scene: Scene, f: ReactFlowState, colours: Colours) => {
      const view = { x: f.transform[0], y: f.transform[1], zoom: f.transform[2], width: f.width, height: f.height };
      const onScreen = frameView(ctx, view);
      paintEdges(ctx, scene, view, onScreen, colours);
      paintNodes(ctx, scene, view, onScreen, colours);
      const rect = marquee.getState().rect;
      if (rect) paintScreenRect(ctx, view, rect, colours.accent, 0.08, colours.accent);
    },
    [marquee],
  );
  useScenePainter(canvasRef, marquee, paneSize, paint);
  return (
    <canvas
      ref={canvasRef}
      aria-label={`Diagram overview: ${count} node${count === 1 ? "" : "s"}. Zoom in to read them.`}
      className="pointer-events-none absolute inset-0 h-full w-full"
      data-testid="diagram-overview"
      role="img"
    />
  );
}

/** The canvas area a minimap shows: the whole diagram and the viewport, fitted into its box and centred, as React Flow's minimap does. */
function minimapView(layout: OverviewLayout, f: ReactFlowState, box: { width: number; height: number }): View {
  const [tx, ty, zoom] = f.transform;
  let left = -tx / zoom;
  let top = -ty / zoom;
  let right = left + f.width / zoom;
  let bottom = top + f.height / zoom;
  for (const b of layout.boxes) {
    left = Math.min(left, b.x);
    top = Math.min(top, b.y);
    right = Math.max(right, b.x + b.width);
    bottom = Math.max(bottom, b.y + b.height);
  }
  const scale = Math.min(box.width / Math.max(1, right - left), box.height / Math.max(1, bottom - top));
  return {
    x: (box.width - (right - left) * scale) / 2 - left * scale,
    y: (box.height - (bottom - top) * scale) / 2 - top * scale,
    zoom: scale,
    ...box,
  };
}

/**
 * The minimap below FAR_ZOOM, where React Flow's own skips every (hidden)
 * node: the diagram's boxes as the overview paints them, the rest masked
 * around the viewport. Pressing or dragging on it moves the viewport there.
 */
export function OverviewMinimap({ style }: { style: { width: number; height: number } }) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const rf = useReactFlow();
  const flow = useStoreApi();
  const lastView = useRef<View | null>(null);
  const size = useCallback(() => style, [style]);
  const paint = useCallback(
    (ctx: CanvasRenderingContext2D, scene: Scene, f: ReactFlowState, colours: Colours) => {
      const view = minimapView(scene.layout, f, style);
      lastView.current = view;
      paintNodes(ctx, scene, view, frameView(ctx, view), colours);
      // The mask: everything but the viewport, in the page's minimap mask colour.
      const [tx, ty, zoom] = f.transform;
      const ratio = ctx.canvas.width / Math.max(1, view.width);
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      const viewport = new Path2D();
      viewport.rect(0, 0, view.width, view.height);
      viewport.rect(view.x - (tx / zoom) * view.zoom, view.y - (ty / zoom) * view.zoom, (f.width / zoom) * view.zoom, (f.height / zoom) * view.zoom);
      ctx.fillStyle = colours.mask;
      ctx.fill(viewport, "evenodd");
    },
    [style],
  );
  useScenePainter(canvasRef, null, size, paint);

  /** Centres the viewport on the canvas point under a minimap pixel, keeping the zoom. */
  const centreAt = useCallback(
    (clientX: number, clientY: number, view: View) => {
      const bounds = canvasRef.current!.getBoundingClientRect();
      const x = (clientX - bounds.left - view.x) / view.zoom;
      const y = (clientY - bounds.top - view.y) / view.zoom;
      const { width, height, transform } = flow.getState();
      void rf.setViewport({ x: width / 2 - x * transform[2], y: height / 2 - y * transform[2], zoom: transform[2] });
    },
    [flow, rf],
  );

  const onPointerDown = useCallback(
    (event: ReactPointerEvent<HTMLCanvasElement>) => {
      // The minimap's own scale while dragging: it refits as the viewport moves, which would make the drag drift.
      const view = lastView.current;
      if (event.button !== 0 || !view) return;
      event.currentTarget.setPointerCapture(event.pointerId);
      centreAt(event.clientX, event.clientY, view);
      const move = (e: PointerEvent) => centreAt(e.clientX, e.clientY, view);
      const end = () => {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", end);
        window.removeEventListener("pointercancel", end);
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", end);
      window.addEventListener("pointercancel", end);
    },
    [centreAt],
  );

  return (
    <Panel className="react-flow__minimap" position="bottom-right">
      <canvas ref={canvasRef} aria-label="Minimap" className="block cursor-pointer" role="img" style={style} onPointerDown={onPointerDown} />
    </Panel>
  );
}
