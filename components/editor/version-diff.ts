import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from "@/engine";
import type { DiffKind } from "./editor-store";
import { edgeKey } from "./graph-edits";

/**
 * What changed between two versions of a workflow: nodes added, removed and
 * changed (with the fields that changed), edges added and removed, and the
 * workflow's own settings. A move alone is not a change — it does not alter
 * what a run does — but it is counted, so "nothing changed" is never a lie.
 */

export interface NodeDifference {
  ref: string;
  kind: DiffKind;
  /** Dotted paths of the fields that differ, e.g. `input.url`, `policy.retryCount`; empty unless changed. */
  fields: string[];
}

export interface VersionDiff {
  nodes: NodeDifference[];
  edgesAdded: WorkflowEdge[];
  edgesRemoved: WorkflowEdge[];
  /** Workflow-level settings that differ (name, inputSchema, outputParameters, …). */
  workflowFields: string[];
  /** Refs whose only difference is their position. */
  moved: string[];
  /** `to` plus what `from` had and `to` lost, for drawing both on one canvas. */
  merged: WorkflowDefinition;
  /** Diff kind by ref, and by `edge:<id>` for edges, as the canvas reads it. */
  marks: Map<string, DiffKind>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Paths at which two JSON values differ, descending into objects (arrays compare whole). */
export function changedPaths(a: unknown, b: unknown, prefix = "", ignore: ReadonlySet<string> = new Set()): string[] {
  if (isObject(a) && isObject(b)) {
    const out: string[] = [];
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (prefix === "" && ignore.has(key)) continue;
      out.push(...changedPaths(a[key], b[key], prefix ? `${prefix}.${key}` : key));
    }
    return out;
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [prefix || "(value)"];
}

const NODE_IGNORED = new Set(["position"]);
const WORKFLOW_IGNORED = new Set(["nodes", "edges", "version"]);

export function diffDefinitions(from: WorkflowDefinition, to: WorkflowDefinition): VersionDiff {
  const before = new Map(from.nodes.map((n) => [n.ref, n]));
  const after = new Map(to.nodes.map((n) => [n.ref, n]));
  const nodes: NodeDifference[] = [];
  const moved: string[] = [];
  const marks = new Map<string, DiffKind>();
  for (const n of to.nodes) {
    const old = before.get(n.ref);
    if (!old) {
      nodes.push({ ref: n.ref, kind: "added", fields: [] });
      marks.set(n.ref, "added");
      continue;
    }
    const fields = changedPaths(old, n, "", NODE_IGNORED);
    if (fields.length > 0) {
      nodes.push({ ref: n.ref, kind: "changed", fields });
      marks.set(n.ref, "changed");
    } else if (old.position.x !== n.position.x || old.position.y !== n.position.y) {
      moved.push(n.ref);
    }
  }
  const removedNodes: WorkflowNode[] = [];
  for (const n of from.nodes) {
    if (after.has(n.ref)) continue;
    nodes.push({ ref: n.ref, kind: "removed", fields: [] });
    marks.set(n.ref, "removed");
    removedNodes.push(n);
  }

  const key = (e: WorkflowEdge) => `${e.source}\u0000${e.target}\u0000${e.case ?? ""}`;
  const beforeEdges = new Set(from.edges.map(key));
  const afterEdges = new Set(to.edges.map(key));
  const edgesAdded = to.edges.filter((e) => !beforeEdges.has(key(e)));
  const edgesRemoved = from.edges.filter((e) => !afterEdges.has(key(e)));
  for (const e of edgesAdded) marks.set(`edge:${edgeKey(e)}`, "added");

  const mergedRefs = new Set([...after.keys(), ...removedNodes.map((n) => n.ref)]);
  const merged: WorkflowDefinition = {
    ...to,
    // A removed child whose loop is gone too stays inside it; one whose loop survived sits in that loop.
    nodes: [...to.nodes, ...removedNodes.map((n) => (n.parent !== undefined && !mergedRefs.has(n.parent) ? { ...n, parent: undefined } : n))],
    edges: [...to.edges, ...edgesRemoved.filter((e) => mergedRefs.has(e.source) && mergedRefs.has(e.target))],
  };
  for (const e of edgesRemoved) marks.set(`edge:${edgeKey(e)}`, "removed");

  return { nodes, edgesAdded, edgesRemoved, workflowFields: changedPaths(from, to, "", WORKFLOW_IGNORED), moved, merged, marks };
}
