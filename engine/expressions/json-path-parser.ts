/**
 * A parser for the JSONPath dialect Conductor gets from Jayway JsonPath
 * (json-path/JsonPath: internal/path/PathCompiler.java, internal/filter/FilterCompiler.java).
 *
 * Conductor hands the body of `${…}` to `DocumentContext.read`, and Jayway
 * prefixes `$.` to any path that does not start with `$` or `@`; so
 * `workflow.input.x` means `$.workflow.input.x`. Supported:
 *
 * - dotted names (`a.b`; any character but `.`, `[`, `(` and blanks), `['name']`,
 *   `["name"]`, `['a','b']`;
 * - `[0]`, `[-1]`, `[0,2]`, slices `[1:3]`, `[:2]`, `[-2:]`;
 * - `*` and `[*]`; deep scan `..name`, `..*`, `..[0]`, `..[?(…)]`;
 * - filters `[?(…)]` with `==` `!=` `===` `!==` `<` `<=` `>` `>=` `in` `nin`
 *   `subsetof` `anyof` `noneof` `size` `empty` `contains`, `&&`, `||`, `!`,
 *   parentheses, existence checks (`@.isbn`, `!@.isbn`), string, number,
 *   boolean, null and JSON array/object literals, `@` paths and `$` paths;
 * - a trailing function: `length()`, `size()`, `min()`, `max()`, `avg()`,
 *   `sum()`, `stddev()`, `keys()`, `first()`, `last()`, `distinct()`, `index(n)`.
 *   As in Jayway it applies to each match of the path before it, so
 *   `items.length()` is the number of items and `items[*].tags.length()` a list
 *   of counts.
 *
 * Refused with a syntax error (so it resolves to null, as a Jayway compile error
 * does in Conductor): regular expressions (`=~`) — a backtracking regex supplied by a
 * definition could stall the decider for minutes — and `concat()`/`append()`.
 *
 * The parser is a small recursive descent with a hard nesting limit, so hostile
 * input cannot overflow the stack; it never evaluates anything.
 */

/** Nesting allowed across filters, parentheses, `!` and literals inside one path. */
export const MAX_PATH_NESTING = 32;

/** Functions a path may end with. */
export const PATH_FUNCTIONS = ["length", "size", "min", "max", "avg", "sum", "stddev", "keys", "first", "last", "distinct", "index"] as const;
/** A function name from {@link PATH_FUNCTIONS}. */
export type PathFunctionName = (typeof PATH_FUNCTIONS)[number];

/** One step of a path. */
export type PathSegment = SelectorSegment | ScanSegment | FunctionSegment;

/** A step that selects from the current value. */
export type SelectorSegment =
  | { kind: "property"; names: string[] }
  | { kind: "wildcard" }
  | { kind: "index"; indexes: number[] }
  | { kind: "slice"; from: number | null; to: number | null }
  | { kind: "filter"; filter: FilterExpression };

/** `..` fused with the selector after it: apply `next` to the value and every descendant. */
export interface ScanSegment {
  kind: "scan";
  next: SelectorSegment;
}

/** A trailing function call such as `length()`. */
export interface FunctionSegment {
  kind: "function";
  name: PathFunctionName;
  args: number[];
}

/** A parsed path. */
export interface JsonPath {
  /** `$` for the document root, `@` for the current item inside a filter. */
  root: "$" | "@";
  segments: PathSegment[];
  /**
   * True when the path can match at most one value (Jayway's `isDefinite`): a
   * definite path yields the value or null, an indefinite one a list.
   */
  definite: boolean;
}

/** Comparison operators in filters. */
export type FilterOperator =
  | "=="
  | "!="
  | "==="
  | "!=="
  | "<"
  | "<="
  | ">"
  | ">="
  | "in"
  | "nin"
  | "subsetof"
  | "anyof"
  | "noneof"
  | "size"
  | "empty"
  | "contains";

/** A value in a filter comparison. */
export type FilterOperand = { kind: "path"; path: JsonPath } | { kind: "literal"; value: unknown };

