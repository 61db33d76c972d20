import type { WorkflowDefinition } from "../definition";

/**
 * The structure of a graph — refs, types, parents, edges with cases — as
 * plain comparable data. Export checks its result with it (the exported JSON
 * must import back to the same structure), and the round-trip tests compare
 * with it.
 */

/** One node's place in the structure. */
export interface StructureNode {
  readonly type: string;
  readonly parent: string | undefined;
}

/** A graph's structure: nodes by ref, and edges as `source→target` keys (`source[case]→target` leaving a SWITCH). */
export interface GraphStructure {
  readonly nodes: ReadonlyMap<string, StructureNode>;
  readonly edges: ReadonlySet<string>;
}

/** The key of an edge in {@link GraphStructure.edges}. */
export function edgeKey(source: string, target: string, edgeCase?: string): string {
  return edgeCase === undefined ? `${source}→${target}` : `${source}[${edgeCase}]→${target}`;
}

/**
 * The structure of `definition`, with the JOIN nodes in `contract` removed
 * and each replaced by edges from its every input to its every output —
 * equivalent, since a JOIN only merges. Export uses it to discount the JOINs
 * it generated.
 */
export function graphStructure(definition: Pick<WorkflowDefinition, "nodes" | "edges">, contract: ReadonlySet<string> = new Set()): GraphStructure {
  const nodes = new Map<string, StructureNode>();
  for (const n of definition.nodes) if (!contract.has(n.ref)) nodes.set(n.ref, { type: n.type, parent: n.parent });
  type E = { source: string; target: string; case?: string | undefined };
  let edges: E[] = definition.edges.map((e) => ({ source: e.source, target: e.target, case: e.case }));
  for (const ref of contract) {
    const ins = edges.filter((e) => e.target === ref);
    const outs = edges.filter((e) => e.source === ref);
    edges = edges.filter((e) => e.source !== ref && e.target !== ref);
    for (const i of ins) for (const o of outs) edges.push({ source: i.source, target: o.target, case: i.case });
  }
  return { nodes, edges: new Set(edges.map((e) => edgeKey(e.source, e.target, e.case))) };
}

/** The first difference between two structures, as a sentence naming the node; undefined when equal. */
export function structureDifference(expected: GraphStructure, actual: GraphStructure): { ref: string; message: string } | undefined {
  for (const [ref, n] of expected.nodes) {
    const m = actual.nodes.get(ref);
    if (m === undefined) return { ref, message: `${JSON.stringify(ref)} is missing` };
    if (m.type !== n.type) return { ref, message: `${JSON.stringify(ref)} became a ${m.type} (was ${n.type})` };
    if (m.parent !== n.parent) return { ref, message: `${JSON.stringify(ref)} moved from ${n.parent ?? "the top level"} to ${m.parent ?? "the top level"}` };
  }
  for (const ref of actual.nodes.keys()) if (!expected.nodes.has(ref)) return { ref, message: `${JSON.stringify(ref)} appeared` };
  const source = (key: string): string => key.slice(0, key.search(/[[→]/));
  for (const key of expected.edges) if (!actual.edges.has(key)) return { ref: source(key), message: `the edge ${key} is lost` };
  for (const key of actual.edges) if (!expected.edges.has(key)) return { ref: source(key), message: `an edge ${key} appears` };
  return undefined;
}
