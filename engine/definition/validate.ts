import { z } from "zod";
import { isDispatchedField } from "./dispatch-refs";
import { isAgentToolHeaderPath } from "./agent-schema";
import { LLM_NODE_TYPES } from "./llm-schema";
import { analyzeDispatchString, dispatchPlaceholder, dispatchReferenceText, referencedRefs } from "./expression-refs";
import type { DefinitionGraph, GraphEdgeInput, GraphNodeInput, UpstreamQuery } from "./graph";
import { buildGraph } from "./graph";
import { checkJsonLimits, pathKey } from "./json-limits";
import type { DefinitionLimits } from "./limits";
import { DEFINITION_LIMITS } from "./limits";
import { NODE_TYPES, fieldValue } from "./node-types";
import type { Problem, ProblemCode, ProblemPath } from "./problems";
import { severityOf } from "./problems";
import type { NodeType, WorkflowDefinition, WorkflowNode } from "./schema";
import {
  DEFAULT_CASE,
  NODE_SCHEMAS,
  NODE_TYPE_NAMES,
  RESERVED_REFS,
  SubWorkflowNodeSchema,
  WorkflowDefinitionSchema,
  WorkflowEdgeSchema,
  isNodeType,
} from "./schema";

/**
 * `validateDefinition`: the one gate a definition passes before it is saved,
 * compiled or run. It reports every problem at once, each with a JSON path
 * and (when it belongs to one) the node's ref, so the editor can mark nodes
 * and fields. Errors refuse the definition; warnings (`severity: "warning"`,
 * see `WARNING_PROBLEM_CODES`) are node-flow's extra checks on a definition
 * that still runs as Conductor runs it, and are returned beside it. It never throws on any input, and its cost is linear in the
 * input up to the limits in `DEFINITION_LIMITS`.
 *
 * Order of work, each step on whatever the earlier ones could make sense of:
 * 1. size limits and JSON-ness (one iterative walk, before zod sees anything);
 * 2. shape, node by node and edge by edge (zod), so one bad node does not hide
 *    the rest;
 * 3. the graph: refs, edges, containers, SWITCH cases, cycles, reachability,
 *    nodes that can never run;
 * 4. config that spans fields (mutually exclusive forms, input keys, joins);
 * 5. expressions: every `${ref…}` must name a node that finishes before the
 *    reading node starts;
 * 6. inline sub-workflows, recursively, as definitions of their own.
 */

/** Options for {@link validateDefinition}. */
export interface ValidateOptions {
  /** Override some limits (tests use small ones). */
  limits?: Partial<DefinitionLimits>;
}

/** The verdict of {@link validateDefinition}. */
export type ValidationResult =
  /** `definition` is the input itself, now typed: validation neither copies nor fills in defaults. */
  | { ok: true; definition: WorkflowDefinition; warnings: Problem[] }
  /** Every error found, in a deterministic order (limits, shape, graph, config, expressions); the warnings apart. */
  | { ok: false; problems: Problem[]; warnings: Problem[] };

/**
 * Checks an untrusted value as a workflow definition and returns it typed, or
 * every problem it has. Never throws.
 *
 * What the graph means, and so what is checked:
 * - **Start nodes** are the top-level nodes no edge enters; several start in
 *   parallel. A workflow with zero nodes is invalid (`empty-workflow`).
 * - A node runs once every incoming edge is resolved and at least one was
 *   taken (dead-path elimination). So several incoming edges join, and a node
 *   after several SWITCH branches merges them: that is never impossible.
 *   What is provably impossible, and reported: a node all of whose incoming
 *   edges leave a TERMINATE (or nodes that themselves never run:
 *   `never-runs`, a warning: Conductor accepts tasks after a TERMINATE, and
 *   they never run), and a JOIN/EXCLUSIVE_JOIN whose `joinOn` or
 *   `defaultExclusiveJoinTask` names a node that does not finish before it
 *   (`join-on-not-upstream`).
 * - **SWITCH**: each edge leaving it carries a `case`, one of its `cases` or
 *   `default`; the edges of the matching case are taken, all others are not.
 *   A handle with no edge ends that path — to continue after the SWITCH as
 *   Conductor does for an empty case, draw that case's edge to the merge node.
 * - **DO_WHILE** is a container: nodes whose `parent` names it are its body.
 *   Edges never cross a container boundary: the body starts with its children
 *   that no edge enters, an iteration ends when every body node is resolved,
 *   and the loop's own edges connect it to its siblings. Loops do not nest
 *   (a task's identity carries one iteration number).
 * - Cycles are always errors: repetition is a DO_WHILE, never a back edge.
 * - An expression may read a node that finishes before the reader starts
 *   (anything else is a warning: Conductor resolves it to null):
 *   anything with a path of edges to it (a loop's whole body, once past the
 *   loop) and its enclosing loop (`${loop.output.iteration}`). A DO_WHILE's
 *   `input` is re-resolved for each condition check, as in Conductor, so it
 *   may also read the loop and its body. The workflow's `outputParameters`
 *   may read any node; initial `variables` none. Scripts are not analysed:
 *   their data arrives through `input`.
 */
