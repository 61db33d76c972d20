/**
 * The errors the client throws. An HTTP answer that is not a success becomes a
 * {@link NodeFlowApiError}, read from the RFC 9457 `application/problem+json`
 * body the server sends for every error; a request that got no answer at all
 * becomes a {@link NodeFlowNetworkError}. Both say how many attempts were made,
 * which is what tells a refusal apart from the echo of a retried request that
 * had already landed.
 */

/** One offending value of a rejected request, named by a JSON Pointer into it (`/body/input/name`, `/query/limit`). */
export interface ProblemFieldError {
  pointer: string;
  message: string;
  /** A stable code, where the server's check has one (definition problems). */
  code?: string;
  /** The node the problem belongs to, for definition problems. */
  ref?: string;
}

/** An RFC 9457 problem document as the server sends it. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: ProblemFieldError[];
}

/** What {@link NodeFlowApiError} is built from. */
export interface NodeFlowApiErrorInit {
  status: number;
  method: string;
  /** The request's path and query, without the origin. */
  path: string;
  /** The parsed body (a problem document, usually), or the raw text when it was not JSON. */
  body: unknown;
  /** Attempts made, the first included; more than 1 when the request was retried. */
  attempts?: number;
  /** The server's Retry-After, in milliseconds, when it sent one. */
  retryAfterMs?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fieldErrorsOf(value: unknown): ProblemFieldError[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((e) => ({
    pointer: typeof e.pointer === "string" ? e.pointer : "",
    message: typeof e.message === "string" ? e.message : "",
    ...(typeof e.code === "string" ? { code: e.code } : {}),
    ...(typeof e.ref === "string" ? { ref: e.ref } : {}),
  }));
}

/**
 * An HTTP error answer. `title`, `detail` and `errors` come from the problem
 * document when there is one; a proxy's HTML error page still gives a usable
 * error (its status and a generic title).
 */
export class NodeFlowApiError extends Error {
  override name = "NodeFlowApiError";
  /** The HTTP status. */
  readonly status: number;
  /** The problem's `type` URI (`https://node-flow.dev/problems/conflict`), or undefined when the body was not a problem. */
  readonly type: string | undefined;
  /** A short, fixed summary of the kind of problem. */
  readonly title: string;
  /** What went wrong with this request, in words. */
  readonly detail: string | undefined;
  /** Every offending value of a rejected request (validation problems); empty otherwise. */
  readonly errors: readonly ProblemFieldError[];
  /** The parsed body, or its raw text when it was not JSON. */
  readonly body: unknown;
  /** The request's method. */
  readonly method: string;
  /** The request's path and query. */
  readonly path: string;
  /** Attempts made, the first included. More than 1 means an earlier attempt may have reached the server. */
  readonly attempts: number;
  /** The server's Retry-After in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(init: NodeFlowApiErrorInit) {
    const problem = isRecord(init.body) ? init.body : {};
    const title = typeof problem.title === "string" ? problem.title : `HTTP ${init.status}`;
    const detail = typeof problem.detail === "string" ? problem.detail : undefined;
    super(`${detail ?? title} (${init.status} from ${init.method} ${init.path})`);
    this.status = init.status;
    this.type = typeof problem.type === "string" ? problem.type : undefined;
    this.title = title;
    this.detail = detail;
    this.errors = fieldErrorsOf(problem.errors);
    this.body = init.body;
    this.method = init.method;
    this.path = init.path;
    this.attempts = init.attempts ?? 1;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** The first field error at `pointer` or under it (`/body/input` matches `/body/input/name`). */
  fieldError(pointer: string): ProblemFieldError | undefined {
    return this.errors.find((e) => e.pointer === pointer || e.pointer.startsWith(`${pointer}/`));
  }
}

/** A request that got no HTTP answer: connection refused or reset, DNS failure, or the per-request timeout. */
export class NodeFlowNetworkError extends Error {
  override name = "NodeFlowNetworkError";
  /** The request's method. */
  readonly method: string;
  /** The request's path and query. */
  readonly path: string;
  /** Attempts made, the first included. */
  readonly attempts: number;

  constructor(init: { method: string; path: string; attempts: number; cause: unknown }) {
    const reason = init.cause instanceof Error ? describeCause(init.cause) : String(init.cause);
    super(`${init.method} ${init.path} failed after ${init.attempts} attempt${init.attempts === 1 ? "" : "s"}: ${reason}`, { cause: init.cause });
    this.method = init.method;
    this.path = init.path;
    this.attempts = init.attempts;
  }
}

/** undici says "fetch failed" and keeps the reason (ECONNREFUSED …) in `cause`. */
function describeCause(error: Error): string {
  const inner = error.cause;
  if (inner instanceof Error) return `${error.message} (${(inner as Error & { code?: string }).code ?? inner.message})`;
  return error.message;
}
