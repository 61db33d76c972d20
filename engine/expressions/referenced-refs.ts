/**
 * Static analysis of templates: which task references and workflow fields they
 * read, and what is wrong with them. The compiler uses `refs` to know which
 * terminal tasks an evaluation must load (invariant 6); the validator uses it to
 * flag unknown or non-upstream refs, and `problems` to mark the node and field.
 */
import type { FilterExpression, JsonPath, PathSegment } from "./json-path-parser";
import { parseJsonPath } from "./json-path-parser";
import { isContainer, isJsonObject } from "./json-value";
import { TASK_ID_SYSTEM_PARAMETER } from "./expression-context";
import { computedRoot } from "./computed-root";
import { MAX_EXPRESSION_NESTING, parseTemplate } from "./template-parser";
import type { TemplateExpression } from "./template-parser";

/** What kind of problem an expression has. */
export type ExpressionProblemCode =
  /** `${` without a balancing `}`: stays literal text (Conductor does the same), probably a typo. */
  | "unclosed-expression"
  /** `${}`: resolves to "". */
  | "empty-expression"
  /** The path does not parse as Jayway JSONPath (or uses `=~`, `concat()`…): resolves to null. */
  | "invalid-path"
  /** The path does not start with `workflow` or a task reference name (`${$..id}`, `${*.output}`): resolves to null or []. */
  | "invalid-root"
  /**
   * The task reference is computed at run time (`${${workflow.input.ref}.output}`), so no one can know which
   * task to load: resolves to null. Also a `$` path inside an expression that has nested expressions: reads nothing.
   */
  | "dynamic-root"
  /** Expressions nested deeper than MAX_EXPRESSION_NESTING: resolves to null. */
  | "too-deep";

/** One problem found in a template. */
export interface ExpressionProblem {
  code: ExpressionProblemCode;
  /** "error" when the expression cannot do what it says; "warning" when it resolves but probably not as meant. */
  severity: "error" | "warning";
  message: string;
  /** Where the string sits inside the analysed value: object keys and array indexes, e.g. `["input", "url"]`. */
  path: (string | number)[];
  /** Offset of the expression's `${` in that string. */
  offset: number;
  /** The expression's text (cut to 200 characters). */
  expression: string;
}

/** The result of {@link referencedRefs}. */
export interface ExpressionReferences {
  /** Task reference names read, nested expressions and filter `$` paths included; never `workflow`. */
  refs: Set<string>;
  /** Fields of `workflow` read (`input`, `variables`, `workflowId`…), or `*` when a path reads all of it. */
  workflowFields: Set<string>;
  problems: ExpressionProblem[];
}

const SEVERITY: Record<ExpressionProblemCode, "error" | "warning"> = {
  "unclosed-expression": "warning",
  "empty-expression": "warning",
  "invalid-path": "error",
  "invalid-root": "error",
  "dynamic-root": "error",
  "too-deep": "error",
};

interface PathLink {
  key: string | number;
  parent: PathLink | null;
}

function materialize(link: PathLink | null): (string | number)[] {
  const out: (string | number)[] = [];
  for (let l = link; l !== null; l = l.parent) out.push(l.key);
  return out.reverse();
}

interface Collector {
  refs: Set<string>;
  workflowFields: Set<string>;
  problems: ExpressionProblem[];
}

/** Per-string state: the value path is materialised once, and only if a problem needs it. */
class StringSite {
  private path: (string | number)[] | undefined;
  constructor(
    readonly text: string,
    private readonly link: PathLink | null,
    private readonly out: Collector,
  ) {}

  report(code: ExpressionProblemCode, message: string, start: number, end: number): void {
    this.path ??= materialize(this.link);
    this.out.problems.push({
      code,
      severity: SEVERITY[code],
      message,
      path: this.path,
      offset: start,
      expression: this.text.slice(start, Math.min(end, start + 200)),
    });
  }
}

/**
 * Finds every task reference and workflow field a template reads, including
 * inside nested expressions and filter `$` paths, and every problem, each with
 * the path of its string inside `value`. Walks any depth without recursion; never throws.
 *
 * @example
 * referencedRefs({ input: { url: "${cfg.output.host}/${workflow.input.id}" } })
 * // refs {"cfg"}, workflowFields {"input"}, problems []
 */
export function referencedRefs(value: unknown): ExpressionReferences {
  const out: Collector = { refs: new Set(), workflowFields: new Set(), problems: [] };
  const stack: [unknown, PathLink | null][] = [[value, null]];
  while (stack.length > 0) {
    const [v, link] = stack.pop() as [unknown, PathLink | null];
    if (typeof v === "string") {
      if (v.includes("${")) analyzeString(new StringSite(v, link, out), out);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) if (typeof v[i] === "string" || isContainer(v[i])) stack.push([v[i], { key: i, parent: link }]);
    } else if (isJsonObject(v)) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        const child = v[key];
        if (typeof child === "string" || isContainer(child)) stack.push([child, { key, parent: link }]);
      }
    }
  }
  return out;
}

