/**
 * Evaluates a parsed path the way Jayway JsonPath does under Conductor's
 * configuration (`Option.SUPPRESS_EXCEPTIONS`): a definite path yields the
 * value or null, an indefinite one a list (empty when nothing matches), and any
 * error yields the same null or empty list instead of throwing. Filters are
 * interpreted over the AST from json-path-parser.ts; nothing is ever evaluated as code.
 *
 * Comparison semantics follow Jayway's EvaluatorFactory and ValueNodes:
 * `1 == '1'` is true but `'1.0' == 1` is false (a number compares to a string
 * numerically, a string to a number textually), `<` between a string and a
 * number compares text, a missing path equals nothing (so `!=` is true).
 *
 * Everything that walks values is iterative and metered by a step budget, so
 * a deep document or a path such as `$..*..*..*` cannot hang or overflow the decider.
 */
import type { FilterExpression, FilterOperand, FilterOperator, FunctionSegment, JsonPath, PathSegment, SelectorSegment } from "./json-path-parser";
import { hasOwn, isContainer, isJsonObject, jsonEquals, setOwn } from "./json-value";
import type { JsonObject } from "./json-value";

/** Node visits one path evaluation may spend before it gives up (and yields null or []). */
export const MAX_PATH_STEPS = 1_000_000;

/**
 * A document whose top level is looked up by name rather than held in memory:
 * the expression document is `{ workflow, <ref>: task, … }`, and an evaluation
 * loads only the tasks the blueprint says are read.
 */
export interface PathDocument {
  /** The value under a top-level key, or `{ found: false }`. */
  top(name: string): PathLookup;
}

/** The result of looking a name up. */
export type PathLookup = { found: true; value: unknown } | { found: false };

/** Options for {@link evaluateJsonPath}. */
export interface PathEvaluationOptions {
  /** Node visits allowed before the evaluation is abandoned; default {@link MAX_PATH_STEPS}. */
  maxSteps?: number;
}

class BudgetExceeded extends Error {}

/** A function with nothing to work on (Jayway throws; under SUPPRESS_EXCEPTIONS the whole read yields null or []). */
class FunctionFailed extends Error {}

/** Stands for a {@link PathDocument} root among ordinary JSON values. */
class VirtualRoot {
  constructor(readonly document: PathDocument) {}
}

interface Env {
  root: unknown;
  steps: number;
}

function step(env: Env, n = 1): void {
  env.steps -= n;
  if (env.steps < 0) throw new BudgetExceeded();
}

/** A filter operand whose path matched nothing (Jayway's UndefinedNode): equal to nothing, not even null. */
const UNDEFINED: unique symbol = Symbol("undefined");
type Operand = unknown;

/**
 * Evaluates `path` against a document: a plain JSON value or a
 * {@link PathDocument}. `$` (and a top-level `@`) is the document. A
 * PathDocument can only be stepped into by name, so a path that scans,
 * wildcards or filters its root yields nothing.
 *
 * Returns Conductor's answer: the value (or null) for a definite path, the list
 * of matches for an indefinite one; null or [] on any failure. Never throws.
 */
export function evaluateJsonPath(path: JsonPath, document: unknown, options: PathEvaluationOptions = {}): unknown {
  const root = isPathDocument(document) ? new VirtualRoot(document) : document;
  const env: Env = { root, steps: options.maxSteps ?? MAX_PATH_STEPS };
  try {
    const result = readPath(path, root, env);
    if (!result.found) return path.definite ? null : [];
    return result.value;
  } catch (e) {
    if (e instanceof BudgetExceeded || e instanceof FunctionFailed || e instanceof RangeError) return path.definite ? null : [];
    throw e;
  }
}

function isPathDocument(value: unknown): value is PathDocument {
  return value instanceof Object && !Array.isArray(value) && typeof (value as { top?: unknown }).top === "function";
}

