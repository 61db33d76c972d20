import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { Db } from "../../db/pool";
import type { Principal } from "../auth/principal";
import type { AnyRoute, RestAuth, RestDeps } from "./define-route";
import { defineRoute } from "./define-route";
import { dispatchRestRequest, resolveRoute } from "./dispatch";
import { HttpProblem } from "./problem";
import { SealingKeys } from "../secrets/sealing";

// The dispatcher on its own: a fake identity (no database), a small table.
// What the real routes do is the integration tests' job.

const apiKey: Principal = { kind: "apiKey", apiKeyId: "k1", namespaceId: "ns-a-id", scopes: ["admin"], userId: null, serviceAccountId: null };
const user: Principal = { kind: "user", userId: "u1", email: "u@example.com", isOwner: true, sessionId: "s1" };

function fakeAuth(overrides: Partial<RestAuth> = {}): RestAuth & { authorizeCalls: string[] } {
  const authorizeCalls: string[] = [];
  return {
    authorizeCalls,
    authenticate: (_db, request) => {
      const header = request.headers.get("authorization");
      if (header === "Bearer good") return Promise.resolve(apiKey);
      if (request.headers.get("cookie") === "nf_session=good") return Promise.resolve(user);
      return Promise.resolve(null);
    },
    authorize: (_db, _principal, ns, permission) => {
      authorizeCalls.push(`${ns}:${permission}`);
      if (ns === "a") return Promise.resolve({ ok: true, namespaceId: "ns-a-id", role: "admin" });
      if (ns === "weak") return Promise.resolve({ ok: false, status: 403, message: "not enough" });
      return Promise.resolve({ ok: false, status: 404, message: `Namespace "${ns}" not found.` });
    },
    checkSameOrigin: (request) =>
      request.headers.get("origin") === "http://localhost" ? { ok: true } : { ok: false, message: "cross-origin refused" },
    ...overrides,
  };
}

function deps(auth: RestAuth = fakeAuth(), extra: Partial<RestDeps> = {}): RestDeps {
  return {
    db: {} as Db,
    blobs: { put: () => Promise.reject(new Error("unused")), get: () => Promise.reject(new Error("unused")), delete: () => Promise.resolve() },
    notifier: () => null,
    auth,
    sealingKeys: new SealingKeys("s".repeat(64)),
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    ...extra,
  };
}

const seen: unknown[] = [];

const routes: readonly AnyRoute[] = [
  defineRoute({
    method: "GET",
    path: "/open",
    auth: "public",
    operationId: "open",
    summary: "public",
    tags: [],
    responses: { 200: z.object({ ok: z.boolean() }) },
    handler: () => Promise.resolve({ status: 200 as const, body: { ok: true } }),
  }),
  defineRoute({
    method: "GET",
    path: "/ns/{ns}/things/{id}",
    auth: "read",
    operationId: "getThing",
    summary: "thing",
    tags: [],
    params: z.object({ id: z.uuid() }),
    query: z.object({ limit: z.coerce.number().int().min(1).max(10).default(5) }),
    responses: { 200: z.object({ id: z.string(), limit: z.int(), ns: z.string() }) },
    handler: ({ params, query, namespace }) => Promise.resolve({ status: 200 as const, body: { id: params.id, limit: query.limit, ns: namespace.id } }),
  }),
  defineRoute({
    method: "POST",
    path: "/ns/{ns}/things/special",
    auth: "edit",
    operationId: "special",
    summary: "literal segment",
    tags: [],
    responses: { 200: z.object({ which: z.literal("special") }) },
    handler: () => Promise.resolve({ status: 200 as const, body: { which: "special" as const } }),
  }),
  defineRoute({
    method: "POST",
    path: "/ns/{ns}/things/{name}",
    auth: "edit",
    operationId: "postThing",
    summary: "thing",
    tags: [],
    params: z.object({ name: z.string() }),
    body: z.strictObject({ title: z.string().min(1), nested: z.object({ n: z.int() }).optional() }),
    responses: { 201: z.object({ name: z.string(), title: z.string() }) },
    handler: ({ params, body }) => {
      seen.push(body);
      return Promise.resolve({ status: 201 as const, body: { name: params.name, title: body.title } });
    },
  }),
  defineRoute({
    method: "POST",
    path: "/ns/{ns}/broken",
    auth: "read",
    operationId: "broken",
    summary: "throws",
    tags: [],
    responses: { 200: z.object({}) },
    handler: () => Promise.reject<never>(new Error("secret database detail at /srv/app.ts:12")),
  }),
  defineRoute({
    method: "GET",
    path: "/ns/{ns}/lying",
    auth: "read",
    operationId: "lying",
    summary: "answers off-schema",
    tags: [],
    responses: { 200: z.object({ n: z.int() }) },
    handler: () => Promise.resolve({ status: 200 as const, body: { n: "not a number" as unknown as number } }),
  }),
];