function analyzeString(site: StringSite, out: Collector): void {
  const parsed = parseTemplate(site.text);
  for (const offset of parsed.unclosed) {
    site.report("unclosed-expression", "`${` has no closing `}`, so it stays literal text", offset, offset + 40);
  }
  const pending: TemplateExpression[] = [];
  for (const part of parsed.parts) if (part.kind === "expression") pending.push(part);
  while (pending.length > 0) {
    const expr = pending.pop() as TemplateExpression;
    if (expr.tooDeep) {
      site.report("too-deep", `expressions nested more than ${MAX_EXPRESSION_NESTING} deep resolve to null`, expr.start, expr.end);
      continue;
    }
    let nested = false;
    for (const part of expr.parts) {
      if (part.kind === "expression") {
        nested = true;
        pending.push(part);
      }
    }
    if (nested) analyzeComputedBody(expr, site, out);
    else analyzeStaticBody(expr, site, out);
  }
}

function analyzeStaticBody(expr: TemplateExpression, site: StringSite, out: Collector): void {
  const first = expr.parts[0];
  const raw = first?.kind === "text" ? first.text : "";
  const body = raw.trim();
  if (body === "") {
    site.report("empty-expression", "an empty expression resolves to an empty string", expr.start, expr.end);
    return;
  }
  if (raw === TASK_ID_SYSTEM_PARAMETER) return;
  const parsed = parseJsonPath(body);
  if (!parsed.ok) {
    site.report("invalid-path", `invalid path (resolves to null): ${parsed.error}`, expr.start, expr.end);
    return;
  }
  for (const rooted of documentPaths(parsed.path)) analyzeRootedPath(rooted, expr, site, out);
}

/** The path itself (a top-level `@` means the document too) and every `$` path inside its filters. */
function documentPaths(path: JsonPath): JsonPath[] {
  const found: JsonPath[] = [path];
  const visitPath = (p: JsonPath): void => {
    for (const s of p.segments) visitSegment(s);
  };
  const visitSegment = (s: PathSegment): void => {
    if (s.kind === "scan") visitSegment(s.next);
    else if (s.kind === "filter") visitFilter(s.filter);
  };
  const visitFilter = (f: FilterExpression): void => {
    switch (f.kind) {
      case "or":
      case "and":
        f.operands.forEach(visitFilter);
        return;
      case "not":
        visitFilter(f.operand);
        return;
      case "exists":
        if (f.path.root === "$") found.push(f.path);
        visitPath(f.path);
        return;
      case "compare":
        for (const operand of [f.left, f.right]) {
          if (operand.kind !== "path") continue;
          if (operand.path.root === "$") found.push(operand.path);
          visitPath(operand.path);
        }
        return;
    }
  };
  visitPath(path);
  return found;
}

function analyzeRootedPath(path: JsonPath, expr: TemplateExpression, site: StringSite, out: Collector): void {
  const first = path.segments[0];
  if (first?.kind !== "property") {
    site.report("invalid-root", "a path must start with `workflow` or a task reference name", expr.start, expr.end);
    return;
  }
  for (const name of first.names) {
    if (name !== "workflow") {
      out.refs.add(name);
      continue;
    }
    const second = path.segments[1];
    if (second?.kind !== "property") {
      out.workflowFields.add("*");
      continue;
    }
    // `secrets` and `env` are read at dispatch (dispatch-references.ts), which checks how they are used.
    for (const field of second.names) out.workflowFields.add(field);
  }
}

const STATIC_FIELD = /^\.([^.[\s(]+)(?=[.[(]|$)/;
const QUOTED_FIELD = /^\[\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*\]/;

/**
 * A body with nested expressions is only known at run time, so its path cannot
 * be parsed now. What matters is the root: if the static text before the first
 * nested expression names it, we know which task to load; otherwise we cannot.
 */
function analyzeComputedBody(expr: TemplateExpression, site: StringSite, out: Collector): void {
  const found = computedRoot(expr);
  if (found === undefined) {
    site.report("dynamic-root", "the reference this expression reads is computed at run time, so no one can know which task to load; it resolves to null", expr.start, expr.end);
    return;
  }
  const { root, rest } = found;
  if (root === "workflow") {
    // The field is static only if the text names it completely before the first nested expression.
    const f = STATIC_FIELD.exec(rest) ?? QUOTED_FIELD.exec(rest);
    const field = f === null ? undefined : (f[1] ?? f[2]);
    const complete = f !== null && f[0].length < rest.length;
    out.workflowFields.add(field !== undefined && complete ? field : "*");
  } else {
    out.refs.add(root);
  }
  // A `$` path inside a filter of a computed body could name any task. Resolution
  // lets such a body read only its root, so that `$` path will read nothing: say so.
  const laterText = [rest, ...expr.parts.slice(1).map((p) => (p.kind === "text" ? p.text : ""))];
  if (laterText.some((t) => t.includes("$"))) {
    site.report("dynamic-root", "a `$` path inside an expression with nested expressions cannot be analysed, so it reads nothing", expr.start, expr.end);
  }
}
