import { useMemo } from "react";

/** The part of a tRPC client error a form reads (server/trpc/init.ts errorFormatter adds `zodError`). */
export interface FormErrorSource {
  message: string;
  data?: { zodError?: { fieldErrors?: Record<string, string[] | undefined> } | null } | null;
}

export interface FormErrors {
  /** By field name, for `<Form validationErrors>`: each shown by that field's FieldError. */
  fields: Record<string, string[]>;
  /** A refusal that belongs to no one field ("Wrong email or password."). */
  form: string | null;
}

/**
 * Splits a failed mutation into errors next to fields and one for the form.
 * Zod's per-field messages name their field. The identity services' refusals
 * are a message only; `route` says which field such a message is about (the
 * email that is taken, the password that is too weak), else it is the form's.
 */
export function formErrors(error: FormErrorSource | null | undefined, route?: (message: string) => string | null): FormErrors {
  if (!error) return { fields: {}, form: null };
  const fields: Record<string, string[]> = {};
  for (const [name, messages] of Object.entries(error.data?.zodError?.fieldErrors ?? {})) {
    if (messages && messages.length > 0) fields[name] = messages;
  }
  if (Object.keys(fields).length > 0) return { fields, form: null };
  const field = route?.(error.message) ?? null;
  return field ? { fields: { [field]: [error.message] }, form: null } : { fields: {}, form: error.message };
}

/** For forms with an email and a password: a message about one of them goes next to it. */
export function routeCredentialMessage(message: string): "email" | "password" | null {
  if (/\bpassword\b/i.test(message)) return "password";
  if (/\bemail\b/i.test(message)) return "email";
  return null;
}

/**
 * formErrors for a component: the same object until the error changes. React
 * Aria's Form treats a new `validationErrors` object as new errors, so a fresh
 * one on every render would re-show a server error the user already corrected
 * (and, set as the input's custom validity, block the next submit). `route`
 * must be stable: a module-level function.
 */
export function useFormErrors(error: FormErrorSource | null | undefined, route?: (message: string) => string | null): FormErrors {
  return useMemo(() => formErrors(error, route), [error, route]);
}

/** A `route` that sends messages matching `pattern` to `field` (create it once, at module level). */
export function routeMatching(pattern: RegExp, field: string): (message: string) => string | null {
  return (message) => (pattern.test(message) ? field : null);
}
