import { Ajv } from "ajv";
import type { ErrorObject, ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { LruCache } from "../lib/lru-cache";
import type { FieldError } from "./human-task-support";

/**
 * Server-side validation of a submitted form against its JSON Schema, with
 * ajv 8 + ajv-formats — the validator the inbox's form (rjsf's
 * validator-ajv8) uses, so a value the browser accepts is accepted here and a
 * value it flags is flagged with the same path. Errors are JSON pointers into
 * the data ("/amount", "/items/0/name"), which the UI maps onto its fields.
 */

// ajv-formats is CommonJS: under ESM its default export may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

// strict off: form schemas carry UI keywords (title, description, enumNames…)
// and come from people, not from code; an unknown keyword is not an error.
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, validateFormats: true }));

/** Compiled validators by schema text; a template version never changes, so its validator never does. */
const cache = new LruCache<string, ValidateFunction>(500);

function validatorFor(schema: Record<string, unknown>): ValidateFunction | FieldError[] {
  const key = JSON.stringify(schema);
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    return [{ path: "", message: `The form's schema cannot be used: ${error instanceof Error ? error.message : String(error)}` }];
  }
  cache.set(key, validate);
  return validate;
}

/** The data's field errors against `schema`; empty when it is valid. */
export function validateFormData(schema: Record<string, unknown>, data: unknown): FieldError[] {
  const validate = validatorFor(schema);
  if (Array.isArray(validate)) return validate;
  if (validate(data)) return [];
  return (validate.errors ?? []).map(fieldError);
}

function fieldError(error: ErrorObject): FieldError {
  // A missing required property is reported on its parent; the UI wants it on the field itself.
  if (error.keyword === "required" && typeof error.params.missingProperty === "string") {
    return { path: `${error.instancePath}/${escapePointer(error.params.missingProperty)}`, message: "is required" };
  }
  if (error.keyword === "additionalProperties" && typeof error.params.additionalProperty === "string") {
    return { path: `${error.instancePath}/${escapePointer(error.params.additionalProperty)}`, message: "is not a field of this form" };
  }
  return { path: error.instancePath, message: error.message ?? `fails ${error.keyword}` };
}

function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}
