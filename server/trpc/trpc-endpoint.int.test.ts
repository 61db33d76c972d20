import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { createApiKey } from "../auth/api-keys";
import { findNamespaceByName } from "../store/namespaces";
import { useWebEnvironment } from "./testing";

/**
 * The tRPC endpoint over HTTP, as the browser meets it: the session cookie's
 * round trip, CSRF refusals on mutations, and Bearer keys.
 */
type Handler = (request: Request) => Promise<Response>;

const database = useTestDatabase();
useWebEnvironment(database);

const ORIGIN = "http://localhost:3000";
const PASSWORD = "tulip-harbour-9-lantern";
let GET: Handler;
let POST: Handler;

beforeAll(async () => {
  // Imported by path: server/ may not import app/ statically (layer rule), and this is the real handler.
  const module = (await import(pathToFileURL(path.join(process.cwd(), "app/api/trpc/[trpc]/route.ts")).href)) as { GET: Handler; POST: Handler };
  GET = module.GET;
  POST = module.POST;
});

function query(procedure: string, input: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const search = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  return GET(new Request(`${ORIGIN}/api/trpc/${procedure}${search}`, { headers: { host: "localhost:3000", ...headers } }));
}

function mutate(procedure: string, input: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return POST(
    new Request(`${ORIGIN}/api/trpc/${procedure}`, {
      method: "POST",
      headers: { host: "localhost:3000", "content-type": "application/json", ...headers },
      body: JSON.stringify(input ?? {}),
    }),
  );
}

const sameOrigin = { origin: ORIGIN };

function cookieOf(response: Response): string {
  const setCookie = response.headers.getSetCookie().find((c) => c.startsWith("nf_session="));
  if (!setCookie) throw new Error(`no session cookie in ${response.status} response`);
  return setCookie.split(";")[0] ?? "";
}

describe("the tRPC endpoint", () => {
  let cookie: string;

  it("sets up the owner and signs them in with an HttpOnly, SameSite=Lax cookie", async () => {
    expect(((await (await query("auth.status", undefined)).json()) as { result: { data: unknown } }).result.data).toEqual({ setupRequired: true, user: null });
    const response = await mutate("auth.setupOwner", { email: "owner@example.com", password: PASSWORD }, sameOrigin);
    expect(response.status).toBe(200);
    const setCookie = response.headers.getSetCookie()[0] ?? "";
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).not.toMatch(/Secure/);
    cookie = cookieOf(response);
  });

  it("authenticates later requests by the cookie, and refuses them without it", async () => {
    const anonymous = await query("system.status", undefined);
    expect(anonymous.status).toBe(401);
    // An error names its code and message, never a stack trace.
    const body = (await anonymous.json()) as { error: { message: string; data: Record<string, unknown> } };
    expect(body.error.message).toBe("Sign in first.");
    expect(body.error.data).not.toHaveProperty("stack");
    expect((await query("system.status", undefined, { cookie })).status).toBe(200);
    const status = (await (await query("auth.status", undefined, { cookie })).json()) as { result: { data: { user: { email: string } } } };
    expect(status.result.data.user.email).toBe("owner@example.com");
  });

  it("refuses a signed-in mutation from another origin, or with no Origin at all (403), and it changes nothing", async () => {
    const foreign = await mutate("auth.signOut", undefined, { cookie, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    const bare = await mutate("auth.signOut", undefined, { cookie });
    expect(bare.status).toBe(403);
    expect((await query("system.status", undefined, { cookie })).status).toBe(200);
  });

  it("refuses a cross-origin sign-in (login CSRF) too", async () => {
    const response = await mutate("auth.signIn", { email: "owner@example.com", password: PASSWORD }, { origin: "https://evil.example" });
    expect(response.status).toBe(403);
    expect(response.headers.getSetCookie()).toEqual([]);
  });

  it("signs out: the cookie is cleared and the old one no longer works", async () => {
    const response = await mutate("auth.signOut", undefined, { cookie, ...sameOrigin });
    expect(response.status).toBe(200);
    expect(response.headers.getSetCookie()[0]).toMatch(/^nf_session=;.*Max-Age=0/);
    expect((await query("system.status", undefined, { cookie })).status).toBe(401);
  });

  it("marks the cookie Secure behind an HTTPS proxy", async () => {
    const response = await mutate("auth.signIn", { email: "owner@example.com", password: PASSWORD }, { ...sameOrigin, "x-forwarded-proto": "https" });
    expect(response.status).toBe(200);
    expect(response.headers.getSetCookie()[0]).toMatch(/; Secure$/);
  });

  it("answers a wrong password 401 and, once throttled, 429 with Retry-After", async () => {
    for (let i = 0; i < 5; i++) {
      expect((await mutate("auth.signIn", { email: "owner@example.com", password: `wrong-${i}` }, sameOrigin)).status).toBe(401);
    }
    const throttled = await mutate("auth.signIn", { email: "owner@example.com", password: PASSWORD }, sameOrigin);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(JSON.stringify(await throttled.json())).not.toContain(PASSWORD);
  });

  it("accepts a Bearer API key, without any Origin (no cookie to forge)", async () => {
    const namespace = await findNamespaceByName(database.db, "default");
    const { key } = await createApiKey(database.db, { namespaceId: namespace?.id ?? "", name: "ui-test", scopes: ["admin"], createdBy: "test" });
    const list = await query("workflows.list", { namespace: "default" }, { authorization: `Bearer ${key}` });
    expect(list.status).toBe(200);
    expect((await query("workflows.list", { namespace: "default" }, { authorization: "Bearer nf_000000000000_wrong" })).status).toBe(401);
  });
});