export function validateDefinition(input: unknown, options: ValidateOptions = {}): ValidationResult {
  const limits: DefinitionLimits = { ...DEFINITION_LIMITS, ...options.limits };
  const found = validateAt(input, limits, 0);
  const problems = found.filter((p) => p.severity !== "warning");
  const warnings = found.filter((p) => p.severity === "warning");
  return problems.length === 0 ? { ok: true, definition: input as WorkflowDefinition, warnings } : { ok: false, problems, warnings };
}

// Validation schemas: an inline sub-workflow is checked by a recursive call of
// `validateAt` (with its own graph rules), not by zod, so zod only checks it is there.
const EnvelopeSchema = WorkflowDefinitionSchema.extend({ nodes: z.array(z.unknown()), edges: z.array(z.unknown()) });
const NODE_VALIDATION_SCHEMAS: Readonly<Record<NodeType, z.ZodType>> = {
  ...NODE_SCHEMAS,
  SUB_WORKFLOW: SubWorkflowNodeSchema.extend({ workflowDefinition: z.unknown().optional() }),
};

type Raw = Record<string, unknown>;

function isPlainObject(value: unknown): value is Raw {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function own(obj: Raw, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

function quote(text: string, max = 60): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

function listRefs(refs: readonly string[], max = 8): string {
  const shown = refs
    .slice(0, max)
    .map((r) => quote(r, 40))
    .join(" → ");
  return refs.length > max ? `${shown} → … (${refs.length} nodes)` : shown;
}

/** A node the graph checks can use even when its config failed to parse. */
interface Skeleton extends GraphNodeInput {
  readonly index: number;
}

class Report {
  readonly problems: Problem[] = [];
  /** Templates repeat (`${workflow.input.id}` on every node): analyse each distinct one once. */
  private readonly analyses = new Map<string, ReturnType<typeof referencedRefs>>();
  constructor(private readonly suppressed: ReadonlySet<string>) {}

  analyze(text: string): ReturnType<typeof referencedRefs> {
    let found = this.analyses.get(text);
    if (found === undefined) {
      found = referencedRefs(text);
      this.analyses.set(text, found);
    }
    return found;
  }

  add(code: ProblemCode, message: string, path: ProblemPath, ref?: string, refs?: string[]): void {
    const problem: Problem = { code, message, path };
    if (severityOf(code) === "warning") problem.severity = "warning";
    if (ref !== undefined) problem.ref = ref;
    if (refs !== undefined) problem.refs = refs;
    this.problems.push(problem);
  }

  /** Maps zod issues for the value at `prefix` (whose raw form is `raw`) into problems. */
  zod(error: z.ZodError, prefix: ProblemPath, raw: unknown, ref?: string): void {
    for (const issue of error.issues) {
      const rel = issue.path.map((k) => (typeof k === "symbol" ? String(k) : k));
      const path = [...prefix, ...rel];
      if (this.isSuppressed(path)) continue;
      const where = rel.length === 0 ? "" : `${rel.join(".")}: `;
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) this.add("unknown-field", `${where}unknown field ${quote(key)}`, [...path, key], ref);
      } else if (issue.code === "invalid_type" && valueAt(raw, rel) === undefined) {
        this.add("missing-field", `${rel.join(".")} is required`, path, ref);
      } else {
        this.add("invalid-field", `${where}${issue.message}`, path, ref);
      }
    }
  }

  /** True when the size walk already reported this path or one above it. */
  isSuppressed(path: ProblemPath): boolean {
    if (this.suppressed.size === 0) return false;
    for (let k = 0; k <= path.length; k++) if (this.suppressed.has(pathKey(path.slice(0, k)))) return true;
    return false;
  }
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let v = root;
  for (const key of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = own(v as Raw, String(key));
  }
  return v;
}

