import type { z } from "zod";
import type { ApiAnswer, ApiRequest, ApiRequestHeaders } from "../web/api-exchange";
import { BodyTooLargeError, fromFetchRequest, toFetchResponse, withoutBody } from "../web/api-exchange";
import { routeTableMatcher } from "../web/route-table";
import type { AnyRoute, NamespaceAccess, RestDeps } from "./define-route";
import { HttpProblem, jsonPointer, problemAnswer, validationProblem, zodIssuesToErrors } from "./problem";
import type { ProblemFieldError, RequestLocation } from "./problem";
import { isDatabaseOutage, noteAnswered, OUTAGE_MESSAGE, OUTAGE_RETRY_AFTER_SECONDS } from "../web/database-outage";
import { findUnstorableBody, unstorableText } from "../lib/unstorable-input";

/**
 * The one entry point of /api/v1: match the route, then, in this order —
 * authenticate (401), the same-origin check for cookie-authenticated state
 * changes (403), authorize the path's namespace (404 when the caller has no
 * access to it at all, so a namespace's existence never leaks; 403 when the
 * access is too weak), validate params, query, headers and body together
 * (400 naming every field), run the handler, and check its answer against the
 * declared response schema. Authorization comes before the body is read, so
 * an anonymous caller cannot make the server buffer 10 MB.
 */

export const API_PREFIX = "/api/v1";
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

const matchRoute = routeTableMatcher<AnyRoute>({ prefix: API_PREFIX, label: "routes", trailingSlash: "not-found" });

/** The route for a method and path: the matched route, a 404, or a 405 listing what the path allows. */
export function resolveRoute(
  routes: readonly AnyRoute[],
  method: string,
  pathname: string,
): { route: AnyRoute; params: Record<string, string> } {
  const match = matchRoute(routes, method, pathname);
  if (match.kind === "not-found") throw new HttpProblem("not-found", `No API route at ${pathname}`);
  if (match.kind === "method-not-allowed") {
    const allow: string[] = [...match.allowed];
    // HEAD is answered wherever GET is: the GET's answer without its body.
    if (allow.includes("GET")) allow.splice(allow.indexOf("GET") + 1, 0, "HEAD");
    throw new HttpProblem("method-not-allowed", `${method} is not allowed on ${pathname}; use ${allow.join(", ")}`, { headers: { allow: allow.join(", ") } });
  }
  return { route: match.route, params: match.params };
}

/**
 * Answers one request from `routes`. `deps` may be a function so that a
 * process whose environment is broken still answers with a problem (503), not
 * an HTML error page.
 */
export async function answerRestRequest(deps: RestDeps | (() => RestDeps), request: ApiRequest, routes: readonly AnyRoute[]): Promise<ApiAnswer> {
  const isHead = request.method === "HEAD";
  let logger: RestDeps["logger"];
  try {
    const method = isHead ? "GET" : request.method;
    const url = new URL(request.url);
    const { route, params } = resolveRoute(routes, method, url.pathname);
    let resolved: RestDeps;
    try {
      resolved = typeof deps === "function" ? deps() : deps;
    } catch (error) {
      logFailure(undefined, error, request);
      throw new HttpProblem("unavailable", "The server is not configured; see its log");
    }
    logger = resolved.logger;
    const answer = await serve(resolved, route, params, url, request, routes);
    noteAnswered(logger);
    return isHead ? withoutBody(answer) : answer;
  } catch (error) {
    if (error instanceof HttpProblem) return problemAnswer(error.problem, error.headers);
    if (isDatabaseOutage(error, logger)) {
      return problemAnswer(new HttpProblem("unavailable", OUTAGE_MESSAGE).problem, { "retry-after": String(OUTAGE_RETRY_AFTER_SECONDS) });
    }
    logFailure(logger, error, request);
    const problem = new HttpProblem("internal", "The request failed on the server; it has been logged").problem;
    return problemAnswer(problem);
  }
}

/** answerRestRequest for a fetch Request (the App Router's catch-all route). */
export async function dispatchRestRequest(deps: RestDeps | (() => RestDeps), request: Request, routes: readonly AnyRoute[]): Promise<Response> {
  return toFetchResponse(await answerRestRequest(deps, fromFetchRequest(request), routes));
}

function logFailure(logger: RestDeps["logger"], error: unknown, request: ApiRequest): void {
  const where = { method: request.method, path: new URL(request.url).pathname };
  if (logger) logger.error({ err: error, ...where }, "REST request failed");
  else console.error(`REST ${where.method} ${where.path} failed:`, error);
}

