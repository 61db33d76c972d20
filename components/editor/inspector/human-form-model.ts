/**
 * The HUMAN node's form builder works on a flat list of fields; what is stored
 * (in the node and in FormTemplates) is JSON Schema plus an rjsf UI schema.
 * These two pure functions convert between them, and `fieldsToForm` followed
 * by `formToFields` gives back the same list. A schema the builder did not
 * write (nested objects, oneOf, …) is not forced into the list: `formToFields`
 * answers null and the inspector offers its JSON instead.
 *
 * Field order is `ui:order`, never the order of `properties`: the definition
 * is stored as JSONB, which keeps object keys in its own order, not ours.
 */

export const HUMAN_FIELD_TYPES = ["text", "textarea", "number", "select", "multiselect", "checkbox", "date", "email", "url"] as const;
export type HumanFieldType = (typeof HUMAN_FIELD_TYPES)[number];

export const HUMAN_FIELD_TYPE_LABELS: Readonly<Record<HumanFieldType, string>> = {
  text: "Text",
  textarea: "Long text",
  number: "Number",
  select: "Select",
  multiselect: "Multi-select",
  checkbox: "Checkbox",
  date: "Date",
  email: "Email",
  url: "URL",
};

export interface HumanField {
  key: string;
  type: HumanFieldType;
  label: string;
  required: boolean;
  /** Shown under the field. */
  help?: string;
  /** number */
  minimum?: number;
  maximum?: number;
  /** number: whole numbers only. */
  integer?: boolean;
  /** text, textarea, email, url */
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** select, multiselect */
  options?: string[];
  /** Shown, never editable: a context field whose value comes from the node's input. */
  readOnly?: boolean;
}

export interface HumanForm {
  schema: Record<string, unknown>;
  uiSchema: Record<string, unknown>;
}

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const FORMAT_OF: Partial<Record<HumanFieldType, string>> = { date: "date", email: "email", url: "uri" };
const TEXTUAL: ReadonlySet<HumanFieldType> = new Set(["text", "textarea", "email", "url"]);

function propertyOf(field: HumanField): Json {
  const p: Json = {};
  const base = (type: string) => {
    p.type = type;
    if (field.label) p.title = field.label;
    if (field.help) p.description = field.help;
  };
  switch (field.type) {
    case "number":
      base(field.integer ? "integer" : "number");
      if (field.minimum !== undefined) p.minimum = field.minimum;
      if (field.maximum !== undefined) p.maximum = field.maximum;
      break;
    case "checkbox":
      base("boolean");
      break;
    case "select":
      base("string");
      p.enum = [...(field.options ?? [])];
      break;
    case "multiselect":
      base("array");
      p.items = { type: "string", enum: [...(field.options ?? [])] };
      p.uniqueItems = true;
      break;
    default:
      base("string");
      if (FORMAT_OF[field.type]) p.format = FORMAT_OF[field.type];
  }
  if (TEXTUAL.has(field.type)) {
    if (field.minLength !== undefined) p.minLength = field.minLength;
    if (field.maxLength !== undefined) p.maxLength = field.maxLength;
    if (field.pattern) p.pattern = field.pattern;
  }
  return p;
}

function uiOf(field: HumanField): Json | undefined {
  const ui: Json = {};
  if (field.type === "textarea") ui["ui:widget"] = "textarea";
  if (field.type === "multiselect") ui["ui:widget"] = "checkboxes";
  if (field.readOnly) ui["ui:readonly"] = true;
  return Object.keys(ui).length > 0 ? ui : undefined;
}

/** The list as JSON Schema (an object of the fields) and its UI schema. */
export function fieldsToForm(fields: readonly HumanField[]): HumanForm {
  const properties: Json = {};
  const uiSchema: Json = {};
  for (const f of fields) {
    properties[f.key] = propertyOf(f);
    const ui = uiOf(f);
    if (ui) uiSchema[f.key] = ui;
  }
  const required = fields.filter((f) => f.required).map((f) => f.key);
  const schema: Json = { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
  if (fields.length > 0) uiSchema["ui:order"] = fields.map((f) => f.key);
  return { schema, uiSchema };
}

const SCHEMA_KEYS: Readonly<Record<HumanFieldType, ReadonlySet<string>>> = (() => {
  const common = ["type", "title", "description"];
  const text = [...common, "minLength", "maxLength", "pattern"];
  return {
    text: new Set(text),
    textarea: new Set(text),
    email: new Set([...text, "format"]),
    url: new Set([...text, "format"]),
    date: new Set([...common, "format"]),
    number: new Set([...common, "minimum", "maximum"]),
    checkbox: new Set(common),
    select: new Set([...common, "enum"]),
    multiselect: new Set([...common, "items", "uniqueItems"]),
  };
})();
const UI_KEYS: ReadonlySet<string> = new Set(["ui:widget", "ui:readonly"]);

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined;
}

