/**
 * Conductor's parameter mapping: walk a JSON template and replace each
 * `${…}` in its strings with what the path reads from the workflow and its
 * tasks. Mirrors ParametersUtils.replaceVariables (conductor-oss/conductor,
 * core/src/main/java/com/netflix/conductor/core/utils/ParametersUtils.java):
 *
 * - A string that is exactly one expression becomes the value itself, keeping
 *   its type (object, array, number, boolean, null).
 * - Otherwise each expression is interpolated as text: null reads "null",
 *   numbers and booleans as usual, objects and arrays as JSON (Conductor prints
 *   Java's `{a=1}` for maps, which nothing can parse; node-flow prints JSON).
 * - Nested expressions resolve innermost first and are spliced in as text,
 *   then the outer path is read: `${workflow.input.${workflow.input.key}}`.
 *   The outer path may read only the root its own text names before the first
 *   nested expression; one whose root is itself computed
 *   (`${${workflow.input.ref}.output}`) is null, because no evaluation can know
 *   which task to load (Conductor, holding every task in memory, resolves it).
 * - `$${` stands for a literal `${` in the template's own text. (Conductor
 *   also rewrites `$${` inside substituted *values* of a mixed string; node-flow
 *   leaves data alone.)
 * - `${}` and `${   }` become "" (Conductor: blank path → empty string).
 * - A missing definite path gives null, a failing indefinite one `[]`, a
 *   malformed path null — never an exception (Jayway's SUPPRESS_EXCEPTIONS plus
 *   Conductor's catch-all).
 * - An unclosed `${` stays literal text; `referencedRefs` reports it.
 * - `${CPEWF_TASK_ID}` is the id of the task being scheduled (`context.taskId`),
 *   as in Conductor; no other name reaches the process environment.
 *
 * Values are shared with the context, not copied: treat the result as immutable.
 */
import { interpolationText, isContainer, isJsonObject, setOwn } from "./json-value";
import type { JsonObject } from "./json-value";
import { evaluateJsonPath } from "./json-path-evaluator";
import type { PathDocument, PathLookup } from "./json-path-evaluator";
import { parseJsonPath } from "./json-path-parser";
import type { JsonPathParseResult } from "./json-path-parser";
import { parseTemplate } from "./template-parser";
import type { TemplateExpression, TemplatePart } from "./template-parser";
import { computedRoot } from "./computed-root";
import { TASK_ID_SYSTEM_PARAMETER, taskDocument, workflowDocument } from "./expression-context";
import type { ExpressionContext } from "./expression-context";
import { classifyDispatchPath, dispatchPlaceholder } from "./dispatch-references";
import type { DispatchReference } from "./dispatch-references";

/**
 * Longest string an interpolation may build (UTF-16 units). Past it the string
 * resolves to null: 100k copies of a large value would otherwise exhaust memory
 * or hit V8's string limit, which throws.
 */
export const MAX_INTERPOLATED_LENGTH = 32 * 1024 * 1024;

/** Tuning for {@link resolveTemplate}; the defaults suit the decider. */
export interface ResolveOptions {
  /** Node visits one path evaluation may spend before yielding null or []; see MAX_PATH_STEPS. */
  maxPathSteps?: number;
  /**
   * What `${workflow.secrets.NAME}` and `${workflow.env.NAME}` read: given
   * only by the dispatcher, which resolves the definition's own strings when a
   * task is sent. Without it (the decider) a reference reads its placeholder:
   * `***` for a secret, its own text for a variable (dispatch-references.ts).
   */
  dispatch?: (reference: DispatchReference) => unknown;
}

// Paths repeat across evaluations of the same blueprint; parsing is cheap but not free.
// Bounded, and a cache only: results never depend on it.
const PATH_CACHE = new Map<string, JsonPathParseResult>();
const PATH_CACHE_LIMIT = 4096;
const PATH_CACHE_KEY_LIMIT = 512;

function compilePath(body: string): JsonPathParseResult {
  if (body.length > PATH_CACHE_KEY_LIMIT) return parseJsonPath(body);
  let parsed = PATH_CACHE.get(body);
  if (parsed === undefined) {
    parsed = parseJsonPath(body);
    if (PATH_CACHE.size >= PATH_CACHE_LIMIT) PATH_CACHE.clear();
    PATH_CACHE.set(body, parsed);
  }
  return parsed;
}

/** Conductor's expression document `{ workflow, <ref>: task }`, built lazily. */
function expressionDocument(context: ExpressionContext): PathDocument {
  let workflow: JsonObject | undefined;
  const tasks = new Map<string, PathLookup>();
  return {
    top(name: string): PathLookup {
      if (name === "workflow") {
        workflow ??= workflowDocument(context.workflow);
        return { found: true, value: workflow };
      }
      let found = tasks.get(name);
      if (found === undefined) {
        const task = context.task(name);
        found = task === undefined ? { found: false } : { found: true, value: taskDocument(task) };
        tasks.set(name, found);
      }
      return found;
    },
  };
}

interface Resolver {
  document: PathDocument;
  /** What `${CPEWF_TASK_ID}` reads. */
  taskId: string | undefined;
  maxSteps: number | undefined;
  dispatch: ((reference: DispatchReference) => unknown) | undefined;
}

