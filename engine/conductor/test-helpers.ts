import type { WorkflowDefinition, WorkflowNode } from "../definition";
import type { ConductorWorkflowTask } from "./conductor-schema";
import type { ConductorImportOptions } from "./import-workflow";
import { importConductorWorkflow } from "./import-workflow";

/** Builders and readers shared by the Conductor interop tests. */

/** A SIMPLE task. */
export function simpleTask(ref: string, extra: Partial<ConductorWorkflowTask> = {}): ConductorWorkflowTask {
  return { name: ref, taskReferenceName: ref, type: "SIMPLE", inputParameters: {}, ...extra };
}

/** A FORK_JOIN over `branches`. */
export function forkTask(ref: string, branches: ConductorWorkflowTask[][]): ConductorWorkflowTask {
  return { name: ref, taskReferenceName: ref, type: "FORK_JOIN", forkTasks: branches };
}

/** A JOIN waiting on `joinOn`. */
export function joinTask(ref: string, joinOn: string[]): ConductorWorkflowTask {
  return { name: ref, taskReferenceName: ref, type: "JOIN", joinOn };
}

/** A value-param SWITCH on `workflow.input.kind`. */
export function switchTask(ref: string, decisionCases: Record<string, ConductorWorkflowTask[]>, defaultCase: ConductorWorkflowTask[] = []): ConductorWorkflowTask {
  return {
    name: ref,
    taskReferenceName: ref,
    type: "SWITCH",
    evaluatorType: "value-param",
    expression: "kind",
    inputParameters: { kind: "${workflow.input.kind}" },
    decisionCases,
    defaultCase,
  };
}

/** A TERMINATE. */
export function terminateTask(ref: string): ConductorWorkflowTask {
  return { name: ref, taskReferenceName: ref, type: "TERMINATE", inputParameters: { terminationStatus: "COMPLETED" } };
}

/** A WorkflowDef around `tasks`. */
export function conductorDef(tasks: ConductorWorkflowTask[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "test_flow", version: 1, schemaVersion: 2, tasks, ...extra };
}

/** Imports, failing the test with the problems when it does not succeed. */
export function mustImport(def: unknown, options?: ConductorImportOptions): WorkflowDefinition {
  const result = importConductorWorkflow(def, options);
  if (!result.ok) throw new Error(`import failed:\n${JSON.stringify(result.problems, null, 2)}`);
  return result.definition;
}

/** The edges of a definition as `a->b` / `sw[case]->b`, in definition order. */
export function edgeList(def: Pick<WorkflowDefinition, "edges">): string[] {
  return def.edges.map((e) => `${e.source}${e.case === undefined ? "" : `[${e.case}]`}->${e.target}`);
}

/** The node with `ref`, failing when there is none. */
export function nodeOf(def: Pick<WorkflowDefinition, "nodes">, ref: string): WorkflowNode {
  const node = def.nodes.find((n) => n.ref === ref);
  if (node === undefined) throw new Error(`no node ${ref}`);
  return node;
}
