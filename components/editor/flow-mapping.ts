import type { Edge, Node } from "@xyflow/react";
import { LAYOUT_DEFAULTS, NODE_TYPES } from "@/engine";
import { NOTE_SIZE_LIMITS } from "@/engine";
import type { WorkflowDefinition, WorkflowNode, WorkflowNote } from "@/engine";
import type { DiffKind } from "./editor-store";
import { edgeKey } from "./graph-edits";
import { noteFlowId } from "./note-edits";

/**
 * The definition as React Flow nodes and edges: one RF node per workflow node
 * (`ref` ↔ `id`, `parent` ↔ `parentId`), one RF edge per workflow edge (`case`
 * ↔ `sourceHandle`). A projection, never stored.
 *
 * React Flow skips a node whose object is identical to last render's, so the
 * mapper keeps each RF node object as long as everything it is built from is
 * unchanged: dragging one node of a thousand rebuilds one object. That is what
 * keeps big workflows responsive (n8n re-renders the whole canvas).
 */

/** What every custom node receives. */
export interface WorkflowNodeData extends Record<string, unknown> {
  node: WorkflowNode;
  /** Errors and warnings on the node; the first (an error when there is one) is `firstProblem`. */
  problemCount: number;
  firstProblem: string | null;
  /** Every problem on the node is a warning: it is marked in the warning colour, not as an error. */
  warningOnly: boolean;
  diff: DiffKind | null;
}

export type TaskFlowNode = Node<WorkflowNodeData, "task">;
export type SwitchFlowNode = Node<WorkflowNodeData, "switch">;
export type LoopFlowNode = Node<WorkflowNodeData, "loop">;
/** A sticky note: drawn behind the diagram, never connected. */
export interface NoteFlowData extends Record<string, unknown> {
  note: WorkflowNote;
  readOnly: boolean;
}
export type NoteFlowNode = Node<NoteFlowData, "note">;
export type WorkflowFlowNode = TaskFlowNode | SwitchFlowNode | LoopFlowNode;
/** Everything the canvas draws as a React Flow node. */
export type CanvasFlowNode = WorkflowFlowNode | NoteFlowNode;

export interface WorkflowEdgeData extends Record<string, unknown> {
  caseLabel: string | null;
  diff: DiffKind | null;
}
export type WorkflowFlowEdge = Edge<WorkflowEdgeData, "workflow">;

/** The canvas type a workflow node is drawn as. */
export function flowNodeType(node: WorkflowNode): WorkflowFlowNode["type"] {
  if (NODE_TYPES[node.type].isContainer) return "loop";
  if (node.type === "SWITCH") return "switch";
  return "task";
}

/** A loop is drawn around its body; the smallest an empty one gets. */
export const LOOP_MIN_SIZE = Object.freeze({ width: 360, height: 200 });

/**
 * A loop's size: its body's extent plus the container padding. Sizes are not
 * stored in the definition — they follow from where the children are.
 */
export function loopSize(
  children: readonly WorkflowNode[],
  measured: ReadonlyMap<string, { width: number; height: number }>,
): { width: number; height: number } {
  const pad = LAYOUT_DEFAULTS.containerPadding;
  let width: number = LOOP_MIN_SIZE.width;
  let height: number = LOOP_MIN_SIZE.height;
  for (const child of children) {
    const size = measured.get(child.ref) ?? { width: LAYOUT_DEFAULTS.nodeWidth, height: LAYOUT_DEFAULTS.nodeHeight };
    width = Math.max(width, child.position.x + size.width + pad.right);
    height = Math.max(height, child.position.y + size.height + pad.bottom);
  }
  return { width: Math.ceil(width), height: Math.ceil(height) };
}

export interface FlowInputs {
  definition: WorkflowDefinition;
  selectedNodes: ReadonlySet<string>;
  selectedEdges: ReadonlySet<string>;
  problemsByRef: ReadonlyMap<string, readonly { message: string; severity?: "warning" }[]>;
  measured: ReadonlyMap<string, { width: number; height: number }>;
  diff: ReadonlyMap<string, DiffKind> | null;
  readOnly: boolean;
  /**
   * Far zoom: the overview canvas draws the diagram, so React Flow keeps every
   * node (fit view, the problem jump and selection read them) but mounts none.
   */
  hidden: boolean;
}

interface CachedNode {
  node: WorkflowNode;
  selected: boolean;
  problemKey: string;
  width: number | undefined;
  height: number | undefined;
  diff: DiffKind | null;
  readOnly: boolean;
  hidden: boolean;
  pinned: boolean;
  flow: WorkflowFlowNode;
}

interface CachedEdge {
  edge: WorkflowDefinition["edges"][number];
  selected: boolean;
  diff: DiffKind | null;
  flow: WorkflowFlowEdge;
}

/**
 * A node with a pinned output (test data) is outlined and labelled "pinned" on
 * React Flow's wrapper, so every node type shows it without knowing of pins.
 */
export const PINNED_CLASS =
  "node-pinned rounded-xl outline-2 outline-dashed outline-offset-4 outline-violet-500 after:pointer-events-none after:absolute after:-top-5 after:left-1 after:text-[10px] after:font-semibold after:text-violet-600 after:content-['pinned']";

