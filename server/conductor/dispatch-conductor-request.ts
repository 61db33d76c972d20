import type { z } from "zod";
import { authenticateApiKey, authenticateApiKeyReference, parseApiKey, parseBearer } from "../auth/api-keys";
import { grants, roleOfScopes } from "../auth/principal";
import type { Principal } from "../auth/principal";
import type { ApiAnswer, ApiRequest } from "../web/api-exchange";
import { BodyTooLargeError, fromFetchRequest, toFetchResponse, withoutBody } from "../web/api-exchange";
import { routeTableMatcher } from "../web/route-table";
import { DEFAULT_MAX_BODY_BYTES, queryObject, readJsonBody } from "../rest/dispatch";
import { HttpProblem } from "../rest/problem";
import { unstorableText } from "../lib/unstorable-input";
import { ConductorError, authErrorAnswer, dottedPath, errorAnswer, jsonAnswer, validationFailed, zodValidationErrors } from "./conductor-error";
import type { ConductorValidationError } from "./conductor-error";
import { verifyConductorToken } from "./conductor-token";
import type { AnyConductorRoute, ConductorAnswer, ConductorDeps } from "./define-conductor-route";
import { isDatabaseOutage, noteAnswered, OUTAGE_MESSAGE, OUTAGE_RETRY_AFTER_SECONDS } from "../web/database-outage";

/**
 * The one entry point of /conductor/api. In order: match the route; unless it
 * is the public token exchange, authenticate (401 in Orkes' shape) — before a
 * 404 for an unknown path, so an anonymous caller learns nothing about which
 * paths exist — and authorize in the key's own namespace (403); validate the
 * path parameters, query and body together (400 listing every problem); run
 * the handler. Anything a handler throws that is not a ConductorError is
 * logged and answered as a 500 that says nothing about the cause.
 */

export const CONDUCTOR_PREFIX = "/conductor/api";

const matchRoute = routeTableMatcher<AnyConductorRoute>({ prefix: CONDUCTOR_PREFIX, label: "Conductor routes", trailingSlash: "ignored" });

type Resolved = { kind: "route"; route: AnyConductorRoute; params: Record<string, string> } | { kind: "none"; error: ConductorError };

/** The route for a method and path, or the 404 or 405 to answer once the caller is authenticated. */
export function resolveConductorRoute(routes: readonly AnyConductorRoute[], method: string, pathname: string): Resolved {
  const match = matchRoute(routes, method, pathname);
  if (match.kind === "not-found") return { kind: "none", error: new ConductorError(404, `No Conductor API resource at ${pathname}`) };
  if (match.kind === "method-not-allowed") {
    return { kind: "none", error: new ConductorError(405, `${method} is not allowed on ${pathname}; use ${match.allowed.join(", ")}`) };
  }
  return { kind: "route", route: match.route, params: match.params };
}

type KeyPrincipal = Principal & { kind: "apiKey" };
type Authentication = { ok: true; principal: KeyPrincipal } | { ok: false; error: "EXPIRED_TOKEN" | "INVALID_TOKEN"; message: string };

/**
 * Who calls: `X-Authorization: <token>` from POST /token (what Orkes clients
 * send), or — for curl and for clients configured with a static header — a
 * node-flow API key itself, as `X-Authorization: nf_…` or
 * `Authorization: Bearer nf_…`. Session cookies are not accepted: a Conductor
 * call has no namespace in its path, and only a key belongs to exactly one.
 */
