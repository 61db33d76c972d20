import { DEFAULT_CASE, NODE_TYPES, REF_PATTERN, RESERVED_REFS, createNode } from "@/engine";
import type { NodeType, Position, WorkflowDefinition, WorkflowEdge, WorkflowNode } from "@/engine";

/**
 * The editor's edits, as pure functions from one definition to the next. The
 * store calls them and records the result as one undo step; nothing here
 * touches React or the store, so every rule the canvas enforces (what may
 * connect to what, how a paste renames refs) is unit-tested on plain data.
 *
 * Every function returns a new definition and shares every node and edge it
 * did not change, so the canvas re-renders only what changed.
 */

/** The id the canvas knows an edge by: its own `id`, or one derived from its ends and case. */
export function edgeKey(edge: WorkflowEdge): string {
  return edge.id ?? derivedEdgeId(edge.source, edge.target, edge.case);
}

function derivedEdgeId(source: string, target: string, caseLabel: string | undefined): string {
  return caseLabel === undefined ? `${source}->${target}` : `${source}->${target}:${caseLabel}`;
}

/** A fresh edge with the editor's id. */
export function makeEdge(source: string, target: string, caseLabel?: string): WorkflowEdge {
  const edge: WorkflowEdge = { id: derivedEdgeId(source, target, caseLabel), source, target };
  if (caseLabel !== undefined) edge.case = caseLabel;
  return edge;
}

/** The refs in use, for picking new ones. */
export function takenRefs(definition: WorkflowDefinition): Set<string> {
  return new Set(definition.nodes.map((n) => n.ref));
}

/**
 * `base` if free, else `base_2`, `base_3`, … The base is cleaned into a valid
 * ref first (a palette type like JSON_JQ_TRANSFORM becomes `json_jq_transform`).
 */
