import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { createSession } from "../auth/sessions";
import { evaluateBatch } from "../evaluator/evaluator";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { insertUser } from "../store/users";
import { createTestKey, createTestNamespace, startRestHarness } from "./testing/rest-fixtures";
import type { RestHarness, TestNamespace } from "./testing/rest-fixtures";

// Definitions, task definitions, runs, operator actions and signals over real
// HTTP on real Postgres, with API keys from createApiKey.

const t = useTestDatabase();
let harness: RestHarness;
let scripts: QuickJsScriptEvaluator;
let a: TestNamespace;
let b: TestNamespace;
let keyA: string;
let keyB: string;
let workerKeyA: string;

beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator();
  harness = await startRestHarness(t.db, t.url);
  a = await createTestNamespace(t.db, "a");
  b = await createTestNamespace(t.db, "b");
  keyA = await createTestKey(t.db, a, ["admin"]);
  keyB = await createTestKey(t.db, b, ["admin"]);
  workerKeyA = await createTestKey(t.db, a, ["worker"]);
});
afterAll(async () => {
  await harness?.close();
  await scripts?.close();
});

async function decide(): Promise<void> {
  for (let i = 0; i < 20 && (await evaluateBatch({ db: t.db, scripts, blobs: harness.blobs }, { limit: 50 })) > 0; i++);
}

type Problem = { type: string; title: string; status: number; detail: string; errors?: { pointer: string; message: string; code?: string; ref?: string }[] };

const position = { x: 0, y: 0 };
const simple = (ref: string, queue = "work") => ({ ref, type: "SIMPLE", name: queue, position });
const definition = (name: string, nodes: unknown[], edges: unknown[] = [], extra: Record<string, unknown> = {}) => ({ schemaVersion: 1, name, nodes, edges, ...extra });