/**
 * A body with nested expressions may read only the root its static text names
 * (see computed-root.ts): what static analysis promised the blueprint is all it can load.
 */
function restrictedTo(root: string, document: PathDocument): PathDocument {
  return { top: (name) => (name === root || name === "workflow" ? document.top(name) : { found: false }) };
}

function evaluateExpression(expr: TemplateExpression, r: Resolver): unknown {
  if (expr.tooDeep) return null;
  let document = r.document;
  let body: string | null;
  const only = expr.parts[0];
  if (expr.parts.length === 0) {
    body = "";
  } else if (expr.parts.length === 1 && only?.kind === "text") {
    body = only.text;
  } else {
    const found = computedRoot(expr);
    // Conductor would resolve `${${workflow.input.ref}.output}`; node-flow cannot know which task to load.
    if (found === undefined) return null;
    document = restrictedTo(found.root, r.document);
    body = interpolate(expr.parts, r);
    if (body === null) return null;
  }
  const path = body.trim();
  if (path === "") return "";
  // Conductor compares the untrimmed body (EnvUtils.isEnvironmentVariable); `${ CPEWF_TASK_ID }` is a path.
  if (body === TASK_ID_SYSTEM_PARAMETER) return r.taskId ?? null;
  const compiled = compilePath(path);
  if (!compiled.ok) return null;
  const dispatched = classifyDispatchPath(compiled.path);
  if (dispatched.kind !== "other") {
    // Only a reference written out in full, at the top of a string, names a secret or variable: a computed or
    // nested one would let run-time data choose which value to read.
    if (dispatched.kind === "misuse" || document !== r.document || expr.depth > 0) return null;
    return r.dispatch === undefined ? dispatchPlaceholder(dispatched.reference) : r.dispatch(dispatched.reference);
  }
  return evaluateJsonPath(compiled.path, document, r.maxSteps === undefined ? {} : { maxSteps: r.maxSteps });
}

/** Text and expressions joined as one string, or null when it would exceed MAX_INTERPOLATED_LENGTH. */
function interpolate(parts: readonly TemplatePart[], r: Resolver): string | null {
  let out = "";
  for (const part of parts) {
    const piece = part.kind === "text" ? part.text : interpolationText(evaluateExpression(part, r));
    if (out.length + piece.length > MAX_INTERPOLATED_LENGTH) return null;
    out += piece;
  }
  return out;
}

function resolveString(text: string, r: Resolver): unknown {
  if (!text.includes("${")) return text;
  const { parts } = parseTemplate(text);
  const only = parts[0];
  if (parts.length === 1 && only?.kind === "expression") return evaluateExpression(only, r);
  return interpolate(parts, r);
}

/**
 * Resolves every `${…}` expression in a JSON template against a workflow and
 * its tasks (rules in the module comment). Objects and arrays are rebuilt, the
 * template is never mutated, and nesting of any depth is walked without recursion.
 *
 * Throws only if `context.task` throws.
 *
 * @example
 * resolveTemplate({ url: "${workflow.input.host}/items/${fetch.output.id}", all: "${fetch.output}" }, context)
 */
export function resolveTemplate(template: unknown, context: ExpressionContext, options: ResolveOptions = {}): unknown {
  return resolveWith(template, { document: expressionDocument(context), taskId: context.taskId, maxSteps: options.maxPathSteps, dispatch: options.dispatch });
}

/**
 * The same rules over a plain document: each top-level name of `roots` is a
 * root an expression may read (`${body.order.id}`, `${headers['x-event']}`),
 * and nothing else resolves. For templates outside a workflow — a webhook's
 * mapping of a call to a run's input.
 */
export function resolveTemplateIn(template: unknown, roots: Readonly<Record<string, unknown>>, options: ResolveOptions = {}): unknown {
  const document: PathDocument = { top: (name) => (Object.hasOwn(roots, name) ? { found: true, value: roots[name] } : { found: false }) };
  // No run, so no namespace to read secrets or variables of: they read null here, as any unknown root does.
  return resolveWith(template, { document, taskId: undefined, maxSteps: options.maxPathSteps, dispatch: () => null });
}

function resolveWith(template: unknown, r: Resolver): unknown {
  if (typeof template === "string") return resolveString(template, r);
  if (!isContainer(template)) return template;

  const rootOut: unknown[] | JsonObject = Array.isArray(template) ? [] : {};
  const stack: [unknown[] | JsonObject, unknown[] | JsonObject][] = [[template, rootOut]];
  const leaf = (value: unknown, attach: (v: unknown) => void): void => {
    if (typeof value === "string") {
      attach(resolveString(value, r));
    } else if (isContainer(value)) {
      const out: unknown[] | JsonObject = Array.isArray(value) ? [] : {};
      attach(out);
      stack.push([value, out]);
    } else {
      attach(value);
    }
  };
  while (stack.length > 0) {
    const [source, out] = stack.pop() as [unknown[] | JsonObject, unknown[] | JsonObject];
    if (Array.isArray(source)) {
      const arr = out as unknown[];
      for (let i = 0; i < source.length; i++) leaf(source[i], (v) => (arr[i] = v));
    } else if (isJsonObject(source)) {
      const obj = out as JsonObject;
      for (const key of Object.keys(source)) leaf(source[key], (v) => setOwn(obj, key, v));
    }
  }
  return rootOut;
}
