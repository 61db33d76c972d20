"use client";

import { Background, Controls, MiniMap, ReactFlow, useReactFlow, useStore as useFlowStore } from "@xyflow/react";
import type { EdgeChange, FitViewOptions, NodeChange, OnConnect, ReactFlowState } from "@xyflow/react";
import { useCallback, useMemo, useRef, useState } from "react";
import type { DragEvent } from "react";
import { LAYOUT_DEFAULTS, NODE_TYPES, isNodeType } from "@/engine";
import type { Position } from "@/engine";
import { useCanvasColorMode } from "./use-canvas-color-mode";
import { dropIntoLoop } from "./drop-into-loop";
import { EDGE_COMPONENTS } from "./edges/workflow-edge";
import { useEditor, useEditorStore } from "./editor-context";
import { createFlowMapper } from "./flow-mapping";
import type { CanvasFlowNode, WorkflowFlowEdge } from "./flow-mapping";
import { noteIdOf } from "./note-edits";
import { NoteNode } from "./nodes/note-node";
import { NODE_COMPONENTS } from "./nodes/workflow-nodes";
import { OverviewCanvas, OverviewMinimap, createMarqueeStore } from "./overview-canvas";
import { FAR_ZOOM, loopAt, overviewLayout } from "./overview-geometry";
import { PALETTE_MIME } from "./palette";
import { useOverviewGestures } from "./use-overview-gestures";

/** The edge under a screen point, found by the `data-id` React Flow puts on each edge group. */
function edgeAt(x: number, y: number): string | null {
  for (const element of document.elementsFromPoint(x, y)) {
    const edge = element.closest(".react-flow__edge");
    const id = edge?.getAttribute("data-id");
    if (id) return id;
    // Nodes sit above edges: a drop on a node is not a drop on an edge beneath it.
    if (element.closest(".react-flow__node:not(.react-flow__node-loop)")) return null;
  }
  return null;
}

const MINIMAP_STYLE = { width: 168, height: 112 };
const PRO_OPTIONS = { hideAttribution: true };
const DEFAULT_VIEWPORT = { x: 40, y: 40, zoom: 1 };
/** Past this many nodes the editor opens on the diagram's start, not on all of it. */
const BIG_DIAGRAM = 150;
const NO_EDGES: WorkflowFlowEdge[] = [];
/** Module-level, as React Flow asks: the workflow nodes plus sticky notes. */
const CANVAS_NODE_TYPES = { ...NODE_COMPONENTS, note: NoteNode };

/**
 * What every "fit view" needs: below FAR_ZOOM every node is `hidden` (the
 * overview draws them), and React Flow's fit view leaves hidden nodes out
 * unless told, which would fit nothing and jump to the maximum zoom.
 */
export const FIT_WHOLE_DIAGRAM: FitViewOptions = { includeHiddenNodes: true };

/** A boolean, so only crossing the threshold re-renders the canvas, not every zoom step. */
const isFar = (s: ReactFlowState) => s.transform[2] < FAR_ZOOM;

/** The top-level nodes no edge enters, where a reader starts. */
function startNodes(definition: { nodes: readonly { ref: string; parent?: string }[]; edges: readonly { target: string }[] }): { id: string }[] {
  const entered = new Set(definition.edges.map((e) => e.target));
  return definition.nodes.filter((n) => n.parent === undefined && !entered.has(n.ref)).map((n) => ({ id: n.ref }));
}

/**
 * The canvas: React Flow drawing the store's definition. Every change React
 * Flow reports is translated into a store action; nothing is kept in React
 * Flow's own state, so the canvas is always exactly the definition.
 */
