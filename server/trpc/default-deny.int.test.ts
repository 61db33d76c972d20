import { readdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { CONDUCTOR_ROUTES } from "../conductor/conductor-routes";
import { ROUTES } from "../rest/routes";
import { callerAs, useWebEnvironment } from "./testing";
import { appRouter } from "./routers/_app";

/**
 * Default deny, proved by enumeration rather than by reading code: every tRPC
 * procedure and every route handler is called anonymously and must refuse
 * with 401 — except the ones listed below as deliberately public. A new
 * procedure or route is protected the moment it exists, or this test fails
 * until someone adds it here on purpose, in review.
 */

/** tRPC procedures anyone may call, and why. */
const PUBLIC_PROCEDURES: Record<string, string> = {
  "auth.status": "the sign-in and setup pages ask it before anyone is signed in",
  "auth.setupOwner": "a fresh install has nobody to sign in as; it refuses once any user exists",
  "auth.signIn": "it is how a caller becomes authenticated",
};

/** Route files anyone may call, and why (relative to the repository root). */
const PUBLIC_ROUTE_FILES: Record<string, string> = {
  "app/api/health/live/route.ts": "liveness probe for orchestrators: says only that the process answers",
  "app/api/health/ready/route.ts": "readiness probe for load balancers: migration names and the server version, nothing secret",
  "app/api/hooks/[...path]/route.ts": "senders' webhook calls: each is authenticated by its webhook's secret, a token or an HMAC signature (server/webhooks/receive-webhook.ts)",
};

/**
 * Route files guarded by something besides a session or API key. /metrics
 * also takes NODE_FLOW_METRICS_TOKEN; this test sets one, and an anonymous
 * scrape must still be refused (server/web/metrics-route.int.test.ts has the rest).
 */
const TOKEN_GATED_ROUTE_FILES: Record<string, string> = {
  "app/metrics/route.ts": "Prometheus scrape: the owner's session or NODE_FLOW_METRICS_TOKEN",
};

/** REST routes (server/rest/routes.ts, served by the /api/v1 catch-all) anyone may call, and why. */
const PUBLIC_REST_ROUTES: Record<string, string> = {
  "GET /openapi.json": "the API's own description, for client generators; no data",
};

/** Conductor routes (server/conductor/conductor-routes.ts, served by the /conductor/api catch-all) anyone may call, and why. */
const PUBLIC_CONDUCTOR_ROUTES: Record<string, string> = {
  "POST /token": "it is how a Conductor client becomes authenticated: it trades an API key's id and secret for a token",
};

/** Catch-all route files whose inventory is a table rather than the file system. */
const REST_CATCH_ALL = "app/api/v1/[...path]/route.ts";
const CONDUCTOR_CATCH_ALL = "app/conductor/api/[...path]/route.ts";
const TRPC_CATCH_ALL = "app/api/trpc/[trpc]/route.ts";

const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
type RouteHandler = (request: Request, context: { params: Promise<Record<string, string | string[]>> }) => Promise<Response> | Response;

const database = useTestDatabase();
const ROOT = process.cwd();
const ORIGIN = "http://localhost:3000";

function routeFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...routeFiles(relative));
    else if (entry.name === "route.ts" || entry.name === "route.tsx") found.push(relative);
  }
  return found.sort();
}

async function handlersOf(file: string): Promise<[string, RouteHandler][]> {
  const module = (await import(pathToFileURL(path.join(ROOT, file)).href)) as Record<string, unknown>;
  return HTTP_METHODS.filter((method) => typeof module[method] === "function").map((method) => [method, module[method] as RouteHandler]);
}

