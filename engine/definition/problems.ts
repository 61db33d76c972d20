/**
 * What `validateDefinition` reports. Every problem names the JSON path of the
 * offending value and, when the value belongs to a node, that node's ref, so
 * the editor can mark the node and the inspector field.
 */

/** Every problem code with what it means. The keys are the stable contract; the texts are for docs and tooltips. */
export const PROBLEM_CODES = {
  // Shape (zod) and size.
  "invalid-field": "A value has the wrong type, format or range.",
  "missing-field": "A required value is absent, or none of a node's alternative configurations is given.",
  "unknown-field": "A key the schema does not define (often a typo): definitions are strict so nothing is dropped silently.",
  "conflicting-fields": "More than one of a node's mutually exclusive configurations is given.",
  "unknown-node-type": "A node's `type` is not one of the node types.",
  "too-many-nodes": "More nodes than the definition limit allows; the nodes are not checked further.",
  "too-many-edges": "More edges than the definition limit allows; the edges are not checked further.",
  "string-too-long": "A string or object key is longer than the definition limit allows.",
  "too-deep": "Values, or inline sub-workflows, nest deeper than the definition limit allows.",
  "too-large": "The definition holds more JSON values than the limit allows; nothing after this point is checked.",
  "not-json": "A value that JSON cannot represent (function, NaN, Date, class instance, …).",
  "forbidden-key": "`__proto__` used as a key: legal JSON, but a prototype-pollution vector for any JavaScript that copies it.",
  // Refs and edges.
  "empty-workflow": "A workflow with no nodes: it could do nothing, and Conductor rejects an empty task list.",
  "reserved-ref": "A node ref that expressions reserve (`workflow`).",
  "reserved-name": "A task definition name that a built-in task's queue uses (HTTP, INLINE, JSON_JQ_TRANSFORM, EVENT).",
  "duplicate-ref": "Two nodes share a ref.",
  "unknown-ref": "An edge, `parent`, `joinOn` or `defaultExclusiveJoinTask` names a ref no node has.",
  "duplicate-edge-id": "Two edges share an id.",
  "duplicate-note-id": "Two sticky notes share an id.",
  "duplicate-edge": "Two edges with the same source, target and case.",
  "self-loop": "An edge from a node to itself.",
  "cycle": "Edges that form a cycle. Repetition is a DO_WHILE container, never a back edge.",
  "unreachable": "A node no start node leads to (only nodes in or behind an entry-less cycle can be).",
  // Containers.
  "edge-crosses-container": "An edge between nodes of different container levels (into, out of, or between DO_WHILE bodies).",
  "invalid-parent": "`parent` names a node that is not a DO_WHILE, or the node itself.",
  "nested-loop": "A DO_WHILE inside another DO_WHILE: task identity carries a single iteration number.",
  "empty-loop-body": "A DO_WHILE with no children.",
  // SWITCH.
  "case-missing": "An edge leaving a SWITCH without a `case`.",
  "unknown-case": "An edge's `case` is neither one of its SWITCH's cases nor `default`.",
  "unexpected-case": "An edge carries a `case` but does not leave a SWITCH.",
  "duplicate-case": "A SWITCH lists the same case twice.",
  "duplicate-tool": "An AGENT names two tools alike; the model calls tools by name.",
  "agent-in-loop": "An AGENT inside a DO_WHILE body (its turns are numbered by iteration, which there is the loop's).",
  "reserved-case": "A SWITCH lists `default` as a case: every SWITCH has an implicit default handle.",
  // Semantics.
  "join-on-not-upstream": "A JOIN or EXCLUSIVE_JOIN waits on a ref that does not finish before it can start.",
  "never-runs": "A node every incoming edge of which comes from a TERMINATE or another node that never runs (a warning: it is kept, and simply never runs, as in Conductor).",
  "unknown-input-key": "A config field that names an `input` key (SWITCH value-param, DYNAMIC, FORK_JOIN_DYNAMIC) names one `input` lacks.",
  "expression-unknown-ref": "An expression reads `${ref…}` for a ref no node has (a warning: it resolves to null, as in Conductor).",
  "expression-not-upstream": "An expression reads a node that does not finish before the reading node starts (a warning: it reads null, or whatever that node has produced by then, as in Conductor).",
  "response-timeout-over-timeout":
    "A policy's responseTimeoutSeconds exceeds its timeoutSeconds (a warning: the overall timeout ends the task first, so the response timeout never fires; Conductor accepts this in an inline taskDefinition).",
  "invalid-expression": "A malformed `${…}` expression.",
  // Secrets and variables.
  "invalid-secret-reference":
    "A `${workflow.secrets…}` or `${workflow.env…}` that cannot be resolved as written: not one plain name, computed, nested in another expression, or in a string that also reads what can change before the task is sent.",
  "secret-not-dispatched":
    "A secret or variable read where no task is dispatched (a SWITCH, a WAIT, an EVENT, the workflow's output…): they are resolved only in the input of HTTP, INLINE, JSON_JQ_TRANSFORM and worker tasks, and elsewhere read `***` (a variable: its own text).",
  "unknown-secret": "`${workflow.secrets.NAME}` names no secret of the namespace (checked when the definition is saved).",
  "unknown-variable": "`${workflow.env.NAME}` names no environment variable of the namespace (checked when the definition is saved).",
} as const satisfies Record<string, string>;

/** A stable, kebab-case problem identifier; see {@link PROBLEM_CODES}. */
export type ProblemCode = keyof typeof PROBLEM_CODES;

/**
 * How bad a problem is. An **error** means the definition cannot be saved or
 * run. A **warning** is one of node-flow's extra checks on a definition that
 * still runs as Conductor would run it (a node that never runs, an expression
 * that resolves to null): it is saved, and the warning is shown on the node.
 */
export type ProblemSeverity = "error" | "warning";

/** The codes reported as warnings; every other code is an error. */
export const WARNING_PROBLEM_CODES: ReadonlySet<ProblemCode> = new Set<ProblemCode>([
  "never-runs",
  "expression-unknown-ref",
  "expression-not-upstream",
  "response-timeout-over-timeout",
]);

/** The severity of a problem code. */
export function severityOf(code: ProblemCode): ProblemSeverity {
  return WARNING_PROBLEM_CODES.has(code) ? "warning" : "error";
}

/** A JSON path into the definition: object keys and array indexes, outermost first. */
export type ProblemPath = (string | number)[];

/** One thing wrong with a definition. */
export interface Problem {
  /** What kind of problem; stable across releases. */
  code: ProblemCode;
  /** A sentence for people, naming the values involved. Not stable: match on `code`. */
  message: string;
  /** Set to "warning" on warnings ({@link WARNING_PROBLEM_CODES}); absent on errors. */
  severity?: "warning";
  /**
   * The node the problem belongs to, when there is one: for shape errors under
   * `nodes[i]`, that node's ref; for edge problems, the edge's source (or
   * target, when the source is unknown); for a cycle, the node it is reported at.
   */
  ref?: string;
  /** Every node involved, for problems about several (a cycle lists its nodes in order). */
  refs?: string[];
  /** Where the offending value is, e.g. `["nodes", 3, "input", "url"]` or `["edges", 7, "case"]`. */
  path: ProblemPath;
}
