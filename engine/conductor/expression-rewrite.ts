import type { WorkflowNode } from "../definition";
import { NODE_TYPES, fieldValue } from "../definition";

/**
 * Renames the root of `${root…}` expressions inside a value: a Conductor
 * JOIN absorbed into the FORK_JOIN_DYNAMIC before it is read as that fork on
 * import, and the other way round on export. A textual rewrite of the root
 * only — `${join.output.x}`, `${join['output']}`, `${join}` and nested
 * `${workflow.input.${join.output.k}}` are all found; an escaped `$${join…}`
 * is literal text and left alone.
 */

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");
}

/** A rewriter of `${from…}` roots to `${to…}`; `suffix` limits it to roots followed by it (e.g. `.output`). */
export function rootRewriter(from: string, to: string, suffix = ""): (text: string) => string {
  const pattern = new RegExp(`(?<!\\$)\\$\\{(\\s*)${escapeRegExp(from)}(?=${suffix === "" ? "[.\\[}\\s]" : escapeRegExp(suffix)})`, "g");
  return (text) => (text.includes(from) ? text.replace(pattern, (_m, space: string) => `\${${space}${to}`) : text);
}

/** `value` with `rewrite` applied to every string in it (keys untouched); shares nothing it changed with the input. */
export function rewriteStrings(value: unknown, rewrite: (text: string) => string): { value: unknown; changed: boolean } {
  let changed = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") {
      const r = rewrite(v);
      if (r !== v) changed = true;
      return r;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === "object" && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = walk(x);
      return out;
    }
    return v;
  };
  const out = walk(value);
  return { value: changed ? out : value, changed };
}

/** Applies `rewrite` to every expression-bearing field of a node (the registry's `expressionFields`), in place. True when anything changed. */
export function rewriteNodeExpressions(node: WorkflowNode, rewrite: (text: string) => string): boolean {
  let any = false;
  for (const path of NODE_TYPES[node.type].expressionFields) {
    const value = fieldValue(node, path);
    if (value === undefined) continue;
    const { value: next, changed } = rewriteStrings(value, rewrite);
    if (!changed) continue;
    any = true;
    let holder = node as unknown as Record<string, unknown>;
    for (const key of path.slice(0, -1)) holder = holder[key] as Record<string, unknown>;
    holder[path[path.length - 1]!] = next;
  }
  return any;
}
