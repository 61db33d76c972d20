import type { z } from "zod";
import { pathParameterNames } from "../route-table";

/**
 * The bad-input corpus: for a route declared with zod schemas (a REST route,
 * a Conductor route, a tRPC procedure's input), every request a careless or
 * hostile client could send — malformed and truncated JSON, bodies of the
 * wrong JSON type, each field of the wrong type, bodies over the limit, JSON
 * nested 10,000 deep, NUL bytes and unpaired surrogates, invalid UTF-8,
 * unknown fields, bad path and query parameters — each with what the answer
 * must be. The cases are generated from the route's own schemas, so a route
 * added to a table is covered the day it is added.
 *
 * Only bad input is sent. A generated request that every schema accepts, and
 * that carries nothing unstorable, is a valid request: it is sent to a read
 * (a GET, a tRPC query) and skipped for anything that writes, so that the
 * corpus as a whole can assert it changed nothing.
 */

export const DEEP_LEVELS = 10_000;
/** 10 KB: longer than any bounded field, short enough for a URL. */
export const LONG_STRING = "x".repeat(10 * 1024);
export const NUL_STRING = "nul\u0000byte";
export const LONE_SURROGATE = "lone\ud800surrogate";
export const HOSTILE_STRINGS = ["' OR 1=1 --", '"; DROP TABLE "WorkflowExecutions"; --', "<script>alert(1)</script>", "%' OR '%'='", "../../../etc/passwd"] as const;
export const UNKNOWN_FIELD = "zz_unknown_field";
/** A v7-shaped UUID no fixture has. */
export const NOWHERE_UUID = "0191d6a4-0000-7000-8000-00000000dead";

/**
 * Stands in a value for raw JSON text spliced in at serialisation:
 * 10,000 levels of nesting cannot go through JSON.stringify, which
 * overflows the stack near 4,000.
 */
const DEEP = "\u0001deep\u0001";