/** A URL for a route file, dynamic segments filled with plausible values ("default" for a namespace). */
function sampleUrl(file: string): { url: string; params: Record<string, string | string[]> } {
  const params: Record<string, string | string[]> = {};
  const segments = file
    .replace(/^app\//, "")
    .replace(/\/route\.tsx?$/, "")
    .split("/")
    .filter((segment) => !/^\(.*\)$/.test(segment))
    .map((segment) => {
      const catchAll = /^\[\[?\.\.\.(\w+)\]?\]$/.exec(segment);
      if (catchAll?.[1]) {
        params[catchAll[1]] = ["ns", "default", "sample"];
        return "ns/default/sample";
      }
      const dynamic = /^\[(\w+)\]$/.exec(segment);
      if (dynamic?.[1]) {
        const value = /^(ns|namespace)$/.test(dynamic[1]) ? "default" : "00000000-0000-0000-0000-000000000000";
        params[dynamic[1]] = value;
        return value;
      }
      return segment;
    });
  return { url: `${ORIGIN}/${segments.join("/")}`, params };
}

const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: "query" | "mutation" | "subscription" } }>);

/** Calls a procedure by its dotted path through a caller acting as nobody. */
async function callAnonymously(procedurePath: string): Promise<unknown> {
  let target: unknown = callerAs(database.db, database.url, null);
  for (const key of procedurePath.split(".")) target = (target as Record<string, unknown>)[key];
  return (target as (input?: unknown) => Promise<unknown>)(undefined);
}

describe("every tRPC procedure refuses an anonymous caller unless listed as public", () => {
  it("found the procedures (the walk itself works)", () => {
    expect(procedures.length).toBeGreaterThan(Object.keys(PUBLIC_PROCEDURES).length);
    expect(procedures.map(([p]) => p)).toEqual(expect.arrayContaining(["workflows.list", "system.status", "namespaces.members.set"]));
  });

  it("has no stale entries in the public list", () => {
    for (const name of Object.keys(PUBLIC_PROCEDURES)) expect(procedures.map(([p]) => p)).toContain(name);
  });

  it.each(procedures.filter(([p]) => !(p in PUBLIC_PROCEDURES)).map(([p]) => [p]))("%s → UNAUTHORIZED", async (procedurePath) => {
    // No input at all: authentication must come before input validation, so
    // an anonymous caller learns nothing, not even the input's shape.
    await expect(callAnonymously(procedurePath)).rejects.toSatisfy((error: unknown) => error instanceof TRPCError && error.code === "UNAUTHORIZED");
  });

  it.each(Object.keys(PUBLIC_PROCEDURES).map((p) => [p]))("%s is reachable anonymously (public on purpose)", async (procedurePath) => {
    const outcome = await callAnonymously(procedurePath).then(
      () => "ok",
      (error: unknown) => (error instanceof TRPCError ? error.code : "other"),
    );
    expect(outcome).not.toBe("UNAUTHORIZED");
  });
});

