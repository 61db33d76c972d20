/**
 * Splits a template string into literal text and `${…}` expressions, the way
 * Conductor's ParametersUtils finds them (conductor-oss/conductor,
 * core/src/main/java/com/netflix/conductor/core/utils/ParametersUtils.java):
 *
 * - An expression starts at `${` not preceded by `$` and ends at the `}` that
 *   balances it. Every `{` and `}` inside counts, quoted or not — Conductor's
 *   balanced-brace regex does the same, so `${x['a}b']}` is not one expression
 *   there either.
 * - `$${` is an escape: it stands for the literal text `${` and starts nothing.
 * - Expressions nest: `${workflow.input.${workflow.input.key}}` holds an inner
 *   expression that is resolved first and spliced in as text.
 * - A `${` with no balancing `}` stays literal text (Conductor's regex simply
 *   does not match it); `unclosed` lists them so static analysis can report them.
 *
 * One linear pass with a brace stack, then an iterative tree build: a 1 MB string
 * of `${` or 10k levels of nesting cost O(n) and never recurse.
 */

/** Expressions nested deeper than this resolve to null and are reported as problems. */
export const MAX_EXPRESSION_NESTING = 32;

/** A piece of a parsed template: literal text or an expression. */
export type TemplatePart = TemplateText | TemplateExpression;

/** Literal text between expressions. */
export interface TemplateText {
  kind: "text";
  /** The text with each `$${` escape already turned into `${`. */
  text: string;
  /** Offset of the first character in the parsed string. */
  start: number;
  /** Offset one past the last character. */
  end: number;
}

/** A `${…}` expression. */
export interface TemplateExpression {
  kind: "expression";
  /** Offset of the `$` of `${` in the parsed string. */
  start: number;
  /** Offset one past the closing `}`. */
  end: number;
  /** The body between `${` and `}`, verbatim (escapes and nested expressions unresolved). */
  body: string;
  /** The body as text and nested expressions. Empty when `tooDeep`. */
  parts: TemplatePart[];
  /** 0 for an expression directly in the string, 1 for one nested inside it, and so on. */
  depth: number;
  /**
   * Set on an expression when something inside it nests deeper than
   * {@link MAX_EXPRESSION_NESTING}: it resolves to null and its body is not parsed further.
   */
  tooDeep: boolean;
}

/** The result of {@link parseTemplate}. */
export interface ParsedTemplate {
  /** Text and top-level expressions, in order, covering the whole string. */
  parts: TemplatePart[];
  /** Offsets of each `${` without a balancing `}` (left as literal text). */
  unclosed: number[];
}

const DOLLAR = 36; // $
const OPEN = 123; // {
const CLOSE = 125; // }

interface Node {
  start: number;
  end: number;
  depth: number;
  children: Node[];
  top: Node | null;
  tooDeep: boolean;
}

/** Turns `$${` escapes into `${` (Conductor's final `replaceAll("\\$\\$\\{", "\\${")`). */
function unescapeText(text: string): string {
  return text.includes("$${") ? text.replaceAll("$${", "${") : text;
}

function textPart(source: string, start: number, end: number): TemplateText {
  return { kind: "text", text: unescapeText(source.slice(start, end)), start, end };
}

/**
 * Splits `text` into literal text and `${…}` expressions (see the module comment
 * for the rules). Never throws; adjacent text is merged, empty text is omitted.
 */
export function parseTemplate(text: string): ParsedTemplate {
  if (!text.includes("${")) {
    return { parts: text === "" ? [] : [{ kind: "text", text, start: 0, end: text.length }], unclosed: [] };
  }

  // Pass 1: brace matching. An entry >= 0 is the offset of an expression's `$`;
  // a negative entry (~offset) is a plain or escaped `{`, which still has to balance.
  const stack: number[] = [];
  const intervals: [number, number][] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === DOLLAR) {
      const c1 = text.charCodeAt(i + 1);
      if (c1 === DOLLAR && text.charCodeAt(i + 2) === OPEN) {
        stack.push(~(i + 2));
        i += 2;
      } else if (c1 === OPEN) {
        stack.push(i);
        i += 1;
      }
    } else if (c === OPEN) {
      stack.push(~i);
    } else if (c === CLOSE && stack.length > 0) {
      const top = stack.pop() as number;
      if (top >= 0) intervals.push([top, i + 1]);
    }
  }
  const unclosed = stack.filter((s) => s >= 0);

  // Pass 2: nest the intervals. Brace matching guarantees they never partly overlap.
  intervals.sort((a, b) => a[0] - b[0]);
  const roots: Node[] = [];
  const open: Node[] = [];
  for (const [start, end] of intervals) {
    while (open.length > 0 && (open[open.length - 1] as Node).end <= start) open.pop();
    const parent = open[open.length - 1];
    const node: Node = { start, end, depth: open.length, children: [], top: null, tooDeep: false };
    if (parent === undefined) {
      roots.push(node);
    } else {
      node.top = parent.top ?? parent;
      parent.children.push(node);
      if (node.depth > MAX_EXPRESSION_NESTING) node.top.tooDeep = true;
    }
    open.push(node);
  }

  // Pass 3: materialise parts, outermost first, without recursion.
  const build = (node: Node): TemplateExpression => ({
    kind: "expression",
    start: node.start,
    end: node.end,
    body: text.slice(node.start + 2, node.end - 1),
    parts: [],
    depth: node.depth,
    tooDeep: node.tooDeep,
  });
  const fill = (parts: TemplatePart[], from: number, to: number, children: Node[], out: [Node, TemplateExpression][]): void => {
    let cursor = from;
    for (const child of children) {
      if (child.start > cursor) parts.push(textPart(text, cursor, child.start));
      const expr = build(child);
      parts.push(expr);
      out.push([child, expr]);
      cursor = child.end;
    }
    if (to > cursor) parts.push(textPart(text, cursor, to));
  };

  const parts: TemplatePart[] = [];
  const pending: [Node, TemplateExpression][] = [];
  fill(parts, 0, n, roots, pending);
  while (pending.length > 0) {
    const [node, expr] = pending.pop() as [Node, TemplateExpression];
    const top = node.top ?? node;
    if (top.tooDeep) continue;
    fill(expr.parts, node.start + 2, node.end - 1, node.children, pending);
  }
  return { parts, unclosed };
}