function validateAt(input: unknown, limits: DefinitionLimits, inlineDepth: number): Problem[] {
  if (!isPlainObject(input)) {
    return [{ code: "invalid-field", message: "A workflow definition is a JSON object", path: [] }];
  }

  // 1. Limits. Counts first: a 100k-node array is refused without being walked.
  const early: Problem[] = [];
  const rawNodes = own(input, "nodes");
  const rawEdges = own(input, "edges");
  const skip = new Set<string>();
  if (Array.isArray(rawNodes) && rawNodes.length > limits.maxNodes) {
    early.push({ code: "too-many-nodes", message: `${rawNodes.length} nodes; the limit is ${limits.maxNodes}`, path: ["nodes"] });
    skip.add("nodes");
  }
  if (Array.isArray(rawEdges) && rawEdges.length > limits.maxEdges) {
    early.push({ code: "too-many-edges", message: `${rawEdges.length} edges; the limit is ${limits.maxEdges}`, path: ["edges"] });
    skip.add("edges");
  }
  // Inline sub-workflows were walked as part of the outermost definition.
  const sizes = inlineDepth === 0 ? checkJsonLimits(input, limits, skip) : undefined;
  if (sizes !== undefined) early.push(...sizes.problems);
  if (sizes?.exhausted === true) return early;
  const report = new Report(sizes?.reported ?? new Set());
  report.problems.push(...early);
  const unsafe = sizes?.unsafe ?? new Set<string>();

  // 2. Shape: the envelope, then each node and edge on its own.
  const envelope = EnvelopeSchema.safeParse(input);
  if (!envelope.success) report.zod(envelope.error, [], input);
  checkNoteIds(own(input, "notes"), report);
  // Edges name nodes: with the nodes refused, checking them would only report every endpoint unknown.
  const nodes = Array.isArray(rawNodes) && !skip.has("nodes") ? (rawNodes as unknown[]) : [];
  const edges = Array.isArray(rawEdges) && !skip.has("edges") && !skip.has("nodes") ? (rawEdges as unknown[]) : [];
  const isUnsafe = unsafe.size === 0 ? () => false : (path: ProblemPath) => unsafe.has(pathKey(path));
  if (Array.isArray(rawNodes) && rawNodes.length === 0) {
    report.add("empty-workflow", "The workflow has no nodes", ["nodes"]);
  }

  const skeletons: Skeleton[] = [];
  const parsed: (WorkflowNode | undefined)[] = [];
  nodes.forEach((raw, i) => {
    const at: ProblemPath = ["nodes", i];
    if (!isPlainObject(raw)) {
      if (!isUnsafe(at)) report.add("invalid-field", "A node is a JSON object", at);
      return;
    }
    const rawRef = own(raw, "ref");
    const ref = typeof rawRef === "string" && rawRef !== "" ? rawRef : undefined;
    const type = own(raw, "type");
    const parent = own(raw, "parent");
    if (ref !== undefined) {
      skeletons.push({ index: i, ref, type: typeof type === "string" ? type : "", parent: typeof parent === "string" ? parent : undefined });
    }
    if (isUnsafe(at)) return;
    if (!isNodeType(type)) {
      if (type === undefined) report.add("missing-field", "type is required", [...at, "type"], ref);
      else report.add("unknown-node-type", `Unknown node type ${typeof type === "string" ? quote(type) : typeof type}; expected one of ${NODE_TYPE_NAMES.join(", ")}`, [...at, "type"], ref);
      return;
    }
    const result = NODE_VALIDATION_SCHEMAS[type].safeParse(raw);
    if (result.success) parsed[i] = raw as unknown as WorkflowNode;
    else report.zod(result.error, at, raw, ref);
  });

  const graphEdges: GraphEdgeInput[] = [];
  const edgeOk: boolean[] = [];
  const edgeIds: (string | undefined)[] = [];
  edges.forEach((raw, k) => {
    edgeIds.push(isPlainObject(raw) && typeof raw.id === "string" ? raw.id : undefined);
    const at: ProblemPath = ["edges", k];
    const usable = isPlainObject(raw) && typeof raw.source === "string" && raw.source !== "" && typeof raw.target === "string" && raw.target !== "";
    const skipped = isUnsafe(at);
    edgeOk.push(usable && !skipped);
    graphEdges.push(
      usable ? { source: raw.source as string, target: raw.target as string, case: typeof raw.case === "string" ? raw.case : undefined } : { source: "", target: "" },
    );
    if (skipped) return;
    if (!isPlainObject(raw)) {
      report.add("invalid-field", "An edge is a JSON object", at);
      return;
    }
    const result = WorkflowEdgeSchema.safeParse(raw);
    if (!result.success) report.zod(result.error, at, raw, typeof raw.source === "string" ? raw.source : undefined);
  });

  // 3. The graph.
  const graph = buildGraph({ nodes: skeletons, edges: graphEdges });
  const firstIndex = new Map<string, number>();
  for (const s of skeletons) if (!firstIndex.has(s.ref)) firstIndex.set(s.ref, s.index);
  const parsedOf = (ref: string): WorkflowNode | undefined => {
    const i = firstIndex.get(ref);
    return i === undefined ? undefined : parsed[i];
  };

  checkRefsAndParents(report, skeletons, graph, firstIndex);
  checkEdges(report, graphEdges, edgeOk, edgeIds, graph, parsedOf);
  const inCycle = checkCycles(report, graph);
  checkReachability(report, graph, firstIndex, inCycle);
  checkNeverRuns(report, graph, firstIndex);

  // 4–6. Per-node config, joins, expressions, inline sub-workflows.
  const queries: QueryList = [];
  parsed.forEach((node, i) => {
    if (node === undefined) return;
    const at: ProblemPath = ["nodes", i];
    const first = firstIndex.get(node.ref) === i;
    checkNodeConfig(report, node, at);
    checkJoin(report, node, at, graph, first, queries);
    checkNodeExpressions(report, node, at, graph, first, queries);
    if (node.type === "SUB_WORKFLOW" && node.workflowDefinition !== undefined) {
      const innerAt: ProblemPath = [...at, "workflowDefinition"];
      if (inlineDepth + 1 > limits.maxInlineDepth) {
        report.add("too-deep", `Inline sub-workflows nest more than ${limits.maxInlineDepth} deep`, innerAt, node.ref);
      } else {
        for (const p of validateAt(node.workflowDefinition, limits, inlineDepth + 1)) {
          const path = [...innerAt, ...p.path];
          // The outermost size walk covered the inline definition; don't repeat what it found.
          if (!report.isSuppressed(path)) report.add(p.code, `In the inline workflow: ${p.message}`, path, node.ref);
        }
      }
    }
  });
  if (envelope.success) checkWorkflowExpressions(report, envelope.data, graph);

  const answers = graph.areUpstream(queries.map((q) => q.query));
  queries.forEach((q, k) => {
    if (answers[k] !== true) report.add(q.code, q.message(), q.path, q.query.of);
  });
  return report.problems;
}

