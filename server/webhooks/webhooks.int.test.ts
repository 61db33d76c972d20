import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { useTestDatabase } from "../../db/testing/test-database";
import { createTestKey, createTestNamespace, startRestHarness } from "../rest/testing/rest-fixtures";
import type { RestHarness, TestNamespace } from "../rest/testing/rest-fixtures";
import { registerDefinition } from "../testing/runtime-fixtures";
import { startSidecar } from "../testing/sidecar-process";
import type { SidecarProcess } from "../testing/sidecar-process";
import { serveApi } from "../web/node-api-exchange";
import { secretLookup } from "../secrets/secrets";
import { answerWebhookCall } from "./receive-webhook";
import type { WebhookDeps } from "./receive-webhook";
import { signWebhookCall } from "./webhook-auth";

/**
 * Inbound webhooks over real HTTP against a real Postgres: configured through
 * REST, called as GitHub and Stripe call, recorded without their secrets,
 * and answered synchronously with a run's output by a real sidecar.
 */

const t = useTestDatabase();
let harness: RestHarness;
let ns: TestNamespace;
let adminKey: string;
let hooks: Server;
let hooksUrl: string;
let sidecar: SidecarProcess;
const SECRET_VALUE = "whsec-live-7f3a9c1d2e";
let deps: WebhookDeps;

beforeAll(async () => {
  harness = await startRestHarness(t.db, t.url);
  ns = await createTestNamespace(t.db, "hooks");
  adminKey = await createTestKey(t.db, ns, ["admin"]);
  expect((await setSecret(SECRET_VALUE)).status).toBe(201);
  deps = { db: t.db, blobs: harness.blobs, notifier: () => harness.notifier, secrets: secretLookup(t.db, harness.deps.sealingKeys) };
  hooks = createServer((req, res) => void serveApi(req, res, (request) => answerWebhookCall(deps, request)));
  await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
  hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
  const position = { x: 0, y: 0 };
  await registerDefinition(t.db, ns.id, {
    schemaVersion: 1,
    name: "on_order",
    nodes: [{ ref: "total", type: "INLINE", evaluatorType: "javascript", expression: "$.amount * 2", input: { amount: "${workflow.input.amount}" }, position }],
    edges: [],
  });
});
afterAll(async () => {
  await sidecar?.stop();
  await new Promise((resolve) => hooks?.close(resolve));
  await harness?.close();
});

function setSecret(value: string) {
  return harness.api("PUT", `/ns/${ns.name}/secrets/HOOK_SECRET`, { headers: { authorization: `Bearer ${adminKey}` }, body: { value } });
}

function put(name: string, body: Record<string, unknown>) {
  return harness.api("PUT", `/ns/${ns.name}/webhooks/${name}`, { headers: { authorization: `Bearer ${adminKey}` }, body });
}

