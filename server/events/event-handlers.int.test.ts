import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { keyPair, startConductorHarness } from "../conductor/testing/conductor-harness";
import type { ConductorHarness } from "../conductor/testing/conductor-harness";
import { startExecution } from "../executions/start-execution";
import { createTestKey, createTestNamespace } from "../rest/testing/rest-fixtures";
import type { TestNamespace } from "../rest/testing/rest-fixtures";
import { registerDefinition } from "../testing/runtime-fixtures";
import { startSidecar } from "../testing/sidecar-process";
import type { SidecarProcess } from "../testing/sidecar-process";
import { waitUntil } from "../testing/wait-until";

/**
 * Event handlers end to end, as Conductor's lab does it: a workflow's EVENT
 * task publishes `conductor:publisher:order_ready`; a handler registered
 * through Conductor's /api/event starts another workflow, completes the
 * publisher's WAIT task and sets its variables — when its condition holds —
 * run by a real sidecar's outbox relay, recorded once per event.
 */

const t = useTestDatabase();
let h: ConductorHarness;
let ns: TestNamespace;
let token: string;
let sidecar: SidecarProcess;
const position = { x: 0, y: 0 };
const EVENT = "conductor:publisher:order_ready";

const handler = {
  name: "start_fulfilment",
  event: EVENT,
  condition: "$.status == 'READY'",
  actions: [
    { action: "start_workflow", start_workflow: { name: "fulfil", input: { orderId: "${orderId}" }, correlationId: "order-${orderId}" } },
    { action: "update_workflow_variables", update_workflow_variables: { workflowId: "${workflowInstanceId}", variables: { handled: "${orderId}" } } },
    { action: "complete_task", complete_task: { workflowId: "${workflowInstanceId}", taskRefName: "hold", output: { released: true } } },
  ],
  active: true,
};

beforeAll(async () => {
  h = await startConductorHarness(t.db, t.url);
  ns = await createTestNamespace(t.db, "events");
  token = (await h.call<{ token: string }>("POST", "/token", { body: keyPair(await createTestKey(t.db, ns, ["admin"])) })).body.token;
  await registerDefinition(t.db, ns.id, {
    schemaVersion: 1,
    name: "publisher",
    nodes: [
      { ref: "announce", type: "EVENT", sink: "conductor:order_ready", input: { orderId: "${workflow.input.orderId}", status: "${workflow.input.status}" }, position },
      { ref: "hold", type: "WAIT", signal: true, position },
    ],
    edges: [{ source: "announce", target: "hold" }],
  });
  await registerDefinition(t.db, ns.id, {
    schemaVersion: 1,
    name: "fulfil",
    nodes: [{ ref: "pack", type: "INLINE", evaluatorType: "javascript", expression: "'packed ' + $.id", input: { id: "${workflow.input.orderId}" }, position }],
    edges: [],
  });
  sidecar = startSidecar({ databaseUrl: t.url, dataDir: h.dataDir });
  await sidecar.ready();
});
afterAll(async () => {
  await sidecar?.stop();
  await h?.close();
});

async function publish(orderId: string, status: string): Promise<string> {
  const started = await startExecution(h.deps, { namespaceId: ns.id, name: "publisher", input: { orderId, status } });
  if (!started.ok) throw new Error(JSON.stringify(started));
  return started.workflowId;
}

