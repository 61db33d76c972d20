import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { createApiKey, revokeApiKey } from "../auth/api-keys";
import type { AnyRoute } from "./define-route";
import type { OpenApiDocument } from "./openapi";
import { ROUTES } from "./routes";
import { createTestKey, createTestNamespace, startRestHarness } from "./testing/rest-fixtures";
import type { RestHarness, TestNamespace } from "./testing/rest-fixtures";

// Default deny, enumerated: every route in the table is called for real, and
// every one that is not deliberately public refuses a caller without a valid
// credential (401), a credential of another namespace (404), and a credential
// without the route's permission (403). A new route is covered the moment it
// joins the table; a new public route fails here until it is listed below.

/** The routes that are public on purpose, and why each may be. */
const DELIBERATELY_PUBLIC: Record<string, string> = {
  "GET /openapi.json": "the API's description; clients fetch it before they hold a key, and it holds no data",
};

const t = useTestDatabase();
let harness: RestHarness;
let a: TestNamespace;
let b: TestNamespace;
let adminKeyA: string;
let workerKeyA: string;
let revokedKeyA: string;
let expiredKeyA: string;

beforeAll(async () => {
  harness = await startRestHarness(t.db, t.url);
  a = await createTestNamespace(t.db, "deny-a");
  b = await createTestNamespace(t.db, "deny-b");
  adminKeyA = await createTestKey(t.db, a, ["admin"]);
  workerKeyA = await createTestKey(t.db, a, ["worker"]);
  const revoked = await createApiKey(t.db, { namespaceId: a.id, name: "revoked", scopes: ["admin"], createdBy: "test" });
  await revokeApiKey(t.db, { namespaceId: a.id, apiKeyId: revoked.id, actor: { type: "system", id: "test" } });
  revokedKeyA = revoked.key;
  // Minted "an hour ago" with a one-minute life: expired now, without a sleep.
  const minted = Date.now() - 3_600_000;
  const expired = await createApiKey(
    t.db,
    { namespaceId: a.id, name: "expired", scopes: ["admin"], createdBy: "test", expiresAt: new Date(minted + 60_000) },
    { now: () => minted },
  );
  expiredKeyA = expired.key;
});
afterAll(async () => {
  await harness?.close();
});

const UUID = "0191d6a4-0000-7000-8000-0000000000aa";

/** The route's path with its parameters filled by plausible values, in namespace `ns`. */
function concretePath(route: AnyRoute, ns: string): string {
  return route.path.replace(/\{([A-Za-z0-9]+)\}/g, (_, name: string) => {
    if (name === "ns") return ns;
    if (name.endsWith("Id")) return UUID;
    return "some_name";
  });
}

function call(route: AnyRoute, ns: string, headers: Record<string, string>) {
  // A body the route would accept is not needed: refusals come before the body is read.
  const body = route.method === "GET" ? undefined : {};
  return harness.api(route.method, concretePath(route, ns), { headers, body });
}

const protectedRoutes = ROUTES.filter((r) => r.auth !== "public");

describe("default deny", () => {
  it("has exactly the deliberately public routes public", () => {
    const publicRoutes = ROUTES.filter((r) => r.auth === "public").map((r) => `${r.method} ${r.path}`);
    expect(publicRoutes.sort()).toEqual(Object.keys(DELIBERATELY_PUBLIC).sort());
    expect(protectedRoutes.length).toBeGreaterThan(20);
  });

  it("refuses every protected route to an anonymous caller, a bad key, a revoked key and an expired key (401 problem)", async () => {
    const credentials: Record<string, Record<string, string>> = {
      anonymous: {},
      "malformed bearer": { authorization: "Bearer not-a-key" },
      "unknown key": { authorization: `Bearer ${adminKeyA.slice(0, -4)}AAAA` },
      revoked: { authorization: `Bearer ${revokedKeyA}` },
      expired: { authorization: `Bearer ${expiredKeyA}` },
      "basic auth": { authorization: "Basic dXNlcjpwYXNz" },
      "forged session": { cookie: "nf_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
    };
    for (const route of protectedRoutes) {
      for (const [label, headers] of Object.entries(credentials)) {
        const answer = await call(route, a.name, headers);
        expect(answer.status, `${label}: ${route.method} ${route.path}`).toBe(401);
        expect(answer.headers.get("content-type")).toBe("application/problem+json");
        expect(answer.body).toMatchObject({ status: 401, title: "Authentication required" });
      }
    }
  });

  it("answers every protected route 404 for a key of another namespace, as if the namespace did not exist", async () => {
    for (const route of protectedRoutes) {
      const other = await call(route, b.name, { authorization: `Bearer ${adminKeyA}` });
      expect(other.status, `${route.method} ${route.path}`).toBe(404);
      const missing = await call(route, "no-such-namespace", { authorization: `Bearer ${adminKeyA}` });
      expect(missing.status).toBe(404);
      expect((other.body as { detail: string }).detail.replace(b.name, "X")).toBe((missing.body as { detail: string }).detail.replace("no-such-namespace", "X"));
    }
  });

  it("lets a worker key through the worker protocol only: every other protected route is 403", async () => {
    for (const route of protectedRoutes) {
      const answer = await call(route, a.name, { authorization: `Bearer ${workerKeyA}` });
      if (route.auth === "work") expect(answer.status, `${route.method} ${route.path}`).not.toBe(403);
      else expect(answer.status, `${route.method} ${route.path}`).toBe(403);
    }
  });

  it("lets an admin key of the namespace past authorization on every protected route", async () => {
    for (const route of protectedRoutes) {
      const answer = await call(route, a.name, { authorization: `Bearer ${adminKeyA}` });
      expect([401, 403], `${route.method} ${route.path}`).not.toContain(answer.status);
      // Whatever the route thinks of the made-up input, it is never a crash.
      expect(answer.status, `${route.method} ${route.path}: ${JSON.stringify(answer.body)}`).toBeLessThan(500);
    }
  });

  it("serves the OpenAPI document without credentials, listing every route of the table", async () => {
    const answer = await harness.api<OpenApiDocument>("GET", "/openapi.json");
    expect(answer.status).toBe(200);
    expect(answer.body.openapi).toBe("3.1.0");
    for (const route of ROUTES) expect(answer.body.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
  });

  it("answers an unknown path 404 and a wrong method 405 with Allow, as problems", async () => {
    const unknown = await harness.api("GET", `/ns/${a.name}/nothing-here`, { key: adminKeyA });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toBe("application/problem+json");
    const wrong = await harness.api("DELETE", `/ns/${a.name}/runs`, { key: adminKeyA });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET, HEAD, POST");
  });

  it("refuses an oversized body with 413, before reading it, for an authorized caller", async () => {
    const huge = JSON.stringify({ name: "x", input: { blob: "z".repeat(10 * 1024 * 1024) } });
    const answer = await harness.api("POST", `/ns/${a.name}/runs`, { key: adminKeyA, body: huge });
    expect(answer.status).toBe(413);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
  });
});