/** A filter expression, `[?( … )]`. */
export type FilterExpression =
  | { kind: "or"; operands: FilterExpression[] }
  | { kind: "and"; operands: FilterExpression[] }
  | { kind: "not"; operand: FilterExpression }
  | { kind: "exists"; path: JsonPath }
  | { kind: "compare"; operator: FilterOperator; left: FilterOperand; right: FilterOperand };

/** The outcome of {@link parseJsonPath}. */
export type JsonPathParseResult = { ok: true; path: JsonPath } | { ok: false; error: string };

class PathSyntaxError extends Error {}

function fail(message: string): never {
  throw new PathSyntaxError(message);
}

const WORD_OPERATORS: ReadonlySet<string> = new Set(["in", "nin", "subsetof", "anyof", "noneof", "size", "empty", "contains"]);
const SYMBOL_OPERATORS: ReadonlySet<string> = new Set(["==", "!=", "===", "!==", "<", "<=", ">", ">="]);
const FUNCTION_NAMES: ReadonlySet<string> = new Set(PATH_FUNCTIONS);
const WORD_LITERAL = /(true|false|null)(?![\w$])/y;
const BARE_KEY = /[A-Za-z_$][\w$]*/y;
const NUMBER_LITERAL = /-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/y;

function isBlank(c: string | undefined): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\r";
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

function skipBlanks(text: string, pos: number): number {
  while (pos < text.length && isBlank(text[pos])) pos++;
  return pos;
}

/** Reads a quoted string starting at `pos` (on the quote); returns its value and the offset after it. */
function readQuoted(text: string, pos: number): [string, number] {
  const quote = text[pos];
  let out = "";
  let i = pos + 1;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "\\") {
      const e = text[i + 1];
      if (e === undefined) break;
      i += 2;
      switch (e) {
        case "n":
          out += "\n";
          break;
        case "t":
          out += "\t";
          break;
        case "r":
          out += "\r";
          break;
        case "b":
          out += "\b";
          break;
        case "f":
          out += "\f";
          break;
        case "u": {
          const hex = text.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          out += e;
      }
      continue;
    }
    if (c === quote) return [out, i + 1];
    out += c;
    i++;
  }
  return fail(`string not closed: expected ${quote}`);
}

/** Offset of the bracket closing the one at `pos`, skipping quoted strings. */
function matchingClose(text: string, pos: number, open: string, close: string): number {
  let depth = 0;
  for (let i = pos; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"') {
      i = readQuoted(text, i)[1] - 1;
    } else if (c === open) {
      depth++;
    } else if (c === close) {
      depth--;
      if (depth === 0) return i;
    }
  }
  return fail(`'${open}' is not closed`);
}

function isIndefinite(segment: PathSegment, isLast: boolean): boolean {
  switch (segment.kind) {
    case "scan":
    case "wildcard":
    case "filter":
    case "slice":
      return true;
    case "index":
      return segment.indexes.length !== 1;
    case "property":
      // Jayway: `['a','b']` as the last step merges into one object (definite);
      // anywhere else it fans out.
      return segment.names.length !== 1 && !isLast;
    case "function":
      return false;
  }
}

/**
 * Parses a path as Jayway does for Conductor: trims it, prefixes `$.` unless it
 * starts with `$` or `@`, and rejects what Jayway rejects. Never throws.
 */
export function parseJsonPath(text: string): JsonPathParseResult {
  try {
    return { ok: true, path: parsePath(text, 0) };
  } catch (e) {
    if (e instanceof PathSyntaxError) return { ok: false, error: e.message };
    if (e instanceof RangeError) return { ok: false, error: "path is nested too deeply" };
    throw e;
  }
}