function checkRefsAndParents(report: Report, skeletons: readonly Skeleton[], graph: DefinitionGraph, firstIndex: ReadonlyMap<string, number>): void {
  for (const s of skeletons) {
    const at: ProblemPath = ["nodes", s.index];
    const first = firstIndex.get(s.ref)!;
    if (first !== s.index) report.add("duplicate-ref", `The ref ${quote(s.ref)} is also used by nodes[${first}]`, [...at, "ref"], s.ref);
    if (RESERVED_REFS.has(s.ref)) report.add("reserved-ref", `${quote(s.ref)} is reserved: \${workflow.…} reads the workflow, never a node`, [...at, "ref"], s.ref);
    if (s.parent === undefined) continue;
    const parentAt = [...at, "parent"];
    const parentType = graph.typeOf(s.parent);
    if (parentType === undefined) report.add("unknown-ref", `parent ${quote(s.parent)} is not the ref of any node`, parentAt, s.ref);
    else if (s.parent === s.ref) report.add("invalid-parent", "A node cannot be its own parent", parentAt, s.ref);
    else if (!graph.isContainer(s.parent)) report.add("invalid-parent", `parent ${quote(s.parent)} is a ${parentType}; only a DO_WHILE holds other nodes`, parentAt, s.ref);
    else if (graph.isContainer(s.ref) && first === s.index) {
      report.add("nested-loop", `A DO_WHILE cannot sit inside another (${quote(s.parent)}): a task's identity carries a single iteration number`, parentAt, s.ref);
    }
  }
  for (const s of skeletons) {
    if (firstIndex.get(s.ref) === s.index && graph.isContainer(s.ref) && graph.childrenOf(s.ref).length === 0) {
      report.add("empty-loop-body", "The loop has no body: set `parent` on the nodes it should repeat", ["nodes", s.index], s.ref);
    }
  }
}

function checkEdges(
  report: Report,
  edges: readonly GraphEdgeInput[],
  usable: readonly boolean[],
  edgeIds: readonly (string | undefined)[],
  graph: DefinitionGraph,
  parsedOf: (ref: string) => WorkflowNode | undefined,
): void {
  const seen = new Map<string, number>();
  const ids = new Map<string, number>();
  edges.forEach((edge, k) => {
    if (usable[k] !== true) return;
    const at: ProblemPath = ["edges", k];
    const { source, target } = edge;
    const hasSource = graph.has(source);
    const hasTarget = graph.has(target);
    if (!hasSource) report.add("unknown-ref", `source ${quote(source)} is not the ref of any node`, [...at, "source"], hasTarget ? target : undefined);
    if (!hasTarget) report.add("unknown-ref", `target ${quote(target)} is not the ref of any node`, [...at, "target"], hasSource ? source : undefined);
    if (!hasSource || !hasTarget) return;
    if (source === target) report.add("self-loop", `An edge from ${quote(source)} to itself: repeat with a DO_WHILE instead`, at, source);
    else if (graph.parentOf(source) !== graph.parentOf(target)) report.add("edge-crosses-container", crossingMessage(graph, source, target), at, source);

    const sourceType = graph.typeOf(source);
    const edgeCase = edge.case;
    if (sourceType === "SWITCH") {
      const node = parsedOf(source);
      if (edgeCase === undefined) {
        report.add("case-missing", `An edge leaving the SWITCH ${quote(source)} needs a case: one of its cases or "default"`, at, source);
      } else if (edgeCase !== DEFAULT_CASE && node?.type === "SWITCH" && !node.cases.includes(edgeCase)) {
        report.add("unknown-case", `${quote(edgeCase)} is not a case of ${quote(source)} (cases: ${[...node.cases, DEFAULT_CASE].join(", ")})`, [...at, "case"], source);
      }
    } else if (edgeCase !== undefined) {
      report.add("unexpected-case", `Only edges leaving a SWITCH carry a case; ${quote(source)} is a ${sourceType}`, [...at, "case"], source);
    }

    const key = JSON.stringify([source, target, edgeCase ?? null]);
    const before = seen.get(key);
    if (before === undefined) seen.set(key, k);
    else report.add("duplicate-edge", `Same source, target and case as edges[${before}]`, at, source);
  });
  // Ids are checked on every edge that has one, usable or not.
  edgeIds.forEach((id, k) => {
    if (id === undefined) return;
    const before = ids.get(id);
    if (before === undefined) ids.set(id, k);
    else report.add("duplicate-edge-id", `The edge id ${quote(id)} is also used by edges[${before}]`, ["edges", k, "id"]);
  });
}

