import { findNodeAtLocation, parse as parseTolerant, parseTree, printParseErrorCode } from "jsonc-parser";
import type { ParseError } from "jsonc-parser";
import type { Node as JsonNode } from "jsonc-parser";
import { isNodeType } from "@/engine";
import type { Problem, WorkflowDefinition } from "@/engine";

/**
 * The JSON view's pure half: text ↔ definition, where a parse error is, and
 * where in the text a validator problem's path points. Unit-tested without a
 * browser.
 */

/** The text the JSON view shows for a definition. */
export function definitionText(definition: WorkflowDefinition): string {
  return JSON.stringify(definition, null, 2);
}

/** A problem in the text, with its 1-based line and column for the message. */
export interface TextProblem {
  from: number;
  to: number;
  line: number;
  column: number;
  message: string;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      last = i;
    }
  }
  return { line, column: offset - last };
}

function at(text: string, from: number, to: number, message: string): TextProblem {
  return { from, to: Math.max(to, from), ...lineColumn(text, from), message };
}

/**
 * Parses the text, or says where and why it is not JSON. JSON.parse decides
 * (it is the parser that matters); V8's message does not always carry a
 * position, so jsonc-parser, in strict mode, finds where the text breaks.
 */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; problem: TextProblem } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const errors: ParseError[] = [];
    parseTolerant(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    if (first) {
      const words = printParseErrorCode(first.error).replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
      return { ok: false, problem: at(text, first.offset, first.offset + Math.max(first.length, 1), `Not valid JSON: ${words}`) };
    }
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, problem: at(text, text.length, text.length, `Not valid JSON: ${message}`) };
  }
}

/**
 * Whether a parsed value can be drawn: the canvas needs nodes with a ref, a
 * known type and a position, edges with two ends, and a SWITCH's cases. Any
 * other mistake is the validator's to report; the diagram still shows it.
 */
export function drawableProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "The definition must be a JSON object.";
  const d = value as Record<string, unknown>;
  if (!Array.isArray(d.nodes)) return "`nodes` must be an array.";
  if (!Array.isArray(d.edges)) return "`edges` must be an array.";
  const refs = new Set<string>();
  for (const [i, n] of (d.nodes as unknown[]).entries()) {
    if (typeof n !== "object" || n === null) return `nodes[${i}] must be an object.`;
    const node = n as Record<string, unknown>;
    if (typeof node.ref !== "string" || node.ref === "") return `nodes[${i}] needs a \`ref\`.`;
    if (refs.has(node.ref)) return `Two nodes are called “${node.ref}”: refs must be unique.`;
    refs.add(node.ref);
    if (!isNodeType(node.type)) return `nodes[${i}] (“${node.ref}”) has an unknown \`type\`.`;
    const p = node.position as Record<string, unknown> | undefined;
    if (typeof p !== "object" || p === null || typeof p.x !== "number" || typeof p.y !== "number") return `nodes[${i}] (“${node.ref}”) needs a \`position\` {x, y}.`;
    if (node.type === "SWITCH" && (!Array.isArray(node.cases) || !node.cases.every((c) => typeof c === "string"))) {
      return `nodes[${i}] (“${node.ref}”) is a SWITCH and needs \`cases\`, a list of strings.`;
    }
    if (node.parent !== undefined && typeof node.parent !== "string") return `nodes[${i}] (“${node.ref}”): \`parent\` must be a ref.`;
  }
  for (const [i, e] of (d.edges as unknown[]).entries()) {
    if (typeof e !== "object" || e === null) return `edges[${i}] must be an object.`;
    const edge = e as Record<string, unknown>;
    if (typeof edge.source !== "string" || typeof edge.target !== "string") return `edges[${i}] needs a \`source\` and a \`target\`.`;
  }
  return null;
}

/**
 * Reuses every node and edge of `previous` that the new value repeats
 * exactly, so an edit in the JSON view re-renders only the nodes it touched.
 */
export function shareUnchanged(previous: WorkflowDefinition, next: WorkflowDefinition): WorkflowDefinition {
  const oldNodes = new Map(previous.nodes.map((n) => [n.ref, n]));
  const nodes = next.nodes.map((n) => {
    const old = oldNodes.get(n.ref);
    return old && JSON.stringify(old) === JSON.stringify(n) ? old : n;
  });
  const edges = next.edges.map((e, i) => {
    const old = previous.edges[i];
    return old && JSON.stringify(old) === JSON.stringify(e) ? old : e;
  });
  return { ...next, nodes, edges };
}

/** Where each validator problem points in the text (the nearest enclosing value when the path itself is absent). */
export function locateProblems(text: string, problems: readonly Problem[]): TextProblem[] {
  if (problems.length === 0) return [];
  const tree = parseTree(text);
  if (!tree) return [];
  return problems.map((p) => {
    let node: JsonNode | undefined;
    for (let len = p.path.length; len >= 0 && !node; len--) node = findNodeAtLocation(tree, p.path.slice(0, len));
    // A property's value node: underline its key too, which is what people read.
    const target = node?.parent?.type === "property" ? node.parent : node;
    const from = target?.offset ?? 0;
    const to = target ? Math.min(from + target.length, from + 400) : 1;
    return at(text, from, to, p.message);
  });
}