/** Evaluates a path with `@` bound to `current`. Throws only BudgetExceeded and FunctionFailed. */
function readPath(path: JsonPath, current: unknown, env: Env): { found: true; value: unknown } | { found: false } {
  const segments = path.segments;
  const last = segments[segments.length - 1];
  const fn = last?.kind === "function" ? last : undefined;
  const count = fn === undefined ? segments.length : segments.length - 1;
  let nodes: unknown[] = [path.root === "$" ? env.root : current];
  for (let i = 0; i < count; i++) {
    const segment = segments[i] as PathSegment;
    const leaf = i === segments.length - 1;
    const next: unknown[] = [];
    for (const node of nodes) {
      if (segment.kind === "scan") applyScan(segment.next, node, next, env, leaf);
      else if (segment.kind !== "function") applySelector(segment, node, next, env, leaf);
    }
    nodes = next;
    if (nodes.length === 0) break;
  }
  // The document root itself is never a value a template can hold.
  if (nodes.some((n) => n instanceof VirtualRoot)) nodes = nodes.filter((n) => !(n instanceof VirtualRoot));

  if (fn !== undefined) {
    // Jayway's FunctionPathToken runs once per match: `items[*].price.sum()` sums
    // each price (and fails, since a number is not a list), it does not sum the list.
    // Jayway's inversion of `$..x.fn()` into `$.fn($..x)` only applies when the scan
    // is the first step, which a Conductor path (`workflow.…`, `ref.…`) never has.
    const results = nodes.map((node) => applyFunction(fn, node, env));
    if (path.definite) return results.length === 0 ? { found: false } : { found: true, value: results[0] };
    return { found: true, value: results };
  }
  if (path.definite) return nodes.length === 0 ? { found: false } : { found: true, value: nodes[0] };
  return { found: true, value: nodes };
}

function lookup(node: unknown, name: string): PathLookup {
  if (node instanceof VirtualRoot) return node.document.top(name);
  if (isJsonObject(node) && hasOwn(node, name)) return { found: true, value: node[name] };
  return { found: false };
}

function normalizeIndex(i: number, length: number): number {
  return i < 0 ? length + i : i;
}

function pushAll(out: unknown[], values: readonly unknown[]): void {
  // Not `out.push(...values)`: spreading a 200k-element array overflows the call stack.
  for (const v of values) out.push(v);
}

function applySelector(segment: SelectorSegment, node: unknown, out: unknown[], env: Env, leaf: boolean): void {
  step(env);
  // The root document can only be entered by name: wildcards, filters and scans
  // over it would need every task of the workflow (and would expose the lookup object).
  if (node instanceof VirtualRoot && segment.kind !== "property") return;
  switch (segment.kind) {
    case "property": {
      if (segment.names.length === 1) {
        const r = lookup(node, segment.names[0] as string);
        if (r.found) out.push(r.value);
        return;
      }
      if (!(node instanceof VirtualRoot) && !isJsonObject(node)) return;
      if (leaf) {
        // Jayway merges `['a','b']` at the end of a path into one object of the keys present.
        const merged: JsonObject = {};
        for (const name of segment.names) {
          const r = lookup(node, name);
          if (r.found) setOwn(merged, name, r.value);
        }
        out.push(merged);
        return;
      }
      for (const name of segment.names) {
        const r = lookup(node, name);
        if (r.found) out.push(r.value);
      }
      return;
    }
    case "wildcard":
      if (Array.isArray(node)) {
        step(env, node.length);
        pushAll(out, node);
      } else if (isJsonObject(node)) {
        const values = Object.values(node);
        step(env, values.length);
        pushAll(out, values);
      }
      return;
    case "index":
      if (!Array.isArray(node)) return;
      for (const raw of segment.indexes) {
        const i = normalizeIndex(raw, node.length);
        if (i >= 0 && i < node.length) out.push(node[i]);
      }
      return;
    case "slice": {
      if (!Array.isArray(node)) return;
      const len = node.length;
      const from = Math.max(0, segment.from === null ? 0 : normalizeIndex(segment.from, len));
      const to = Math.min(len, segment.to === null ? len : normalizeIndex(segment.to, len));
      if (to > from) step(env, to - from);
      for (let i = from; i < to; i++) out.push(node[i]);
      return;
    }
    case "filter":
      // Jayway applies a filter to each element of an array, and to an object as a whole.
      if (Array.isArray(node)) {
        for (const item of node) {
          step(env);
          if (testFilter(segment.filter, item, env)) out.push(item);
        }
      } else if (isJsonObject(node) && testFilter(segment.filter, node, env)) {
        out.push(node);
      }
      return;
  }
}