function typeOf(p: Json, ui: Json): HumanFieldType | null {
  const widget = ui["ui:widget"];
  switch (p.type) {
    case "number":
    case "integer":
      return widget === undefined ? "number" : null;
    case "boolean":
      return widget === undefined ? "checkbox" : null;
    case "array": {
      const items = p.items;
      return isRecord(items) && items.type === "string" && stringList(items.enum) && Object.keys(items).length === 2 && (widget === "checkboxes" || widget === undefined) ? "multiselect" : null;
    }
    case "string":
      if (p.enum !== undefined) return stringList(p.enum) && widget === undefined ? "select" : null;
      if (widget === "textarea") return p.format === undefined ? "textarea" : null;
      if (widget !== undefined) return null;
      if (p.format === undefined) return "text";
      if (p.format === "date") return "date";
      if (p.format === "email") return "email";
      if (p.format === "uri") return "url";
      return null;
    default:
      return null;
  }
}

function fieldOf(key: string, p: Json, ui: Json, required: boolean): HumanField | null {
  const type = typeOf(p, ui);
  if (type === null) return null;
  if (Object.keys(p).some((k) => !SCHEMA_KEYS[type].has(k))) return null;
  if (Object.keys(ui).some((k) => !UI_KEYS.has(k))) return null;
  if (type === "multiselect" && p.uniqueItems !== true) return null;
  if (p.title !== undefined && typeof p.title !== "string") return null;
  if (p.description !== undefined && typeof p.description !== "string") return null;
  const field: HumanField = { key, type, label: typeof p.title === "string" ? p.title : "", required };
  if (typeof p.description === "string") field.help = p.description;
  if (type === "number") {
    if (p.type === "integer") field.integer = true;
    if (num(p.minimum) !== undefined) field.minimum = num(p.minimum);
    if (num(p.maximum) !== undefined) field.maximum = num(p.maximum);
  }
  if (TEXTUAL.has(type)) {
    if (num(p.minLength) !== undefined) field.minLength = num(p.minLength);
    if (num(p.maxLength) !== undefined) field.maxLength = num(p.maxLength);
    if (typeof p.pattern === "string") field.pattern = p.pattern;
  }
  if (type === "select") field.options = stringList(p.enum) ?? [];
  if (type === "multiselect" && isRecord(p.items)) field.options = stringList(p.items.enum) ?? [];
  if (ui["ui:readonly"] === true) field.readOnly = true;
  else if (ui["ui:readonly"] !== undefined) return null;
  return field;
}

/**
 * The field list of a form, or null when the schema holds something the
 * builder cannot show as a list (the inspector then edits its JSON).
 * Absent schema: no fields yet.
 */
export function formToFields(schema: unknown, uiSchema: unknown): HumanField[] | null {
  if (schema === undefined) return [];
  if (!isRecord(schema) || schema.type !== "object") return null;
  if (Object.keys(schema).some((k) => k !== "type" && k !== "properties" && k !== "required")) return null;
  const properties = schema.properties === undefined ? {} : schema.properties;
  if (!isRecord(properties)) return null;
  const ui = uiSchema === undefined ? {} : uiSchema;
  if (!isRecord(ui)) return null;
  const required = schema.required === undefined ? [] : stringList(schema.required);
  if (!required) return null;
  const keys = Object.keys(properties);
  if (Object.keys(ui).some((k) => k !== "ui:order" && !keys.includes(k))) return null;
  const order = ui["ui:order"] === undefined ? [] : stringList(ui["ui:order"]);
  if (!order) return null;
  const ordered = [...order.filter((k) => keys.includes(k)), ...keys.filter((k) => !order.includes(k))];
  const fields: HumanField[] = [];
  for (const key of ordered) {
    const p = properties[key];
    const fieldUi = ui[key] === undefined ? {} : ui[key];
    if (!isRecord(p) || !isRecord(fieldUi)) return null;
    const field = fieldOf(key, p, fieldUi, required.includes(key));
    if (!field) return null;
    fields.push(field);
  }
  return fields;
}