/** A mapper with memory: call it with each new state; unchanged nodes come back as the same objects. */
export function createFlowMapper() {
  let nodeCache = new Map<string, CachedNode>();
  let edgeCache = new Map<string, CachedEdge>();
  let noteCache = new Map<string, { note: WorkflowNote; selected: boolean; readOnly: boolean; hidden: boolean; flow: NoteFlowNode }>();

  /** Notes first, so React Flow paints them under the nodes. */
  function notes(inputs: FlowInputs): NoteFlowNode[] {
    const { definition, selectedNodes, readOnly, hidden } = inputs;
    const next: typeof noteCache = new Map();
    const out: NoteFlowNode[] = [];
    for (const note of definition.notes ?? []) {
      const id = noteFlowId(note.id);
      const selected = selectedNodes.has(id);
      const prev = noteCache.get(id);
      if (prev && prev.note === note && prev.selected === selected && prev.readOnly === readOnly && prev.hidden === hidden) {
        next.set(id, prev);
        out.push(prev.flow);
        continue;
      }
      const width = note.width ?? NOTE_SIZE_LIMITS.defaultWidth;
      const height = note.height ?? NOTE_SIZE_LIMITS.defaultHeight;
      const flow: NoteFlowNode = {
        id,
        type: "note",
        position: note.position,
        data: { note, readOnly },
        selected,
        draggable: !readOnly,
        connectable: false,
        deletable: !readOnly,
        hidden,
        width,
        height,
        style: { width, height },
        zIndex: -1,
      };
      next.set(id, { note, selected, readOnly, hidden, flow });
      out.push(flow);
    }
    noteCache = next;
    return out;
  }

  function nodes(inputs: FlowInputs): WorkflowFlowNode[] {
    const { definition, selectedNodes, problemsByRef, measured, diff, readOnly, hidden } = inputs;
    const childrenOf = new Map<string, WorkflowNode[]>();
    for (const n of definition.nodes) {
      if (n.parent === undefined) continue;
      const list = childrenOf.get(n.parent);
      if (list) list.push(n);
      else childrenOf.set(n.parent, [n]);
    }
    const next = new Map<string, CachedNode>();
    const out: WorkflowFlowNode[] = [];
    const push = (n: WorkflowNode) => {
      const selected = selectedNodes.has(n.ref);
      const problems = problemsByRef.get(n.ref);
      // Validation rebuilds the lists on every edit; compare what the node shows, not the list's identity.
      const warningOnly = problems !== undefined && problems.length > 0 && problems.every((p) => p.severity === "warning");
      const problemKey = problems ? `${problems.length}|${warningOnly ? "w" : "e"}|${problems[0]?.message ?? ""}` : "";
      const isLoop = NODE_TYPES[n.type].isContainer;
      const size = isLoop ? loopSize(childrenOf.get(n.ref) ?? [], measured) : undefined;
      const nodeDiff = diff?.get(n.ref) ?? null;
      const pinned = definition.pins !== undefined && Object.hasOwn(definition.pins, n.ref);
      const prev = nodeCache.get(n.ref);
      if (
        prev &&
        prev.node === n &&
        prev.selected === selected &&
        prev.problemKey === problemKey &&
        prev.width === size?.width &&
        prev.height === size?.height &&
        prev.diff === nodeDiff &&
        prev.readOnly === readOnly &&
        prev.hidden === hidden &&
        prev.pinned === pinned
      ) {
        next.set(n.ref, prev);
        out.push(prev.flow);
        return;
      }
      const flow = {
        id: n.ref,
        type: flowNodeType(n),
        position: n.position,
        data: { node: n, problemCount: problems?.length ?? 0, firstProblem: problems?.[0]?.message ?? null, warningOnly, diff: nodeDiff },
        selected,
        draggable: !readOnly,
        connectable: !readOnly,
        deletable: !readOnly,
        hidden,
        ...(pinned ? { className: PINNED_CLASS } : {}),
        ...(n.parent !== undefined ? { parentId: n.parent } : {}),
        ...(size ? { width: size.width, height: size.height, style: { width: size.width, height: size.height } } : {}),
        ...(measured.get(n.ref) && !size ? { measured: measured.get(n.ref) } : {}),
      } as WorkflowFlowNode;
      next.set(n.ref, { node: n, selected, problemKey, width: size?.width, height: size?.height, diff: nodeDiff, readOnly, hidden, pinned, flow });
      out.push(flow);
    };
    // React Flow needs a parent before its children.
    const known = new Set(definition.nodes.map((n) => n.ref));
    for (const n of definition.nodes) if (n.parent === undefined || !known.has(n.parent)) push(n);
    for (const n of definition.nodes) if (n.parent !== undefined && known.has(n.parent)) push(n);
    nodeCache = next;
    return out;
  }

  function edges(inputs: FlowInputs): WorkflowFlowEdge[] {
    const { definition, selectedEdges, diff } = inputs;
    const next = new Map<string, CachedEdge>();
    const out: WorkflowFlowEdge[] = [];
    const seen = new Set<string>();
    for (const e of definition.edges) {
      let id = edgeKey(e);
      // A hand-written definition may repeat an edge; the validator reports it, the canvas still needs unique ids.
      for (let i = 2; seen.has(id); i++) id = `${edgeKey(e)}#${i}`;
      seen.add(id);
      const selected = selectedEdges.has(id);
      const edgeDiff = diff?.get(`edge:${id}`) ?? null;
      const prev = edgeCache.get(id);
      if (prev && prev.edge === e && prev.selected === selected && prev.diff === edgeDiff) {
        next.set(id, prev);
        out.push(prev.flow);
        continue;
      }
      const flow: WorkflowFlowEdge = {
        id,
        source: e.source,
        target: e.target,
        sourceHandle: e.case ?? null,
        type: "workflow",
        selected,
        data: { caseLabel: e.case ?? null, diff: edgeDiff },
      };
      next.set(id, { edge: e, selected, diff: edgeDiff, flow });
      out.push(flow);
    }
    edgeCache = next;
    return out;
  }

  return { nodes, notes, edges };
}