export async function authenticateConductorRequest(deps: ConductorDeps, request: Pick<ApiRequest, "headers">): Promise<Authentication> {
  const presented = request.headers.get("x-authorization")?.trim() || parseBearer(request.headers.get("authorization"));
  if (presented === null || presented === undefined || presented === "") {
    return { ok: false, error: "INVALID_TOKEN", message: "Send a token from POST /conductor/api/token as X-Authorization" };
  }
  if (parseApiKey(presented) !== null) {
    const principal = await authenticateApiKey(deps.db, presented);
    return principal === null ? { ok: false, error: "INVALID_TOKEN", message: "The API key is not valid" } : { ok: true, principal };
  }
  const verdict = verifyConductorToken(deps.secret, presented, (deps.now ?? Date.now)());
  if (!verdict.ok) {
    return { ok: false, error: verdict.error, message: verdict.error === "EXPIRED_TOKEN" ? "The token has expired; get a new one from POST /token" : "The token is not valid" };
  }
  const principal = await authenticateApiKeyReference(deps.db, { prefix: verdict.claims.prefix, apiKeyId: verdict.claims.apiKeyId });
  // The key was revoked, expired or its owner disabled since the token was minted.
  if (principal === null) return { ok: false, error: "INVALID_TOKEN", message: "The API key this token was issued for is no longer valid" };
  return { ok: true, principal };
}

function logFailure(deps: ConductorDeps | undefined, error: unknown, request: ApiRequest): void {
  const where = { method: request.method, path: new URL(request.url).pathname };
  if (deps?.logger) deps.logger.error({ err: error, ...where }, "Conductor API request failed");
  else console.error(`Conductor ${where.method} ${where.path} failed:`, error);
}

/** Answers one request from `routes`; `deps` may be a function so a broken environment still answers in JSON (503). */
export async function answerConductorRequest(deps: ConductorDeps | (() => ConductorDeps), request: ApiRequest, routes: readonly AnyConductorRoute[]): Promise<ApiAnswer> {
  let resolvedDeps: ConductorDeps | undefined;
  try {
    const isHead = request.method === "HEAD";
    const url = new URL(request.url);
    const resolved = resolveConductorRoute(routes, isHead ? "GET" : request.method, url.pathname);
    try {
      resolvedDeps = typeof deps === "function" ? deps() : deps;
    } catch (error) {
      logFailure(undefined, error, request);
      return errorAnswer(new ConductorError(503, "The server is not configured; see its log"));
    }
    const answer = await serve(resolvedDeps, resolved, url, request);
    noteAnswered(resolvedDeps.logger);
    return isHead ? withoutBody(answer) : answer;
  } catch (error) {
    if (error instanceof ConductorError) return errorAnswer(error);
    if (error instanceof HttpProblem) return errorAnswer(conductorErrorOf(error));
    if (isDatabaseOutage(error, resolvedDeps?.logger)) {
      const answer = errorAnswer(new ConductorError(503, OUTAGE_MESSAGE));
      return { ...answer, headers: { ...answer.headers, "retry-after": String(OUTAGE_RETRY_AFTER_SECONDS) } };
    }
    logFailure(resolvedDeps, error, request);
    return errorAnswer(new ConductorError(500, "The request failed on the server; it has been logged"));
  }
}

/** answerConductorRequest for a fetch Request (the App Router's catch-all route). */
export async function dispatchConductorRequest(deps: ConductorDeps | (() => ConductorDeps), request: Request, routes: readonly AnyConductorRoute[]): Promise<Response> {
  return toFetchResponse(await answerConductorRequest(deps, fromFetchRequest(request), routes));
}