export function EditorCanvas() {
  const store = useEditorStore();
  const rf = useReactFlow<CanvasFlowNode, WorkflowFlowEdge>();
  const colorMode = useCanvasColorMode();
  const mapper = useMemo(createFlowMapper, []);
  const definition = useEditor((s) => s.definition);
  const selectedNodes = useEditor((s) => s.selectedNodes);
  const selectedEdges = useEditor((s) => s.selectedEdges);
  const problemsByRef = useEditor((s) => s.problemsByRef);
  const measured = useEditor((s) => s.measured);
  const diff = useEditor((s) => s.diff);
  const readOnly = useEditor((s) => s.readOnly);
  const dropEdge = useRef<string | null>(null);
  const far = useFlowStore(isFar);
  const [marquee] = useState(createMarqueeStore);
  const overviewGestures = useOverviewGestures(store, rf, marquee);
  // Fit only a diagram that has something to fit: fitting an empty canvas zooms
  // in to the maximum, and the first nodes dropped then land on top of each other.
  const [fitOnLoad] = useState(() => store.getState().definition.nodes.length > 0);
  // A big diagram opens at a readable zoom around its start rather than shrunk to
  // a speck: at 1,000 nodes "fit everything" is zoom 0.05 with every node on
  // screen, which is both unreadable and the slowest view to pan (bench:canvas).
  const [fitOptions] = useState(() => {
    const count = store.getState().definition.nodes.length;
    return count > BIG_DIAGRAM ? { padding: 0.2, maxZoom: 1.25, minZoom: 0.35, nodes: startNodes(store.getState().definition) } : { padding: 0.2, maxZoom: 1.25 };
  });

  const nodes = useMemo((): CanvasFlowNode[] => {
    const inputs = { definition, selectedNodes, selectedEdges, problemsByRef, measured, diff, readOnly, hidden: far };
    const workflowNodes = mapper.nodes(inputs);
    const notes = mapper.notes(inputs);
    return notes.length === 0 ? workflowNodes : [...notes, ...workflowNodes];
  }, [mapper, definition, selectedNodes, selectedEdges, problemsByRef, measured, diff, readOnly, far]);
  // Below FAR_ZOOM the overview draws the edges: React Flow gets none, so it mounts none (hidden edges
  // would still each mount a wrapper and recompute their path on every pan frame), and none are mapped
  // on each frame of a drag there.
  const edges = useMemo(
    () => (far ? NO_EDGES : mapper.edges({ definition, selectedNodes, selectedEdges, problemsByRef, measured, diff, readOnly, hidden: false })),
    [mapper, definition, selectedNodes, selectedEdges, problemsByRef, measured, diff, readOnly, far],
  );

  const onNodesChange = useCallback(
    (changes: NodeChange<CanvasFlowNode>[]) => {
      const s = store.getState();
      const positions = new Map<string, Position>();
      let dragDone = false;
      let selection: Set<string> | null = null;
      const sizes = new Map<string, { width: number; height: number }>();
      for (const change of changes) {
        if (change.type === "position") {
          if (change.position) positions.set(change.id, change.position);
          if (change.dragging === false) dragDone = true;
        } else if (change.type === "select") {
          selection ??= new Set(s.selectedNodes);
          if (change.selected) selection.add(change.id);
          else selection.delete(change.id);
        } else if (change.type === "dimensions" && change.dimensions && noteIdOf(change.id) === null) {
          // A note's size is its own (the resizer writes it to the store), never a measurement.
          sizes.set(change.id, change.dimensions);
        }
      }
      if (sizes.size > 0) s.setMeasured(sizes);
      if (positions.size > 0 || dragDone) s.moveNodes(positions, dragDone);
      if (selection) s.select(selection, s.selectedEdges);
    },
    [store],
  );

  const onEdgesChange = useCallback(
    (changes: EdgeChange<WorkflowFlowEdge>[]) => {
      const s = store.getState();
      let selection: Set<string> | null = null;
      for (const change of changes) {
        if (change.type !== "select") continue;
        selection ??= new Set(s.selectedEdges);
        if (change.selected) selection.add(change.id);
        else selection.delete(change.id);
      }
      if (selection) s.select(s.selectedNodes, selection);
    },
    [store],
  );

  const onConnect: OnConnect = useCallback(
    (connection) => {
      store.getState().connect({ source: connection.source, target: connection.target, sourceHandle: connection.sourceHandle });
    },
    [store],
  );

  const onDragOver = useCallback((event: DragEvent) => {
    if (!event.dataTransfer.types.includes(PALETTE_MIME)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    const edge = edgeAt(event.clientX, event.clientY);
    if (edge !== dropEdge.current) {
      document.querySelector(".react-flow__edge.drop-target")?.classList.remove("drop-target");
      if (edge) document.querySelector(`.react-flow__edge[data-id="${CSS.escape(edge)}"]`)?.classList.add("drop-target");
      dropEdge.current = edge;
    }
  }, []);

  const onDrop = useCallback(
    (event: DragEvent) => {
      const type = event.dataTransfer.getData(PALETTE_MIME);
      document.querySelector(".react-flow__edge.drop-target")?.classList.remove("drop-target");
      dropEdge.current = null;
      if (!isNodeType(type)) return;
      event.preventDefault();
      const point = rf.screenToFlowPosition({ x: event.clientX, y: event.clientY });
      // The node's centre lands under the pointer.
      const topLeft = { x: point.x - LAYOUT_DEFAULTS.nodeWidth / 2, y: point.y - LAYOUT_DEFAULTS.nodeHeight / 2 };
      const s = store.getState();
      const edge = edgeAt(event.clientX, event.clientY);
      if (edge) {
        s.insertOnEdge(edge, type, topLeft);
        return;
      }
      const loop = NODE_TYPES[type].isContainer ? null : loopAt(overviewLayout(s.definition, s.measured), point);
      if (loop) {
        s.addNode(type, { x: loop.relative.x - LAYOUT_DEFAULTS.nodeWidth / 2, y: Math.max(LAYOUT_DEFAULTS.containerPadding.top, loop.relative.y - LAYOUT_DEFAULTS.nodeHeight / 2) }, loop.ref);
        return;
      }
      s.addNode(type, topLeft);
    },
    [rf, store],
  );

  /** Dropping a node into (or out of) a loop moves it into (or out of) the loop's body. */
  const onNodeDragStop = useCallback(
    (_event: unknown, node: CanvasFlowNode) => {
      if (noteIdOf(node.id) === null) dropIntoLoop(store.getState(), node.id);
    },
    [store],
  );

  // A click on the empty canvas clears the selection. React Flow clears what it holds, but below
  // FAR_ZOOM it holds no edges, so the store is told directly.
  const onPaneClick = useCallback(() => store.getState().select([], []), [store]);

  return (
    <ReactFlow<CanvasFlowNode, WorkflowFlowEdge>
      colorMode={colorMode}
      deleteKeyCode={null}
      edgeTypes={EDGE_COMPONENTS}
      edges={edges}
      defaultViewport={DEFAULT_VIEWPORT}
      fitView={fitOnLoad}
      fitViewOptions={fitOptions}
      maxZoom={2.5}
      minZoom={0.05}
      multiSelectionKeyCode={["Shift", "Meta", "Control"]}
      nodeTypes={CANVAS_NODE_TYPES}
      nodes={nodes}
      nodesConnectable={!readOnly}
      nodesDraggable={!readOnly}
      // Past a few hundred nodes, drawing what is off screen is most of the cost.
      onlyRenderVisibleElements={nodes.length > BIG_DIAGRAM}
      proOptions={PRO_OPTIONS}
      selectionKeyCode="Shift"
      onConnect={onConnect}
      onDragOver={onDragOver}
      onDrop={onDrop}
      onEdgesChange={onEdgesChange}
      onNodeDragStop={onNodeDragStop}
      onNodesChange={onNodesChange}
      onPaneClick={onPaneClick}
      {...(far ? overviewGestures : {})}
    >
      {far ? <OverviewCanvas marquee={marquee} /> : null}
      <Background gap={20} size={1} />
      {/* React Flow's minimap leaves hidden nodes out, so below FAR_ZOOM it would be empty. */}
      {far ? <OverviewMinimap style={MINIMAP_STYLE} /> : <MiniMap ariaLabel="Minimap" pannable style={MINIMAP_STYLE} zoomable />}
      <Controls aria-label="Zoom controls" fitViewOptions={FIT_WHOLE_DIAGRAM} showInteractive={false} />
    </ReactFlow>
  );
}