/** Notes are checked for shape by the envelope; their ids must also be unique, as the canvas keys them. */
function checkNoteIds(notes: unknown, report: Report): void {
  if (!Array.isArray(notes)) return;
  const seen = new Map<string, number>();
  notes.forEach((note: unknown, k) => {
    if (!isPlainObject(note) || typeof note.id !== "string") return;
    const before = seen.get(note.id);
    if (before === undefined) seen.set(note.id, k);
    else report.add("duplicate-note-id", `The note id ${quote(note.id)} is also used by notes[${before}]`, ["notes", k, "id"]);
  });
}

function crossingMessage(graph: DefinitionGraph, source: string, target: string): string {
  if (graph.parentOf(target) === source) {
    return `Edges do not enter a loop body: ${quote(source)} starts its body with the children no edge enters, so drop the edge to ${quote(target)}`;
  }
  if (graph.parentOf(source) === target) {
    return `Edges do not leave a loop body: an iteration ends when its body finishes, so drop the edge from ${quote(source)} back to ${quote(target)}`;
  }
  const where = (ref: string): string => {
    const p = graph.parentOf(ref);
    return p === undefined ? "the top level" : `the body of ${quote(p)}`;
  };
  return `${quote(source)} is in ${where(source)} and ${quote(target)} in ${where(target)}: edges connect nodes of the same level`;
}

function checkCycles(report: Report, graph: DefinitionGraph): Set<string> {
  const inCycle = new Set<string>();
  for (const cycle of graph.cycles()) {
    const refs = [...cycle.refs];
    for (const r of cycle.members) inCycle.add(r);
    report.add(
      "cycle",
      `A cycle: ${listRefs([...refs, refs[0]!])}. Repeat work with a DO_WHILE, not a back edge`,
      ["edges", cycle.edges[cycle.edges.length - 1]!],
      refs[0],
      refs,
    );
  }
  return inCycle;
}

function checkReachability(report: Report, graph: DefinitionGraph, firstIndex: ReadonlyMap<string, number>, inCycle: ReadonlySet<string>): void {
  const unreachable = new Set(graph.unreachable());
  for (const ref of unreachable) {
    const parent = graph.parentOf(ref);
    if (inCycle.has(ref) || (parent !== undefined && unreachable.has(parent))) continue;
    report.add("unreachable", `No start node leads to ${quote(ref)}: it is only entered from a cycle`, ["nodes", firstIndex.get(ref)!], ref);
  }
}

/**
 * A TERMINATE ends the workflow when it completes, so an edge leaving it is
 * never taken; a node all of whose incoming edges come from TERMINATEs (or
 * from such nodes) therefore never runs. Worklist propagation, O(n + e).
 */
function checkNeverRuns(report: Report, graph: DefinitionGraph, firstIndex: ReadonlyMap<string, number>): void {
  const deadInputs = new Map<string, number>();
  const dead = new Set<string>();
  const queue = graph.refs.filter((r) => graph.typeOf(r) === "TERMINATE");
  for (let q = 0; q < queue.length; q++) {
    for (const edge of graph.outgoing(queue[q]!)) {
      const t = edge.target;
      const count = (deadInputs.get(t) ?? 0) + 1;
      deadInputs.set(t, count);
      if (count === graph.incoming(t).length && !dead.has(t)) {
        dead.add(t);
        queue.push(t);
      }
    }
  }
  for (const ref of dead) {
    report.add("never-runs", `${quote(ref)} never runs: every edge into it leaves a TERMINATE or a node that never runs`, ["nodes", firstIndex.get(ref)!], ref);
  }
}

