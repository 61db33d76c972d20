import { z } from "zod";
import type { ApiAnswer } from "../web/api-exchange";

/**
 * RFC 9457 problem details: every error the REST API answers, whatever went
 * wrong, is `application/problem+json` with `type`, `title`, `status` and
 * `detail` — never an HTML page, never a stack trace. A request that fails
 * validation also carries `errors`, one per offending value, each naming it by
 * a JSON Pointer (RFC 6901) into the request: `/body/input/name`,
 * `/query/limit`, `/params/runId`, `/headers/idempotency-key`.
 */

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** Where a problem's `type` URIs live; they identify the kind of problem, and need not resolve. */
const TYPE_BASE = "https://node-flow.dev/problems/";

/** The kinds of problem the API answers with: `type` slug, `title` and default status. */
export const PROBLEM_KINDS = {
  "validation": { title: "The request is not valid", status: 400 },
  "malformed-json": { title: "The request body is not valid JSON", status: 400 },
  "unauthenticated": { title: "Authentication required", status: 401 },
  "forbidden": { title: "Not allowed", status: 403 },
  "not-found": { title: "Not found", status: 404 },
  "method-not-allowed": { title: "Method not allowed", status: 405 },
  "conflict": { title: "Conflict", status: 409 },
  "payload-too-large": { title: "Request body too large", status: 413 },
  "unsupported-media-type": { title: "Unsupported media type", status: 415 },
  "internal": { title: "Internal server error", status: 500 },
  "unavailable": { title: "Service unavailable", status: 503 },
} as const satisfies Record<string, { title: string; status: number }>;
export type ProblemKind = keyof typeof PROBLEM_KINDS;

export const ProblemFieldErrorSchema = z
  .object({
    pointer: z.string().meta({ description: "JSON Pointer (RFC 6901) into the request: /body/…, /query/…, /params/… or /headers/…" }),
    message: z.string(),
    code: z.string().optional().meta({ description: "A stable code, where the check has one (definition problems: PROBLEM_CODES)." }),
    ref: z.string().optional().meta({ description: "The node the problem belongs to, for definition problems." }),
  });
export type ProblemFieldError = z.infer<typeof ProblemFieldErrorSchema>;

export const ProblemSchema = z
  .object({
    type: z.string().meta({ description: "A URI identifying the kind of problem." }),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    instance: z.string().optional(),
    errors: z.array(ProblemFieldErrorSchema).optional().meta({ description: "Present on validation problems: every offending value." }),
  })
  .meta({ description: "RFC 9457 problem details." });
export type Problem = z.infer<typeof ProblemSchema>;

/**
 * Thrown by a route handler (or the dispatcher) to answer with a problem. The
 * dispatcher renders it; anything else thrown becomes a 500 whose detail says
 * nothing about the cause.
 */
export class HttpProblem extends Error {
  override name = "HttpProblem";
  readonly problem: Problem;
  readonly headers: Record<string, string>;

  constructor(kind: ProblemKind, detail: string, options: { status?: number; errors?: ProblemFieldError[]; headers?: Record<string, string> } = {}) {
    super(detail);
    const { title, status } = PROBLEM_KINDS[kind];
    this.problem = {
      type: `${TYPE_BASE}${kind}`,
      title,
      status: options.status ?? status,
      detail,
      ...(options.errors === undefined ? {} : { errors: options.errors }),
    };
    this.headers = options.headers ?? {};
  }
}

export function problemAnswer(problem: Problem, headers: Record<string, string> = {}): ApiAnswer {
  return { status: problem.status, headers: { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store", ...headers }, body: JSON.stringify(problem) };
}

/** The part of the request a validated value came from: the root segment of every error pointer. */
export type RequestLocation = "body" | "query" | "params" | "headers";

/** RFC 6901: "~" and "/" inside a segment are escaped as "~0" and "~1". */
export function jsonPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/**
 * One error per offending value. An unknown key is reported at the key itself
 * (zod reports it at the enclosing object), so the pointer names the typo.
 */
export function zodIssuesToErrors(issues: readonly z.core.$ZodIssue[], location: RequestLocation): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  for (const issue of issues) {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) errors.push({ pointer: jsonPointer([location, ...path, key]), message: `Unknown field "${key}"` });
      continue;
    }
    errors.push({ pointer: jsonPointer([location, ...path]), message: issue.message });
  }
  return errors;
}

/** A 400 naming every offending value; `detail` summarises the first few. */
export function validationProblem(errors: ProblemFieldError[]): HttpProblem {
  const shown = errors.slice(0, 3).map((e) => `${e.pointer}: ${e.message}`);
  const more = errors.length > shown.length ? ` (and ${errors.length - shown.length} more)` : "";
  return new HttpProblem("validation", `${shown.join("; ")}${more}`, { errors });
}