async function register(space: TestNamespace, key: string, body: Record<string, unknown>): Promise<void> {
  const created = await harness.api("POST", `/ns/${space.name}/definitions`, { key, body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
}

async function start(space: TestNamespace, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return harness.api<{ id: string; created: boolean } & Problem>("POST", `/ns/${space.name}/runs`, { key, body, headers });
}

describe("workflow definitions", () => {
  it("creates versions, lists the latest, gets one by name or version, and validates without storing", async () => {
    const first = await harness.api<{ id: string; name: string; version: number }>("POST", `/ns/${a.name}/definitions`, {
      key: keyA,
      body: definition("orders", [simple("charge")], [], { description: "first" }),
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ name: "orders", version: 1 });
    expect(first.headers.get("location")).toBe(`/api/v1/ns/${a.name}/definitions/orders?version=1`);
    const second = await harness.api("POST", `/ns/${a.name}/definitions`, { key: keyA, body: definition("orders", [simple("charge"), simple("ship")], [{ source: "charge", target: "ship" }]) });
    expect(second.body).toMatchObject({ version: 2 });

    const list = await harness.api<{ items: { name: string; latestVersion: number; versionCount: number }[] }>("GET", `/ns/${a.name}/definitions?search=ord`, { key: keyA });
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([expect.objectContaining({ name: "orders", latestVersion: 2, versionCount: 2 })]);

    const latest = await harness.api<{ version: number; definition: { nodes: unknown[] } }>("GET", `/ns/${a.name}/definitions/orders`, { key: keyA });
    expect(latest.body.version).toBe(2);
    expect(latest.body.definition.nodes).toHaveLength(2);
    const v1 = await harness.api<{ version: number; description: string }>("GET", `/ns/${a.name}/definitions/orders?version=1`, { key: keyA });
    expect(v1.body).toMatchObject({ version: 1, description: "first" });
    expect((await harness.api("GET", `/ns/${a.name}/definitions/orders?version=9`, { key: keyA })).status).toBe(404);

    const valid = await harness.api("POST", `/ns/${a.name}/definitions/validate`, { key: keyA, body: definition("not_saved", [simple("x")]) });
    expect(valid.body).toEqual({ valid: true, problems: [], warnings: [] });
    // node-flow's extra checks warn, never refuse: a node after a TERMINATE is saved, and the warning names it.
    const afterTerminate = definition("warned", [simple("x"), { ref: "stop", type: "TERMINATE", terminationStatus: "COMPLETED", position }, simple("late")], [
      { source: "x", target: "stop" },
      { source: "stop", target: "late" },
    ]);
    const warned = await harness.api<{ valid: boolean; warnings: { pointer: string; code: string; ref: string }[] }>("POST", `/ns/${a.name}/definitions/validate`, { key: keyA, body: afterTerminate });
    expect(warned.body).toMatchObject({ valid: true, problems: [], warnings: [{ pointer: "/body/nodes/2", code: "never-runs", ref: "late" }] });
    const saved = await harness.api<{ version: number; warnings: { code: string }[] }>("POST", `/ns/${a.name}/definitions`, { key: keyA, body: afterTerminate });
    expect(saved.status).toBe(201);
    expect(saved.body.warnings.map((w) => w.code)).toEqual(["never-runs"]);
    const invalid = await harness.api<{ valid: boolean; problems: { pointer: string; code: string }[] }>("POST", `/ns/${a.name}/definitions/validate`, {
      key: keyA,
      body: definition("not_saved", [simple("x"), simple("x")]),
    });
    expect(invalid.body.valid).toBe(false);
    expect(invalid.body.problems.map((p) => p.code)).toContain("duplicate-ref");
    expect((await harness.api("GET", `/ns/${a.name}/definitions/not_saved`, { key: keyA })).status).toBe(404);
  });

  it("refuses an invalid definition with every problem, each naming its field and node", async () => {
    const refused = await harness.api<Problem>("POST", `/ns/${a.name}/definitions`, {
      key: keyA,
      body: definition("broken", [{ ref: "a", type: "SIMPLE", name: 42, position }, { ...simple("b"), colour: "red" }]),
    });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.body.type).toMatch(/validation$/);
    expect(refused.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pointer: "/body/nodes/0/name", ref: "a" }),
        expect.objectContaining({ pointer: "/body/nodes/1/colour", ref: "b", code: "unknown-field" }),
      ]),
    );
  });

  it("answers malformed JSON with a 400 problem that says so", async () => {
    const response = await harness.api<Problem>("POST", `/ns/${a.name}/definitions`, { key: keyA, body: '{"name": "x", nodes: ' });
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/not valid JSON/);
  });
});

describe("task definitions", () => {
  it("upserts, reads and lists them, keyset-paged by name", async () => {
    for (const name of ["td_c", "td_a", "td_b"]) {
      const put = await harness.api("PUT", `/ns/${a.name}/task-definitions/${name}`, { key: keyA, body: { retryCount: 2, concurrentExecLimit: 3 } });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ name, retryCount: 2, concurrentExecLimit: 3, retryLogic: "FIXED" });
    }
    const replaced = await harness.api("PUT", `/ns/${a.name}/task-definitions/td_a`, { key: keyA, body: { description: "now" } });
    // A PUT replaces: the limit left out is back to none.
    expect(replaced.body).toMatchObject({ description: "now", retryCount: 3, concurrentExecLimit: null, updatedBy: expect.stringMatching(/^apiKey:/) as unknown });
    expect((await harness.api("GET", `/ns/${a.name}/task-definitions/td_a`, { key: keyA })).body).toMatchObject({ description: "now" });
    expect((await harness.api("GET", `/ns/${a.name}/task-definitions/td_zzz`, { key: keyA })).status).toBe(404);

    const page1 = await harness.api<{ items: { name: string }[]; nextCursor: string | null }>("GET", `/ns/${a.name}/task-definitions?limit=2`, { key: keyA });
    expect(page1.body.items.map((i) => i.name)).toEqual(["td_a", "td_b"]);
    const page2 = await harness.api<{ items: { name: string }[]; nextCursor: string | null }>("GET", `/ns/${a.name}/task-definitions?limit=2&cursor=${page1.body.nextCursor}`, { key: keyA });
    expect(page2.body).toEqual({ items: [expect.objectContaining({ name: "td_c" })], nextCursor: null });
  });

  it("names each invalid field of a task definition", async () => {
    const refused = await harness.api<Problem>("PUT", `/ns/${a.name}/task-definitions/td_bad`, { key: keyA, body: { retryCount: -1, retryLogic: "SOMETIMES", colour: 1 } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.map((e) => e.pointer).sort()).toEqual(["/body/colour", "/body/retryCount", "/body/retryLogic"]);
    const badName = await harness.api<Problem>("PUT", `/ns/${a.name}/task-definitions/${encodeURIComponent("a:b")}`, { key: keyA, body: {} });
    expect(badName.body.errors?.map((e) => e.pointer)).toEqual(["/params/name"]);
  });
});