function parsePath(source: string, depth: number): JsonPath {
  if (depth > MAX_PATH_NESTING) fail("path is nested too deeply");
  let text = source.trim();
  if (text === "") fail("empty path");
  if (text[0] !== "$" && text[0] !== "@") text = "$." + text;
  if (text.endsWith(".")) fail("path must not end with '.' or '..'");
  const root = text[0] as "$" | "@";
  const segments: PathSegment[] = [];
  let pos = 1;
  if (pos < text.length && text[pos] !== "." && text[pos] !== "[") fail(`expected '.' or '[' at ${pos}`);

  while (pos < text.length) {
    if (segments.length > 0 && segments[segments.length - 1]?.kind === "function") fail("a function must be the last step of a path");
    const c = text[pos];
    let scan = false;
    if (c === ".") {
      if (text[pos + 1] === ".") {
        scan = true;
        pos += 2;
      } else {
        pos += 1;
      }
      if (text[pos] === ".") fail(`'.' at ${pos} is not valid`);
    }
    let segment: SelectorSegment | FunctionSegment;
    const d = text[pos];
    if (d === "[") {
      [segment, pos] = readBracket(text, pos, depth);
    } else if (d === "*") {
      segment = { kind: "wildcard" };
      pos += 1;
    } else {
      [segment, pos] = readName(text, pos);
    }
    if (scan) {
      if (segment.kind === "function") fail("a function cannot follow '..'");
      segments.push({ kind: "scan", next: segment });
    } else {
      segments.push(segment);
    }
  }
  const definite = segments.every((s, i) => !isIndefinite(s, i === segments.length - 1));
  return { root, segments, definite };
}

/** A dotted name or a trailing function call. */
function readName(text: string, pos: number): [SelectorSegment | FunctionSegment, number] {
  const start = pos;
  while (pos < text.length) {
    const c = text[pos];
    if (isBlank(c)) fail(`use bracket notation ['my prop'] for a name with blanks (at ${pos})`);
    if (c === "." || c === "[" || c === "(") break;
    pos++;
  }
  const name = text.slice(start, pos);
  if (name === "") fail(`expected a name at ${start}`);
  if (text[pos] !== "(") return [{ kind: "property", names: [name] }, pos];

  const close = matchingClose(text, pos, "(", ")");
  if (!FUNCTION_NAMES.has(name)) {
    if (name === "concat" || name === "append") fail(`function ${name}() is not supported`);
    fail(`function ${name}() does not exist`);
  }
  const argText = text.slice(pos + 1, close).trim();
  const args: number[] = [];
  if (name === "index") {
    if (!/^-?\d+$/.test(argText)) fail("index() takes one whole number");
    args.push(Number(argText));
  } else if (argText !== "") {
    fail(`function ${name}() takes no arguments`);
  }
  return [{ kind: "function", name: name as PathFunctionName, args }, close + 1];
}

/** `['a']`, `[0]`, `[1:2]`, `[*]` or `[?(…)]`, starting on the `[`. */
function readBracket(text: string, pos: number, depth: number): [SelectorSegment, number] {
  let i = skipBlanks(text, pos + 1);
  const c = text[i];
  if (c === "'" || c === '"') {
    const names: string[] = [];
    for (;;) {
      const q = text[i];
      if (q !== "'" && q !== '"') fail(`expected a quoted name at ${i}`);
      const [name, after] = readQuoted(text, i);
      names.push(name);
      i = skipBlanks(text, after);
      if (text[i] === ",") {
        i = skipBlanks(text, i + 1);
        continue;
      }
      if (text[i] === "]") return [{ kind: "property", names }, i + 1];
      fail(`expected ',' or ']' at ${i}`);
    }
  }
  if (c === "*") {
    i = skipBlanks(text, i + 1);
    if (text[i] !== "]") fail(`expected ']' after '*' at ${i}`);
    return [{ kind: "wildcard" }, i + 1];
  }
  if (c === "?") {
    i = skipBlanks(text, i + 1);
    if (text[i] !== "(") fail(`expected '(' after '?' at ${i}`);
    const close = matchingClose(text, i, "(", ")");
    const end = skipBlanks(text, close + 1);
    if (text[end] !== "]") fail(`expected ']' to end the filter at ${end}`);
    const filter = parseFilter(text.slice(i, close + 1), depth + 1);
    return [{ kind: "filter", filter }, end + 1];
  }
  if (isDigit(c) || c === "-" || c === ":") {
    const close = text.indexOf("]", i);
    if (close < 0) fail("'[' is not closed");
    const body = text.slice(i, close).trim();
    if (!/^[-0-9,: ]*$/.test(body)) fail(`bad array index [${body}]`);
    if (body.includes(":")) {
      const m = /^(-?\d+)?\s*:\s*(-?\d+)?$/.exec(body);
      if (m === null) fail(`bad array slice [${body}]`);
      return [{ kind: "slice", from: m[1] === undefined ? null : Number(m[1]), to: m[2] === undefined ? null : Number(m[2]) }, close + 1];
    }
    const indexes = body.split(",").map((s) => {
      const t = s.trim();
      if (!/^-?\d+$/.test(t)) fail(`bad array index [${body}]`);
      return Number(t);
    });
    return [{ kind: "index", indexes }, close + 1];
  }
  return fail(`could not parse the token at ${pos}: expected ?, ', 0-9 or *`);
}