function requireInputKey(report: Report, node: WorkflowNode, key: string | undefined, at: ProblemPath, field: string): void {
  if (key === undefined) return;
  if (node.input === undefined || !Object.prototype.hasOwnProperty.call(node.input, key)) {
    report.add("unknown-input-key", `${field} names the input key ${quote(key)}, which input does not have`, [...at, field], node.ref);
  }
}

/** Exactly one of the alternative forms `forms` (each a list of fields; a form is chosen when any of its fields is set). */
function oneOf(report: Report, node: WorkflowNode, at: ProblemPath, forms: Record<string, readonly string[]>, required: Record<string, readonly string[]>): void {
  const raw = node as unknown as Raw;
  const chosen = Object.keys(forms).filter((name) => forms[name]!.some((f) => raw[f] !== undefined));
  if (chosen.length === 0) {
    report.add("missing-field", `Set one of: ${Object.values(required).map((fs) => fs.join(" + ")).join("; or ")}`, at, node.ref);
  } else if (chosen.length > 1) {
    report.add("conflicting-fields", `Choose one form, not several: ${chosen.map((c) => forms[c]!.filter((f) => raw[f] !== undefined).join(", ")).join(" vs ")}`, at, node.ref);
  } else {
    for (const f of required[chosen[0]!]!) if (raw[f] === undefined) report.add("missing-field", `${f} is required in this form`, [...at, f], node.ref);
  }
}

/** The queues the in-process system-task runner polls (engine/decide: a system task's queue is its type). */
export const SYSTEM_QUEUE_NAMES: ReadonlySet<string> = new Set(["HTTP", "HTTP_POLL", "JDBC", "LIST_MCP_TOOLS", "CALL_MCP_TOOL", ...LLM_NODE_TYPES, "INLINE", "JSON_JQ_TRANSFORM", "EVENT"]);