async function call(name: string, body: string, headers: Record<string, string> = {}, method = "POST"): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${hooksUrl}/api/hooks/${ns.name}/${name}`, { method, headers: { "content-type": "application/json", ...headers }, body: method === "GET" ? undefined : body });
  return { status: response.status, json: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

async function runOf(workflowId: unknown) {
  return t.db.selectFrom("WorkflowExecutions").select(["defName", "input", "correlationId", "createdBy"]).where("id", "=", String(workflowId)).executeTakeFirstOrThrow();
}

async function calls(name: string) {
  return t.db
    .selectFrom("WebhookCallbacks as c")
    .innerJoin("IncomingWebhooks as w", "w.id", "c.webhookId")
    .select(["c.status", "c.refusal", "c.workflowId", "c.idempotencyKey"])
    .where("w.name", "=", name)
    .orderBy("c.receivedAt")
    .orderBy("c.id")
    .execute();
}

describe("configuring a webhook", () => {
  it("refuses settings naming what does not exist, every field at once, and writes nothing", async () => {
    const answer = await put("broken", { workflowName: "no_such_flow", authMode: "token", secretName: "NO_SUCH_SECRET" });
    expect(answer.status).toBe(400);
    const pointers = (answer.body as { errors: { pointer: string }[] }).errors.map((e) => e.pointer).sort();
    expect(pointers).toEqual(["/body/secretName", "/body/workflowName"]);
    expect(await t.db.selectFrom("IncomingWebhooks").select("id").where("name", "=", "broken").execute()).toEqual([]);
  });

  it("refuses a bad name, mode or header with the field named", async () => {
    const answer = await put("Bad Name", { workflowName: "on_order", authMode: "sometimes", secretName: "HOOK_SECRET", authHeader: "x y" });
    expect(answer.status).toBe(400);
    const pointers = (answer.body as { errors: { pointer: string }[] }).errors.map((e) => e.pointer).sort();
    expect(pointers).toEqual(["/body/authHeader", "/body/authMode", "/params/name"]);
  });
});

describe("a token webhook", () => {
  beforeAll(async () => {
    const created = await put("orders", {
      workflowName: "on_order",
      authMode: "token",
      secretName: "HOOK_SECRET",
      inputMapping: { amount: "${body.order.amount}", source: "${headers['x-source']}", ref: "${query.ref}" },
      correlationIdTemplate: "order-${body.order.id}",
      idempotencyKeyTemplate: "${headers['x-delivery']}",
      maxBodyBytes: 1024,
      ratePerMinute: 20,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((created.body as { path: string; authHeader: string }).path).toBe(`/api/hooks/${ns.name}/orders`);
    expect((created.body as { authHeader: string }).authHeader).toBe("x-webhook-token");
  });

  it("refuses a call without the token or with a wrong one (401, nothing about the secret), and records why", async () => {
    const body = JSON.stringify({ order: { id: 1, amount: 5 } });
    const missing = await call("orders", body);
    const wrong = await call("orders", body, { "x-webhook-token": "whsec-live-7f3a9c1d2f" });
    expect([missing.status, wrong.status]).toEqual([401, 401]);
    expect(missing.json).toEqual({ error: "The call is not authenticated" });
    expect((await calls("orders")).map((c) => [c.status, c.refusal])).toEqual([
      [401, "the auth header is missing"],
      [401, "the token does not match"],
    ]);
  });

  it("starts a run with the mapped input, correlation id and origin, answering 202 with its id", async () => {
    const answer = await call("orders?ref=r-9", JSON.stringify({ order: { id: 42, amount: 21 } }), { "x-webhook-token": SECRET_VALUE, "x-source": "shop", "x-delivery": "d-1" });
    expect(answer.status).toBe(202);
    expect(answer.json).toEqual({ workflowId: expect.any(String) as string, created: true });
    expect(await runOf(answer.json.workflowId)).toEqual({ defName: "on_order", input: { amount: 21, source: "shop", ref: "r-9" }, correlationId: "order-42", createdBy: "webhook:orders" });
  });

  it("starts one run for a sender's retry (the idempotency key), and says so", async () => {
    const headers = { "x-webhook-token": SECRET_VALUE, "x-delivery": "d-2" };
    const first = await call("orders", JSON.stringify({ order: { id: 43, amount: 1 } }), headers);
    const retry = await call("orders", JSON.stringify({ order: { id: 43, amount: 1 } }), headers);
    expect(retry.json).toEqual({ workflowId: first.json.workflowId, created: false });
    const rows = await t.db.selectFrom("WorkflowExecutions").select("id").where("correlationId", "=", "order-43").execute();
    expect(rows).toHaveLength(1);
  });

  it("refuses a body over the webhook's limit (413), malformed JSON (400) and a GET it does not allow (405)", async () => {
    const token = { "x-webhook-token": SECRET_VALUE };
    expect((await call("orders", JSON.stringify({ pad: "x".repeat(2000) }), token)).status).toBe(413);
    const malformed = await call("orders", '{"order": ', token);
    expect(malformed.status).toBe(400);
    expect(String(malformed.json.error)).toMatch(/not valid JSON/);
    const get = await call("orders", "", token, "GET");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("never stores the secret or the auth header: no row of any table holds the token", async () => {
    const secrets = await sql<{ t: string }>`SELECT string_agg(encode("sealedValue", 'escape'), ' ') AS t FROM "Secrets"`.execute(t.db);
    expect(secrets.rows[0]?.t ?? "").not.toContain(SECRET_VALUE);
    const dump = await sql<{ t: string }>`SELECT string_agg(row_to_json(x)::text, ' ') AS t FROM (SELECT * FROM "WebhookCallbacks") x`.execute(t.db);
    const runs = await sql<{ t: string }>`SELECT string_agg(row_to_json(x)::text, ' ') AS t FROM (SELECT * FROM "WorkflowExecutions") x`.execute(t.db);
    const audit = await sql<{ t: string }>`SELECT string_agg(row_to_json(x)::text, ' ') AS t FROM (SELECT * FROM "AuditEvents") x`.execute(t.db);
    for (const text of [dump.rows[0]?.t, runs.rows[0]?.t, audit.rows[0]?.t]) expect(text ?? "").not.toContain(SECRET_VALUE);
    expect(runs.rows[0]?.t ?? "").not.toContain("x-webhook-token");
  });

  it("refuses calls over its rate with 429 and Retry-After, recorded", async () => {
    const token = { "x-webhook-token": SECRET_VALUE };
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 25 && limited === undefined; i++) {
      const answer = await call("orders", JSON.stringify({ order: { id: 100 + i, amount: 1 } }), token);
      if (answer.status === 429) limited = answer;
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await calls("orders")).some((c) => c.status === 429 && c.refusal === "over 20 calls a minute")).toBe(true);
  });

  it("answers 404 once disabled, and once the secret is gone refuses at once", async () => {
    const rotated = await put("rotating", { workflowName: "on_order", authMode: "token", secretName: "HOOK_SECRET" });
    expect(rotated.status).toBe(201);
    const token = { "x-webhook-token": SECRET_VALUE };
    expect((await call("rotating", "{}", token)).status).toBe(202);
    expect((await setSecret("rotated-value")).status).toBe(200);
    expect((await call("rotating", "{}", token)).status).toBe(401);
    expect((await setSecret(SECRET_VALUE)).status).toBe(200);
    expect((await put("rotating", { workflowName: "on_order", authMode: "token", secretName: "HOOK_SECRET", enabled: false })).status).toBe(200);
    expect((await call("rotating", "{}", token)).json).toEqual({ error: "No webhook at this address" });
    expect((await call("nowhere", "{}", token)).status).toBe(404);
  });
});

describe("HMAC webhooks", () => {
  beforeAll(async () => {
    expect((await put("github", { workflowName: "on_order", authMode: "hmac-sha256", secretName: "HOOK_SECRET", inputMapping: { amount: "${body.amount}" } })).status).toBe(201);
    expect((await put("stripe", { workflowName: "on_order", authMode: "hmac-sha256-timestamped", secretName: "HOOK_SECRET", inputMapping: { amount: "${body.amount}" } })).status).toBe(201);
  });

  it("accepts GitHub's signature over the raw body and refuses it over another body", async () => {
    const body = '{"amount": 3}';
    const signature = signWebhookCall("hmac-sha256", SECRET_VALUE, body, 0);
    expect((await call("github", body, { "x-hub-signature-256": signature })).status).toBe(202);
    expect((await call("github", '{"amount": 4}', { "x-hub-signature-256": signature })).status).toBe(401);
  });

  it("accepts Stripe's timestamped signature once: a replay is 409, an old timestamp 401", async () => {
    const body = '{"amount": 5}';
    const now = Math.floor(Date.now() / 1000);
    const signature = signWebhookCall("hmac-sha256-timestamped", SECRET_VALUE, body, now);
    expect((await call("stripe", body, { "x-webhook-signature": signature })).status).toBe(202);
    const replay = await call("stripe", body, { "x-webhook-signature": signature });
    expect(replay.status).toBe(409);
    const old = signWebhookCall("hmac-sha256-timestamped", SECRET_VALUE, body, now - 600);
    expect((await call("stripe", body, { "x-webhook-signature": old })).status).toBe(401);
    expect((await calls("stripe")).map((c) => c.refusal)).toEqual([null, "a signature already seen (a replay)", "the signature's timestamp is more than 300 s from now"]);
  });
});

describe("a webhook that waits for its run", () => {
  beforeAll(async () => {
    sidecar = startSidecar({ databaseUrl: t.url, dataDir: await mkdtemp(path.join(tmpdir(), "nf-hooks-sidecar-")) });
    await sidecar.ready();
    const saved = await put("quote", { workflowName: "on_order", authMode: "token", secretName: "HOOK_SECRET", inputMapping: { amount: "${body.amount}" }, responseMode: "wait", waitSeconds: 20, responseNodeRef: "total" });
    expect(saved.status).toBe(201);
  });

  it("answers 200 with the chosen node's output once the run has ended", async () => {
    const answer = await call("quote", '{"amount": 21}', { "x-webhook-token": SECRET_VALUE });
    expect(answer.status, sidecar.output()).toBe(200);
    expect(answer.json).toMatchObject({ status: "COMPLETED", output: { result: 42 }, created: true });
  });
});

describe("previewing a mapping", () => {
  it("shows what a sample call maps to, without starting anything", async () => {
    const before = await t.db.selectFrom("WorkflowExecutions").select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
    const answer = await harness.api("POST", `/ns/${ns.name}/webhooks/preview`, {
      headers: { authorization: `Bearer ${adminKey}` },
      body: { inputMapping: { id: "${body.id}", event: "${headers['x-event']}" }, idempotencyKeyTemplate: "${body.id}", call: { body: { id: 7 }, headers: { "X-Event": "paid" } } },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ input: { id: 7, event: "paid" }, correlationId: null, idempotencyKey: "7", problems: [] });
    const after = await t.db.selectFrom("WorkflowExecutions").select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });
});
