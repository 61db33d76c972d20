import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { createTestKey, createTestNamespace, startRestHarness } from "../rest/testing/rest-fixtures";
import type { RestHarness, TestNamespace } from "../rest/testing/rest-fixtures";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { secretLookup } from "../secrets/secrets";
import { relayOutboxBatch } from "../sidecar/outbox-relay";
import type { OutboxRelayDeps } from "../sidecar/outbox-relay";
import { registerDefinition } from "../testing/runtime-fixtures";
import { serveApi } from "../web/node-api-exchange";
import { answerWebhookCall } from "./receive-webhook";
import type { WebhookDeps } from "./receive-webhook";

/**
 * A webhook as an event source: an accepted call that starts a run also
 * publishes `webhook:<name>` through the outbox in the start's transaction,
 * and the relay runs the handlers of that event — over real HTTP, on a real
 * Postgres, configured through REST.
 */

const t = useTestDatabase();
let harness: RestHarness;
let ns: TestNamespace;
let adminKey: string;
let hooks: Server;
let hooksUrl: string;
let scripts: QuickJsScriptEvaluator;
let relay: OutboxRelayDeps;
const TOKEN = "whsec-events-5b1e77a0c3";
const position = { x: 0, y: 0 };

beforeAll(async () => {
  harness = await startRestHarness(t.db, t.url);
  ns = await createTestNamespace(t.db, "hook-events");
  adminKey = await createTestKey(t.db, ns, ["admin"]);
  expect((await rest("PUT", "/secrets/HOOK_TOKEN", { value: TOKEN })).status).toBe(201);
  const deps: WebhookDeps = { db: t.db, blobs: harness.blobs, notifier: () => harness.notifier, secrets: secretLookup(t.db, harness.deps.sealingKeys) };
  hooks = createServer((req, res) => void serveApi(req, res, (request) => answerWebhookCall(deps, request)));
  await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
  hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
  scripts = await createQuickJsScriptEvaluator();
  relay = { db: t.db, http: { allowPrivateNetworks: true }, events: { db: t.db, blobs: harness.blobs, scripts } };
  for (const name of ["on_order", "fulfil"]) {
    await registerDefinition(t.db, ns.id, { schemaVersion: 1, name, nodes: [{ ref: "hold", type: "WAIT", signal: true, position }], edges: [] });
  }
  for (const name of ["orders", "quiet"]) {
    const saved = await rest("PUT", `/webhooks/${name}`, {
      workflowName: "on_order",
      authMode: "token",
      secretName: "HOOK_TOKEN",
      inputMapping: { orderId: "${body.order.id}" },
      idempotencyKeyTemplate: "${headers['x-delivery']}",
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  }
  const handler = await rest("PUT", "/event-handlers/fulfil_paid", {
    event: "webhook:orders",
    condition: "$.body.order.status == 'paid'",
    active: true,
    actions: [
      { action: "start_workflow", start_workflow: { name: "fulfil", input: { orderId: "${input.orderId}", via: "${headers['x-source']}" }, correlationId: "fulfil-${input.orderId}" } },
      { action: "update_workflow_variables", update_workflow_variables: { workflowId: "${workflowId}", variables: { handledBy: "fulfil_paid", source: "${query.source}" } } },
    ],
  });
  expect(handler.status, JSON.stringify(handler.body)).toBe(201);
});
afterAll(async () => {
  await new Promise((resolve) => hooks?.close(resolve));
  await scripts?.close();
  await harness?.close();
});

function rest(method: string, path: string, body?: unknown) {
  return harness.api(method, `/ns/${ns.name}${path}`, { headers: { authorization: `Bearer ${adminKey}` }, body });
}

async function call(name: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${hooksUrl}/api/hooks/${ns.name}/${name}?source=shop`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-webhook-token": TOKEN, "x-source": "storefront", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as { workflowId: string; created: boolean } };
}

const eventsOf = (topic: string) => t.db.selectFrom("OutboxEvents").select(["id", "workflowId", "payload", "publishedAt"]).where("namespaceId", "=", ns.id).where("topic", "=", topic).orderBy("id").execute();

describe("a webhook call as an event", () => {
  it("publishes webhook:<name> with the run, the mapped input and the call — never its token", async () => {
    const answer = await call("orders", { order: { id: 7, status: "paid" } }, { "x-delivery": "d-7" });
    expect(answer.status).toBe(202);
    const events = await eventsOf("webhook:orders");
    expect(events).toHaveLength(1);
    expect(events[0]!.workflowId).toBe(answer.json.workflowId);
    expect(events[0]!.payload).toMatchObject({
      webhook: "orders",
      workflowId: answer.json.workflowId,
      workflowType: "on_order",
      input: { orderId: 7 },
      body: { order: { id: 7, status: "paid" } },
      query: { source: "shop" },
      headers: { "x-source": "storefront", "x-delivery": "d-7" },
    });
    expect(JSON.stringify(events[0]!.payload)).not.toContain(TOKEN);
    expect(Object.keys((events[0]!.payload as { headers: object }).headers)).not.toContain("x-webhook-token");
  });

  it("runs the handler's actions once the relay delivers it, recorded as an EventExecution", async () => {
    const run = (await eventsOf("webhook:orders"))[0]!.workflowId!;
    expect(await relayOutboxBatch(relay, { limit: 20 })).toBeGreaterThanOrEqual(1);
    const started = await t.db.selectFrom("WorkflowExecutions").select(["defName", "input", "createdBy"]).where("correlationId", "=", "fulfil-7").execute();
    expect(started).toEqual([{ defName: "fulfil", input: { orderId: 7, via: "storefront" }, createdBy: "event-handler:fulfil_paid" }]);
    const source = await t.db.selectFrom("WorkflowExecutions").select("variables").where("id", "=", run).executeTakeFirstOrThrow();
    expect(source.variables).toMatchObject({ handledBy: "fulfil_paid", source: "shop" });
    const executions = await rest("GET", "/event-handlers/fulfil_paid/executions");
    const items = (executions.body as { items: { status: string; event: string; outcomes: { action: string; ok: boolean }[] }[] }).items;
    expect(items.map((x) => [x.event, x.status, x.outcomes.map((o) => [o.action, o.ok])])).toEqual([
      ["webhook:orders", "COMPLETED", [["start_workflow", true], ["update_workflow_variables", true]]],
    ]);
  });

  it("a sender's retry (same idempotency key) starts no run and publishes no second event", async () => {
    const retry = await call("orders", { order: { id: 7, status: "paid" } }, { "x-delivery": "d-7" });
    expect(retry.json.created).toBe(false);
    expect(await eventsOf("webhook:orders")).toHaveLength(1);
  });

  it("records SKIPPED when the condition does not hold, and starts nothing", async () => {
    await call("orders", { order: { id: 8, status: "pending" } }, { "x-delivery": "d-8" });
    await relayOutboxBatch(relay, { limit: 20 });
    const rows = await t.db.selectFrom("EventExecutions").select(["status"]).where("namespaceId", "=", ns.id).orderBy("createdAt").orderBy("id").execute();
    expect(rows.map((r) => r.status)).toEqual(["COMPLETED", "SKIPPED"]);
    expect(await t.db.selectFrom("WorkflowExecutions").select("id").where("correlationId", "=", "fulfil-8").execute()).toEqual([]);
  });

  it("writes no event for a webhook no active handler listens to", async () => {
    expect((await call("quiet", { order: { id: 9, status: "paid" } })).status).toBe(202);
    expect(await eventsOf("webhook:quiet")).toEqual([]);
    const deactivated = await rest("PUT", "/event-handlers/fulfil_paid", {
      event: "webhook:orders",
      active: false,
      actions: [{ action: "start_workflow", start_workflow: { name: "fulfil" } }],
    });
    expect(deactivated.status).toBe(200);
    await call("orders", { order: { id: 10, status: "paid" } });
    expect(await eventsOf("webhook:orders")).toHaveLength(2);
  });

  it("publishes nothing for a start that is refused (a mapped input the workflow rejects)", async () => {
    const before = await sql<{ n: string }>`SELECT count(*) AS n FROM "OutboxEvents" WHERE "namespaceId" = ${ns.id}`.execute(t.db);
    await rest("PUT", "/event-handlers/fulfil_paid", { event: "webhook:orders", active: true, actions: [{ action: "start_workflow", start_workflow: { name: "fulfil" } }] });
    await registerDefinition(t.db, ns.id, {
      schemaVersion: 1,
      name: "on_order",
      inputSchema: { type: "object", required: ["orderId"], properties: { orderId: { type: "integer" } } },
      nodes: [{ ref: "hold", type: "WAIT", signal: true, position }],
      edges: [],
    });
    const refused = await call("orders", { order: { id: "not-a-number", status: "paid" } });
    expect(refused.status).toBe(422);
    const after = await sql<{ n: string }>`SELECT count(*) AS n FROM "OutboxEvents" WHERE "namespaceId" = ${ns.id}`.execute(t.db);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });
});