function checkNodeConfig(report: Report, node: WorkflowNode, at: ProblemPath): void {
  const policy = node.policy;
  if (policy?.timeoutSeconds !== undefined && policy.timeoutSeconds > 0 && policy.responseTimeoutSeconds !== undefined && policy.responseTimeoutSeconds > policy.timeoutSeconds) {
    report.add(
      "response-timeout-over-timeout",
      `responseTimeoutSeconds (${policy.responseTimeoutSeconds}) exceeds timeoutSeconds (${policy.timeoutSeconds}): the task times out after ${policy.timeoutSeconds} s before its response timeout can fire`,
      [...at, "policy", "responseTimeoutSeconds"],
      node.ref,
    );
  }
  if (node.type === "SIMPLE" && node.name !== undefined && SYSTEM_QUEUE_NAMES.has(node.name)) {
    // A worker task's queue is its task definition's name, and the system-task
    // runner's queues are named after their types: sharing one would hand HTTP
    // tasks to a worker polling "HTTP", or a worker's task to the runner.
    report.add("reserved-name", `${quote(node.name)} is the queue of the built-in ${node.name} task; name the task definition something else`, [...at, "name"], node.ref);
  }
  switch (node.type) {
    case "SWITCH": {
      const seen = new Set<string>();
      node.cases.forEach((c, j) => {
        if (c === DEFAULT_CASE) report.add("reserved-case", `"default" is every SWITCH's implicit handle; it is not listed as a case`, [...at, "cases", j], node.ref);
        else if (seen.has(c)) report.add("duplicate-case", `The case ${quote(c)} is listed twice`, [...at, "cases", j], node.ref);
        seen.add(c);
      });
      if (node.evaluatorType === "value-param") requireInputKey(report, node, node.expression, at, "expression");
      return;
    }
    case "DYNAMIC":
      requireInputKey(report, node, node.dynamicTaskNameParam, at, "dynamicTaskNameParam");
      return;
    case "FORK_JOIN_DYNAMIC":
      oneOf(
        report,
        node,
        at,
        { conductor: ["dynamicForkTasksParam", "dynamicForkTasksInputParamName"], items: ["forkTaskName", "items", "forkTaskType", "forkTaskVersion"] },
        { conductor: ["dynamicForkTasksParam", "dynamicForkTasksInputParamName"], items: ["forkTaskName", "items"] },
      );
      requireInputKey(report, node, node.dynamicForkTasksParam, at, "dynamicForkTasksParam");
      requireInputKey(report, node, node.dynamicForkTasksInputParamName, at, "dynamicForkTasksInputParamName");
      if (node.forkTaskVersion !== undefined && node.forkTaskType !== "SUB_WORKFLOW") {
        report.add("invalid-field", "forkTaskVersion applies only when forkTaskType is SUB_WORKFLOW", [...at, "forkTaskVersion"], node.ref);
      }
      return;
    case "DO_WHILE":
      oneOf(report, node, at, { condition: ["loopCondition"], items: ["items"] }, { condition: ["loopCondition"], items: ["items"] });
      return;
    case "AGENT": {
      // The agent's turns are numbered by iteration, which inside a loop body is the loop's.
      if (node.parent !== undefined) report.add("agent-in-loop", "An AGENT cannot be inside a loop body: put it in a sub-workflow the loop runs", [...at, "parent"], node.ref);
      const seen = new Set<string>();
      node.agent.tools?.forEach((tool, j) => {
        if (seen.has(tool.name)) report.add("duplicate-tool", `The tool name ${quote(tool.name)} is used twice; the model calls tools by name`, [...at, "agent", "tools", j, "name"], node.ref);
        seen.add(tool.name);
        if (tool.type === "SIMPLE" && SYSTEM_QUEUE_NAMES.has(tool.taskName)) {
          report.add("reserved-name", `${quote(tool.taskName)} is the queue of the built-in ${tool.taskName} task; name the worker's task something else`, [...at, "agent", "tools", j, "taskName"], node.ref);
        }
      });
      return;
    }
    case "SUB_WORKFLOW":
      oneOf(report, node, at, { registered: ["subWorkflowParam"], inline: ["workflowDefinition"] }, { registered: ["subWorkflowParam"], inline: ["workflowDefinition"] });
      return;
    case "WAIT":
      oneOf(report, node, at, { duration: ["duration"], until: ["until"], signal: ["signal"] }, { duration: ["duration"], until: ["until"], signal: ["signal"] });
      return;
    case "HUMAN": {
      const seen = new Set<string>();
      node.outcomes?.forEach((o, j) => {
        if (seen.has(o)) report.add("invalid-field", `The outcome ${quote(o)} is listed twice`, [...at, "outcomes", j], node.ref);
        seen.add(o);
      });
      // A default outcome the buttons do not offer would complete the task with
      // a value no downstream SWITCH was written for.
      node.escalation?.forEach((step, j) => {
        if (step.action !== "complete") return;
        if (node.outcomes === undefined || node.outcomes.length === 0) {
          report.add("invalid-field", `Escalation step ${j + 1} completes with outcome ${quote(step.outcome)}, but the task has no outcomes`, [...at, "escalation", j, "outcome"], node.ref);
        } else if (!seen.has(step.outcome)) {
          report.add("invalid-field", `Escalation step ${j + 1} completes with outcome ${quote(step.outcome)}, which is not one of the outcomes (${node.outcomes.map(quote).join(", ")})`, [...at, "escalation", j, "outcome"], node.ref);
        }
      });
      // The chain starts at the due time: without one it would never fire.
      if (node.escalation !== undefined && node.escalation.length > 0 && node.dueIn === undefined) {
        report.add("invalid-field", "An escalation chain starts when the task is due: set dueIn", [...at, "escalation"], node.ref);
      }
      const form = node.form;
      if (form?.template !== undefined && (form.schema !== undefined || form.uiSchema !== undefined)) {
        report.add("invalid-field", "A form is either a template or an inline schema, not both", [...at, "form"], node.ref);
      }
      // The inbox pre-fills and validates the form as one object of fields: any other root type has no fields to show.
      if (form?.schema !== undefined && form.schema.type !== "object") {
        report.add("invalid-field", `form.schema must be an object-typed JSON Schema ("type": "object"), got ${form.schema.type === undefined ? "no type" : JSON.stringify(form.schema.type)}`, [...at, "form", "schema", "type"], node.ref);
      }
      if (form?.schema?.properties !== undefined && (typeof form.schema.properties !== "object" || form.schema.properties === null || Array.isArray(form.schema.properties))) {
        report.add("invalid-field", "form.schema.properties must be an object of field schemas", [...at, "form", "schema", "properties"], node.ref);
      }
      return;
    }
    default:
      return;
  }
}

/** Upstream questions, answered together by one `areUpstream` call; messages are built only for failures. */
type QueryList = { query: UpstreamQuery; code: ProblemCode; message: () => string; path: ProblemPath }[];

function checkJoin(report: Report, node: WorkflowNode, at: ProblemPath, graph: DefinitionGraph, first: boolean, queries: QueryList): void {
  if (node.type !== "JOIN" && node.type !== "EXCLUSIVE_JOIN") return;
  const lists: [string, readonly string[] | undefined][] = [["joinOn", node.joinOn]];
  if (node.type === "EXCLUSIVE_JOIN") lists.push(["defaultExclusiveJoinTask", node.defaultExclusiveJoinTask]);
  for (const [field, refs] of lists) {
    refs?.forEach((ref, j) => {
      const path = [...at, field, j];
      if (!graph.has(ref)) report.add("unknown-ref", `${field} names ${quote(ref)}, which is not the ref of any node`, path, node.ref);
      else if (first) {
        queries.push({
          query: { ref, of: node.ref },
          code: "join-on-not-upstream",
          message: () => `${quote(node.ref)} can never wait on ${quote(ref)}: it does not finish before the join starts (it is downstream, or on a branch that does not lead here)`,
          path,
        });
      }
    });
  }
}

