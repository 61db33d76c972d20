import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { createSession } from "../auth/sessions";
import { insertUser } from "../store/users";
import { createTestKey, createTestNamespace, startRestHarness } from "./testing/rest-fixtures";
import type { RestHarness, TestNamespace } from "./testing/rest-fixtures";

// Definition changes over the REST API land in AuditEvents: exactly one row
// per change, with the caller as the actor, and nothing of the graph.

const t = useTestDatabase();
let harness: RestHarness;

beforeAll(async () => {
  harness = await startRestHarness(t.db, t.url);
});
afterAll(async () => {
  await harness?.close();
});

const position = { x: 0, y: 0 };
const graph = (name: string) => ({
  schemaVersion: 1,
  name,
  description: "graph-only-description",
  nodes: [
    { ref: "charge_card", type: "SIMPLE", name: "charge", position },
    { ref: "ship_box", type: "SIMPLE", name: "ship", position, input: { card: "${charge_card.output.last4}" } },
  ],
  edges: [{ source: "charge_card", target: "ship_box" }],
});

/** Everything in the body that must never reach the audit log. */
const GRAPH_FRAGMENTS = ["charge_card", "ship_box", "nodes", "edges", "graph-only-description", "last4"];

async function keyId(key: string): Promise<string> {
  const prefix = key.split("_")[1] ?? "";
  return (await t.db.selectFrom("ApiKeys").select("id").where("prefix", "=", prefix).executeTakeFirstOrThrow()).id;
}

/** The namespace's definition records, oldest first (minting the test keys records "apiKey.create" rows too). */
async function auditOf(namespace: TestNamespace) {
  return t.db
    .selectFrom("AuditEvents")
    .select(["actorType", "actorId", "action", "resourceType", "resourceId", "details"])
    .where("namespaceId", "=", namespace.id)
    .where("action", "in", ["workflowDefinition.create", "taskDefinition.upsert"])
    .orderBy("at")
    .orderBy("id")
    .execute();
}

describe("POST /ns/{ns}/definitions", () => {
  it("writes exactly one AuditEvents row, by the API key, with the name and version and no graph", async () => {
    const ns = await createTestNamespace(t.db, "audit-def");
    const key = await createTestKey(t.db, ns, ["admin"]);
    const created = await harness.api("POST", `/ns/${ns.name}/definitions`, { key, body: graph("orders") });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    const events = await auditOf(ns);
    expect(events).toEqual([
      {
        actorType: "apiKey",
        actorId: await keyId(key),
        action: "workflowDefinition.create",
        resourceType: "workflowDefinition",
        resourceId: "orders",
        details: { name: "orders", version: 1 },
      },
    ]);
    const recorded = JSON.stringify(events);
    for (const fragment of GRAPH_FRAGMENTS) expect(recorded).not.toContain(fragment);
  });

  it("records a signed-in user as the actor", async () => {
    const ns = await createTestNamespace(t.db, "audit-user");
    const owner = await insertUser(t.db, { email: `owner-${ns.name}@example.com`, passwordHash: null, isOwner: true });
    const { token } = await createSession(t.db, { userId: owner.id });
    const origin = `http://${new URL(harness.server.baseUrl).host}`;
    const created = await harness.api("POST", `/ns/${ns.name}/definitions`, { headers: { cookie: `nf_session=${token}`, origin }, body: graph("orders") });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(await auditOf(ns)).toEqual([expect.objectContaining({ actorType: "user", actorId: owner.id, action: "workflowDefinition.create" })]);
  });

  it("a registration that fails writes no row: invalid, refused for scope, or for another namespace", async () => {
    const ns = await createTestNamespace(t.db, "audit-fail");
    const other = await createTestNamespace(t.db, "audit-other");
    const key = await createTestKey(t.db, ns, ["admin"]);
    const workerKey = await createTestKey(t.db, ns, ["worker"]);
    const otherKey = await createTestKey(t.db, other, ["admin"]);

    // Reaches registerWorkflowDefinition, which refuses it with the problem named (the body schema takes any object).
    const invalid = await harness.api<{ errors: { code?: string }[] }>("POST", `/ns/${ns.name}/definitions`, {
      key,
      body: { ...graph("broken"), edges: [{ source: "charge_card", target: "ghost" }] },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors.map((e) => e.code)).toContain("unknown-ref");
    expect((await harness.api("POST", `/ns/${ns.name}/definitions`, { key: workerKey, body: graph("orders") })).status).toBe(403);
    expect([403, 404]).toContain((await harness.api("POST", `/ns/${ns.name}/definitions`, { key: otherKey, body: graph("orders") })).status);
    // Validation stores nothing, so it records nothing either.
    expect((await harness.api("POST", `/ns/${ns.name}/definitions/validate`, { key, body: graph("orders") })).status).toBe(200);

    expect(await auditOf(ns)).toEqual([]);
    expect(await auditOf(other)).toEqual([]);
  });
});

describe("PUT /ns/{ns}/task-definitions/{name}", () => {
  it("writes exactly one AuditEvents row per upsert, by the API key, naming only the definition", async () => {
    const ns = await createTestNamespace(t.db, "audit-task");
    const key = await createTestKey(t.db, ns, ["admin"]);
    const body = { description: "td-secret-description", inputTemplate: { apiToken: "td-secret-token" }, retryCount: 1 };
    expect((await harness.api("PUT", `/ns/${ns.name}/task-definitions/charge`, { key, body })).status).toBe(200);

    const id = await keyId(key);
    const row = { actorType: "apiKey", actorId: id, action: "taskDefinition.upsert", resourceType: "taskDefinition", resourceId: "charge", details: { name: "charge" } };
    expect(await auditOf(ns)).toEqual([row]);
    // A replace is a change too, recorded again.
    expect((await harness.api("PUT", `/ns/${ns.name}/task-definitions/charge`, { key, body: { retryCount: 2 } })).status).toBe(200);
    const events = await auditOf(ns);
    expect(events).toEqual([row, row]);
    expect(JSON.stringify(events)).not.toMatch(/td-secret|apiToken/);
  });

  it("an upsert that is refused writes no row", async () => {
    const ns = await createTestNamespace(t.db, "audit-task-fail");
    const key = await createTestKey(t.db, ns, ["admin"]);
    const workerKey = await createTestKey(t.db, ns, ["worker"]);
    expect((await harness.api("PUT", `/ns/${ns.name}/task-definitions/charge`, { key, body: { retryCount: -1 } })).status).toBeGreaterThanOrEqual(400);
    expect((await harness.api("PUT", `/ns/${ns.name}/task-definitions/charge`, { key: workerKey, body: {} })).status).toBe(403);
    expect(await auditOf(ns)).toEqual([]);
  });
});
