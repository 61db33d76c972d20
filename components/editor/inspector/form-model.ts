import { z } from "zod";
import { NODE_TYPES, WorkflowDefinitionSchema } from "@/engine";
import type { FieldPath, NodeType, Problem } from "@/engine";

/**
 * The inspector's forms, derived from the engine's zod schemas through
 * `z.toJSONSchema` (a public, stable projection: titles, descriptions,
 * defaults, enums, integer-ness and required lists all survive it), so a field
 * added to a node type in `engine/definition/schema.ts` shows up here without
 * a change. Only what a schema cannot say is decided here: which strings are
 * scripts, which values are JSON, what is common to every node.
 */

export type FieldKind =
  /** Single-line text. */
  | "text"
  /** Several lines of prose. */
  | "multiline"
  /** A string resolved as a `${…}` template: single-line code field with completion. */
  | "expression"
  | "integer"
  | "number"
  | "boolean"
  /** `true` or absent (`z.literal(true).optional()`). */
  | "flag"
  | "enum"
  | "string-list"
  /** Any JSON value, or an object when `jsonObject`. */
  | "json"
  /** Code in a language: javascript, jq, or (SWITCH) decided by the node's evaluatorType. */
  | "script"
  /** A nested object shown as a group of fields. */
  | "group"
  /** `[{key, value}]`. */
  | "tags";

export interface FieldSpec {
  /** The path from the node (or definition) to the value. */
  readonly path: readonly string[];
  /** `path.join(".")`: the `field` argument of onChange, and the key problems are grouped by. */
  readonly id: string;
  readonly kind: FieldKind;
  readonly title: string;
  /** The accessible name: the title, with its group's title added when two fields of one form share a title. */
  readonly label: string;
  readonly description?: string;
  /** The default the engine applies when the value is absent; shown as a placeholder, never written. */
  readonly defaultValue?: unknown;
  readonly required: boolean;
  /** Enum values, or (for an expression) plain values to suggest. */
  readonly options?: readonly string[];
  readonly minimum?: number;
  /** For json: the value must be an object. */
  readonly jsonObject?: boolean;
  /** For script. */
  readonly language?: "javascript" | "jq" | "switch";
  /** Offer `${…}` completion (the node type's expressionFields and the JSON maps under them). */
  readonly completions: boolean;
  readonly children?: readonly FieldSpec[];
}

/** The node form in its sections, in display order. */
export interface NodeFormModel {
  /** ref, label, description, name. */
  readonly common: readonly FieldSpec[];
  readonly specific: readonly FieldSpec[];
  /** The children of `policy`. */
  readonly policy: readonly FieldSpec[];
  readonly optional: FieldSpec | undefined;
  /** Paths of optional objects: removed when their last field is cleared. */
  readonly optionalObjects: readonly (readonly string[])[];
}

type JsonSchema = Record<string, unknown>;

const COMMON_KEYS = ["ref", "label", "description", "name"] as const;
/** Node keys that are not form fields: placement is the canvas's, the type is fixed. */
const HIDDEN_NODE_KEYS: ReadonlySet<string> = new Set(["type", "position", "parent"]);
const SCRIPTS: Readonly<Record<string, "javascript" | "jq" | "switch">> = {
  "INLINE.expression": "javascript",
  "DO_WHILE.loopCondition": "javascript",
  "HTTP_POLL.httpRequest.terminationCondition": "javascript",
  "JSON_JQ_TRANSFORM.queryExpression": "jq",
  "SWITCH.expression": "switch",
};
/** Objects with properties that are still edited as JSON: an inline definition is a whole workflow. */
const JSON_OBJECTS: ReadonlySet<string> = new Set(["SUB_WORKFLOW.workflowDefinition"]);
const MULTILINE: ReadonlySet<string> = new Set(["description"]);

function isRecord(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((p, i) => path[i] === p);
}

interface Context {
  /** `SWITCH`, or `workflow` for the settings form. */
  readonly owner: string;
  readonly expressionFields: readonly FieldPath[];
  readonly optionalObjects: string[][];
}

