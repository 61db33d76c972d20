import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { FilesystemBlobStore } from "../lib/blob-store";
import { resolvePayload } from "../lib/payload-offload";
import { registerWorkflowDefinition } from "../definitions/register-workflow-definition";
import { startExecution } from "./start-execution";
import type { StartExecutionInput } from "./start-execution";

const t = useTestDatabase();
let root: string;
let blobs: FilesystemBlobStore;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "nf-start-"));
  blobs = new FilesystemBlobStore({ root });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const deps = () => ({ db: t.db, blobs });

/** A fresh namespace with workflow "wf" registered (version 1). */
async function setup(extra: Record<string, unknown> = {}): Promise<string> {
  const name = `ns-${randomBytes(4).toString("hex")}`;
  const { id } = await t.db.insertInto("Namespaces").values({ name }).returning("id").executeTakeFirstOrThrow();
  await register(id, { variables: { counter: 0 }, ...extra });
  return id;
}

/** Registers the next version of workflow "wf" (one SIMPLE task) in `namespaceId`; returns the version. */
async function register(namespaceId: string, extra: Record<string, unknown>): Promise<number> {
  const registered = await registerWorkflowDefinition(t.db, {
    namespaceId,
    definition: { schemaVersion: 1, name: "wf", nodes: [{ ref: "a", type: "SIMPLE", name: "task_a", position: { x: 0, y: 0 } }], edges: [], ...extra },
  });
  if (!registered.ok) throw new Error(`registration failed: ${JSON.stringify(registered)}`);
  return registered.version;
}