/** A key for a new field: `field`, `field_2`, … not taken yet. */
export function freshKey(fields: readonly HumanField[], base = "field"): string {
  const taken = new Set(fields.map((f) => f.key));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}_${n}`)) return `${base}_${n}`;
}

/** A key from a label: "Amount (EUR)" → "amount_eur". */
export function keyFromLabel(label: string): string {
  const key = label
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return /^[a-z]/.test(key) ? key : key ? `f_${key}` : "field";
}

const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What is wrong with each field, by index; the builder shows it on the field and the preview stays usable. */
export function fieldProblems(fields: readonly HumanField[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const add = (i: number, message: string) => out.set(i, [...(out.get(i) ?? []), message]);
  const seen = new Map<string, number>();
  fields.forEach((f, i) => {
    if (!KEY_PATTERN.test(f.key)) add(i, "The key must start with a letter or _ and hold only letters, digits and _.");
    const first = seen.get(f.key);
    if (first !== undefined) add(i, `The key "${f.key}" is used by field ${first + 1} too.`);
    else seen.set(f.key, i);
    if (f.minimum !== undefined && f.maximum !== undefined && f.minimum > f.maximum) add(i, "The minimum is above the maximum.");
    if (f.minLength !== undefined && f.maxLength !== undefined && f.minLength > f.maxLength) add(i, "The minimum length is above the maximum length.");
    if (f.pattern) {
      try {
        new RegExp(f.pattern, "u");
      } catch {
        add(i, "The pattern is not a valid regular expression.");
      }
    }
    if ((f.type === "select" || f.type === "multiselect") && (f.options ?? []).filter((o) => o !== "").length === 0) add(i, "Give at least one option.");
    if (f.options && new Set(f.options).size !== f.options.length) add(i, "Two options are the same.");
  });
  return out;
}

/** Turns a field into another type, keeping what still applies (label, key, required, help, read-only). */
export function changeFieldType(field: HumanField, type: HumanFieldType): HumanField {
  const next: HumanField = { key: field.key, type, label: field.label, required: field.required };
  if (field.help) next.help = field.help;
  if (field.readOnly) next.readOnly = true;
  if (TEXTUAL.has(type) && TEXTUAL.has(field.type)) {
    if (field.minLength !== undefined) next.minLength = field.minLength;
    if (field.maxLength !== undefined) next.maxLength = field.maxLength;
    if (field.pattern) next.pattern = field.pattern;
  }
  if (type === "number" && field.type === "number") {
    if (field.minimum !== undefined) next.minimum = field.minimum;
    if (field.maximum !== undefined) next.maximum = field.maximum;
    if (field.integer) next.integer = true;
  }
  if (type === "select" || type === "multiselect") next.options = field.options ?? ["Option 1"];
  return next;
}

/** Moves the item at `from` to `to` (both indexes into the list as it is). */
export function move<T>(list: readonly T[], from: number, to: number): T[] {
  if (from === to || from < 0 || to < 0 || from >= list.length || to >= list.length) return [...list];
  const next = [...list];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item as T);
  return next;
}

/**
 * The node's input after a field's key changed: its default (an expression in
 * `input[key]`) follows the field. `to` undefined: the field was removed, and
 * its default with it.
 */
export function moveInputKey(input: Readonly<Record<string, unknown>> | undefined, from: string, to: string | undefined): Record<string, unknown> | undefined {
  if (!input || !(from in input)) return input ? { ...input } : undefined;
  const next: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (k === from) {
      if (to !== undefined) next[to] = v;
    } else if (k !== to) next[k] = v;
  }
  return Object.keys(next).length > 0 ? next : undefined;
}

/**
 * A default typed into the builder as the value stored in `input[key]`: an
 * expression stays text (resolved when the task opens); a literal becomes the
 * field's type, so a number field's "5" pre-fills 5, not "5" (which its own
 * schema would refuse).
 */
export function defaultFromText(field: HumanField, text: string): unknown {
  if (text === "") return undefined;
  if (text.includes("${")) return text;
  const t = text.trim();
  if (field.type === "number" && t !== "" && Number.isFinite(Number(t))) return Number(t);
  if (field.type === "checkbox" && (t === "true" || t === "false")) return t === "true";
  if (field.type === "multiselect" && t.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(t);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // Not JSON yet (still being typed): kept as text.
    }
  }
  return text;
}

/** How a stored default reads in the builder's text field. */
export function defaultToText(value: unknown): string {
  return value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The key a field gets when its label changes: a key still as generated
 * (`field`, `field_2`) or still derived from the old label follows the new
 * label; a key someone chose stays.
 */
export function keyAfterLabel(fields: readonly HumanField[], index: number, label: string): string {
  const field = fields[index];
  if (!field) return "field";
  const auto = /^field(_\d+)?$/.test(field.key) || field.key === keyFromLabel(field.label);
  if (!auto || label.trim() === "") return field.key;
  return freshKey(
    fields.filter((_, i) => i !== index),
    keyFromLabel(label),
  );
}