function fieldFromSchema(key: string, schema: JsonSchema, path: string[], required: boolean, ctx: Context): FieldSpec {
  const id = path.join(".");
  const title = str(schema.title) ?? key;
  const description = str(schema.description);
  const completions = ctx.expressionFields.some((f) => startsWith(path, f));
  const base = {
    path,
    id,
    title,
    label: title,
    required,
    completions,
    ...(description !== undefined ? { description } : {}),
    ...(schema.default !== undefined ? { defaultValue: schema.default } : {}),
    ...(typeof schema.minimum === "number" ? { minimum: schema.minimum } : {}),
  };
  const qualified = `${ctx.owner}.${id}`;
  const script = SCRIPTS[qualified];
  if (script) return { ...base, kind: "script", language: script, completions: false };

  const type = schema.type;
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string")) return { ...base, kind: "enum", options: schema.enum };
  if (Array.isArray(schema.anyOf)) {
    // `z.union([z.enum(…), ExpressionText])`: a value from the list, or an expression.
    const values = schema.anyOf.flatMap((s) => (isRecord(s) && Array.isArray(s.enum) ? s.enum.filter((v): v is string => typeof v === "string") : []));
    const allStrings = schema.anyOf.every((s) => isRecord(s) && s.type === "string");
    if (allStrings) return { ...base, kind: "expression", options: values, completions: true };
    return { ...base, kind: "json", completions };
  }
  if (type === "boolean") return { ...base, kind: schema.const === true ? "flag" : "boolean" };
  if (type === "integer") return { ...base, kind: "integer" };
  if (type === "number") return { ...base, kind: "number" };
  if (type === "string") return { ...base, kind: completions ? "expression" : MULTILINE.has(key) ? "multiline" : "text" };
  if (type === "array") {
    const items = isRecord(schema.items) ? schema.items : {};
    if (items.type === "string") return { ...base, kind: "string-list" };
    if (items.type === "object" && isRecord(items.properties) && "key" in items.properties && "value" in items.properties) return { ...base, kind: "tags" };
    return { ...base, kind: "json" };
  }
  if (type === "object" && isRecord(schema.properties) && !JSON_OBJECTS.has(qualified)) {
    if (!required) ctx.optionalObjects.push(path);
    return { ...base, kind: "group", children: fieldsOf(schema, path, ctx) };
  }
  return { ...base, kind: "json", jsonObject: type === "object" };
}

function fieldsOf(schema: JsonSchema, path: string[], ctx: Context, skip: ReadonlySet<string> = new Set()): FieldSpec[] {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []);
  const out: FieldSpec[] = [];
  for (const [key, property] of Object.entries(properties)) {
    if (skip.has(key) || !isRecord(property)) continue;
    out.push(fieldFromSchema(key, property, [...path, key], required.has(key), ctx));
  }
  return out;
}

/** Two fields of one form with one title get their group's title added to their accessible names. */
function disambiguate(sections: FieldSpec[][]): FieldSpec[][] {
  const count = new Map<string, number>();
  const visit = (fields: readonly FieldSpec[], fn: (f: FieldSpec) => void) => {
    for (const f of fields) {
      fn(f);
      if (f.children) visit(f.children, fn);
    }
  };
  for (const s of sections) visit(s, (f) => count.set(f.title, (count.get(f.title) ?? 0) + 1));
  const relabel = (fields: readonly FieldSpec[], group: string | undefined): FieldSpec[] =>
    fields.map((f) => {
      const label = group !== undefined && (count.get(f.title) ?? 0) > 1 ? `${f.title} (${group})` : f.title;
      return { ...f, label, ...(f.children ? { children: relabel(f.children, f.title) } : {}) };
    });
  return sections.map((s) => relabel(s, undefined));
}

function toJsonSchema(schema: z.ZodType): JsonSchema {
  // `unrepresentable: "any"`: refinements and z.unknown() become `{}` instead of throwing.
  return z.toJSONSchema(schema, { unrepresentable: "any", io: "input" });
}

const nodeModels = new Map<NodeType, NodeFormModel>();

/** The form of a node type (cached: a type's schema never changes at run time). */
export function nodeFormModel(type: NodeType): NodeFormModel {
  const cached = nodeModels.get(type);
  if (cached) return cached;
  const info = NODE_TYPES[type];
  const schema = toJsonSchema(info.schema);
  const ctx: Context = { owner: type, expressionFields: info.expressionFields, optionalObjects: [] };
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const all = fieldsOf(schema, [], ctx, HIDDEN_NODE_KEYS);
  const byKey = new Map(all.map((f) => [f.path[0]!, f]));
  const common = COMMON_KEYS.flatMap((k) => {
    const f = byKey.get(k);
    return f ? [f] : [];
  });
  const policySchema = properties.policy;
  const policyCtx: Context = { ...ctx, optionalObjects: ctx.optionalObjects };
  const policy = isRecord(policySchema) ? fieldsOf(policySchema, ["policy"], policyCtx) : [];
  ctx.optionalObjects.push(["policy"]);
  const optional = byKey.get("optional");
  // Common first, then the type's own fields in schema order with `input` last among them
  // (it is usually the largest), then policies and `optional` in their own sections.
  const rest = all.filter((f) => !(COMMON_KEYS as readonly string[]).includes(f.path[0]!) && f.path[0] !== "policy" && f.path[0] !== "optional");
  const specific = [...rest.filter((f) => f.path[0] !== "input"), ...rest.filter((f) => f.path[0] === "input")];
  const [c, s, p, o] = disambiguate([common, specific, policy, optional ? [optional] : []]);
  const model: NodeFormModel = { common: c!, specific: s!, policy: p!, optional: o![0], optionalObjects: ctx.optionalObjects };
  nodeModels.set(type, model);
  return model;
}