async function serve(deps: ConductorDeps, resolved: Resolved, url: URL, request: ApiRequest): Promise<ApiAnswer> {
  let principal: KeyPrincipal | null = null;
  if (resolved.kind === "none" || resolved.route.auth !== "public") {
    const auth = await authenticateConductorRequest(deps, request);
    if (!auth.ok) return authErrorAnswer(auth.error, auth.message);
    principal = auth.principal;
  }
  if (resolved.kind === "none") throw resolved.error;
  const { route, params: rawParams } = resolved;
  if (route.auth !== "public" && principal !== null && !grants(roleOfScopes(principal.scopes), principal.scopes, route.auth)) {
    throw new ConductorError(403, `This API key's scopes (${principal.scopes.join(", ") || "none"}) do not allow this: it needs the "${route.auth}" permission`);
  }

  const errors: ConductorValidationError[] = [];
  const rawQuery = queryObject(url.searchParams);
  errors.push(...unstorableParameters(rawParams, "path"), ...unstorableParameters(rawQuery, "query"));
  const params = validate(route.params, rawParams, "path", errors);
  const query = validate(route.query, rawQuery, "query", errors);
  let body: unknown;
  if (route.body !== undefined) {
    const raw = await readBodyCollecting(request, route.textBody === true, deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, errors);
    if (raw.ok) body = validate(route.body, raw.value, "body", errors);
  }
  if (errors.length > 0) throw validationFailed(errors);

  const handler = route.handler as (ctx: unknown) => Promise<ConductorAnswer>;
  const answer = await handler({ deps, request, signal: request.signal, principal, namespaceId: principal?.namespaceId ?? null, params, query, body });
  if ("json" in answer) return jsonAnswer(answer.status, answer.json);
  if ("text" in answer) return { status: answer.status, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" }, body: answer.text };
  return { status: 204, headers: { "cache-control": "no-store" }, body: null };
}

function validate(schema: z.ZodType | undefined, value: unknown, root: string, errors: ConductorValidationError[]): unknown {
  if (schema === undefined) return root === "body" ? undefined : {};
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  errors.push(...zodValidationErrors(parsed.error.issues, root));
  return undefined;
}

/** A NUL in a path parameter or query value (%00) would reach SQL as text Postgres refuses: a 400 naming it instead. */
function unstorableParameters(values: Record<string, string | string[]>, root: "path" | "query"): ConductorValidationError[] {
  const errors: ConductorValidationError[] = [];
  for (const [key, value] of Object.entries(values)) {
    for (const [i, one] of (Array.isArray(value) ? value : [value]).entries()) {
      const problem = unstorableText(one);
      if (problem !== null) errors.push({ path: dottedPath(root, Array.isArray(value) ? [key, i] : [key]), message: `The value ${problem}` });
    }
  }
  return errors;
}

/**
 * The body (JSON, or a `textBody` route's text), with an unstorable one's
 * problem added to the other validation errors rather than answered alone.
 */
async function readBodyCollecting(request: ApiRequest, text: boolean, limit: number, errors: ConductorValidationError[]): Promise<{ ok: true; value: unknown } | { ok: false }> {
  if (text) {
    const line = await readTextBody(request, limit);
    const problem = line === undefined ? null : unstorableText(line);
    if (problem === null) return { ok: true, value: line };
    errors.push({ path: "body", message: `The body ${problem}` });
    return { ok: false };
  }
  try {
    return { ok: true, value: await readJsonBody(request, limit) };
  } catch (error) {
    if (!(error instanceof HttpProblem) || error.problem.errors === undefined) throw error;
    errors.push(...error.problem.errors.map((e) => ({ path: dottedPathOfPointer(e.pointer), message: e.message })));
    return { ok: false };
  }
}

/** A REST problem (readJsonBody's, a shared service's) in Conductor's shape, its field pointers as Conductor's dotted paths. */
function conductorErrorOf(error: HttpProblem): ConductorError {
  const { status, detail, errors } = error.problem;
  return new ConductorError(status, detail, errors?.map((e) => ({ path: dottedPathOfPointer(e.pointer), message: e.message })));
}

/** `/body/tasks/0/name` → `body.tasks[0].name`. */
function dottedPathOfPointer(pointer: string): string {
  const segments = pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
  const [root, ...rest] = segments;
  return dottedPath(String(root ?? ""), rest);
}

async function readTextBody(request: ApiRequest, limit: number): Promise<string | undefined> {
  let bytes: Uint8Array | null;
  try {
    bytes = await request.readBody(limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new ConductorError(413, error.message);
    throw error;
  }
  return bytes === null ? undefined : new TextDecoder().decode(bytes);
}
