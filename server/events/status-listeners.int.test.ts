import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { terminateWorkflow } from "../executions/actions";
import { startExecution } from "../executions/start-execution";
import { FilesystemBlobStore } from "../lib/blob-store";
import { createTestNamespace } from "../rest/testing/rest-fixtures";
import type { TestNamespace } from "../rest/testing/rest-fixtures";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { relayOutboxBatch } from "../sidecar/outbox-relay";
import type { OutboxRelayDeps } from "../sidecar/outbox-relay";
import { upsertEventHandler } from "../store/event-handlers";
import { registerDefinition } from "../testing/runtime-fixtures";
import { verifyWebhookCall } from "../webhooks/webhook-auth";
import { saveStatusListener } from "./status-listeners";

/**
 * A workflow's status changes as events: the trigger writes one per change,
 * in the changing transaction, only where a listener or handler wants it;
 * the relay POSTs each to its listener signed with the listener's secret,
 * and hands workflow:<name>:<STATUS> to the event handlers.
 */

const t = useTestDatabase();
let ns: TestNamespace;
let quiet: TestNamespace;
let receiver: Server;
let receiverUrl: string;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
let scripts: QuickJsScriptEvaluator;
let blobRoot: string;
let relay: OutboxRelayDeps;
const SECRET = "listener-secret-41d2";
const system = { type: "system" as const, id: "test" };
const position = { x: 0, y: 0 };
const waiting = (name: string) => ({ schemaVersion: 1, name, nodes: [{ ref: "hold", type: "WAIT", signal: true, position }], edges: [] });

beforeAll(async () => {
  ns = await createTestNamespace(t.db, "listening");
  quiet = await createTestNamespace(t.db, "quiet");
  await sql`INSERT INTO "Secrets" ("namespaceId", "name", "sealedValue") VALUES (${ns.id}, 'LISTENER_KEY', '\\x00'::bytea)`.execute(t.db);
  for (const space of [ns, quiet]) for (const name of ["quick", "other", "followup"]) await registerDefinition(t.db, space.id, waiting(name));
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  scripts = await createQuickJsScriptEvaluator();
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-listeners-"));
  const blobs = new FilesystemBlobStore({ root: blobRoot });
  relay = {
    db: t.db,
    http: { allowPrivateNetworks: true },
    events: { db: t.db, blobs, scripts },
    secrets: (namespaceId, name) => Promise.resolve(namespaceId === ns.id && name === "LISTENER_KEY" ? SECRET : null),
  };
});
afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await scripts?.close();
  await rm(blobRoot, { recursive: true, force: true });
});

async function start(space: TestNamespace, name: string): Promise<string> {
  const started = await startExecution({ db: t.db, blobs: relay.events!.blobs }, { namespaceId: space.id, name, input: {} });
  if (!started.ok) throw new Error(JSON.stringify(started));
  return started.workflowId;
}

describe("status listeners", () => {
  it("refuses a listener with a bad URL, an unknown workflow or secret, naming each", async () => {
    const saved = await saveStatusListener(t.db, { namespaceId: ns.id, name: "broken", actor: system, updatedBy: "test", config: { url: "ftp://x", workflowName: "nope", secretName: "NOPE", statuses: ["COMPLETED"], enabled: true } });
    expect(saved.ok ? [] : saved.problems.map((p) => p.path[0])).toEqual(["url", "workflowName", "secretName"]);
  });

  it("writes no event where nobody listens", async () => {
    const id = await start(quiet, "quick");
    await terminateWorkflow({ db: t.db }, { namespaceId: quiet.id, workflowId: id, reason: "done", actor: system });
    expect(await t.db.selectFrom("OutboxEvents").select("id").where("namespaceId", "=", quiet.id).execute()).toEqual([]);
  });

  it("calls the listener on the statuses it chose, for its workflow, signed; a disabled one hears nothing", async () => {
    const config = { url: `${receiverUrl}/status`, workflowName: "quick", secretName: "LISTENER_KEY", statuses: ["TERMINATED" as const], enabled: true };
    expect((await saveStatusListener(t.db, { namespaceId: ns.id, name: "ops", actor: system, updatedBy: "test", config })).ok).toBe(true);
    expect((await saveStatusListener(t.db, { namespaceId: ns.id, name: "off", actor: system, updatedBy: "test", config: { ...config, url: `${receiverUrl}/off`, enabled: false } })).ok).toBe(true);
    const id = await start(ns, "quick");
    const other = await start(ns, "other");
    await terminateWorkflow({ db: t.db }, { namespaceId: ns.id, workflowId: id, reason: "enough", actor: system });
    await terminateWorkflow({ db: t.db }, { namespaceId: ns.id, workflowId: other, reason: "enough", actor: system });
    await relayOutboxBatch(relay, { limit: 50 });
    expect(received).toHaveLength(1);
    const call = received[0]!;
    expect(JSON.parse(call.body)).toMatchObject({ workflowId: id, workflowType: "quick", status: "TERMINATED", previousStatus: "RUNNING", reasonForIncompletion: "enough" });
    const signature = String(call.headers["x-node-flow-signature"]);
    expect(verifyWebhookCall({ mode: "hmac-sha256-timestamped", secret: SECRET, header: signature, body: Buffer.from(call.body), toleranceSeconds: 60, nowSeconds: Math.floor(Date.now() / 1000) }).ok).toBe(true);
    expect(call.body).not.toContain(SECRET);
  });

  it("hands workflow:<name>:<STATUS> to the event handlers listening to it", async () => {
    await upsertEventHandler(t.db, {
      namespaceId: ns.id,
      name: "after_quick",
      actor: "test",
      settings: { event: "workflow:quick:TERMINATED", condition: null, evaluatorType: "javascript", actions: [{ action: "start_workflow", start_workflow: { name: "followup", input: { after: "${workflowId}" }, correlationId: "after-${workflowId}" } }], active: true },
    });
    const id = await start(ns, "quick");
    await terminateWorkflow({ db: t.db }, { namespaceId: ns.id, workflowId: id, reason: "next", actor: system });
    await relayOutboxBatch(relay, { limit: 50 });
    const followups = await t.db.selectFrom("WorkflowExecutions").select(["defName", "input"]).where("correlationId", "=", `after-${id}`).execute();
    expect(followups).toEqual([{ defName: "followup", input: { after: id } }]);
  });
});