describe("Conductor's /api/event", () => {
  it("refuses a handler without actions or with a bad event, naming the field", async () => {
    const answer = await h.call<{ validationErrors: { path: string }[] }>("POST", "/event", { token, body: { name: "bad", event: "no-colon", actions: [] } });
    expect(answer.status).toBe(400);
    expect(answer.body.validationErrors.map((e) => e.path).sort()).toEqual(["body.actions", "body.event"]);
  });

  it("refuses a start_workflow of a workflow that does not exist, and writes nothing", async () => {
    const answer = await h.call<{ validationErrors: { path: string }[] }>("POST", "/event", {
      token,
      body: { ...handler, name: "ghostly", actions: [{ action: "start_workflow", start_workflow: { name: "no_such_flow" } }] },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.validationErrors.map((e) => e.path)).toEqual(["body.actions[0].start_workflow.name"]);
    expect((await h.call<unknown[]>("GET", "/event", { token })).body).toEqual([]);
  });

  it("adds, lists, finds by event, updates and refuses a second add", async () => {
    expect((await h.call("POST", "/event", { token, body: { ...handler, active: false } })).status).toBe(200);
    expect((await h.call("POST", "/event", { token, body: handler })).status).toBe(409);
    expect((await h.call<unknown[]>("GET", `/event/${encodeURIComponent(EVENT)}`, { token })).body).toEqual([]);
    expect((await h.call("PUT", "/event", { token, body: handler })).status).toBe(200);
    const found = await h.call<{ name: string; active: boolean }[]>("GET", `/event/${encodeURIComponent(EVENT)}`, { token });
    expect(found.body.map((x) => [x.name, x.active])).toEqual([["start_fulfilment", true]]);
    expect((await h.call("PUT", "/event", { token, body: { ...handler, name: "never_added" } })).status).toBe(404);
  });
});

describe("an EVENT task's event, handled", () => {
  it("starts the workflow, completes the waiting task and sets the variables when the condition holds", async () => {
    const id = await publish("o-1", "READY");
    await waitUntil(async () => (await t.db.selectFrom("WorkflowExecutions").select("status").where("id", "=", id).executeTakeFirstOrThrow()).status === "COMPLETED", {
      what: "the publisher to complete",
      timeoutMs: 20_000,
      describe: () => `sidecar said:\n${sidecar.output().slice(-3000)}`,
    });
    const publisher = await t.db.selectFrom("WorkflowExecutions").select(["variables"]).where("id", "=", id).executeTakeFirstOrThrow();
    expect(publisher.variables).toMatchObject({ handled: "o-1" });
    const started = await t.db.selectFrom("WorkflowExecutions").select(["defName", "input", "createdBy"]).where("correlationId", "=", "order-o-1").execute();
    expect(started).toEqual([{ defName: "fulfil", input: { orderId: "o-1" }, createdBy: "event-handler:start_fulfilment" }]);
    const executions = await t.db.selectFrom("EventExecutions").select(["status", "outcomes", "event"]).execute();
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({ status: "COMPLETED", event: EVENT });
    expect((executions[0]!.outcomes as { action: string; ok: boolean }[]).map((o) => [o.action, o.ok])).toEqual([
      ["start_workflow", true],
      ["update_workflow_variables", true],
      ["complete_task", true],
    ]);
  });

  it("skips the actions when the condition does not hold, and records that", async () => {
    const id = await publish("o-2", "ON_HOLD");
    await waitUntil(async () => (await t.db.selectFrom("EventExecutions").select("id").where("status", "=", "SKIPPED").execute()).length === 1, { what: "a SKIPPED execution", timeoutMs: 20_000 });
    expect((await t.db.selectFrom("WorkflowExecutions").select("status").where("id", "=", id).executeTakeFirstOrThrow()).status).toBe("RUNNING");
    expect(await t.db.selectFrom("WorkflowExecutions").select("id").where("correlationId", "=", "order-o-2").execute()).toEqual([]);
  });

  it("deletes the handler through the API; later events run nothing", async () => {
    expect((await h.call("DELETE", "/event/start_fulfilment", { token })).status).toBe(200);
    expect((await h.call("DELETE", "/event/start_fulfilment", { token })).status).toBe(404);
    const id = await publish("o-3", "READY");
    const published = async () => (await t.db.selectFrom("OutboxEvents").select("publishedAt").where("workflowId", "=", id).executeTakeFirst())?.publishedAt != null;
    await waitUntil(published, { what: "the third event to be relayed", timeoutMs: 20_000 });
    expect((await t.db.selectFrom("WorkflowExecutions").select("status").where("id", "=", id).executeTakeFirstOrThrow()).status).toBe("RUNNING");
    expect(await t.db.selectFrom("WorkflowExecutions").select("id").where("correlationId", "=", "order-o-3").execute()).toEqual([]);
  });
});