/** Every string holding `${` inside `value`, with its path, without recursion. */
function templateStrings(value: unknown, base: ProblemPath): { text: string; path: ProblemPath }[] {
  const out: { text: string; path: ProblemPath }[] = [];
  const stack: { v: unknown; path: ProblemPath }[] = [{ v: value, path: base }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes("${")) out.push({ text: v, path });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i] as unknown, path: [...path, i] });
    } else if (isPlainObject(v)) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ v: v[keys[i]!], path: [...path, keys[i]!] });
    }
  }
  return out;
}

/** Refs a template reads, reporting malformed expressions (errors only: warnings resolve as Conductor would). */
function templateRefs(report: Report, text: string, path: ProblemPath, ref: string | undefined): ReadonlySet<string> {
  const found = report.analyze(text);
  for (const p of found.problems) {
    if (p.severity === "error") report.add("invalid-expression", `${p.message}: ${p.expression}`, [...path, ...p.path], ref);
  }
  return found.refs;
}

/** Secrets and variables: read as written, and only where a task is dispatched (dispatch-refs.ts). */
function checkDispatchReferences(report: Report, text: string, path: ProblemPath, ref: string | undefined, dispatched: boolean): void {
  if (!text.includes("${workflow")) return;
  const found = analyzeDispatchString(text);
  for (const message of found.problems) report.add("invalid-secret-reference", message, path, ref);
  const first = found.references[0];
  if (first !== undefined && !dispatched) {
    report.add(
      "secret-not-dispatched",
      `${dispatchReferenceText(first)} is resolved only in the input of HTTP, INLINE, JSON_JQ_TRANSFORM and worker tasks; here it would read ${JSON.stringify(dispatchPlaceholder(first))}`,
      path,
      ref,
    );
  }
}

function checkNodeExpressions(report: Report, node: WorkflowNode, at: ProblemPath, graph: DefinitionGraph, first: boolean, queries: QueryList): void {
  for (const field of NODE_TYPES[node.type].expressionFields) {
    // Conductor re-resolves a DO_WHILE's input for every condition check
    // (DoWhile.evaluateCondition), so it may read the loop itself and its body.
    const rereadsBody = node.type === "DO_WHILE" && field.length === 1 && field[0] === "input";
    const value = fieldValue(node, field);
    if (value === undefined) continue;
    const dispatched = isDispatchedField(node.type, field);
    for (const { text, path } of templateStrings(value, [...at, ...field])) {
      // An agent's tool headers are dispatched with the tool's call; the rest of the agent never is.
      checkDispatchReferences(report, text, path, node.ref, dispatched || (node.type === "AGENT" && isAgentToolHeaderPath(path.slice(at.length))));
      for (const ref of templateRefs(report, text, path, node.ref)) {
        if (!graph.has(ref)) {
          report.add("expression-unknown-ref", `The expression reads ${quote(ref)}, which is not the ref of any node`, path, node.ref);
        } else if (first && !(rereadsBody && (ref === node.ref || graph.ancestorsOf(ref).includes(node.ref)))) {
          queries.push({
            query: { ref, of: node.ref },
            code: "expression-not-upstream",
            message: () =>
              ref === node.ref
                ? `${quote(ref)} reads its own output, which does not exist while it runs`
                : `${quote(node.ref)} reads ${quote(ref)}, which does not finish before ${quote(node.ref)} starts (it is downstream, or on a parallel branch): add an edge path from it, or read it later`,
            path,
          });
        }
      }
    }
  }
}

function checkWorkflowExpressions(report: Report, definition: { outputParameters?: Raw | undefined; variables?: Raw | undefined }, graph: DefinitionGraph): void {
  if (definition.outputParameters !== undefined) {
    for (const { text, path } of templateStrings(definition.outputParameters, ["outputParameters"])) {
      checkDispatchReferences(report, text, path, undefined, false);
      for (const ref of templateRefs(report, text, path, undefined)) {
        if (!graph.has(ref)) report.add("expression-unknown-ref", `The expression reads ${quote(ref)}, which is not the ref of any node`, path);
      }
    }
  }
  if (definition.variables !== undefined) {
    for (const { text, path } of templateStrings(definition.variables, ["variables"])) {
      checkDispatchReferences(report, text, path, undefined, false);
      for (const ref of templateRefs(report, text, path, undefined)) {
        report.add(
          graph.has(ref) ? "expression-not-upstream" : "expression-unknown-ref",
          `Initial variables are set before any node runs, so they cannot read ${quote(ref)}`,
          path,
        );
      }
    }
  }
}