describe("runs", () => {
  beforeAll(async () => {
    await register(a, keyA, definition("fanout", [simple("one"), simple("two"), simple("three")]));
    await register(
      a,
      keyA,
      definition("typed", [simple("only")], [], { inputSchema: { type: "object", properties: { qty: { type: "integer" } }, required: ["qty"] } }),
    );
  });

  it("starts a run (201, Location) and reads it with its tasks, keyset-paged without overlap", async () => {
    const started = await start(a, keyA, { name: "fanout", input: { n: 1 }, correlationId: "order-1" });
    expect(started.status).toBe(201);
    expect(started.body.created).toBe(true);
    expect(started.headers.get("location")).toBe(`/api/v1/ns/${a.name}/runs/${started.body.id}`);
    await decide();
    type RunPage = { id: string; status: string; input: unknown; workflowName: string; correlationId: string; tasks: { items: { id: string; refName: string }[]; nextCursor: string | null } };
    const page1 = await harness.api<RunPage>("GET", `/ns/${a.name}/runs/${started.body.id}?taskLimit=2`, { key: keyA });
    expect(page1.status).toBe(200);
    expect(page1.body).toMatchObject({ id: started.body.id, status: "RUNNING", input: { n: 1 }, workflowName: "fanout", correlationId: "order-1" });
    expect(page1.body.tasks.items).toHaveLength(2);
    const page2 = await harness.api<RunPage>("GET", `/ns/${a.name}/runs/${started.body.id}?taskLimit=2&taskCursor=${page1.body.tasks.nextCursor}`, { key: keyA });
    expect(page2.body.tasks.items).toHaveLength(1);
    expect(page2.body.tasks.nextCursor).toBeNull();
    const refs = [...page1.body.tasks.items, ...page2.body.tasks.items].map((task) => task.refName).sort();
    expect(refs).toEqual(["one", "three", "two"]);

    expect((await harness.api<Problem>("GET", `/ns/${a.name}/runs/${started.body.id}?taskCursor=garbage`, { key: keyA })).body.errors?.[0]?.pointer).toBe("/query/taskCursor");
    expect((await harness.api("GET", `/ns/${a.name}/runs/0191d6a4-0000-7000-8000-000000000009`, { key: keyA })).status).toBe(404);
    expect((await harness.api<Problem>("GET", `/ns/${a.name}/runs/not-a-uuid`, { key: keyA })).body.errors?.[0]?.pointer).toBe("/params/runId");
  });

  it("makes a start with an Idempotency-Key happen once", async () => {
    const headers = { "idempotency-key": "checkout-77" };
    const first = await start(a, keyA, { name: "fanout" }, headers);
    const second = await start(a, keyA, { name: "fanout" }, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ id: first.body.id, created: false });
    const refused = await start(a, keyA, { name: "fanout" }, { ...headers, "idempotency-strategy": "FAIL" });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain(first.body.id);
    const rows = await t.db.selectFrom("WorkflowExecutions").select("id").where("idempotencyKey", "=", "checkout-77").execute();
    expect(rows).toHaveLength(1);
    // The same key in another namespace is another key.
    await register(b, keyB, definition("fanout", [simple("one")]));
    expect((await start(b, keyB, { name: "fanout" }, headers)).status).toBe(201);

    const strategyAlone = await start(a, keyA, { name: "fanout" }, { "idempotency-strategy": "FAIL" });
    expect(strategyAlone.body.errors?.map((e) => e.pointer)).toEqual(["/headers/idempotency-strategy"]);
  });

  it("refuses a start of an unknown definition (404) and an input that fails the definition's inputSchema (400, naming the field)", async () => {
    expect((await start(a, keyA, { name: "nope" })).status).toBe(404);
    const bad = await start(a, keyA, { name: "typed", input: { qty: "many" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors?.map((e) => e.pointer)).toEqual(["/body/input/qty"]);
    const shape = await start(a, keyA, { name: "typed", priority: 100, extra: true });
    expect(shape.body.errors?.map((e) => e.pointer).sort()).toEqual(["/body/extra", "/body/priority"]);
  });

  it("stores a large input in the blob store and resolves it when the run is read", async () => {
    const big = "y".repeat(300 * 1024);
    const started = await start(a, keyA, { name: "fanout", input: { big } });
    expect(started.status).toBe(201);
    const row = await t.db.selectFrom("WorkflowExecutions").select(["input", "inputRef"]).where("id", "=", started.body.id).executeTakeFirstOrThrow();
    expect(row.inputRef).not.toBeNull();
    const read = await harness.api<{ input: { big: string } }>("GET", `/ns/${a.name}/runs/${started.body.id}`, { key: keyA });
    expect(read.body.input.big).toBe(big);
  });

  it("searches runs by workflow, status, correlation id and start time, newest first, keyset-paged", async () => {
    await register(a, keyA, definition("searched", [simple("s")]));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await start(a, keyA, { name: "searched", correlationId: i % 2 === 0 ? "even" : "odd" })).body.id);
    type Page = { items: { id: string; status: string; workflowName: string }[]; nextCursor: string | null };
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: Page } = await harness.api<Page>("GET", `/ns/${a.name}/runs?workflow=searched&limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key: keyA });
      seen.push(...page.body.items.map((i) => i.id));
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual([...ids].reverse());

    const even = await harness.api<Page>("GET", `/ns/${a.name}/runs?workflow=searched&correlationId=even`, { key: keyA });
    expect(even.body.items.map((i) => i.id)).toEqual([ids[4], ids[2], ids[0]]);
    await harness.api("POST", `/ns/${a.name}/runs/${ids[1]}/terminate`, { key: keyA });
    const terminated = await harness.api<Page>("GET", `/ns/${a.name}/runs?workflow=searched&status=TERMINATED`, { key: keyA });
    expect(terminated.body.items.map((i) => i.id)).toEqual([ids[1]]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await harness.api<Page>("GET", `/ns/${a.name}/runs?workflow=searched&startedFrom=${future}`, { key: keyA })).body.items).toEqual([]);
    expect((await harness.api<Page>("GET", `/ns/${a.name}/runs?workflow=searched&startedBefore=${future}`, { key: keyA })).body.items).toHaveLength(5);
    const badStatus = await harness.api<Problem>("GET", `/ns/${a.name}/runs?status=SLEEPING&startedFrom=yesterday`, { key: keyA });
    expect(badStatus.body.errors?.map((e) => e.pointer).sort()).toEqual(["/query/startedFrom", "/query/status"]);
  });
});

describe("operator actions and signals", () => {
  beforeAll(async () => {
    await register(a, keyA, definition("waiting", [{ ref: "approval", type: "WAIT", position, signal: true }], [], { outputParameters: { ok: "${approval.output.ok}" } }));
    await register(a, keyA, definition("single", [simple("only")]));
  });

  it("pauses, resumes and terminates a run; a wrong state is 409, an unknown run 404", async () => {
    const { id } = (await start(a, keyA, { name: "single" })).body;
    const paused = await harness.api("POST", `/ns/${a.name}/runs/${id}/pause`, { key: keyA, body: { reason: "maintenance" } });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ id, status: "PAUSED" });
    expect((await harness.api("POST", `/ns/${a.name}/runs/${id}/pause`, { key: keyA })).status).toBe(409);
    expect((await harness.api("POST", `/ns/${a.name}/runs/${id}/resume`, { key: keyA })).body).toEqual({ id, status: "RUNNING" });
    expect((await harness.api("POST", `/ns/${a.name}/runs/${id}/terminate`, { key: keyA })).body).toEqual({ id, status: "TERMINATED" });
    const restarted = await harness.api("POST", `/ns/${a.name}/runs/${id}/restart`, { key: keyA });
    expect(restarted.body).toMatchObject({ id, status: "RUNNING", workflowVersion: 1 });
    expect((await harness.api("POST", `/ns/${a.name}/runs/0191d6a4-0000-7000-8000-000000000009/pause`, { key: keyA })).status).toBe(404);
    const audit = await t.db.selectFrom("AuditEvents").select(["action", "actorType"]).where("resourceId", "=", id).orderBy("id").execute();
    expect(audit.map((e) => e.action)).toEqual(["workflow.pause", "workflow.resume", "workflow.terminate", "workflow.restart"]);
    expect(new Set(audit.map((e) => e.actorType))).toEqual(new Set(["apiKey"]));
  });

  it("completes a WAIT task by signal, and the decider finishes the run with its output", async () => {
    const { id } = (await start(a, keyA, { name: "waiting" })).body;
    await decide();
    const signalled = await harness.api("POST", `/ns/${a.name}/runs/${id}/tasks/approval/complete`, { key: keyA, body: { output: { ok: true } } });
    expect(signalled.status, JSON.stringify(signalled.body)).toBe(200);
    expect(signalled.body).toMatchObject({ id, ref: "approval", status: "COMPLETED" });
    await decide();
    const run = await harness.api<{ status: string; output: unknown }>("GET", `/ns/${a.name}/runs/${id}`, { key: keyA });
    expect(run.body).toMatchObject({ status: "COMPLETED", output: { ok: true } });
    expect((await harness.api("POST", `/ns/${a.name}/runs/${id}/tasks/approval/complete`, { key: keyA })).status).toBe(409);
  });

  it("refuses to signal a worker's task (409) and a ref the run does not have (404)", async () => {
    const { id } = (await start(a, keyA, { name: "single" })).body;
    await decide();
    expect((await harness.api("POST", `/ns/${a.name}/runs/${id}/tasks/only/complete`, { key: keyA })).status).toBe(409);
    expect((await harness.api("POST", `/ns/${a.name}/runs/${id}/tasks/ghost/complete`, { key: keyA })).status).toBe(404);
    const skipped = await harness.api("POST", `/ns/${a.name}/runs/${id}/skip`, { key: keyA, body: { taskRef: "only", output: { skipped: true } } });
    expect(skipped.body).toMatchObject({ ref: "only", status: "COMPLETED" });
    const neither = await harness.api<Problem>("POST", `/ns/${a.name}/runs/${id}/skip`, { key: keyA, body: {} });
    expect(neither.body.errors?.map((e) => e.pointer)).toEqual(["/body/taskRef"]);
  });
});

describe("permissions and isolation", () => {
  it("a worker key can do the worker protocol only: definitions, runs and actions are 403", async () => {
    expect((await harness.api("POST", `/ns/${a.name}/definitions`, { key: workerKeyA, body: definition("w", [simple("x")]) })).status).toBe(403);
    expect((await harness.api("GET", `/ns/${a.name}/definitions`, { key: workerKeyA })).status).toBe(403);
    expect((await start(a, workerKeyA, { name: "single" })).status).toBe(403);
    expect((await harness.api("POST", `/ns/${a.name}/tasks/poll`, { key: workerKeyA, body: { queue: "work", workerId: "w" } })).status).toBe(200);
  });

  it("a key of namespace A reads and changes nothing of namespace B: 404 on B's definitions, runs and tasks", async () => {
    await register(b, keyB, definition("secret", [simple("s", "b-queue")]));
    const runB = (await start(b, keyB, { name: "secret" })).body.id;
    await decide();
    const taskB = await t.db.selectFrom("TaskExecutions").select(["id"]).where("workflowId", "=", runB).executeTakeFirstOrThrow();

    // B's path, A's key: B does not exist for A.
    for (const [method, path, body] of [
      ["GET", `/ns/${b.name}/definitions`],
      ["GET", `/ns/${b.name}/definitions/secret`],
      ["POST", `/ns/${b.name}/definitions`, definition("planted", [simple("x")])],
      ["GET", `/ns/${b.name}/runs/${runB}`],
      ["GET", `/ns/${b.name}/runs`],
      ["POST", `/ns/${b.name}/runs`, { name: "secret" }],
      ["POST", `/ns/${b.name}/runs/${runB}/terminate`],
      ["POST", `/ns/${b.name}/tasks/poll`, { queue: "b-queue", workerId: "spy" }],
    ] as [string, string, unknown?][]) {
      const answer = await harness.api<Problem>(method, path, { key: keyA, body });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.detail).toBe(`Namespace "${b.name}" not found.`);
    }
    // A's path, B's ids: the repositories filter by namespace too.
    expect((await harness.api("GET", `/ns/${a.name}/definitions/secret`, { key: keyA })).status).toBe(404);
    expect((await harness.api("GET", `/ns/${a.name}/runs/${runB}`, { key: keyA })).status).toBe(404);
    expect((await harness.api("POST", `/ns/${a.name}/runs/${runB}/terminate`, { key: keyA })).status).toBe(404);
    expect((await harness.api("POST", `/ns/${a.name}/tasks/${taskB.id}/heartbeat`, { key: keyA, body: { workflowId: runB, workerId: "spy" } })).status).toBe(404);
    expect((await harness.api("POST", `/ns/${a.name}/tasks/${taskB.id}/complete`, { key: keyA, body: { workflowId: runB, workerId: "spy" } })).status).toBe(404);
    expect((await harness.api<{ items: unknown[] }>("GET", `/ns/${a.name}/runs?workflow=secret`, { key: keyA })).body.items).toEqual([]);

    // Nothing of B changed.
    const run = await t.db.selectFrom("WorkflowExecutions").select("status").where("id", "=", runB).executeTakeFirstOrThrow();
    expect(run.status).toBe("RUNNING");
    const planted = await t.db.selectFrom("WorkflowDefinitions").select("id").where("namespaceId", "=", b.id).where("name", "=", "planted").execute();
    expect(planted).toEqual([]);
  });
});

describe("the session cookie", () => {
  it("authenticates a signed-in user, and a state change must come from the same origin", async () => {
    const owner = await insertUser(t.db, { email: `owner-${Date.now()}@example.com`, passwordHash: null, isOwner: true });
    const { token } = await createSession(t.db, { userId: owner.id });
    const cookie = `nf_session=${token}`;
    const body = { name: "single" };
    expect((await harness.api("GET", `/ns/${a.name}/definitions`, { headers: { cookie } })).status).toBe(200);
    const forged = await harness.api<Problem>("POST", `/ns/${a.name}/runs`, { headers: { cookie, origin: "https://evil.example" }, body });
    expect(forged.status).toBe(403);
    const bare = await harness.api("POST", `/ns/${a.name}/runs`, { headers: { cookie }, body });
    expect(bare.status).toBe(403);
    const host = new URL(harness.server.baseUrl).host;
    const same = await harness.api<{ id: string }>("POST", `/ns/${a.name}/runs`, { headers: { cookie, origin: `http://${host}` }, body });
    expect(same.status).toBe(201);
    const row = await t.db.selectFrom("WorkflowExecutions").select("createdBy").where("id", "=", same.body.id).executeTakeFirstOrThrow();
    expect(row.createdBy).toBe(`user:${owner.id}`);
  });
});
