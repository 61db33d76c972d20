import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { SESSION_COOKIE } from "../auth/session-cookie";
import { createSession } from "../auth/sessions";
import { createTestKey, createTestNamespace } from "../rest/testing/rest-fixtures";
import { insertTestUser, useWebEnvironment } from "../trpc/testing";

/**
 * The web port's /metrics covers every namespace, so it answers the owner's
 * session and NODE_FLOW_METRICS_TOKEN only: never an anonymous scrape, and
 * never a namespace's API key, however strong its scope.
 */

type Handler = (request: Request) => Promise<Response>;
// By path: server/ may not import app/ statically (layer rule); this is the real handler.
const route = async () => ((await import(pathToFileURL(path.join(process.cwd(), "app/metrics/route.ts")).href)) as { GET: Handler }).GET;
const scrape = async (headers: Record<string, string> = {}) => (await route())(new Request("http://nf.test/metrics", { headers }));

describe("GET /metrics on the web port, without a token configured", () => {
  const database = useTestDatabase();
  useWebEnvironment(database);

  it("refuses anonymous scrapes and API keys, and serves the owner", async () => {
    const anonymous = await scrape();
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toMatch(/NODE_FLOW_METRICS_PORT/);

    const namespace = await createTestNamespace(database.db, "metrics");
    const adminKey = await createTestKey(database.db, namespace, ["admin"]);
    expect((await scrape({ authorization: `Bearer ${adminKey}` })).status).toBe(403);

    const member = await insertTestUser(database.db, "member@metrics.test");
    const memberSession = await createSession(database.db, { userId: member.id });
    expect((await scrape({ cookie: `${SESSION_COOKIE}=${memberSession.token}` })).status).toBe(403);

    const owner = await insertTestUser(database.db, "owner@metrics.test", { isOwner: true });
    const ownerSession = await createSession(database.db, { userId: owner.id });
    const served = await scrape({ cookie: `${SESSION_COOKIE}=${ownerSession.token}` });
    expect(served.status).toBe(200);
    expect(await served.text()).toMatch(/^# HELP /m);
  });
});

describe("GET /metrics on the web port, with NODE_FLOW_METRICS_TOKEN", () => {
  const database = useTestDatabase();
  useWebEnvironment(database, { NODE_FLOW_METRICS_TOKEN: "a-metrics-token-for-this-test" });

  it("serves a scrape that sends the token, and refuses a wrong one", async () => {
    expect((await scrape({ authorization: "Bearer a-metrics-token-for-this-test" })).status).toBe(200);
    expect((await scrape({ authorization: "Bearer not-the-token" })).status).toBe(401);
    expect((await scrape()).status).toBe(401);
  });
});