export function uniqueRef(base: string, taken: ReadonlySet<string>): string {
  let clean = base.replace(/[^A-Za-z0-9_-]/g, "_").replace(/^[^A-Za-z_]+/, "");
  if (clean === "" || RESERVED_REFS.has(clean)) clean = `node_${clean}`;
  clean = clean.slice(0, 60);
  if (!taken.has(clean)) return clean;
  const stem = clean.replace(/_\d+$/, "");
  for (let i = 2; ; i++) {
    const candidate = `${stem}_${i}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** A node dropped from the palette: its default configuration, a fresh ref named after its type. */
export function addNode(
  definition: WorkflowDefinition,
  type: NodeType,
  position: Position,
  parent?: string,
): { definition: WorkflowDefinition; ref: string } {
  const ref = uniqueRef(type.toLowerCase(), takenRefs(definition));
  const node = createNode(type, ref, roundPosition(position), parent);
  return { definition: { ...definition, nodes: [...definition.nodes, node] }, ref };
}

function roundPosition(p: Position): Position {
  return { x: Math.round(p.x), y: Math.round(p.y) };
}

/** What the user asked to connect: React Flow's Connection, with the SWITCH case as the source handle. */
export interface ConnectionRequest {
  source: string;
  target: string;
  /** The source handle: a SWITCH case (or `default`); null/undefined for every other node type. */
  sourceHandle?: string | null;
}

/** The verdict on a connection: the edge to add, or why not, in words for the user. */
export type ConnectionCheck = { ok: true; edge: WorkflowEdge } | { ok: false; reason: string };

/**
 * Whether an edge from `source` to `target` may be drawn, by the same rules
 * the validator applies to a saved definition: no self-loops, no duplicates,
 * no edges across a loop boundary, no cycles, and a case on exactly the edges
 * that leave a SWITCH. Refusing here, with a reason, beats letting the user
 * draw something the validator rejects at save.
 */
export function checkConnection(definition: WorkflowDefinition, request: ConnectionRequest): ConnectionCheck {
  const byRef = new Map(definition.nodes.map((n) => [n.ref, n]));
  const source = byRef.get(request.source);
  const target = byRef.get(request.target);
  if (!source || !target) return { ok: false, reason: "Both ends must be nodes of this workflow." };
  if (source.ref === target.ref) return { ok: false, reason: "A node cannot connect to itself. To repeat work, put it inside a Loop." };
  if ((source.parent ?? null) !== (target.parent ?? null)) {
    return {
      ok: false,
      reason: "Edges cannot cross a loop's border: connect nodes inside the same loop body, or connect the loop itself.",
    };
  }
  let caseLabel: string | undefined;
  if (source.type === "SWITCH") {
    const handle = request.sourceHandle ?? undefined;
    if (handle === undefined) return { ok: false, reason: "Drag from one of the Switch's case handles." };
    if (handle !== DEFAULT_CASE && !source.cases.includes(handle)) return { ok: false, reason: `The Switch has no case “${handle}”.` };
    caseLabel = handle;
  }
  const edge = makeEdge(source.ref, target.ref, caseLabel);
  if (definition.edges.some((e) => e.source === edge.source && e.target === edge.target && e.case === edge.case)) {
    return { ok: false, reason: "These nodes are already connected." };
  }
  if (reaches(definition.edges, target.ref, source.ref)) {
    return { ok: false, reason: `That would make a cycle: ${target.ref} already leads to ${source.ref}. To repeat work, use a Loop.` };
  }
  return { ok: true, edge };
}

/** Whether following edges from `from` arrives at `to`. Iterative: a 30,000-node chain must not overflow the stack. */
function reaches(edges: readonly WorkflowEdge[], from: string, to: string): boolean {
  const out = new Map<string, string[]>();
  for (const e of edges) {
    const list = out.get(e.source);
    if (list) list.push(e.target);
    else out.set(e.source, [e.target]);
  }
  const seen = new Set<string>([from]);
  const stack = [from];
  while (stack.length > 0) {
    const ref = stack.pop()!;
    if (ref === to) return true;
    for (const next of out.get(ref) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return false;
}

/** Adds the edge `checkConnection` approved. */
export function connect(definition: WorkflowDefinition, request: ConnectionRequest): { definition: WorkflowDefinition } | { reason: string } {
  const check = checkConnection(definition, request);
  if (!check.ok) return { reason: check.reason };
  return { definition: { ...definition, edges: [...definition.edges, check.edge] } };
}

/**
 * A node dropped onto an edge: `s → t` becomes `s → new → t`. The case of a
 * SWITCH edge stays on the first half, where it belongs. The new node joins
 * the edge's container level.
 */
export function insertOnEdge(
  definition: WorkflowDefinition,
  edgeId: string,
  type: NodeType,
  position: Position,
): { definition: WorkflowDefinition; ref: string } | { reason: string } {
  const index = definition.edges.findIndex((e) => edgeKey(e) === edgeId);
  const edge = definition.edges[index];
  if (!edge) return { reason: "That edge no longer exists." };
  if (NODE_TYPES[type].isContainer) return { reason: "A Loop cannot be dropped onto an edge; drop it on the canvas and connect it." };
  if (type === "SWITCH") return { reason: "Drop a Switch on the canvas and connect its cases: which case would the edge below it take?" };
  const parent = definition.nodes.find((n) => n.ref === edge.source)?.parent;
  const added = addNode(definition, type, position, parent);
  const edges = definition.edges.slice();
  edges.splice(index, 1, makeEdge(edge.source, added.ref, edge.case), makeEdge(added.ref, edge.target));
  return { definition: { ...added.definition, edges }, ref: added.ref };
}

/** Every ref in `refs` plus, for loops, their whole bodies. */
function withDescendants(definition: WorkflowDefinition, refs: Iterable<string>): Set<string> {
  const out = new Set(refs);
  let grew = true;
  while (grew) {
    grew = false;
    for (const n of definition.nodes) {
      if (n.parent !== undefined && out.has(n.parent) && !out.has(n.ref)) {
        out.add(n.ref);
        grew = true;
      }
    }
  }
  return out;
}

/** Deletes nodes (a loop with its body), every edge touching them, and the edges named. */
export function removeElements(definition: WorkflowDefinition, refs: Iterable<string>, edgeIds: Iterable<string> = []): WorkflowDefinition {
  const gone = withDescendants(definition, refs);
  const goneEdges = new Set(edgeIds);
  if (gone.size === 0 && goneEdges.size === 0) return definition;
  return {
    ...definition,
    nodes: definition.nodes.filter((n) => !gone.has(n.ref)),
    edges: definition.edges.filter((e) => !gone.has(e.source) && !gone.has(e.target) && !goneEdges.has(edgeKey(e))),
  };
}

/** What copy puts on the clipboard: nodes and the edges between them. */
export interface GraphFragment {
  kind: "node-flow/fragment";
  version: 1;
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}

/** The selection as a fragment: loops bring their bodies, and only edges inside the selection come along. */
export function copyFragment(definition: WorkflowDefinition, refs: Iterable<string>): GraphFragment | null {
  const picked = withDescendants(definition, refs);
  if (picked.size === 0) return null;
  const nodes = definition.nodes
    .filter((n) => picked.has(n.ref))
    // A child whose loop was not copied lands at the top level of the paste.
    .map((n) => (n.parent !== undefined && !picked.has(n.parent) ? withoutParent(n, definition) : n));
  const edges = definition.edges.filter((e) => picked.has(e.source) && picked.has(e.target));
  return { kind: "node-flow/fragment", version: 1, nodes, edges };
}

function withoutParent(node: WorkflowNode, definition: WorkflowDefinition): WorkflowNode {
  const copy = { ...node };
  const parent = definition.nodes.find((n) => n.ref === node.parent);
  delete copy.parent;
  // Child positions are relative to their loop; make it absolute.
  if (parent) copy.position = { x: node.position.x + parent.position.x, y: node.position.y + parent.position.y };
  return copy;
}

/** Reads a fragment from clipboard text, or null when it is something else. */
export function parseFragment(text: string): GraphFragment | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const f = value as Partial<GraphFragment>;
  if (f.kind !== "node-flow/fragment" || !Array.isArray(f.nodes) || !Array.isArray(f.edges)) return null;
  const nodesOk = f.nodes.every(
    (n: unknown) =>
      typeof n === "object" &&
      n !== null &&
      typeof (n as WorkflowNode).ref === "string" &&
      typeof (n as WorkflowNode).type === "string" &&
      (n as WorkflowNode).type in NODE_TYPES &&
      typeof (n as WorkflowNode).position?.x === "number" &&
      typeof (n as WorkflowNode).position?.y === "number",
  );
  const edgesOk = f.edges.every((e: unknown) => typeof e === "object" && e !== null && typeof (e as WorkflowEdge).source === "string" && typeof (e as WorkflowEdge).target === "string");
  return nodesOk && edgesOk ? (f as GraphFragment) : null;
}

/**
 * Pastes a fragment, shifted by `offset`: every ref that is taken gets a new
 * one, and the fragment's edges, parents and expressions follow the rename, so
 * a pasted `b` that read `${a.output}` reads the pasted `a`, not the original.
 */
export function pasteFragment(
  definition: WorkflowDefinition,
  fragment: GraphFragment,
  offset: Position,
): { definition: WorkflowDefinition; refs: string[] } {
  const taken = takenRefs(definition);
  const renames = new Map<string, string>();
  for (const n of fragment.nodes) {
    const ref = uniqueRef(n.ref, taken);
    taken.add(ref);
    renames.set(n.ref, ref);
  }
  const inFragment = new Set(fragment.nodes.map((n) => n.ref));
  const nodes = fragment.nodes.map((n) => {
    let copy = renameInValue(n, renames) as WorkflowNode;
    copy = { ...copy, ref: renames.get(n.ref)! };
    if (n.parent !== undefined && inFragment.has(n.parent)) copy.parent = renames.get(n.parent)!;
    else {
      delete copy.parent;
      copy.position = { x: n.position.x + offset.x, y: n.position.y + offset.y };
    }
    return copy;
  });
  const edges = fragment.edges
    .filter((e) => inFragment.has(e.source) && inFragment.has(e.target))
    .map((e) => makeEdge(renames.get(e.source)!, renames.get(e.target)!, e.case));
  return { definition: { ...definition, nodes: [...definition.nodes, ...nodes], edges: [...definition.edges, ...edges] }, refs: nodes.map((n) => n.ref) };
}

/** Node fields that list refs by name rather than through expressions. */
const REF_LIST_FIELDS: ReadonlySet<string> = new Set(["joinOn", "defaultExclusiveJoinTask"]);

const EXPRESSION = /\$\{([A-Za-z_][A-Za-z0-9_-]*)(?=[.}[])/g;

/** Rewrites `${old…}` roots in every string of `value`, and ref lists (joinOn), following `renames`. */
function renameInValue(value: unknown, renames: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") {
    return value.replace(EXPRESSION, (whole, root: string) => {
      const next = renames.get(root);
      return next === undefined ? whole : `\${${next}`;
    });
  }
  if (Array.isArray(value)) return value.map((v) => renameInValue(v, renames));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === "position") out[k] = v;
      else if (REF_LIST_FIELDS.has(k) && Array.isArray(v)) out[k] = (v as unknown[]).map((r): unknown => (typeof r === "string" ? (renames.get(r) ?? r) : r));
      else out[k] = renameInValue(v, renames);
    }
    return out;
  }
  return value;
}

/** Why a ref cannot be used, or null when it can. */
export function refProblem(definition: WorkflowDefinition, ref: string, current?: string): string | null {
  if (ref === current) return null;
  if (!REF_PATTERN.test(ref)) return "A ref starts with a letter or _ and continues with letters, digits, _ or -.";
  if (RESERVED_REFS.has(ref)) return `“${ref}” is reserved: expressions read the workflow as \${${ref}…}.`;
  if (definition.nodes.some((n) => n.ref === ref)) return `Another node is already called “${ref}”.`;
  return null;
}

/**
 * Renames a node: its edges, its loop's children and every expression in the
 * definition that reads it follow, so a rename never breaks a reference.
 */
export function renameRef(definition: WorkflowDefinition, from: string, to: string): { definition: WorkflowDefinition } | { reason: string } {
  if (!definition.nodes.some((n) => n.ref === from)) return { reason: `No node is called “${from}”.` };
  const problem = refProblem(definition, to, from);
  if (problem) return { reason: problem };
  if (from === to) return { definition };
  const renames = new Map([[from, to]]);
  const nodes = definition.nodes.map((n) => {
    const renamed = renameInValue(n, renames) as WorkflowNode;
    if (n.ref === from) renamed.ref = to;
    if (n.parent === from) renamed.parent = to;
    // Keep untouched nodes identical, so the canvas does not redraw them.
    return JSON.stringify(renamed) === JSON.stringify(n) ? n : renamed;
  });
  const edges = definition.edges.map((e) =>
    e.source === from || e.target === from ? makeEdge(e.source === from ? to : e.source, e.target === from ? to : e.target, e.case) : e,
  );
  const next: WorkflowDefinition = { ...definition, nodes, edges };
  if (definition.outputParameters) next.outputParameters = renameInValue(definition.outputParameters, renames) as Record<string, unknown>;
  return { definition: next };
}

/** Moves nodes to new positions (relative to their container, as stored). */
export function setPositions(definition: WorkflowDefinition, positions: ReadonlyMap<string, Position>): WorkflowDefinition {
  if (positions.size === 0) return definition;
  let changed = false;
  const nodes = definition.nodes.map((n) => {
    const p = positions.get(n.ref);
    if (!p) return n;
    const rounded = roundPosition(p);
    if (rounded.x === n.position.x && rounded.y === n.position.y) return n;
    changed = true;
    return { ...n, position: rounded };
  });
  return changed ? { ...definition, nodes } : definition;
}

/** Replaces one node (the inspector's edit), keeping the others identical. */
export function replaceNode(definition: WorkflowDefinition, next: WorkflowNode): WorkflowDefinition {
  const index = definition.nodes.findIndex((n) => n.ref === next.ref);
  if (index < 0) return definition;
  const nodes = definition.nodes.slice();
  const previous = nodes[index]!;
  nodes[index] = next;
  return { ...definition, nodes, edges: pruneCaseEdges(followCaseRename(definition.edges, previous, next), next) };
}

/**
 * A case edited in place (the inspector's list: same length, one label
 * changed) is a rename: its edges follow the new label instead of being
 * dropped with the old one.
 */
function followCaseRename(edges: WorkflowEdge[], previous: WorkflowNode, next: WorkflowNode): WorkflowEdge[] {
  if (previous.type !== "SWITCH" || next.type !== "SWITCH" || previous.cases.length !== next.cases.length) return edges;
  const changed = previous.cases.flatMap((c, i) => (c === next.cases[i] ? [] : [i]));
  if (changed.length !== 1) return edges;
  const from = previous.cases[changed[0]!]!;
  const to = next.cases[changed[0]!]!;
  if (previous.cases.includes(to)) return edges;
  return edges.map((e) => (e.source === next.ref && e.case === from ? makeEdge(e.source, e.target, to) : e));
}

/** Edges of cases a SWITCH no longer has go with the case. */
function pruneCaseEdges(edges: WorkflowEdge[], node: WorkflowNode): WorkflowEdge[] {
  if (node.type !== "SWITCH") return edges;
  const cases = new Set([...node.cases, DEFAULT_CASE]);
  const kept = edges.filter((e) => e.source !== node.ref || e.case === undefined || cases.has(e.case));
  return kept.length === edges.length ? edges : kept;
}

/**
 * Renames a SWITCH case (edited on the node itself): its edges keep their
 * targets and take the new label.
 */
export function renameCase(definition: WorkflowDefinition, ref: string, from: string, to: string): { definition: WorkflowDefinition } | { reason: string } {
  const node = definition.nodes.find((n) => n.ref === ref);
  if (!node || node.type !== "SWITCH") return { reason: "Only a Switch has cases." };
  const label = to.trim();
  if (label === from) return { definition };
  if (label === "") return { reason: "A case needs a value." };
  if (label === DEFAULT_CASE) return { reason: "Every Switch already has a default handle." };
  if (node.cases.includes(label)) return { reason: `The Switch already has a case “${label}”.` };
  const next = { ...node, cases: node.cases.map((c) => (c === from ? label : c)) };
  const nodes = definition.nodes.map((n) => (n.ref === ref ? next : n));
  const edges = definition.edges.map((e) => (e.source === ref && e.case === from ? makeEdge(e.source, e.target, label) : e));
  return { definition: { ...definition, nodes, edges } };
}

/** Adds a case to a SWITCH, named `case_N`. */
export function addCase(definition: WorkflowDefinition, ref: string): WorkflowDefinition {
  const node = definition.nodes.find((n) => n.ref === ref);
  if (!node || node.type !== "SWITCH") return definition;
  let i = node.cases.length + 1;
  while (node.cases.includes(`case_${i}`)) i++;
  return replaceNode(definition, { ...node, cases: [...node.cases, `case_${i}`] });
}

/** Removes a SWITCH case and the edges leaving its handle. */
export function removeCase(definition: WorkflowDefinition, ref: string, label: string): WorkflowDefinition {
  const node = definition.nodes.find((n) => n.ref === ref);
  if (!node || node.type !== "SWITCH") return definition;
  return replaceNode(definition, { ...node, cases: node.cases.filter((c) => c !== label) });
}

/**
 * Moves a node into a loop body (or out to the top level with `parent`
 * undefined) at `position` (relative to the new container). Refused while the
 * node has edges: they would cross the loop's border.
 */
export function reparent(
  definition: WorkflowDefinition,
  ref: string,
  parent: string | undefined,
  position: Position,
): { definition: WorkflowDefinition } | { reason: string } {
  const node = definition.nodes.find((n) => n.ref === ref);
  if (!node) return { reason: `No node is called “${ref}”.` };
  if (node.parent === parent) return { definition };
  if (parent !== undefined && NODE_TYPES[node.type].isContainer) return { reason: "Loops do not nest: a task's identity carries one iteration number." };
  if (definition.edges.some((e) => e.source === ref || e.target === ref)) {
    return { reason: "Disconnect the node first: its edges would cross the loop's border." };
  }
  const moved: WorkflowNode = { ...node, position: roundPosition(position) };
  if (parent === undefined) delete moved.parent;
  else moved.parent = parent;
  return { definition: { ...definition, nodes: definition.nodes.map((n) => (n.ref === ref ? moved : n)) } };
}
