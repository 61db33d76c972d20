import type { ProblemCode } from "../definition";

/**
 * What Conductor import and export report. Import problems point into the
 * Conductor JSON (`["tasks", 2, "decisionCases", "big", 0, "type"]`), so a
 * dialog can show the offending task; export problems name the graph node.
 */

/** Codes of problems only Conductor interop has; the stable contract, with what each means. */
export const CONDUCTOR_PROBLEM_CODES = {
  "invalid-workflow-def": "The JSON is not a Conductor WorkflowDef: a field has the wrong type or a required one is missing.",
  "unsupported-task-type": "A task type node-flow does not run (KAFKA_PUBLISH, JDBC, …).",
  "unsupported-feature": "A Conductor feature node-flow cannot represent faithfully (an expression where a definition is needed, the legacy dynamic-fork form, …).",
  "missing-config": "A task lacks configuration its type needs (a DECISION with no caseValueParam or caseExpression, a TERMINATE with no terminationStatus, …).",
  "missing-join": "A FORK_JOIN or FORK_JOIN_DYNAMIC not followed by a JOIN, as Conductor requires.",
  "invalid-join-on": "A JOIN's joinOn names a task it cannot wait for.",
  "too-deep": "Import: task lists (or inline sub-workflows) nest deeper than node-flow allows. Export: the graph nests too deeply for task lists.",
  "not-structured": "Export: the graph has no nested Conductor equivalent at this node.",
  "invalid-definition": "Export: the definition does not validate, so it is not exported.",
} as const satisfies Record<string, string>;

/** A problem code of Conductor interop. */
export type ConductorProblemCode = keyof typeof CONDUCTOR_PROBLEM_CODES;

/** One reason an import failed. */
export interface ConductorImportProblem {
  /** An interop code, or — for what the imported graph's validation found — a definition problem code. */
  code: ConductorProblemCode | ProblemCode;
  /** A sentence for people. Not stable: match on `code`. */
  message: string;
  /** The taskReferenceName of the task it is about, when there is one. */
  ref?: string;
  /** Where in the Conductor JSON. */
  path: (string | number)[];
}

/** Codes of import warnings: the import succeeded, but something was dropped or reinterpreted. */
export const CONDUCTOR_WARNING_CODES = {
  "field-dropped": "A Conductor field node-flow has no place for was left out (documentation, audit, vendor or runtime-only fields that change behaviour).",
  "legacy-form": "A deprecated form was converted to its replacement (DECISION → SWITCH, LAMBDA → INLINE).",
  "join-on-adjusted": "A joinOn entry was reinterpreted: a TERMINATE (nothing to wait for), a loop body task (waits for the loop), an absorbed dynamic-fork JOIN.",
  "expression-rewritten": "Expressions reading an absorbed JOIN now read the FORK_JOIN_DYNAMIC that replaces it.",
  "assumed-default": "A value Conductor requires was missing and its usual default was assumed.",
  "coerced": "A number written as a string (`readTimeOut: \"3000\"`) was read as that number, as Conductor reads it.",
} as const satisfies Record<string, string>;

/** A warning code of Conductor import. */
export type ConductorWarningCode = keyof typeof CONDUCTOR_WARNING_CODES;

/**
 * Something the import did that the user may want to know about, or — with a
 * definition problem code — a warning the imported graph's validation gave
 * (a task after a TERMINATE, an expression naming a ref that does not exist):
 * node-flow's extra checks, which never refuse what Conductor accepts.
 */
export interface ConductorImportWarning {
  code: ConductorWarningCode | ProblemCode;
  message: string;
  ref?: string;
  path: (string | number)[];
}

/** One reason an export failed. */
export interface ConductorExportProblem {
  code: ConductorProblemCode | ProblemCode;
  /** Why, naming the nodes involved. */
  message: string;
  /** The node to mark on the canvas. Absent only for workflow-level problems. */
  ref?: string;
  /** Every node involved, when several are. */
  refs?: string[];
}