/** A cursor over one filter's text, `( … )` included. */
class FilterReader {
  pos = 0;
  constructor(readonly text: string) {}

  peek(): string | undefined {
    this.pos = skipBlanks(this.text, this.pos);
    return this.text[this.pos];
  }

  startsWith(s: string): boolean {
    this.peek();
    return this.text.startsWith(s, this.pos);
  }
}

function parseFilter(text: string, depth: number): FilterExpression {
  const reader = new FilterReader(text);
  const expr = parseOr(reader, depth);
  if (reader.peek() !== undefined) fail(`unexpected '${reader.text.slice(reader.pos, reader.pos + 10)}' in filter`);
  return expr;
}

function parseOr(r: FilterReader, depth: number): FilterExpression {
  if (depth > MAX_PATH_NESTING) fail("filter is nested too deeply");
  const operands = [parseAnd(r, depth)];
  while (r.startsWith("||")) {
    r.pos += 2;
    operands.push(parseAnd(r, depth));
  }
  return operands.length === 1 ? (operands[0] as FilterExpression) : { kind: "or", operands };
}

function parseAnd(r: FilterReader, depth: number): FilterExpression {
  const operands = [parseUnary(r, depth)];
  while (r.startsWith("&&")) {
    r.pos += 2;
    operands.push(parseUnary(r, depth));
  }
  return operands.length === 1 ? (operands[0] as FilterExpression) : { kind: "and", operands };
}

function parseUnary(r: FilterReader, depth: number): FilterExpression {
  if (depth > MAX_PATH_NESTING) fail("filter is nested too deeply");
  const c = r.peek();
  if (c === "!" && r.text[r.pos + 1] !== "=") {
    r.pos += 1;
    return { kind: "not", operand: parseUnary(r, depth + 1) };
  }
  if (c === "(") {
    r.pos += 1;
    const inner = parseOr(r, depth + 1);
    if (r.peek() !== ")") fail("expected ')' in filter");
    r.pos += 1;
    return inner;
  }
  return parseRelation(r, depth);
}

function atRelationEnd(r: FilterReader): boolean {
  const c = r.peek();
  return c === undefined || c === ")" || r.startsWith("&&") || r.startsWith("||");
}

function parseRelation(r: FilterReader, depth: number): FilterExpression {
  const left = parseOperand(r, depth);
  if (atRelationEnd(r)) {
    if (left.kind !== "path") fail("a literal cannot stand alone in a filter");
    return { kind: "exists", path: left.path };
  }
  const operator = readOperator(r);
  const right = parseOperand(r, depth);
  return { kind: "compare", operator, left, right };
}

function readOperator(r: FilterReader): FilterOperator {
  r.peek();
  const start = r.pos;
  const text = r.text;
  if ("<>=!~".includes(text[start] ?? "x")) {
    while (r.pos < text.length && "<>=!~".includes(text[r.pos] as string)) r.pos++;
  } else {
    while (r.pos < text.length && /[a-zA-Z]/.test(text[r.pos] as string)) r.pos++;
  }
  const op = text.slice(start, r.pos);
  if (op === "=~") fail("regular expressions (=~) are not supported");
  if (SYMBOL_OPERATORS.has(op) || WORD_OPERATORS.has(op)) return op as FilterOperator;
  return fail(`unknown filter operator '${op || text.slice(start, start + 5)}'`);
}