async function count(table: "WorkflowExecutions" | "TaskExecutions" | "DecideQueues" | "WorkflowEvents", namespaceId: string): Promise<number> {
  const row = await t.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("namespaceId", "=", namespaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function start(namespaceId: string, extra: Partial<StartExecutionInput> = {}) {
  return startExecution(deps(), { namespaceId, name: "wf", input: { orderId: 7 }, ...extra });
}

describe("startExecution", () => {
  it("writes a RUNNING execution, one WORKFLOW_STARTED event (seq 1) and a decide, and evaluates nothing", async () => {
    const ns = await setup();
    const result = await start(ns, { correlationId: "c-1", priority: 5, createdBy: "ann" });
    if (!result.ok) throw new Error(JSON.stringify(result));
    expect(result.created).toBe(true);

    const row = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", result.workflowId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      namespaceId: ns,
      status: "RUNNING",
      defName: "wf",
      defVersion: 1,
      correlationId: "c-1",
      priority: 5,
      input: { orderId: 7 },
      inputRef: null,
      variables: { counter: 0 },
      createdBy: "ann",
    });
    const queued = await t.db.selectFrom("DecideQueues").selectAll().where("workflowId", "=", result.workflowId).execute();
    expect(queued).toMatchObject([{ namespaceId: ns, reason: "start" }]);
    const events = await t.db.selectFrom("WorkflowEvents").selectAll().where("workflowId", "=", result.workflowId).execute();
    expect(events).toMatchObject([{ seq: 1, type: "WORKFLOW_STARTED", status: "RUNNING", data: { defName: "wf", defVersion: 1 } }]);
    // Invariant 1: nothing evaluated, so no task exists yet.
    expect(await count("TaskExecutions", ns)).toBe(0);
  });

  it("reports an unknown name or version as not found and writes nothing", async () => {
    const ns = await setup();
    expect(await start(ns, { name: "nope" })).toMatchObject({ ok: false, reason: "not-found" });
    expect(await start(ns, { version: 9 })).toMatchObject({ ok: false, reason: "not-found" });
    expect(await count("WorkflowExecutions", ns)).toBe(0);
  });

  it("validates the input against the definition's inputSchema", async () => {
    const ns = await setup({
      inputSchema: { type: "object", required: ["orderId"], properties: { orderId: { type: "number" } } },
    });
    const bad = await start(ns, { input: { orderId: "seven" } });
    expect(bad).toMatchObject({ ok: false, reason: "invalid-input", problems: [{ path: ["orderId"] }] });
    expect(await start(ns, { input: {} })).toMatchObject({ ok: false, reason: "invalid-input" });
    expect(await start(ns, { priority: 100 })).toMatchObject({ ok: false, reason: "invalid-input", problems: [{ path: ["priority"] }] });
    expect(await count("WorkflowExecutions", ns)).toBe(0);
    expect(await start(ns)).toMatchObject({ ok: true, created: true });
  });

  it("checks each version against its own inputSchema, a definition saved again under a deleted one's name and version included", async () => {
    const ns = await setup({ inputSchema: { type: "object", required: ["orderId"], properties: { orderId: { type: "number" } } } });
    expect(await start(ns, { input: { orderId: 7 } })).toMatchObject({ ok: true });
    // Gone, runs and all, then saved again: version 1 once more, with another schema.
    await t.db.deleteFrom("WorkflowExecutions").where("namespaceId", "=", ns).execute();
    await t.db.deleteFrom("WorkflowDefinitions").where("namespaceId", "=", ns).execute();
    expect(await register(ns, { inputSchema: { type: "object", required: ["sku"], properties: { sku: { type: "string" } } } })).toBe(1);
    expect(await start(ns, { input: { orderId: 7 } })).toMatchObject({ ok: false, reason: "invalid-input", problems: [{ path: ["sku"] }] });
    expect(await start(ns, { input: { sku: "x" } })).toMatchObject({ ok: true });
  });

  it("RETURN_EXISTING: the same key twice returns the same execution, stored once", async () => {
    const ns = await setup();
    const first = await start(ns, { idempotencyKey: "k", idempotencyStrategy: "RETURN_EXISTING" });
    const second = await start(ns, { idempotencyKey: "k", idempotencyStrategy: "RETURN_EXISTING" });
    expect(first).toMatchObject({ ok: true, created: true });
    expect(second).toMatchObject({ ok: true, created: false, workflowId: first.ok ? first.workflowId : "" });
    expect(await count("WorkflowExecutions", ns)).toBe(1);
    expect(await count("WorkflowEvents", ns)).toBe(1);
  });

  it("FAIL: a second start with the key is a conflict", async () => {
    const ns = await setup();
    const first = await start(ns, { idempotencyKey: "k", idempotencyStrategy: "FAIL" });
    if (!first.ok) throw new Error(JSON.stringify(first));
    expect(await start(ns, { idempotencyKey: "k", idempotencyStrategy: "FAIL" })).toMatchObject({
      ok: false,
      reason: "conflict",
      existingWorkflowId: first.workflowId,
    });
    expect(await count("WorkflowExecutions", ns)).toBe(1);
  });

  it("FAIL_ON_RUNNING: a conflict while the holder runs or is paused, a new run once it has completed", async () => {
    const ns = await setup();
    const first = await start(ns, { idempotencyKey: "k", idempotencyStrategy: "FAIL_ON_RUNNING" });
    if (!first.ok) throw new Error(JSON.stringify(first));
    expect(await start(ns, { idempotencyKey: "k", idempotencyStrategy: "FAIL_ON_RUNNING" })).toMatchObject({ ok: false, reason: "conflict" });
    await t.db.updateTable("WorkflowExecutions").set({ status: "PAUSED" }).where("id", "=", first.workflowId).execute();
    expect(await start(ns, { idempotencyKey: "k", idempotencyStrategy: "FAIL_ON_RUNNING" })).toMatchObject({ ok: false, reason: "conflict" });

    await t.db.updateTable("WorkflowExecutions").set({ status: "COMPLETED" }).where("id", "=", first.workflowId).execute();
    const second = await start(ns, { idempotencyKey: "k", idempotencyStrategy: "FAIL_ON_RUNNING" });
    if (!second.ok) throw new Error(JSON.stringify(second));
    expect(second.created).toBe(true);
    expect(second.workflowId).not.toBe(first.workflowId);
    const key = await t.db.selectFrom("IdempotencyKeys").selectAll().where("namespaceId", "=", ns).executeTakeFirstOrThrow();
    expect(key.workflowId).toBe(second.workflowId);
    // The new holder is running again: the key is refused again.
    expect(await start(ns, { idempotencyKey: "k", idempotencyStrategy: "FAIL_ON_RUNNING" })).toMatchObject({
      ok: false,
      reason: "conflict",
      existingWorkflowId: second.workflowId,
    });
    expect(await count("WorkflowExecutions", ns)).toBe(2);
  });

  it("8 concurrent starts with one key create exactly one execution", async () => {
    for (const strategy of ["RETURN_EXISTING", "FAIL", "FAIL_ON_RUNNING"] as const) {
      const ns = await setup();
      const results = await Promise.all(Array.from({ length: 8 }, () => start(ns, { idempotencyKey: "same", idempotencyStrategy: strategy })));
      expect(results.filter((r) => r.ok && r.created)).toHaveLength(1);
      expect(await count("WorkflowExecutions", ns)).toBe(1);
      expect(await count("DecideQueues", ns)).toBe(1);
      const ids = new Set(results.map((r) => (r.ok ? r.workflowId : r.reason === "conflict" ? r.existingWorkflowId : r.reason)));
      expect(ids.size).toBe(1);
    }
  });

  it("8 concurrent FAIL_ON_RUNNING starts taking over a completed holder create exactly one new execution", async () => {
    const ns = await setup();
    const first = await start(ns, { idempotencyKey: "k", idempotencyStrategy: "FAIL_ON_RUNNING" });
    if (!first.ok) throw new Error(JSON.stringify(first));
    await t.db.updateTable("WorkflowExecutions").set({ status: "FAILED" }).where("id", "=", first.workflowId).execute();
    const results = await Promise.all(Array.from({ length: 8 }, () => start(ns, { idempotencyKey: "k", idempotencyStrategy: "FAIL_ON_RUNNING" })));
    expect(results.filter((r) => r.ok && r.created)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.reason === "conflict")).toHaveLength(7);
    expect(await count("WorkflowExecutions", ns)).toBe(2);
  });

  it("offloads a 1 MB input to the blob store: inputRef set, the column holds {}, resolvePayload reads it back", async () => {
    const ns = await setup();
    const input = { big: "x".repeat(1024 * 1024), n: 1 };
    const result = await start(ns, { input });
    if (!result.ok) throw new Error(JSON.stringify(result));
    const row = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", result.workflowId).executeTakeFirstOrThrow();
    expect(row.inputRef).toMatch(/^fs:\d{4}\/\d{2}\/[0-9a-f-]{36}$/);
    expect(row.input).toEqual({});
    expect(await resolvePayload(blobs, { inline: row.input, ref: row.inputRef })).toEqual(input);
  });

  it("deletes the offloaded blob when the start returns an existing execution instead", async () => {
    const ns = await setup();
    await start(ns, { idempotencyKey: "k" });
    const big = { big: "y".repeat(300 * 1024) };
    const deleted: string[] = [];
    const spying = { put: blobs.put.bind(blobs), get: blobs.get.bind(blobs), delete: async (ref: string) => { deleted.push(ref); await blobs.delete(ref); } };
    const again = await startExecution({ db: t.db, blobs: spying }, { namespaceId: ns, name: "wf", input: big, idempotencyKey: "k" });
    expect(again).toMatchObject({ ok: true, created: false });
    expect(deleted).toHaveLength(1);
  });

  it("stores an input holding NUL (stripped) and starts", async () => {
    const ns = await setup();
    const result = await start(ns, { input: { s: "a\u0000b", ["k\u0000"]: ["\u0000"] } });
    if (!result.ok) throw new Error(JSON.stringify(result));
    const row = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", result.workflowId).executeTakeFirstOrThrow();
    expect(row.input).toEqual({ s: "ab", k: [""] });
  });
});
