/**
 * The input template a dispatched task's input was resolved from, and the
 * strings in it that read secrets or variables — what the dispatcher
 * resolves again when it sends the task (server/secrets/dispatch-input.ts).
 * It mirrors how decide builds a node's input (`schedule`), so a path in the
 * template is the same path in the stored input.
 */
import { DISPATCHED_NODE_TYPES } from "../definition";
import { analyzeDispatchString } from "../expressions";
import type { DispatchReference } from "../expressions";
import type { BlueprintNode } from "../compile/types";

type Json = Record<string, unknown>;

/** Own-key write that is safe for `__proto__` (a legal ref and JSON key). */
function put(obj: Json, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The node's input template: its policy's inputTemplate overridden by its own input (what decide resolves). */
export function nodeInputTemplate(node: Pick<BlueprintNode, "policy" | "input">): Json {
  const template: Json = {};
  for (const [k, v] of Object.entries(node.policy.inputTemplate)) put(template, k, v);
  if (node.input !== null) for (const k of Object.keys(node.input)) put(template, k, node.input[k]);
  return template;
}

/**
 * The template of a dispatched node's whole input, or undefined for a node
 * that is not dispatched. Keys decide writes unresolved (an INLINE's
 * `expression`, a JQ `queryExpression`) are left out: they hold no references.
 */
export function dispatchTemplate(node: BlueprintNode): Json | undefined {
  if (!DISPATCHED_NODE_TYPES.has(node.type)) return undefined;
  const template = nodeInputTemplate(node);
  switch (node.type) {
    case "HTTP":
    case "HTTP_POLL":
      put(template, "http_request", node.config.httpRequest);
      break;
    case "JDBC":
    case "LIST_MCP_TOOLS":
    case "CALL_MCP_TOOL": {
      const fields = node.type === "JDBC" ? node.config.jdbc : node.config.mcp;
      if (typeof fields === "object" && fields !== null && !Array.isArray(fields)) for (const [k, v] of Object.entries(fields)) put(template, k, v);
      break;
    }
    case "LLM_CHAT_COMPLETE":
    case "LLM_TEXT_COMPLETE":
    case "LLM_GENERATE_EMBEDDINGS":
    case "LLM_INDEX_TEXT":
    case "LLM_SEARCH_INDEX": {
      const fields = node.config.llm;
      if (typeof fields === "object" && fields !== null && !Array.isArray(fields)) for (const [k, v] of Object.entries(fields)) put(template, k, v);
      break;
    }
    case "INLINE":
      delete template.evaluatorType;
      delete template.expression;
      break;
    case "JSON_JQ_TRANSFORM":
      delete template.queryExpression;
      break;
    default:
      break;
  }
  return template;
}

/** A template string that reads secrets or variables, where it sits in the input. */
export interface DispatchSite {
  path: (string | number)[];
  text: string;
  references: DispatchReference[];
}

/**
 * Every string of `template` that reads a secret or variable and can be
 * resolved at dispatch (one that validation would refuse is left as its
 * placeholders). Walks without recursion.
 */
export function dispatchSites(template: unknown): DispatchSite[] {
  const out: DispatchSite[] = [];
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: template, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === "string") {
      if (!v.includes("${workflow")) continue;
      const analysis = analyzeDispatchString(v);
      if (analysis.references.length > 0 && analysis.problems.length === 0) out.push({ path, text: v, references: analysis.references });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i] as unknown, path: [...path, i] });
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ v: (v as Json)[keys[i]!], path: [...path, keys[i]!] });
    }
  }
  return out;
}