export function deepObjectText(levels = DEEP_LEVELS): string {
  return `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
}

export function deepArrayText(levels = DEEP_LEVELS): string {
  return `${"[".repeat(levels)}${"]".repeat(levels)}`;
}

/** JSON text of `value`, with every DEEP placeholder replaced by 10,000 levels of objects. */
export function serialize(value: unknown): string {
  return JSON.stringify(value).split(JSON.stringify(DEEP)).join(deepObjectText());
}

/** Values of the wrong type for most fields (each case checks the field's schema refuses it before expecting a 400). */
const WRONG_VALUES: readonly unknown[] = [42, -1, 1.5, 1e308, "", "text", true, null, [], ["a", 1], {}, { nested: { x: 1 } }, LONG_STRING];
/** Values nothing may store: they must be refused at the edge whatever the field's schema says. */
const HAZARDS: readonly { label: string; value: unknown }[] = [
  { label: "a NUL character", value: NUL_STRING },
  { label: "an unpaired surrogate", value: LONE_SURROGATE },
  { label: `${DEEP_LEVELS} levels of nesting`, value: DEEP },
];

export type Location = "params" | "query" | "headers" | "body";

/** The value an answer must name: a location and the path inside it. */
export interface Target {
  location: Location;
  path: (string | number)[];
}

export type Expectation =
  /** Refused with this status; a 400 naming `names` when given, with a detail matching `detail` when given. */
  | { refused: 400 | 413 | 415; names?: Target; detail?: RegExp }
  /** Refused with some 4xx (a handler's own check: which field it names is the handler's business). */
  | { refused: "4xx" }
  /** Anything below 500, with a clear error when it is an error (a garbage id may well be a 404). */
  | "safe";

export interface HttpCase {
  label: string;
  /** Path parameter values as they go into the URL (percent-encoded). */
  params: Record<string, string>;
  /** The query string without "?", percent-encoded. */
  query: string;
  headers: Record<string, string>;
  /** Absent: no body. `oversize`: one byte over the limit (the runner sends one shared buffer, not one per case). */
  body?: { text?: string; bytes?: Uint8Array; contentType?: string; oversize?: true };
  expect: Expectation;
}

/** What the corpus reads of a route: a REST route, a Conductor route. */
export interface CorpusRoute {
  method: string;
  path: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: z.ZodType;
  textBody?: boolean;
}

/** A valid request to the route, aimed at real rows: what each case changes one thing of. */
export interface RouteExample {
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  /**
   * The body's schema accepts any object and the handler checks it (a
   * definition): each field is sent alone, where it cannot make a valid
   * request, and refusing it is the handler's job.
   */
  checkedByHandler?: boolean;
  /**
   * The schema the handler checks the body with, where the route's own only
   * says "JSON" (a Conductor TaskDef list): the fields are judged by it.
   */
  checkedWith?: z.ZodType;
  /** The route writes nothing though it is no GET (validating a definition): its valid variants are sent too. */
  readOnly?: boolean;
  /** The route creates what its path names (a PUT by name): a garbage name the schema accepts would be created, so it is not sent. */
  createsAtPath?: boolean;
}

export interface CorpusOptions {
  /** The namespace path parameter's value, for routes that have one. */
  namespace?: string;
  /** The largest body the API accepts, in bytes. */
  maxBodyBytes: number;
  /** Whether the route only reads; by default, whether it is a GET. A read's body cases are sent (tRPC queries take their input in the URL). */
  readOnly?: boolean;
}

type AnySchema = z.ZodType;
interface SchemaDef {
  type: string;
  innerType?: AnySchema;
  in?: AnySchema;
  shape?: Record<string, AnySchema>;
  element?: AnySchema;
}

function defOf(schema: AnySchema): SchemaDef {
  return (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);

/** The schema under optional, nullable, default, … and a transform's input. */
function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    if (WRAPPERS.has(def.type) && def.innerType !== undefined) current = def.innerType;
    else if (def.type === "pipe" && def.in !== undefined) current = def.in;
    else return current;
  }
}

/** The fields of an object schema (under its wrappers); null for any other schema. */
export function objectShape(schema: AnySchema | undefined): Record<string, AnySchema> | null {
  if (schema === undefined) return null;
  const def = defOf(unwrap(schema));
  return def.type === "object" && def.shape !== undefined ? def.shape : null;
}

function arrayElement(schema: AnySchema | undefined): AnySchema | null {
  if (schema === undefined) return null;
  const def = defOf(unwrap(schema));
  return def.type === "array" && def.element !== undefined ? def.element : null;
}

function accepts(schema: AnySchema | undefined, value: unknown): boolean {
  return schema === undefined || schema.safeParse(value).success;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A query string's value as the dispatchers see it: one value a string, a repeated key an array. */
function queryObject(pairs: readonly (readonly [string, string])[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of pairs) {
    const held = out[key];
    out[key] = held === undefined ? value : Array.isArray(held) ? [...held, value] : [held, value];
  }
  return out;
}

function encodeQuery(pairs: readonly (readonly [string, string])[]): string {
  return new URLSearchParams(pairs.map(([k, v]) => [k, v])).toString();
}

/** A path segment that is no valid value: how it goes into the URL, what it decodes to (null: it does not decode), and whether nothing may store it. */
const BAD_SEGMENTS: readonly { label: string; encoded: string; decoded: string | null; hazard?: boolean }[] = [
  { label: "not a UUID", encoded: "not-a-uuid", decoded: "not-a-uuid" },
  { label: "10 KB long", encoded: LONG_STRING, decoded: LONG_STRING },
  { label: "a NUL byte", encoded: "a%00b", decoded: "a\u0000b", hazard: true },
  { label: "invalid UTF-8", encoded: "%FF%FE", decoded: null },
  { label: "an encoded lone surrogate (CESU-8)", encoded: "%ED%A0%80", decoded: null },
  { label: "a negative number", encoded: "-1", decoded: "-1" },
  { label: "a huge number", encoded: "1e999", decoded: "1e999" },
  { label: "only a space", encoded: "%20", decoded: " " },
];

const BAD_QUERY_VALUES: readonly { label: string; values: string[]; raw?: string; hazard?: boolean }[] = [
  { label: "empty", values: [""] },
  { label: "not a number", values: ["abc"] },
  { label: "negative", values: ["-1"] },
  { label: "zero", values: ["0"] },
  { label: "a fraction", values: ["1.5"] },
  { label: "a huge number", values: ["1e999"] },
  { label: "10 KB long", values: [LONG_STRING] },
  { label: "a NUL byte", values: ["a\u0000b"], hazard: true },
  { label: "invalid UTF-8", values: ["\ufffd"], raw: "%FF%FE" },
  { label: "repeated", values: ["1", "2"] },
];

/** Generates the bad-input corpus of one route; `skipped` counts the generated requests that turned out valid and would write. */
export function badInputCases(route: CorpusRoute, example: RouteExample, options: CorpusOptions): { cases: HttpCase[]; skipped: number } {
  const cases: HttpCase[] = [];
  let skipped = 0;
  const readOnly = options.readOnly ?? example.readOnly ?? route.method === "GET";
  const paramShape = shapeOf(route.params);
  const names = pathParameterNames(route.path);
  const realParams: Record<string, string> = {};
  for (const name of names) realParams[name] = name === "ns" ? (options.namespace ?? "") : encodeURIComponent(example.params?.[name] ?? filler(paramShape[name]));
  const realQuery = Object.entries(example.query ?? {});
  const realHeaders = example.headers ?? {};
  const jsonBody = route.body !== undefined && route.textBody !== true;
  const bodySchema = route.body === undefined ? undefined : (example.checkedWith ?? route.body);
  const acceptsBody = (value: unknown) => accepts(route.body, value) && accepts(bodySchema, value);

  function baseBody(): HttpCase["body"] {
    if (route.body === undefined || example.body === undefined) return undefined;
    return route.textBody === true ? { text: textOf(example.body), contentType: "text/plain" } : { text: serialize(example.body) };
  }

  /** Whether the request is valid by every schema the dispatcher applies. */
  function valid(parts: { params?: Record<string, string | null>; query?: (readonly [string, string])[]; headers?: Record<string, string>; body?: unknown }): boolean {
    const params: Record<string, string | null> = parts.params ?? decodedParams(realParams, "", null);
    const { ns: _ns, ...own } = params;
    if (Object.values(own).includes(null)) return false;
    return (
      accepts(route.params, own) &&
      accepts(route.query, queryObject(parts.query ?? realQuery)) &&
      accepts(route.headers, parts.headers ?? realHeaders) &&
      (route.body === undefined || acceptsBody("body" in parts ? parts.body : example.body))
    );
  }

  function add(label: string, expect: Expectation, overrides: Partial<HttpCase> = {}): void {
    cases.push({ label, params: realParams, query: encodeQuery(realQuery), headers: realHeaders, body: baseBody(), expect, ...overrides });
  }

  // Path parameters.
  for (const name of names) {
    for (const segment of BAD_SEGMENTS) {
      const params = { ...realParams, [name]: segment.encoded };
      const label = `path {${name}} ${segment.label}`;
      const target: Target = { location: "params", path: [name] };
      if (segment.decoded === null) add(label, "safe", { params });
      else if (segment.hazard === true) add(label, name === "ns" ? "safe" : { refused: 400, names: target }, { params });
      else if (name !== "ns" && !accepts(paramShape[name], segment.decoded)) add(label, { refused: 400, names: target }, { params });
      // A garbage name the schema accepts names nothing — unless the route creates what its path names.
      else if (example.createsAtPath === true && valid({ params: decodedParams(realParams, name, segment.decoded) })) skipped++;
      else add(label, "safe", { params });
    }
  }

  // Query parameters: each declared key, one at a time, and a key nobody declared.
  const queryShape = shapeOf(route.query);
  for (const key of Object.keys(queryShape)) {
    for (const bad of BAD_QUERY_VALUES) {
      const pairs: [string, string][] = [...realQuery.filter(([k]) => k !== key), ...bad.values.map((v) => [key, v] as [string, string])];
      const query = bad.raw === undefined ? encodeQuery(pairs) : [encodeQuery(realQuery.filter(([k]) => k !== key)), `${encodeURIComponent(key)}=${bad.raw}`].filter((s) => s !== "").join("&");
      const label = `query ${key} ${bad.label}`;
      const target: Target = { location: "query", path: [key] };
      const value = bad.values.length === 1 ? bad.values[0] : bad.values;
      if (bad.hazard === true) add(label, { refused: 400, names: target }, { query });
      else if (!accepts(queryShape[key], value)) add(label, { refused: 400, names: target }, { query });
      else if (readOnly || !valid({ query: pairs })) add(label, "safe", { query });
      else skipped++;
    }
  }
  if (readOnly) add("an undeclared query parameter", "safe", { query: encodeQuery([...realQuery, [UNKNOWN_FIELD, "1"]]) });

  // Declared headers.
  const headerShape = shapeOf(route.headers);
  for (const key of Object.keys(headerShape)) {
    for (const value of ["", LONG_STRING, ...HOSTILE_STRINGS.slice(0, 1)]) {
      const headers = { ...realHeaders, [key]: value };
      const label = `header ${key} ${value === "" ? "empty" : value === LONG_STRING ? "10 KB long" : JSON.stringify(value)}`;
      if (!accepts(headerShape[key], value)) add(label, { refused: 400, names: { location: "headers", path: [key] } }, { headers });
      else if (readOnly || !valid({ headers })) add(label, "safe", { headers });
      else skipped++;
    }
  }

  if (route.body === undefined || route.method === "GET") return { cases, skipped };

  // The body as a whole.
  const limit = options.maxBodyBytes;
  add(`a body over the limit (${limit + 1} bytes)`, { refused: 413 }, { body: { oversize: true } });
  if (!jsonBody) {
    add("a body with a NUL byte", { refused: 400, names: { location: "body", path: [] } }, { body: { text: NUL_STRING, contentType: "text/plain" } });
    return { cases, skipped };
  }
  const wholeBody = (label: string, text: string, expect: Expectation, contentType?: string) =>
    add(label, expect, { body: contentType === undefined ? { text } : { text, contentType } });
  wholeBody("malformed JSON", '{"unterminated": ', { refused: 400, detail: /JSON/ });
  const full = serialize(example.body ?? { some: "field" });
  wholeBody("truncated JSON", full.slice(0, Math.max(1, Math.floor(full.length / 2))), { refused: 400, detail: /JSON/ });
  wholeBody("JSON with a trailing comma", "{\"a\": 1,}", { refused: 400, detail: /JSON/ });
  wholeBody(`${DEEP_LEVELS} levels of nested objects`, deepObjectText(), { refused: 400, names: { location: "body", path: [] } });
  wholeBody(`${DEEP_LEVELS} levels of nested arrays`, deepArrayText(), { refused: 400, names: { location: "body", path: [] } });
  add("invalid UTF-8 bytes", { refused: 400, detail: /UTF-8/ }, { body: { bytes: Buffer.concat([Buffer.from('{"x": "'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]) } });
  add("a JSON body sent as text/plain", { refused: 415 }, { body: { text: full, contentType: "text/plain" } });
  for (const value of [null, true, 42, "text", [], {}, [1, 2]]) {
    const label = `a body that is ${JSON.stringify(value)}`;
    if (!acceptsBody(value)) add(label, { refused: 400, names: { location: "body", path: [] } }, { body: { text: JSON.stringify(value) } });
    else if (example.checkedByHandler === true) add(label, readOnly ? "safe" : { refused: "4xx" }, { body: { text: JSON.stringify(value) } });
    else if (readOnly) add(label, "safe", { body: { text: JSON.stringify(value) } });
    else skipped++;
  }
  if (!acceptsBody(undefined)) add("an empty body", { refused: 400, names: { location: "body", path: [] } }, { body: { text: "" } });

  // Field by field: the body's object (or, for a list, its first element).
  const element = arrayElement(bodySchema);
  const listed = element !== null;
  const container = listed ? element : bodySchema;
  const exampleObject = listed ? (Array.isArray(example.body) ? (example.body[0] as unknown) : undefined) : example.body;
  const wrap = (object: Record<string, unknown>): unknown => (listed ? [object] : object);
  const prefix: (string | number)[] = listed ? [0] : [];

  const fieldCases = (shape: Record<string, AnySchema> | null, base: Record<string, unknown>, at: string[], depth: number): void => {
    const fields = [...new Set([...Object.keys(shape ?? {}), ...Object.keys(base)])];
    for (const field of fields) {
      const schema = shape?.[field];
      const path = [...at, field];
      const target: Target = { location: "body", path: [...prefix, ...path] };
      const withValue = (value: unknown) => wrap(setPath(exampleObject, path, value));
      for (const hazard of HAZARDS) {
        add(`body ${path.join(".")} holding ${hazard.label}`, { refused: 400, names: target }, { body: { text: serialize(withValue(hazard.value)) } });
      }
      for (const value of WRONG_VALUES) {
        const label = `body ${path.join(".")} = ${describe(value)}`;
        if (schema !== undefined && !accepts(schema, value)) {
          add(label, { refused: 400, names: target }, { body: { text: serialize(withValue(value)) } });
        } else if (example.checkedByHandler === true) {
          add(label, readOnly ? "safe" : { refused: "4xx" }, { body: { text: serialize(wrap(setPath({}, path, value))) } });
        } else if (!acceptsBody(withValue(value))) {
          add(label, { refused: 400 }, { body: { text: serialize(withValue(value)) } });
        } else if (readOnly) {
          add(label, "safe", { body: { text: serialize(withValue(value)) } });
        } else skipped++;
      }
      const nested = objectShape(schema);
      const nestedBase = getPath(exampleObject, path);
      if (depth < 2 && (nested !== null || isObject(nestedBase))) fieldCases(nested, isObject(nestedBase) ? nestedBase : {}, path, depth + 1);
    }
  };
  if (objectShape(container) !== null || isObject(exampleObject)) {
    fieldCases(objectShape(container), isObject(exampleObject) ? exampleObject : {}, [], 0);
    const unknown = wrap({ ...(isObject(exampleObject) ? exampleObject : {}), [UNKNOWN_FIELD]: 1 });
    // Named only when the field is all that is wrong: next to a missing one, the refusal may name that instead.
    const alone: Expectation = acceptsBody(example.body) ? { refused: 400, names: { location: "body", path: [...prefix, UNKNOWN_FIELD] } } : { refused: 400 };
    if (!acceptsBody(unknown)) add("an unknown field", alone, { body: { text: serialize(unknown) } });
    else if (example.checkedByHandler === true) add("an unknown field alone", readOnly ? "safe" : { refused: "4xx" }, { body: { text: serialize(wrap({ [UNKNOWN_FIELD]: 1 })) } });
    else if (readOnly) add("an unknown field", "safe", { body: { text: serialize(unknown) } });
    else skipped++;
  }
  return { cases, skipped };
}

/**
 * The hostile strings of the corpus' second part: SQL- and script-looking
 * text in every string a route takes — each path parameter, each query
 * parameter, each string field of the body — aimed at the real rows. These
 * are valid requests and may well change things (a run paused with a
 * reason of `' OR 1=1 --`); what they must never do is fail on the server.
 */
export function hostileStringCases(route: CorpusRoute, example: RouteExample, options: CorpusOptions): HttpCase[] {
  const cases: HttpCase[] = [];
  const names = pathParameterNames(route.path);
  const paramShape = shapeOf(route.params);
  const realParams: Record<string, string> = {};
  for (const name of names) realParams[name] = name === "ns" ? (options.namespace ?? "") : encodeURIComponent(example.params?.[name] ?? filler(paramShape[name]));
  const realQuery = Object.entries(example.query ?? {});
  const textBody = route.textBody === true;
  const body = route.body === undefined || route.method === "GET" || example.body === undefined ? undefined : textBody ? { text: textOf(example.body), contentType: "text/plain" } : { text: serialize(example.body) };
  const add = (label: string, overrides: Partial<HttpCase>) => cases.push({ label, params: realParams, query: encodeQuery(realQuery), headers: example.headers ?? {}, body, expect: "safe", ...overrides });
  for (const hostile of HOSTILE_STRINGS) {
    for (const name of names) add(`path {${name}} = ${hostile}`, { params: { ...realParams, [name]: encodeURIComponent(hostile) } });
    for (const key of Object.keys(route.query?.shape ?? {})) add(`query ${key} = ${hostile}`, { query: encodeQuery([...realQuery.filter(([k]) => k !== key), [key, hostile]]) });
    if (body === undefined) continue;
    if (textBody) {
      add(`the body = ${hostile}`, { body: { text: hostile, contentType: "text/plain" } });
      continue;
    }
    const element = arrayElement(route.body);
    const object = element !== null ? (Array.isArray(example.body) ? (example.body[0] as unknown) : undefined) : example.body;
    const shape = objectShape(element ?? route.body);
    for (const field of new Set([...Object.keys(shape ?? {}), ...(isObject(object) ? Object.keys(object) : [])])) {
      const schema = shape?.[field];
      if (schema !== undefined && !accepts(schema, "text")) continue;
      const changed = setPath(object, [field], hostile);
      add(`body ${field} = ${hostile}`, { body: { text: serialize(element !== null ? [changed] : changed) } });
    }
  }
  return cases;
}

/** A value a path parameter's schema accepts, for a route the example gives none: a UUID, a name, a status, a number. */
/** A params/query/headers object schema's fields (zod types an object's shape loosely). */
function shapeOf(schema: z.ZodObject | undefined): Record<string, AnySchema> {
  const shape: Record<string, AnySchema> = schema?.shape ?? {};
  return shape;
}

/** A text body's example: the string itself. */
function textOf(body: unknown): string {
  return typeof body === "string" ? body : JSON.stringify(body);
}

function filler(schema: AnySchema | undefined): string {
  for (const candidate of [NOWHERE_UUID, "corpus_nowhere", "COMPLETED", "1"]) if (accepts(schema, candidate)) return candidate;
  return "corpus_nowhere";
}

function decodedParams(params: Record<string, string>, name: string, value: string | null): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [key, encoded] of Object.entries(params)) out[key] = key === name ? value : safeDecode(encoded);
  return out;
}

function safeDecode(encoded: string): string | null {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return null;
  }
}

function setPath(base: unknown, path: readonly string[], value: unknown): Record<string, unknown> {
  const root: Record<string, unknown> = isObject(base) ? { ...base } : {};
  let at = root;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) {
      at[key] = value;
    } else {
      const next = at[key];
      const copy: Record<string, unknown> = isObject(next) ? { ...next } : {};
      at[key] = copy;
      at = copy;
    }
  }
  return root;
}

function getPath(base: unknown, path: readonly string[]): unknown {
  let at = base;
  for (const key of path) at = isObject(at) ? at[key] : undefined;
  return at;
}

function describe(value: unknown): string {
  if (value === LONG_STRING) return "a 10 KB string";
  return JSON.stringify(value);
}

/** The JSON Pointer (RFC 6901) of a target, as REST's problem details name it. */
export function targetPointer(target: Target): string {
  return [target.location, ...target.path].map((s) => `/${String(s).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/** Tallies answers by status, for the report a test prints. */
export function statusTally(statuses: readonly number[]): string {
  const counts = new Map<number, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}×${n}`)
    .join(" ");
}

/** Runs `work` over `items`, `lanes` at a time, in order of start. */
export async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) await work(items[i]!);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}
