import { z } from "zod";

/**
 * The Run dialog's pure half: a form from a workflow's `inputSchema` (JSON
 * Schema), the drafts its inputs hold, the input those drafts mean, and the
 * check the server will make — `z.fromJSONSchema`, the same one
 * server/executions/start-execution.ts applies, so the dialog refuses exactly what the
 * server would and says it next to the field.
 */

export type RunFieldKind = "string" | "number" | "integer" | "boolean" | "enum" | "json";

export interface RunField {
  key: string;
  title: string;
  description?: string;
  kind: RunFieldKind;
  required: boolean;
  defaultValue?: unknown;
  /** For enum: the allowed values (strings, numbers, booleans or null). */
  options?: readonly unknown[];
  /** For json: what the value must be. */
  jsonType?: "object" | "array" | "any";
}

/** What an input holds while being edited: text for text-like fields, a flag for booleans. */
export type RunDraft = string | boolean | undefined;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function schemaType(schema: Record<string, unknown>): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  // `["string", "null"]`: the non-null one decides the input.
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null");
  return undefined;
}

/**
 * The form's fields, or null when the schema does not describe an object by
 * its properties (no schema, `{}`, a `oneOf` at the top): then the dialog
 * offers raw JSON only.
 */
export function runFields(schema: Record<string, unknown> | undefined): RunField[] | null {
  if (!schema || !isRecord(schema.properties) || Object.keys(schema.properties).length === 0) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []);
  return Object.entries(schema.properties).map(([key, raw]): RunField => {
    const property = isRecord(raw) ? raw : {};
    const base: RunField = {
      key,
      title: typeof property.title === "string" ? property.title : key,
      kind: "json",
      required: required.has(key),
      ...(typeof property.description === "string" ? { description: property.description } : {}),
      ...(property.default !== undefined ? { defaultValue: property.default } : {}),
    };
    if (Array.isArray(property.enum)) return { ...base, kind: "enum", options: property.enum };
    if (property.const !== undefined) return { ...base, kind: "enum", options: [property.const] };
    const type = schemaType(property);
    if (type === "string" || type === "number" || type === "integer" || type === "boolean") return { ...base, kind: type };
    return { ...base, kind: "json", jsonType: type === "object" ? "object" : type === "array" ? "array" : "any" };
  });
}

/** The text an enum option is keyed and shown by. */
export function optionKey(option: unknown): string {
  return typeof option === "string" ? option : JSON.stringify(option);
}

/** The draft that shows `value` in the field (a default, or an input switched back from raw JSON). */
export function draftOf(field: RunField, value: unknown): RunDraft {
  if (value === undefined) return field.kind === "boolean" ? undefined : "";
  switch (field.kind) {
    case "boolean":
      return typeof value === "boolean" ? value : undefined;
    case "string":
      return typeof value === "string" ? value : JSON.stringify(value);
    case "number":
    case "integer":
      return typeof value === "number" ? String(value) : JSON.stringify(value);
    case "enum":
      return optionKey(value);
    case "json":
      return JSON.stringify(value, null, 2);
  }
}

/** Drafts for every field from an input object: defaults where the input says nothing. */
export function draftsFor(fields: readonly RunField[], input: Record<string, unknown> = {}, useDefaults = true): Record<string, RunDraft> {
  return Object.fromEntries(fields.map((f) => [f.key, draftOf(f, f.key in input ? input[f.key] : useDefaults ? f.defaultValue : undefined)]));
}

export interface RunInputResult {
  input: Record<string, unknown>;
  /** By field key: why its draft is not a value (required and empty, not a number, not JSON). */
  errors: Record<string, string>;
}

/**
 * The input the drafts mean. An empty optional field is left out (the
 * workflow sees no key, not ""), so a default in the schema stays the
 * workflow's to apply.
 */
export function inputFromDrafts(fields: readonly RunField[], drafts: Readonly<Record<string, RunDraft>>): RunInputResult {
  const input: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const draft = drafts[field.key];
    const empty = draft === undefined || draft === "";
    if (empty) {
      if (field.required && field.kind !== "boolean") errors[field.key] = `${field.title} is required`;
      else if (field.required && field.kind === "boolean") input[field.key] = false;
      continue;
    }
    switch (field.kind) {
      case "boolean":
        input[field.key] = draft === true;
        break;
      case "string":
        input[field.key] = draft;
        break;
      case "number":
      case "integer": {
        const text = String(draft).trim();
        const n = Number(text);
        if (text === "" || !Number.isFinite(n)) errors[field.key] = `${field.title} must be a number`;
        else if (field.kind === "integer" && !Number.isInteger(n)) errors[field.key] = `${field.title} must be a whole number`;
        else input[field.key] = n;
        break;
      }
      case "enum": {
        const options = field.options ?? [];
        const index = options.findIndex((o) => optionKey(o) === draft);
        if (index < 0) errors[field.key] = `${field.title}: choose one of the options`;
        else input[field.key] = options[index];
        break;
      }
      case "json": {
        let value: unknown;
        try {
          value = JSON.parse(String(draft));
        } catch {
          errors[field.key] = `${field.title} is not valid JSON`;
          break;
        }
        if (field.jsonType === "object" && !isRecord(value)) errors[field.key] = `${field.title} must be a JSON object`;
        else if (field.jsonType === "array" && !Array.isArray(value)) errors[field.key] = `${field.title} must be a JSON array`;
        else input[field.key] = value;
        break;
      }
    }
  }
  return { input, errors };
}

/** A reason the input does not satisfy the schema, at a path inside the input. */
export interface RunInputProblem {
  path: (string | number)[];
  message: string;
}

/** Checks an input against the schema as the server does; a schema zod cannot apply is reported, not thrown. */
export function checkRunInput(schema: Record<string, unknown> | undefined, input: unknown): RunInputProblem[] {
  if (!schema) return [];
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(schema);
  } catch (error) {
    return [{ path: [], message: `The workflow's input schema cannot be applied: ${error instanceof Error ? error.message : String(error)}` }];
  }
  const result = validator.safeParse(input);
  if (result.success) return [];
  return result.error.issues.map((issue) => ({ path: issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)), message: issue.message }));
}

/** Problems split into those of a form field (by its key) and the rest. */
export function problemsByField(problems: readonly RunInputProblem[], fields: readonly RunField[] | null): { byField: Record<string, string[]>; other: string[] } {
  const keys = new Set((fields ?? []).map((f) => f.key));
  const byField: Record<string, string[]> = {};
  const other: string[] = [];
  for (const p of problems) {
    const key = p.path[0];
    if (typeof key === "string" && keys.has(key)) {
      const rest = p.path.slice(1);
      (byField[key] ??= []).push(rest.length > 0 ? `${rest.join(".")}: ${p.message}` : p.message);
    } else other.push(p.path.length > 0 ? `${p.path.join(".")}: ${p.message}` : p.message);
  }
  return { byField, other };
}