/** `..next`: `next` applied to `node` and each descendant, depth-first pre-order like Jayway's ScanPathToken. */
function applyScan(next: SelectorSegment, node: unknown, out: unknown[], env: Env, leaf: boolean): void {
  const stack: unknown[] = [node];
  while (stack.length > 0) {
    const value = stack.pop();
    step(env);
    if (!isContainer(value) || value instanceof VirtualRoot) continue;
    const isArray = Array.isArray(value);
    switch (next.kind) {
      case "property":
      case "wildcard":
        if (!isArray || next.kind === "wildcard") applySelector(next, value, out, env, leaf);
        break;
      case "index":
      case "slice":
        if (isArray) applySelector(next, value, out, env, leaf);
        break;
      case "filter":
        // Jayway's scan offers each object to the filter as `@`.
        if (!isArray && testFilter(next.filter, value, env)) out.push(value);
        break;
    }
    const children = isArray ? value : Object.values(value);
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i];
      if (isContainer(child)) stack.push(child);
    }
  }
}

function applyFunction(fn: FunctionSegment, input: unknown, env: Env): unknown {
  switch (fn.name) {
    case "length":
    case "size":
      // Jayway's Length counts array items or object keys; anything else is null.
      if (Array.isArray(input)) return input.length;
      if (isJsonObject(input)) return Object.keys(input).length;
      return null;
    case "keys":
      return isJsonObject(input) ? Object.keys(input) : null;
    case "first":
      return Array.isArray(input) && input.length > 0 ? input[0] : null;
    case "last":
      return Array.isArray(input) && input.length > 0 ? input[input.length - 1] : null;
    case "index": {
      if (!Array.isArray(input)) return null;
      const i = normalizeIndex(fn.args[0] ?? 0, input.length);
      return i >= 0 && i < input.length ? input[i] : null;
    }
    case "distinct": {
      if (!Array.isArray(input)) return null;
      step(env, input.length);
      const seen = new Set<string>();
      const out: unknown[] = [];
      for (const v of input) {
        let key: string;
        try {
          key = JSON.stringify(v) ?? "undefined";
        } catch {
          return null;
        }
        if (!seen.has(key)) {
          seen.add(key);
          out.push(v);
        }
      }
      return out;
    }
    case "min":
    case "max":
    case "sum":
    case "avg":
    case "stddev": {
      // Jayway aggregates the numbers in an array and throws when there are none.
      if (!Array.isArray(input)) throw new FunctionFailed();
      step(env, input.length);
      const numbers = input.filter((v): v is number => typeof v === "number");
      if (numbers.length === 0) throw new FunctionFailed();
      if (fn.name === "min") return numbers.reduce((a, b) => Math.min(a, b));
      if (fn.name === "max") return numbers.reduce((a, b) => Math.max(a, b));
      const sum = numbers.reduce((a, b) => a + b, 0);
      if (fn.name === "sum") return sum;
      const mean = sum / numbers.length;
      if (fn.name === "avg") return mean;
      const squares = numbers.reduce((a, b) => a + b * b, 0);
      return Math.sqrt(Math.max(0, squares / numbers.length - mean * mean));
    }
  }
}