async function serve(
  deps: RestDeps,
  route: AnyRoute,
  rawParams: Record<string, string>,
  url: URL,
  request: ApiRequest,
  routes: readonly AnyRoute[],
): Promise<ApiAnswer> {
  let principal = null;
  let namespace: NamespaceAccess | null = null;
  if (route.auth !== "public") {
    principal = await deps.auth.authenticate(deps.db, request);
    if (principal === null) {
      throw new HttpProblem("unauthenticated", "Send an API key as `Authorization: Bearer <key>`, or sign in", {
        headers: { "www-authenticate": 'Bearer realm="node-flow"' },
      });
    }
    // A browser sends the session cookie with a cross-site form post too; the
    // Origin check is what tells the two apart. A bearer key is never sent by
    // a browser on its own, so it needs none.
    if (principal.kind === "user" && request.method !== "GET" && request.method !== "HEAD") {
      const origin = deps.auth.checkSameOrigin(request);
      if (!origin.ok) throw new HttpProblem("forbidden", origin.message);
    }
    const nsName = rawParams.ns ?? "";
    const access = await deps.auth.authorize(deps.db, principal, nsName, route.auth);
    if (!access.ok) throw new HttpProblem(access.status === 404 ? "not-found" : "forbidden", access.message);
    namespace = { id: access.namespaceId, name: nsName, role: access.role };
  }

  const errors: ProblemFieldError[] = [];
  const { ns: _ns, ...ownParams } = rawParams;
  const rawQuery = queryObject(url.searchParams);
  errors.push(...unstorableParameters(ownParams, "params"), ...unstorableParameters(rawQuery, "query"));
  const params = validate(route.params, ownParams, "params", errors);
  const query = validate(route.query, rawQuery, "query", errors);
  const headers = validate(route.headers, headerObject(request.headers, route.headers), "headers", errors);
  let body: unknown;
  if (route.body !== undefined) {
    const raw = await readBodyCollecting(request, deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, errors);
    if (raw.ok) body = validate(route.body, raw.value, "body", errors);
  }
  if (errors.length > 0) throw validationProblem(errors);

  const handler = route.handler as (ctx: unknown) => Promise<{ status: number; body: unknown; headers?: Record<string, string> }>;
  const result = await handler({ deps, request, signal: request.signal, principal, namespace, params, query, headers, body, routes });
  const schema = route.responses[result.status];
  if (schema === undefined) throw new Error(`${route.operationId} answered ${result.status}, which it does not declare`);
  const checked = schema.safeParse(result.body);
  if (!checked.success) {
    // The document would be lying: fail loudly here rather than ship it.
    throw new Error(`${route.operationId}'s ${result.status} answer does not match its schema: ${JSON.stringify(checked.error.issues.slice(0, 5))}`);
  }
  const responseHeaders = { "cache-control": "no-store", ...result.headers };
  if (result.status === 204) return { status: 204, headers: responseHeaders, body: null };
  return { status: result.status, headers: { "content-type": "application/json", ...responseHeaders }, body: JSON.stringify(checked.data) };
}

/** readJsonBody, with an unstorable body's field error added to the others rather than answered alone. */
async function readBodyCollecting(request: ApiRequest, limit: number, errors: ProblemFieldError[]): Promise<{ ok: true; value: unknown } | { ok: false }> {
  try {
    return { ok: true, value: await readJsonBody(request, limit) };
  } catch (error) {
    if (!(error instanceof HttpProblem) || error.problem.errors === undefined) throw error;
    errors.push(...error.problem.errors);
    return { ok: false };
  }
}

function validate(schema: z.ZodType | undefined, value: unknown, location: RequestLocation, errors: ProblemFieldError[]): unknown {
  if (schema === undefined) return location === "body" ? undefined : {};
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  errors.push(...zodIssuesToErrors(parsed.error.issues, location));
  return undefined;
}

/** A NUL in a path parameter or query value (%00) would reach SQL as text Postgres refuses: a 400 naming it instead. */
function unstorableParameters(values: Record<string, string | string[]>, location: "params" | "query"): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  for (const [key, value] of Object.entries(values)) {
    for (const [i, one] of (Array.isArray(value) ? value : [value]).entries()) {
      const problem = unstorableText(one);
      if (problem !== null) errors.push({ pointer: jsonPointer(Array.isArray(value) ? [location, key, i] : [location, key]), message: `The value ${problem}` });
    }
  }
  return errors;
}

/** A repeated query parameter is an array; a single one a string. Shared with the Conductor layer. */
export function queryObject(search: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(search.keys())) {
    const values = search.getAll(key);
    out[key] = values.length === 1 ? values[0]! : values;
  }
  return out;
}

/** Only the headers the route declares: the others (cookies, the key itself) never reach a handler or an error message. */
function headerObject(headers: ApiRequestHeaders, schema: z.ZodObject | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(schema?.shape ?? {})) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

function isJsonMediaType(contentType: string): boolean {
  const type = contentType.split(";", 1)[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The body as JSON, or undefined when there is none. Refuses over `limit`
 * bytes with 413 (ApiRequest.readBody says how), and JSON no row could hold
 * — a NUL, an unpaired surrogate, nesting past MAX_JSON_DEPTH — with a 400
 * naming where (unstorable-input.ts).
 */
export async function readJsonBody(request: ApiRequest, limit: number): Promise<unknown> {
  let bytes: Uint8Array | null;
  try {
    bytes = await request.readBody(limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new HttpProblem("payload-too-large", error.message);
    throw error;
  }
  if (bytes === null) return undefined;
  const contentType = request.headers.get("content-type");
  // No Content-Type is read as JSON (a bare `curl --data-binary`); a declared
  // non-JSON type is refused rather than guessed at.
  if (contentType !== null && !isJsonMediaType(contentType)) {
    throw new HttpProblem("unsupported-media-type", `The body must be application/json, got ${contentType.split(";", 1)[0]}`);
  }
  let text: string;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    throw new HttpProblem("malformed-json", "The body is not valid UTF-8");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpProblem("malformed-json", `The body is not valid JSON: ${(error as Error).message}`);
  }
  const unstorable = findUnstorableBody(text, parsed);
  if (unstorable !== null) {
    const where = unstorable.path.length === 0 ? "The body" : "The value";
    throw validationProblem([{ pointer: jsonPointer(["body", ...unstorable.path]), message: `${where} ${unstorable.message}` }]);
  }
  return parsed;
}
