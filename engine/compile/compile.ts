import type { NodeType, TaskPolicy, WorkflowDefinition, WorkflowNode } from "../definition";
import { NODE_TYPES, WORKFLOW_DEFAULTS, buildGraph, effectiveTaskPolicy, fieldValue } from "../definition";
import { referencedRefs } from "../expressions";
import type { Blueprint, BlueprintEdge, BlueprintNode } from "./types";
import { BLUEPRINT_VERSION } from "./types";

/** Options for {@link compile}. */
export interface CompileOptions {
  /**
   * The registered task definition's policy for a task name, layered under
   * each node's own policy (`effectiveTaskPolicy(node.policy, taskDef)`).
   * Snapshotting it here means editing a task definition never changes what a
   * running execution does — the same guarantee the immutable definition gives.
   */
  taskPolicy?: (name: string) => TaskPolicy | undefined;
}

/** Node fields every type has; everything else is the type's `config`. */
const COMMON_FIELDS: ReadonlySet<string> = new Set(["ref", "type", "name", "label", "description", "position", "parent", "input", "policy", "optional"]);

/** Types whose node decide can resolve in the evaluation that reaches it (see {@link BlueprintNode.resolvesInDecide}). */
const RESOLVES_IN_DECIDE: ReadonlySet<NodeType> = new Set([
  "NOOP",
  "SWITCH",
  "JOIN",
  "EXCLUSIVE_JOIN",
  "SET_VARIABLE",
  "TERMINATE",
  "WAIT",
  "DO_WHILE",
  "FORK_JOIN_DYNAMIC",
]);

/** A JSON-only deep copy, so the blueprint shares nothing with the definition object. */
function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Defines an own key even for `__proto__` (a legal ref), which plain assignment would turn into a prototype change. */
function put<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function sorted(refs: Iterable<string>): string[] {
  return [...refs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Refs the template values read (every `${ref…}`, nested and filter paths included). */
function refsIn(value: unknown, into: Set<string>): void {
  if (value === undefined) return;
  for (const ref of referencedRefs(value).refs) into.add(ref);
}

/**
 * Compiles a **validated** definition (`validateDefinition(...).ok`) into its
 * {@link Blueprint}: per node its type, run-time config, edges both ways,
 * container body and entries, effective policy and `reads`; at workflow level
 * the start nodes, output template and what it reads, timeout policy and
 * failure workflow. Pure and deterministic: two compiles of the same
 * definition are byte-equal under `JSON.stringify`. O(nodes + edges +
 * expression text).
 *
 * @throws Error when a level of the graph has a cycle: validation rejects
 * those, and compiling one would produce a workflow that never ends.
 */
export function compile(definition: WorkflowDefinition, options: CompileOptions = {}): Blueprint {
  const graph = buildGraph(definition);
  if (graph.flatOrder() === undefined) {
    throw new Error(`compile: workflow ${JSON.stringify(definition.name)} has a cycle; validate definitions before compiling them`);
  }
  const known = new Set(graph.refs);
  const first = new Map<string, { node: WorkflowNode; index: number }>();
  definition.nodes.forEach((node, index) => {
    if (!first.has(node.ref)) first.set(node.ref, { node, index });
  });

  const nodes: Record<string, BlueprintNode> = {};
  for (const [ref, { node, index }] of first) {
    const edge = (other: string, edgeCase: string | undefined): BlueprintEdge => ({ ref: other, case: edgeCase ?? null });
    const successors = graph.outgoing(ref).map((e) => edge(e.target, e.case));
    const incoming = graph.incoming(ref).map((e) => edge(e.source, e.case));
    const isLoop = node.type === "DO_WHILE";
    const children = isLoop ? [...graph.childrenOf(ref)] : [];

    const reads = new Set<string>();
    for (const path of NODE_TYPES[node.type].expressionFields) refsIn(fieldValue(node, path), reads);
    for (const p of graph.predecessors(ref)) reads.add(p);
    if (node.type === "JOIN" || node.type === "EXCLUSIVE_JOIN") for (const r of node.joinOn ?? []) reads.add(r);
    if (node.type === "EXCLUSIVE_JOIN") for (const r of node.defaultExclusiveJoinTask ?? []) reads.add(r);
    for (const c of children) reads.add(c);
    reads.delete(ref);
    for (const r of reads) if (!known.has(r)) reads.delete(r);

    const config: Record<string, unknown> = {};
    for (const key of Object.keys(node).sort()) {
      const value = (node as unknown as Record<string, unknown>)[key];
      if (!COMMON_FIELDS.has(key) && value !== undefined) put(config, key, jsonCopy(value));
    }
    // The inbox title defaults to the label (then the ref, in the evaluator); label is otherwise editor-only.
    if (node.type === "HUMAN" && node.title === undefined && node.label !== undefined) put(config, "title", node.label);
    const taskDefName = node.name ?? node.type;
    const registered = node.name === undefined ? undefined : options.taskPolicy?.(node.name);
    const policy = jsonCopy(effectiveTaskPolicy(node.policy, registered));

    const compiled: BlueprintNode = {
      ref,
      type: node.type,
      taskDefName,
      parent: graph.parentOf(ref) ?? null,
      index,
      successors,
      incoming,
      predecessors: [...graph.predecessors(ref)],
      children,
      bodyEntries: isLoop ? [...graph.startNodes(ref)] : [],
      reads: sorted(reads),
      resolvesInDecide: RESOLVES_IN_DECIDE.has(node.type) || (node.type === "DYNAMIC" && node.optional === true),
      optional: node.optional === true,
      policy: sortKeys(policy),
      input: node.input === undefined ? null : jsonCopy(node.input),
      config,
    };
    put(nodes, ref, compiled);
  }

  const outputReads = new Set<string>();
  refsIn(definition.outputParameters, outputReads);
  for (const r of outputReads) if (!known.has(r)) outputReads.delete(r);

  return {
    blueprintVersion: BLUEPRINT_VERSION,
    name: definition.name,
    version: definition.version ?? null,
    startNodes: [...graph.startNodes()],
    nodes,
    outputParameters: definition.outputParameters === undefined ? null : jsonCopy(definition.outputParameters),
    outputReads: sorted(outputReads),
    timeoutSeconds: definition.timeoutSeconds ?? WORKFLOW_DEFAULTS.timeoutSeconds,
    timeoutPolicy: definition.timeoutPolicy ?? WORKFLOW_DEFAULTS.timeoutPolicy,
    failureWorkflow: definition.failureWorkflow ?? null,
  };
}

function sortKeys<T extends object>(obj: T): T {
  const out = {} as Record<string, unknown>;
  for (const key of Object.keys(obj).sort()) out[key] = (obj as Record<string, unknown>)[key];
  return out as T;
}

/**
 * The node with `ref`, or undefined. Own properties only: a ref may be
 * `constructor`, `toString` or `__proto__`, which a plain `nodes[ref]` would
 * find on Object.prototype.
 */
export function blueprintNode(blueprint: Blueprint, ref: string): BlueprintNode | undefined {
  return Object.prototype.hasOwnProperty.call(blueprint.nodes, ref) ? blueprint.nodes[ref] : undefined;
}
