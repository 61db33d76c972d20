import type { NodeType } from "./schema";
import { createNode } from "./node-types";
import type { Problem } from "./problems";

/**
 * Builders for definitions in tests. They return plain `unknown`-friendly
 * objects on purpose: tests feed invalid shapes through the same builders.
 */

/** A JSON object in a test definition. */
export type Json = Record<string, unknown>;

/** A position; tests do not care where nodes sit. */
export const at = (x = 0, y = 0): { x: number; y: number } => ({ x, y });

/** A node of `type` with its palette defaults, overridden by `extra`. */
export function node(type: NodeType, ref: string, extra: Json = {}): Json {
  return { ...(createNode(type, ref, at()) as unknown as Json), ...extra };
}

/** A SIMPLE node. */
export function simple(ref: string, extra: Json = {}): Json {
  return { ref, type: "SIMPLE", name: "task", position: at(), ...extra };
}

/** An edge, with a case when given. */
export function edge(source: string, target: string, edgeCase?: string): Json {
  return edgeCase === undefined ? { source, target } : { source, target, case: edgeCase };
}

/** Edges a → b → c … */
export function chain(...refs: string[]): Json[] {
  return refs.slice(1).map((r, i) => edge(refs[i]!, r));
}

/** A definition around nodes and edges (which may be anything, to test garbage). */
export function workflow(nodes: unknown[], edges: unknown[] = [], extra: Json = {}): Json {
  return { schemaVersion: 1, name: "test_workflow", nodes, edges, ...extra };
}

/** The parts of a problem a test asserts on (messages are for people and may change). */
export function brief(problems: readonly Problem[]): { code: string; ref?: string; path: (string | number)[] }[] {
  return problems.map((p) => (p.ref === undefined ? { code: p.code, path: p.path } : { code: p.code, ref: p.ref, path: p.path }));
}