const ID = "0191d6a4-0000-7000-8000-000000000001";

function request(method: string, path: string, init: { headers?: Record<string, string>; body?: string | ReadableStream<Uint8Array> } = {}): Request {
  return new Request(`http://localhost/api/v1${path}`, {
    method,
    headers: init.headers,
    body: init.body,
    ...(init.body instanceof ReadableStream ? { duplex: "half" } : {}),
  });
}

async function problemOf(response: Response): Promise<{ type: string; title: string; status: number; detail: string; errors?: { pointer: string; message: string }[] }> {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as never;
}

const bearer = { authorization: "Bearer good" };

describe("dispatchRestRequest", () => {
  it("answers an unknown route with a 404 problem, not HTML", async () => {
    const response = await dispatchRestRequest(deps(), request("GET", "/nope"), routes);
    expect(response.status).toBe(404);
    const problem = await problemOf(response);
    expect(problem).toMatchObject({ status: 404, title: "Not found", type: expect.stringMatching(/not-found$/) as unknown });
    expect(problem.detail).toContain("/api/v1/nope");
  });

  it("answers a wrong method with 405 and an Allow header", async () => {
    const response = await dispatchRestRequest(deps(), request("DELETE", `/ns/a/things/${ID}`), routes);
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, POST");
    expect((await problemOf(response)).status).toBe(405);
  });

  it("refuses an anonymous call with 401 before looking at the namespace or the input", async () => {
    const auth = fakeAuth();
    const response = await dispatchRestRequest(deps(auth), request("GET", `/ns/a/things/not-a-uuid`), routes);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
    expect((await problemOf(response)).title).toBe("Authentication required");
    expect(auth.authorizeCalls).toEqual([]);
  });

  it("serves a public route without credentials", async () => {
    const response = await dispatchRestRequest(deps(), request("GET", "/open"), routes);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it("authorizes the path's namespace with the route's permission: no access 404, too little 403", async () => {
    const auth = fakeAuth();
    const ok = await dispatchRestRequest(deps(auth), request("GET", `/ns/a/things/${ID}?limit=3`, { headers: bearer }), routes);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ id: ID, limit: 3, ns: "ns-a-id" });
    expect(auth.authorizeCalls).toEqual(["a:read"]);

    const other = await dispatchRestRequest(deps(auth), request("GET", `/ns/b/things/${ID}`, { headers: bearer }), routes);
    expect(other.status).toBe(404);
    expect((await problemOf(other)).detail).toBe('Namespace "b" not found.');

    const weak = await dispatchRestRequest(deps(auth), request("GET", `/ns/weak/things/${ID}`, { headers: bearer }), routes);
    expect(weak.status).toBe(403);
  });

  it("names every invalid field with a JSON pointer into params, query and body", async () => {
    const bad = await dispatchRestRequest(deps(), request("GET", `/ns/a/things/xyz?limit=99`, { headers: bearer }), routes);
    expect(bad.status).toBe(400);
    const problem = await problemOf(bad);
    expect(problem.errors?.map((e) => e.pointer).sort()).toEqual(["/params/id", "/query/limit"]);

    const body = await dispatchRestRequest(
      deps(),
      request("POST", "/ns/a/things/x", { headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ title: "", nested: { n: 1.5 }, extra: 1 }) }),
      routes,
    );
    expect(body.status).toBe(400);
    const bodyProblem = await problemOf(body);
    expect(bodyProblem.errors?.map((e) => e.pointer).sort()).toEqual(["/body/extra", "/body/nested/n", "/body/title"]);
    expect(bodyProblem.detail).toContain("/body/title");
  });

  it("prefers a literal segment over a parameter, and falls back to the parameter for other methods", () => {
    expect(resolveRoute(routes, "POST", "/api/v1/ns/a/things/special").route.operationId).toBe("special");
    expect(resolveRoute(routes, "POST", "/api/v1/ns/a/things/other").route.operationId).toBe("postThing");
    expect(() => resolveRoute(routes, "GET", "/api/v1/ns/a/things/special")).not.toThrow();
    expect(resolveRoute(routes, "GET", "/api/v1/ns/a/things/special").route.operationId).toBe("getThing");
  });

  it("decodes path segments and refuses malformed encodings as not found", () => {
    expect(resolveRoute(routes, "POST", "/api/v1/ns/a/things/a%20b").params.name).toBe("a b");
    expect(() => resolveRoute(routes, "POST", "/api/v1/ns/a/things/%E0%A4%A")).toThrow(HttpProblem);
  });

  it("refuses malformed JSON with a 400 that says why", async () => {
    const response = await dispatchRestRequest(deps(), request("POST", "/ns/a/things/x", { headers: { ...bearer, "content-type": "application/json" }, body: "{not json" }), routes);
    expect(response.status).toBe(400);
    const problem = await problemOf(response);
    expect(problem.title).toBe("The request body is not valid JSON");
    expect(problem.detail).toMatch(/not valid JSON/);
  });

  it("refuses a body with a non-JSON content type with 415", async () => {
    const response = await dispatchRestRequest(deps(), request("POST", "/ns/a/things/x", { headers: { ...bearer, "content-type": "text/plain" }, body: "{}" }), routes);
    expect(response.status).toBe(415);
  });

  it("refuses an oversized body with 413, by Content-Length and while streaming", async () => {
    const small = deps(fakeAuth(), { maxBodyBytes: 64 });
    const declared = await dispatchRestRequest(small, request("POST", "/ns/a/things/x", { headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ title: "x".repeat(100) }) }), routes);
    expect(declared.status).toBe(413);
    expect((await problemOf(declared)).status).toBe(413);

    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled > 1000) controller.close();
        else controller.enqueue(new TextEncoder().encode("x".repeat(40)));
      },
    });
    const streamed = await dispatchRestRequest(small, request("POST", "/ns/a/things/x", { headers: { ...bearer, "content-type": "application/json" }, body: stream }), routes);
    expect(streamed.status).toBe(413);
    // Cut off near the limit, not read to the end.
    expect(pulled).toBeLessThan(10);
  });

  it("answers a handler's crash with a 500 problem that leaks nothing", async () => {
    const errors: unknown[] = [];
    const response = await dispatchRestRequest(deps(fakeAuth(), { logger: { info: () => undefined, warn: () => undefined, error: (obj) => errors.push(obj) } }), request("POST", "/ns/a/broken", { headers: bearer }), routes);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain("secret");
    expect(text).not.toContain("app.ts");
    expect(errors).toHaveLength(1);
  });

  it("answers 503 with Retry-After while the database is unreachable, and logs the outage once, not per request", async () => {
    const logged = { info: [] as string[], warn: [] as string[], error: [] as string[] };
    const logger = { info: (_: object, msg: string) => logged.info.push(msg), warn: (_: object, msg: string) => logged.warn.push(msg), error: (_: object, msg: string) => logged.error.push(msg) };
    const refused = Object.assign(new Error("connect ECONNREFUSED /tmp/.s.PGSQL.5432"), { code: "ECONNREFUSED" });
    const down = deps({ ...fakeAuth(), authenticate: () => Promise.reject(refused) }, { logger });
    for (let i = 0; i < 3; i++) {
      const response = await dispatchRestRequest(down, request("GET", "/ns/a/things/00000000-0000-4000-8000-000000000001", { headers: bearer }), routes);
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("1");
      expect((await problemOf(response)).detail).toMatch(/database cannot be reached/);
    }
    expect(logged.error).toEqual(["API requests failing: connect ECONNREFUSED /tmp/.s.PGSQL.5432"]);
    const back = await dispatchRestRequest(deps(fakeAuth(), { logger }), request("GET", "/ns/a/things/00000000-0000-4000-8000-000000000001", { headers: bearer }), routes);
    expect(back.status).toBe(200);
    expect(logged.info).toEqual([expect.stringMatching(/^API requests recovered after 3 failures/)]);
  });

  it("refuses to send an answer that does not match the declared response schema", async () => {
    const response = await dispatchRestRequest(deps(), request("GET", "/ns/a/lying", { headers: bearer }), routes);
    expect(response.status).toBe(500);
  });

  it("checks the origin of a cookie-authenticated state change, and not of a bearer one", async () => {
    const body = JSON.stringify({ title: "t" });
    const json = { "content-type": "application/json" };
    const forged = await dispatchRestRequest(deps(), request("POST", "/ns/a/things/x", { headers: { ...json, cookie: "nf_session=good", origin: "http://evil.example" }, body }), routes);
    expect(forged.status).toBe(403);
    const sameSite = await dispatchRestRequest(deps(), request("POST", "/ns/a/things/x", { headers: { ...json, cookie: "nf_session=good", origin: "http://localhost" }, body }), routes);
    expect(sameSite.status).toBe(201);
    const keyed = await dispatchRestRequest(deps(), request("POST", "/ns/a/things/x", { headers: { ...json, ...bearer, origin: "http://evil.example" }, body }), routes);
    expect(keyed.status).toBe(201);
    const read = await dispatchRestRequest(deps(), request("GET", `/ns/a/things/${ID}`, { headers: { cookie: "nf_session=good", origin: "http://evil.example" } }), routes);
    expect(read.status).toBe(200);
  });

  it("answers HEAD like GET without a body", async () => {
    const response = await dispatchRestRequest(deps(), request("HEAD", "/open"), routes);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
  });

  it("answers 503 as a problem when the process cannot build its dependencies", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const response = await dispatchRestRequest(
      () => {
        throw new Error("DATABASE_URL is not set");
      },
      request("GET", "/open"),
      routes,
    );
    expect(response.status).toBe(503);
    expect((await problemOf(response)).detail).not.toContain("DATABASE_URL");
    expect(logged).toHaveBeenCalledOnce();
    logged.mockRestore();
  });
});

describe("defineRoute", () => {
  it("refuses a protected route outside /ns/{ns}/ and params that differ from the path", () => {
    const base = { operationId: "x", summary: "x", tags: [], responses: { 200: z.object({}) }, handler: () => Promise.resolve({ status: 200 as const, body: {} }) };
    expect(() => defineRoute({ ...base, method: "GET", path: "/things", auth: "read" })).toThrow(/under \/ns\/\{ns\}/);
    expect(() => defineRoute({ ...base, method: "GET", path: "/ns/{ns}/things/{id}", auth: "read" })).toThrow(/path parameters/);
    expect(() => defineRoute({ ...base, method: "GET", path: "/ns/{ns}/things", auth: "read", params: z.object({ id: z.string() }) })).toThrow(/path parameters/);
  });
});