function testFilter(expr: FilterExpression, item: unknown, env: Env): boolean {
  switch (expr.kind) {
    case "or":
      return expr.operands.some((e) => testFilter(e, item, env));
    case "and":
      return expr.operands.every((e) => testFilter(e, item, env));
    case "not":
      return !testFilter(expr.operand, item, env);
    case "exists": {
      const r = readPath(expr.path, item, env);
      if (!r.found) return false;
      return expr.path.definite || !Array.isArray(r.value) || r.value.length > 0;
    }
    case "compare":
      return compare(expr.operator, operandValue(expr.left, item, env), operandValue(expr.right, item, env));
  }
}

function operandValue(operand: FilterOperand, item: unknown, env: Env): Operand {
  if (operand.kind === "literal") return operand.value;
  const r = readPath(operand.path, item, env);
  return r.found ? r.value : UNDEFINED;
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Jayway's `left.equals(right)`: asymmetric between numbers and strings. */
function valueEquals(left: Operand, right: Operand): boolean {
  if (left === UNDEFINED || right === UNDEFINED) return false;
  if (isContainer(left) || isContainer(right)) return isContainer(left) && isContainer(right) && jsonEquals(left, right);
  if (typeof left === "number") {
    if (typeof right === "number") return left === right;
    // NumberNode.equals(StringNode): the string is read as a BigDecimal.
    return typeof right === "string" && DECIMAL.test(right) && Number(right) === left;
  }
  if (typeof left === "string") {
    if (typeof right === "string") return left === right;
    // StringNode.equals(NumberNode): the number is compared as text.
    return typeof right === "number" && left === String(right);
  }
  return left === right;
}

function sameKind(left: Operand, right: Operand): boolean {
  if (left === null || right === null) return left === right;
  if (isContainer(left) || isContainer(right)) return isContainer(left) && isContainer(right);
  return typeof left === typeof right;
}

/** Jayway's LessThanEvaluator and friends, as a sign; null when the pair is not comparable. */
function order(left: Operand, right: Operand): number | null {
  const l = typeof left === "number" ? String(left) : left;
  const r = typeof right === "number" ? String(right) : right;
  if (typeof left === "number" && typeof right === "number") return left < right ? -1 : left > right ? 1 : 0;
  if (typeof l === "string" && typeof r === "string") return l < r ? -1 : l > r ? 1 : 0;
  return null;
}

function contains(list: unknown, value: Operand): boolean {
  return Array.isArray(list) && list.some((element) => valueEquals(value, element));
}

function compare(operator: FilterOperator, left: Operand, right: Operand): boolean {
  switch (operator) {
    case "==":
      return valueEquals(left, right);
    case "!=":
      return !valueEquals(left, right);
    case "===":
      return sameKind(left, right) && valueEquals(left, right);
    case "!==":
      return !(sameKind(left, right) && valueEquals(left, right));
    case "<":
    case "<=":
    case ">":
    case ">=": {
      const sign = order(left, right);
      if (sign === null) return false;
      return operator === "<" ? sign < 0 : operator === "<=" ? sign <= 0 : operator === ">" ? sign > 0 : sign >= 0;
    }
    case "in":
      return left !== UNDEFINED && contains(right, left);
    case "nin":
      return !(left !== UNDEFINED && contains(right, left));
    case "subsetof":
      return Array.isArray(left) && Array.isArray(right) && left.every((v) => contains(right, v));
    case "anyof":
      return Array.isArray(left) && Array.isArray(right) && left.some((v) => contains(right, v));
    case "noneof":
      return Array.isArray(left) && Array.isArray(right) && !left.some((v) => contains(right, v));
    case "size":
      if (typeof right !== "number") return false;
      if (typeof left === "string" || Array.isArray(left)) return left.length === Math.trunc(right);
      return false;
    case "empty":
      if (typeof right !== "boolean") return false;
      if (typeof left === "string" || Array.isArray(left)) return (left.length === 0) === right;
      if (isJsonObject(left)) return (Object.keys(left).length === 0) === right;
      return false;
    case "contains":
      if (typeof left === "string") return typeof right === "string" && left.includes(right);
      return right !== UNDEFINED && contains(left, right);
  }
}
