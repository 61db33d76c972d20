/**
 * The route matcher both worker-facing APIs use (/api/v1 and /conductor/api):
 * a table of routes, each a method and a path template with `{name}`
 * parameters, compiled once into what answers "which route serves METHOD
 * /a/b, and with which parameters?". Only the matching is shared: what a miss
 * is answered with (problem+json, Conductor's ErrorResponse), authentication
 * and validation stay with each API's dispatcher.
 */

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** The order an Allow list names methods in. */
const HTTP_METHODS: readonly HttpMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** What the table reads of a route; the rest of the declaration is the dispatcher's. */
export interface RouteTemplate {
  method: HttpMethod;
  /** Relative to the table's prefix, with `{name}` parameters. */
  path: string;
}

const PARAMETER_NAME = "[A-Za-z][A-Za-z0-9]*";
const PARAMETER_IN_PATH = new RegExp(`\\{(${PARAMETER_NAME})\\}`, "g");
const PARAMETER_SEGMENT = new RegExp(`^\\{(${PARAMETER_NAME})\\}$`);

/** `{name}` segments of a path template, in order. */
export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(PARAMETER_IN_PATH)].map((m) => m[1]!);
}

export interface RouteTableOptions {
  /** Where the table is mounted, without a trailing slash: "/api/v1". */
  prefix: string;
  /** What the table's routes are called in the error two of them answering alike raises. */
  label: string;
  /** Whether `/a/b/` is `/a/b` (Conductor's clients send both) or no route at all. */
  trailingSlash: "ignored" | "not-found";
}

/**
 * The outcome of a lookup: the route and its decoded parameters; no route at
 * that path (and for a path outside the prefix, or one that does not decode);
 * or routes at that path, none for the method — `allowed` lists theirs.
 */
export type RouteMatch<R extends RouteTemplate> =
  | { kind: "route"; route: R; params: Record<string, string> }
  | { kind: "not-found" }
  | { kind: "method-not-allowed"; allowed: R["method"][] };

type Segment = { literal: string } | { param: string };

interface CompiledRoute<R> {
  route: R;
  segments: Segment[];
}

interface Candidate<R> {
  compiled: CompiledRoute<R>;
  params: Record<string, string>;
}

function compile<R extends RouteTemplate>(routes: readonly R[], label: string): CompiledRoute<R>[] {
  const compiled = routes.map((route) => ({
    route,
    segments: route.path
      .split("/")
      .filter((s) => s.length > 0)
      .map((s): Segment => {
        const param = PARAMETER_SEGMENT.exec(s)?.[1];
        return param === undefined ? { literal: s } : { param };
      }),
  }));
  // /runs/{runId} and /runs/{id} answer the same requests: whichever came first would win, silently.
  const seen = new Set<string>();
  for (const { route, segments } of compiled) {
    const key = `${route.method} ${segments.map((s) => ("literal" in s ? s.literal : "{}")).join("/")}`;
    if (seen.has(key)) throw new Error(`Two ${label} answer ${route.method} ${route.path}`);
    seen.add(key);
  }
  return compiled;
}

/** Literal segments beat parameters, leftmost first: GET /workflow/search is not GET /workflow/{workflowId}. */
function moreSpecific<R>(a: Candidate<R>, b: Candidate<R>): number {
  for (let i = 0; i < a.compiled.segments.length; i++) {
    const la = "literal" in a.compiled.segments[i]! ? 1 : 0;
    const lb = "literal" in b.compiled.segments[i]! ? 1 : 0;
    if (la !== lb) return lb - la;
  }
  return 0;
}

/** The request path's segments below the prefix, decoded; null when it names no route of the table. */
function requestSegments(pathname: string, options: RouteTableOptions): string[] | null {
  if (!pathname.startsWith(`${options.prefix}/`)) return null;
  let segments = pathname.slice(options.prefix.length + 1).split("/");
  if (options.trailingSlash === "ignored" && segments.at(-1) === "") segments = segments.slice(0, -1);
  try {
    segments = segments.map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
  return segments.some((s) => s.length === 0) ? null : segments;
}

/** Compiles `routes` into a lookup, checking at once that no two routes answer the same requests. */
function compileRouteTable<R extends RouteTemplate>(routes: readonly R[], options: RouteTableOptions): (method: string, pathname: string) => RouteMatch<R> {
  const compiled = compile(routes, options.label);
  return (method, pathname) => {
    const segments = requestSegments(pathname, options);
    if (segments === null) return { kind: "not-found" };
    const matches: Candidate<R>[] = [];
    for (const candidate of compiled) {
      if (candidate.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const pattern = candidate.segments[i]!;
        if ("literal" in pattern) ok = pattern.literal === segments[i];
        else params[pattern.param] = segments[i]!;
      }
      if (ok) matches.push({ compiled: candidate, params });
    }
    if (matches.length === 0) return { kind: "not-found" };
    const chosen = matches.filter((m) => m.compiled.route.method === method).sort(moreSpecific)[0];
    if (chosen === undefined) {
      const allowed = [...new Set(matches.map((m) => m.compiled.route.method))].sort((a, b) => HTTP_METHODS.indexOf(a) - HTTP_METHODS.indexOf(b));
      return { kind: "method-not-allowed", allowed };
    }
    return { kind: "route", route: chosen.compiled.route, params: chosen.params };
  };
}

/**
 * The lookup of a mounted API: finds the route of `routes` for a method and
 * a request path. A dispatcher is handed its table with every request (tests
 * pass their own), so each table is compiled on first use and kept, not
 * rebuilt per request.
 */
export function routeTableMatcher<R extends RouteTemplate>(options: RouteTableOptions): (routes: readonly R[], method: string, pathname: string) => RouteMatch<R> {
  const tables = new WeakMap<readonly R[], (method: string, pathname: string) => RouteMatch<R>>();
  return (routes, method, pathname) => {
    let lookup = tables.get(routes);
    if (lookup === undefined) {
      lookup = compileRouteTable(routes, options);
      tables.set(routes, lookup);
    }
    return lookup(method, pathname);
  };
}