function parseOperand(r: FilterReader, depth: number): FilterOperand {
  const c = r.peek();
  const text = r.text;
  if (c === "@" || c === "$") {
    const start = r.pos;
    let i = start + 1;
    while (i < text.length) {
      const d = text[i] as string;
      if (d === "[") {
        i = matchingClose(text, i, "[", "]") + 1;
        continue;
      }
      if (d === "(") {
        // Only a function call opens a parenthesis inside a path.
        i = matchingClose(text, i, "(", ")") + 1;
        continue;
      }
      if (isBlank(d) || "<>=!~)&|,".includes(d)) break;
      i++;
    }
    r.pos = i;
    return { kind: "path", path: parsePath(text.slice(start, i), depth + 1) };
  }
  if (c === "'" || c === '"') {
    const [value, after] = readQuoted(text, r.pos);
    r.pos = after;
    return { kind: "literal", value };
  }
  if (c === "[" || c === "{") {
    const [value, after] = readLiteral(text, r.pos, depth + 1);
    r.pos = after;
    return { kind: "literal", value };
  }
  if (c === "/") fail("regular expressions are not supported");
  const [value, after] = readLiteral(text, r.pos, depth + 1);
  r.pos = after;
  return { kind: "literal", value };
}

/**
 * A JSON literal, permissive as Jayway's json-smart MODE_PERMISSIVE: single
 * quotes and bare object keys are accepted.
 */
function readLiteral(text: string, pos: number, depth: number): [unknown, number] {
  if (depth > MAX_PATH_NESTING) fail("literal is nested too deeply");
  pos = skipBlanks(text, pos);
  const c = text[pos];
  if (c === "'" || c === '"') return readQuoted(text, pos);
  if (c === "[") {
    const out: unknown[] = [];
    pos = skipBlanks(text, pos + 1);
    if (text[pos] === "]") return [out, pos + 1];
    for (;;) {
      const [value, after] = readLiteral(text, pos, depth + 1);
      out.push(value);
      pos = skipBlanks(text, after);
      if (text[pos] === ",") {
        pos += 1;
        continue;
      }
      if (text[pos] === "]") return [out, pos + 1];
      fail(`expected ',' or ']' in array literal at ${pos}`);
    }
  }
  if (c === "{") {
    const out: Record<string, unknown> = {};
    pos = skipBlanks(text, pos + 1);
    if (text[pos] === "}") return [out, pos + 1];
    for (;;) {
      pos = skipBlanks(text, pos);
      let key: string;
      if (text[pos] === "'" || text[pos] === '"') {
        [key, pos] = readQuoted(text, pos);
      } else {
        BARE_KEY.lastIndex = pos;
        const m = BARE_KEY.exec(text);
        if (m === null) fail(`expected an object key at ${pos}`);
        key = m[0];
        pos += key.length;
      }
      pos = skipBlanks(text, pos);
      if (text[pos] !== ":") fail(`expected ':' in object literal at ${pos}`);
      const [value, after] = readLiteral(text, pos + 1, depth + 1);
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      pos = skipBlanks(text, after);
      if (text[pos] === ",") {
        pos += 1;
        continue;
      }
      if (text[pos] === "}") return [out, pos + 1];
      fail(`expected ',' or '}' in object literal at ${pos}`);
    }
  }
  WORD_LITERAL.lastIndex = pos;
  const word = WORD_LITERAL.exec(text);
  if (word !== null) {
    const w = word[1];
    return [w === "true" ? true : w === "false" ? false : null, pos + (w as string).length];
  }
  NUMBER_LITERAL.lastIndex = pos;
  const num = NUMBER_LITERAL.exec(text);
  if (num !== null) return [Number(num[0]), pos + num[0].length];
  return fail(`unexpected '${text.slice(pos, pos + 10)}' in filter`);
}
