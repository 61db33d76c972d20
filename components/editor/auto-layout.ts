import type { ElkExtendedEdge, ElkNode, ElkPort } from "elkjs/lib/elk-api";
import { DEFAULT_CASE, LAYOUT_DEFAULTS, NODE_TYPES } from "@/engine";
import type { Position, WorkflowDefinition, WorkflowNode } from "@/engine";

/**
 * Auto-layout with elkjs: layered, top to bottom, loops laid out with their
 * bodies inside them (`hierarchyHandling: INCLUDE_CHILDREN`). ELK returns child
 * coordinates relative to their parent, which is exactly how positions are
 * stored. SWITCH case handles become ordered ports on the node's south side,
 * so each branch is placed under its own handle instead of crossing over.
 */

type Size = { width: number; height: number };

const pad = LAYOUT_DEFAULTS.containerPadding;

/** The ELK graph for a definition; exported for the unit test. */
export function toElkGraph(definition: WorkflowDefinition, sizeOf: (node: WorkflowNode) => Size): ElkNode {
  const known = new Set(definition.nodes.map((n) => n.ref));
  const elkNodes = new Map<string, ElkNode>();
  const root: ElkNode = {
    id: "__root__",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.layered.spacing.nodeNodeBetweenLayers": String(LAYOUT_DEFAULTS.rankGap),
      "elk.spacing.nodeNode": String(LAYOUT_DEFAULTS.laneGap),
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      "elk.edgeRouting": "ORTHOGONAL",
    },
    children: [],
    edges: [],
  };
  for (const node of definition.nodes) {
    const isLoop = NODE_TYPES[node.type].isContainer;
    const elk: ElkNode = { id: node.ref, children: [], edges: [] };
    if (isLoop) {
      elk.layoutOptions = { "elk.padding": `[top=${pad.top},left=${pad.left},bottom=${pad.bottom},right=${pad.right}]` };
    } else {
      Object.assign(elk, sizeOf(node));
    }
    if (node.type === "SWITCH") {
      const ports: ElkPort[] = [...node.cases, DEFAULT_CASE].map((c, i) => ({
        id: portId(node.ref, c),
        layoutOptions: { "elk.port.side": "SOUTH", "elk.port.index": String(i) },
        width: 1,
        height: 1,
      }));
      elk.ports = ports;
      elk.layoutOptions = { "elk.portConstraints": "FIXED_ORDER" };
    }
    elkNodes.set(node.ref, elk);
  }
  for (const node of definition.nodes) {
    const parent = node.parent !== undefined && known.has(node.parent) ? elkNodes.get(node.parent)! : root;
    parent.children!.push(elkNodes.get(node.ref)!);
  }
  const byRef = new Map(definition.nodes.map((n) => [n.ref, n]));
  definition.edges.forEach((e, i) => {
    const source = byRef.get(e.source);
    const target = byRef.get(e.target);
    if (!source || !target || source.parent !== target.parent) return;
    const container = source.parent !== undefined && known.has(source.parent) ? elkNodes.get(source.parent)! : root;
    const edge: ElkExtendedEdge = {
      id: `e${i}`,
      sources: [source.type === "SWITCH" && e.case !== undefined ? portId(e.source, e.case) : e.source],
      targets: [e.target],
    };
    container.edges!.push(edge);
  });
  // A loop with no body still needs a size.
  for (const node of definition.nodes) {
    const elk = elkNodes.get(node.ref)!;
    if (NODE_TYPES[node.type].isContainer && elk.children!.length === 0) Object.assign(elk, { width: 360, height: 200 });
  }
  return root;
}

function portId(ref: string, caseLabel: string): string {
  return `${ref}::${caseLabel}`;
}

/** Reads the positions ELK chose, keyed by ref (relative to each node's container). */
export function positionsFromElk(root: ElkNode): Map<string, Position> {
  const out = new Map<string, Position>();
  const stack = [...(root.children ?? [])];
  while (stack.length > 0) {
    const node = stack.pop()!;
    out.set(node.id, { x: Math.round(node.x ?? 0), y: Math.round(node.y ?? 0) });
    stack.push(...(node.children ?? []));
  }
  return out;
}

/** Lays the definition out; loads ELK on first use (it is large, and most sessions never press the button). */
export async function autoLayout(definition: WorkflowDefinition, sizeOf: (node: WorkflowNode) => Size): Promise<Map<string, Position>> {
  const { default: ELK } = await import("elkjs/lib/elk.bundled.js");
  const elk = new ELK();
  const laidOut = await elk.layout(toElkGraph(definition, sizeOf));
  return positionsFromElk(laidOut);
}