/** Definition keys the settings form does not edit: the graph (nodes, edges, sticky notes, pinned outputs) and the identity fields. */
const SETTINGS_SKIP: ReadonlySet<string> = new Set(["schemaVersion", "version", "nodes", "edges", "notes", "pins"]);
/** Workflow fields whose values are templates: the output is built with expressions once the run completes. */
const SETTINGS_EXPRESSIONS: readonly FieldPath[] = [["outputParameters"]];

let settingsModel: readonly FieldSpec[] | undefined;

/** The workflow settings form. */
export function workflowFormModel(): readonly FieldSpec[] {
  if (settingsModel) return settingsModel;
  const ctx: Context = { owner: "workflow", expressionFields: SETTINGS_EXPRESSIONS, optionalObjects: [] };
  settingsModel = fieldsOf(toJsonSchema(WorkflowDefinitionSchema), [], ctx, SETTINGS_SKIP);
  return settingsModel;
}

/** Every field id of a form, groups and their children included. */
export function fieldIds(fields: readonly FieldSpec[]): string[] {
  const out: string[] = [];
  const visit = (fs: readonly FieldSpec[]) => {
    for (const f of fs) {
      out.push(f.id);
      if (f.children) visit(f.children);
    }
  };
  visit(fields);
  return out;
}

/** Problems grouped by the field they belong to; the rest (edges, the node as a whole, unknown keys) in `other`. */
export interface AssignedProblems {
  readonly byField: ReadonlyMap<string, readonly Problem[]>;
  readonly other: readonly Problem[];
}

/**
 * Sends each problem to the deepest field whose path is a prefix of the
 * problem's: `["nodes", 3, "httpRequest", "uri"]` goes to `httpRequest.uri`,
 * `["nodes", 3, "input", "url"]` to the `input` JSON field. `relative` turns a
 * problem's path into one relative to the form (for a node, the part after
 * `["nodes", i]`), or null when the problem is not inside the form's object.
 */
export function assignProblems(problems: readonly Problem[], ids: readonly string[], relative: (path: readonly (string | number)[]) => readonly (string | number)[] | null): AssignedProblems {
  const known = new Set(ids);
  const byField = new Map<string, Problem[]>();
  const other: Problem[] = [];
  for (const problem of problems) {
    const rel = relative(problem.path);
    let target: string | undefined;
    if (rel !== null) {
      for (let n = rel.length; n > 0; n--) {
        const id = rel.slice(0, n).map(String).join(".");
        if (known.has(id)) {
          target = id;
          break;
        }
      }
    }
    if (target === undefined) other.push(problem);
    else {
      const list = byField.get(target);
      if (list) list.push(problem);
      else byField.set(target, [problem]);
    }
  }
  return { byField, other };
}

/** A node problem's path relative to the node: the part after `["nodes", i]`. */
export function nodeRelativePath(path: readonly (string | number)[]): readonly (string | number)[] | null {
  return path[0] === "nodes" && typeof path[1] === "number" ? path.slice(2) : null;
}

/** A problem of the whole definition: relative to the definition already, but the graph's own paths are not settings. */
export function settingsRelativePath(path: readonly (string | number)[]): readonly (string | number)[] | null {
  return path[0] === "nodes" || path[0] === "edges" ? null : path;
}

/** Problems of one field and, for a group, of everything inside it. */
export function problemsUnder(assigned: AssignedProblems, id: string): Problem[] {
  const out: Problem[] = [];
  for (const [field, list] of assigned.byField) if (field === id || field.startsWith(`${id}.`)) out.push(...list);
  return out;
}

/** Reads the value at `path`, or undefined. */
export function getIn(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const key of path) {
    if (!isRecord(v) || !Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = v[key];
  }
  return v;
}

/**
 * A copy of `target` with `value` at `path` — everything off the path shared,
 * not copied. `undefined` removes the key; an optional object (one of
 * `optionalObjects`) left empty by that is removed too, so clearing the last
 * policy field leaves no `policy: {}` behind.
 */
export function setIn<T extends object>(target: T, path: readonly string[], value: unknown, optionalObjects: readonly (readonly string[])[] = []): T {
  const isOptional = (p: readonly string[]) => optionalObjects.some((o) => o.length === p.length && o.every((k, i) => k === p[i]));
  const go = (node: unknown, depth: number): unknown => {
    const obj: Record<string, unknown> = isRecord(node) ? { ...node } : {};
    const key = path[depth]!;
    if (depth === path.length - 1) {
      if (value === undefined) delete obj[key];
      else obj[key] = value;
    } else {
      const child = go(obj[key], depth + 1);
      if (child === undefined) delete obj[key];
      else obj[key] = child;
    }
    if (depth > 0 && Object.keys(obj).length === 0 && isOptional(path.slice(0, depth))) return undefined;
    return obj;
  };
  if (path.length === 0) return target;
  return go(target, 0) as T;
}