describe("every route handler refuses an anonymous request with 401 unless listed as public", () => {
  useWebEnvironment(database, { NODE_FLOW_METRICS_TOKEN: "metrics-token-for-the-test" });
  const files = routeFiles("app");

  it("found the route files, and every listed one still exists", () => {
    expect(files).toEqual(expect.arrayContaining([TRPC_CATCH_ALL, REST_CATCH_ALL, CONDUCTOR_CATCH_ALL]));
    for (const file of [...Object.keys(PUBLIC_ROUTE_FILES), ...Object.keys(TOKEN_GATED_ROUTE_FILES)]) expect(files).toContain(file);
  });

  it("route files not served by a table: every exported method answers 401", async () => {
    const checked: string[] = [];
    for (const file of files) {
      if (file === REST_CATCH_ALL || file === TRPC_CATCH_ALL || file === CONDUCTOR_CATCH_ALL || file in PUBLIC_ROUTE_FILES) continue;
      const { url, params } = sampleUrl(file);
      for (const [method, handle] of await handlersOf(file)) {
        const response = await handle(new Request(url, { method }), { params: Promise.resolve(params) });
        checked.push(`${method} ${file} → ${response.status}`);
      }
    }
    expect(checked.length).toBeGreaterThan(0);
    expect(checked.filter((line) => !line.endsWith("→ 401"))).toEqual([]);
  });

  it("the public route files answer without credentials (public on purpose)", async () => {
    for (const file of Object.keys(PUBLIC_ROUTE_FILES)) {
      for (const [method, handle] of await handlersOf(file)) {
        const response = await handle(new Request(sampleUrl(file).url, { method }), { params: Promise.resolve({}) });
        expect(`${method} ${file} → ${response.status}`).not.toMatch(/→ 40[13]$/);
      }
    }
  });

  it("/api/v1: every route of the REST table answers 401, except the listed public ones", async () => {
    const handlers = new Map(await handlersOf(REST_CATCH_ALL));
    const publicRoutes = ROUTES.filter((route) => route.auth === "public").map((route) => `${route.method} ${route.path}`);
    // A route made public in the table but not here fails: public is a decision made in review.
    expect(publicRoutes.sort()).toEqual(Object.keys(PUBLIC_REST_ROUTES).sort());
    const refused: string[] = [];
    for (const route of ROUTES) {
      const handle = handlers.get(route.method);
      expect(handle, `${REST_CATCH_ALL} exports no ${route.method} for ${route.path}`).toBeDefined();
      const routePath = route.path.replace(/\{ns\}/g, "default").replace(/\{\w+\}/g, "00000000-0000-0000-0000-000000000000");
      const init: RequestInit = { method: route.method };
      if (route.method !== "GET") Object.assign(init, { headers: { "content-type": "application/json" }, body: "{}" });
      const response = await handle!(new Request(`${ORIGIN}/api/v1${routePath}`, init), {
        params: Promise.resolve({ path: routePath.split("/").filter(Boolean) }),
      });
      refused.push(`${route.method} ${route.path} → ${response.status}`);
    }
    const expected = ROUTES.map((route) => `${route.method} ${route.path} → ${route.auth === "public" ? 200 : 401}`);
    expect(refused).toEqual(expected);
  });

  it("/conductor/api: every route of the Conductor table answers 401, except the listed public ones; an unknown path too", async () => {
    const handlers = new Map(await handlersOf(CONDUCTOR_CATCH_ALL));
    const publicRoutes = CONDUCTOR_ROUTES.filter((route) => route.auth === "public").map((route) => `${route.method} ${route.path}`);
    expect(publicRoutes.sort()).toEqual(Object.keys(PUBLIC_CONDUCTOR_ROUTES).sort());
    const answers: string[] = [];
    const call = async (method: string, routePath: string) => {
      const handle = handlers.get(method);
      expect(handle, `${CONDUCTOR_CATCH_ALL} exports no ${method} for ${routePath}`).toBeDefined();
      const init: RequestInit = { method };
      if (method !== "GET" && method !== "DELETE") Object.assign(init, { headers: { "content-type": "application/json" }, body: "{}" });
      const response = await handle!(new Request(`${ORIGIN}/conductor/api${routePath}`, init), { params: Promise.resolve({ path: routePath.split("/").filter(Boolean) }) });
      return response.status;
    };
    for (const route of CONDUCTOR_ROUTES) {
      const status = await call(route.method, route.path.replace(/\{\w+\}/g, "00000000-0000-0000-0000-000000000000"));
      answers.push(`${route.method} ${route.path} → ${status === 401 ? "401" : "answered"}`);
    }
    expect(answers).toEqual(CONDUCTOR_ROUTES.map((route) => `${route.method} ${route.path} → ${route.auth === "public" ? "answered" : "401"}`));
    expect(await call("GET", "/no/such/resource")).toBe(401);
  });

  it("/api/trpc: every procedure over HTTP answers 401, except the listed public ones", async () => {
    const handlers = new Map(await handlersOf(TRPC_CATCH_ALL));
    const answers: string[] = [];
    for (const [procedurePath, procedure] of procedures) {
      if (procedurePath in PUBLIC_PROCEDURES) continue;
      const isQuery = procedure._def.type === "query";
      const handle = handlers.get(isQuery ? "GET" : "POST");
      const request = isQuery
        ? new Request(`${ORIGIN}/api/trpc/${procedurePath}`)
        : new Request(`${ORIGIN}/api/trpc/${procedurePath}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      const response = await handle!(request, { params: Promise.resolve({ trpc: procedurePath }) });
      answers.push(`${procedurePath} → ${response.status}`);
    }
    expect(answers.filter((line) => !line.endsWith("→ 401"))).toEqual([]);
    expect(answers.length).toBe(procedures.length - Object.keys(PUBLIC_PROCEDURES).length);
  });
});
