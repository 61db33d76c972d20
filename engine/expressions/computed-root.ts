/**
 * The root of an expression whose body holds nested expressions
 * (`${workflow.input.${lookup.output.key}}`). Its path is only known at run
 * time, so it cannot be parsed ahead; but the static text before the first
 * nested expression can name the root (`workflow` or a task ref), and that is
 * what decides which task an evaluation must load.
 *
 * Static analysis and resolution share this function: resolution lets such a
 * body read only the root named here (plus the workflow), so a nested value that
 * smuggles in a `$.other…` filter, or a root computed at run time, reads nothing
 * rather than a task the blueprint did not load.
 */
import type { TemplateExpression } from "./template-parser";

// `name.` / `name[` / `$.name.` at the start of a computed body: the root is static.
const STATIC_ROOT = /^(?:[$@]\.)?([^.[\s($@][^.[\s(]*)(?=[.[])/;
const QUOTED_ROOT = /^[$@]\[\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*\]/;

/** A computed body's static root, and the static text after it up to the first nested expression. */
export interface ComputedRoot {
  root: string;
  rest: string;
}

/** The root a computed body names in its leading static text, or undefined when it is computed too. */
export function computedRoot(expr: TemplateExpression): ComputedRoot | undefined {
  const first = expr.parts[0];
  const lead = first?.kind === "text" ? first.text.trimStart() : "";
  const s = STATIC_ROOT.exec(lead);
  if (s !== null && s[1] !== undefined) return { root: s[1], rest: lead.slice(s[0].length) };
  const q = QUOTED_ROOT.exec(lead);
  const name = q === null ? undefined : (q[1] ?? q[2]);
  if (q !== null && name !== undefined && name !== "") return { root: name, rest: lead.slice(q[0].length) };
  return undefined;
}
