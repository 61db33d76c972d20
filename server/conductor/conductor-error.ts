import type { z } from "zod";
import type { ApiAnswer } from "../web/api-exchange";

/**
 * Errors in Conductor's shape. Conductor answers an error with its
 * `ErrorResponse` JSON — `status`, `message`, `instance`, `retryable`, and
 * for a validation failure `validationErrors: [{path, message}]` — and its
 * clients read `message` (and `retryable`) from it; authentication failures
 * are Orkes' `{"error": "EXPIRED_TOKEN" | "INVALID_TOKEN"}`, which clients
 * match on to refresh their token. Every one is application/json; none is
 * ever an HTML page or a stack trace.
 */

export interface ConductorValidationError {
  /** Where: `body.tasks[2].type`, `query.count`, `[1].name` for the second definition of a list. */
  path: string;
  message: string;
}

/** Thrown by a handler (or the dispatcher) to answer with Conductor's ErrorResponse. */
export class ConductorError extends Error {
  override name = "ConductorError";
  constructor(
    readonly status: number,
    message: string,
    readonly validationErrors?: ConductorValidationError[],
  ) {
    super(message);
  }
}

export const notFound = (message: string) => new ConductorError(404, message);
export const conflict = (message: string) => new ConductorError(409, message);
export const badRequest = (message: string, validationErrors?: ConductorValidationError[]) => new ConductorError(400, message, validationErrors);

/** A 400 listing every problem, the way Conductor reports a failed bean validation. */
export function validationFailed(errors: ConductorValidationError[]): ConductorError {
  return new ConductorError(400, `Validation failed, check below errors for detail. ${errors.slice(0, 3).map((e) => `${e.path}: ${e.message}`).join("; ")}${errors.length > 3 ? ` (and ${errors.length - 3} more)` : ""}`, errors);
}

/** `a.b[2].c` from a path of keys and indexes, under `root`. */
export function dottedPath(root: string, path: readonly (string | number | symbol)[]): string {
  let out = root;
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

export function zodValidationErrors(issues: readonly z.core.$ZodIssue[], root: string): ConductorValidationError[] {
  const out: ConductorValidationError[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push({ path: dottedPath(root, [...issue.path, key]), message: `Unknown field "${key}"` });
      continue;
    }
    out.push({ path: dottedPath(root, issue.path), message: issue.message });
  }
  return out;
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" } as const;

export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): ApiAnswer {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

export function errorAnswer(error: ConductorError, headers: Record<string, string> = {}): ApiAnswer {
  if (error.status === 401) return authErrorAnswer("INVALID_TOKEN", error.message);
  return jsonAnswer(
    error.status,
    {
      status: error.status,
      message: error.message,
      instance: "node-flow",
      retryable: error.status >= 500,
      ...(error.validationErrors === undefined ? {} : { validationErrors: error.validationErrors }),
    },
    headers,
  );
}

/** Orkes' authentication failure: clients refresh their token on EXPIRED_TOKEN and give up on INVALID_TOKEN. */
export function authErrorAnswer(error: "EXPIRED_TOKEN" | "INVALID_TOKEN", message: string): ApiAnswer {
  return jsonAnswer(401, { error, message });
}

export const forbidden = (message: string) => new ConductorError(403, message);
