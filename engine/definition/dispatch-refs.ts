/**
 * Where a definition reads `${workflow.secrets.NAME}` and `${workflow.env.NAME}`
 * (expressions/dispatch-references.ts): only the input of a node that is
 * dispatched — sent to a worker or the system-task runner, which resolves
 * them — reads the values. The validator refuses them anywhere else, and the
 * server checks each named one exists when the definition is saved.
 */
import { analyzeDispatchString } from "./expression-refs";
import type { DispatchReference } from "./expression-refs";
import { LLM_NODE_TYPES, isLlmNodeType } from "./llm-schema";
import type { FieldPath } from "./node-types";
import { fieldValue } from "./node-types";
import type { ProblemPath } from "./problems";
import type { NodeType, WorkflowDefinition, WorkflowNode } from "./schema";

/** Node types whose input leaves the decider for a worker or the system-task runner, and is resolved again there. */
export const DISPATCHED_NODE_TYPES: ReadonlySet<NodeType> = new Set<NodeType>([
  "SIMPLE",
  "DYNAMIC",
  "HTTP",
  "HTTP_POLL",
  "JDBC",
  "LIST_MCP_TOOLS",
  "CALL_MCP_TOOL",
  ...LLM_NODE_TYPES,
  "INLINE",
  "JSON_JQ_TRANSFORM",
]);

/** The fields of a node of `type` that end up in its dispatched input. */
export function dispatchedFields(type: NodeType): readonly FieldPath[] {
  if (!DISPATCHED_NODE_TYPES.has(type)) return [];
  if (type === "HTTP" || type === "HTTP_POLL") return [["input"], ["policy", "inputTemplate"], ["httpRequest"]];
  if (type === "JDBC") return [["input"], ["policy", "inputTemplate"], ["jdbc"]];
  if (type === "LIST_MCP_TOOLS" || type === "CALL_MCP_TOOL") return [["input"], ["policy", "inputTemplate"], ["mcp"]];
  if (isLlmNodeType(type)) return [["input"], ["policy", "inputTemplate"], ["llm"]];
  return [["input"], ["policy", "inputTemplate"]];
}

export function isDispatchedField(type: NodeType, field: FieldPath): boolean {
  return dispatchedFields(type).some((f) => f.length === field.length && f.every((k, i) => k === field[i]));
}

/** Every string holding `${workflow` inside `value`, with its path, without recursion. */
export function dispatchCandidateStrings(value: unknown, base: ProblemPath): { text: string; path: ProblemPath }[] {
  const out: { text: string; path: ProblemPath }[] = [];
  const stack: { v: unknown; path: ProblemPath }[] = [{ v: value, path: base }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes("${workflow")) out.push({ text: v, path });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i] as unknown, path: [...path, i] });
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ v: (v as Record<string, unknown>)[keys[i]!], path: [...path, keys[i]!] });
    }
  }
  return out;
}

export interface DefinitionDispatchReference {
  reference: DispatchReference;
  /** The node reading it. */
  ref: string;
  /** Where the string is, e.g. `["nodes", 2, "httpRequest", "headers", "Authorization"]`. */
  path: ProblemPath;
}

/**
 * Every secret and variable a valid definition's dispatched inputs read,
 * inline sub-workflows included: what the server checks against the
 * namespace when the definition is saved.
 */
export function definitionDispatchReferences(definition: WorkflowDefinition): DefinitionDispatchReference[] {
  const out: DefinitionDispatchReference[] = [];
  const pending: { nodes: readonly WorkflowNode[]; at: ProblemPath }[] = [{ nodes: definition.nodes, at: [] }];
  while (pending.length > 0) {
    const { nodes, at } = pending.pop()!;
    nodes.forEach((node, i) => {
      const nodeAt: ProblemPath = [...at, "nodes", i];
      for (const field of dispatchedFields(node.type)) {
        for (const { text, path } of dispatchCandidateStrings(fieldValue(node, field), [...nodeAt, ...field])) {
          for (const reference of analyzeDispatchString(text).references) out.push({ reference, ref: node.ref, path });
        }
      }
      if (node.type === "SUB_WORKFLOW" && node.workflowDefinition !== undefined) {
        pending.push({ nodes: (node.workflowDefinition).nodes, at: [...nodeAt, "workflowDefinition"] });
      }
    });
  }
  return out;
}
