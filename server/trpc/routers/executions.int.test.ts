import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import type { Principal } from "../../auth/principal";
import { FilesystemBlobStore } from "../../lib/blob-store";
import { createQuickJsScriptEvaluator } from "../../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../../sandbox/quickjs-script-evaluator";
import { upsertNamespaceMember } from "../../store/namespace-members";
import { insertNamespace } from "../../store/namespaces";
import { insertWorkflowExecution } from "../../store/workflow-executions";
import { driveWorkflows } from "../../testing/drive-workflows";
import { registerDefinition, startRuns } from "../../testing/runtime-fixtures";
import { trustedContext } from "../context";
import { testConfig, insertTestUser, userPrincipal } from "../testing";
import { createCaller } from "./_app";

/** executions.* on a real Postgres, runs advanced by the real decider (driveWorkflows). */
const database = useTestDatabase();

let scripts: QuickJsScriptEvaluator;
let blobs: FilesystemBlobStore;
let blobRoot: string;
let operator: Principal;
let viewer: Principal;
let outsider: Principal;
let nsId: string;

function as(principal: Principal) {
  return createCaller(trustedContext({ db: database.db, config: testConfig(database.url), principal, blobs }));
}

function code(expected: string, message?: RegExp) {
  return (error: unknown) => error instanceof TRPCError && error.code === expected && (message === undefined || message.test(error.message));
}

const flaky = {
  schemaVersion: 1,
  name: "flaky",
  nodes: [{ ref: "work", type: "SIMPLE", name: "task", position: { x: 0, y: 0 }, input: { n: "${workflow.input.n}" } }],
  edges: [],
};

async function drive(fail: boolean) {
  return driveWorkflows({
    db: database.db,
    evaluator: { db: database.db, scripts, blobs },
    namespaceId: nsId,
    handler: () => (fail ? { status: "FAILED_WITH_TERMINAL_ERROR", reason: "boom" } : { status: "COMPLETED", output: { ok: true } }),
  });
}

beforeAll(async () => {
  const db = database.db;
  scripts = await createQuickJsScriptEvaluator();
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-executions-"));
  blobs = new FilesystemBlobStore({ root: blobRoot });
  nsId = (await insertNamespace(db, { name: "ops" })).id;
  const otherNsId = (await insertNamespace(db, { name: "other" })).id;
  await registerDefinition(db, nsId, flaky);
  const op = await insertTestUser(db, "operator@example.com");
  await upsertNamespaceMember(db, { namespaceId: nsId, userId: op.id, role: "operator" });
  operator = userPrincipal(op);
  const vi = await insertTestUser(db, "viewer@example.com");
  await upsertNamespaceMember(db, { namespaceId: nsId, userId: vi.id, role: "viewer" });
  viewer = userPrincipal(vi);
  const out = await insertTestUser(db, "outsider@example.com");
  await upsertNamespaceMember(db, { namespaceId: otherNsId, userId: out.id, role: "admin" });
  outsider = userPrincipal(out);
});

afterAll(async () => {
  await scripts.close();
  await rm(blobRoot, { recursive: true, force: true });
});

describe("executions.list", () => {
  it("pages a burst inside one millisecond exactly once, newest first, and refuses a forged cursor by name", async () => {
    const millis = new Date(Date.now() - 86_400_000).toISOString().slice(0, 23);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await insertWorkflowExecution(database.db, { namespaceId: nsId, defName: "burst", defVersion: 1, startedAt: `${millis}${String(i + 1).padStart(3, "0")}Z` })).id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await as(viewer).executions.list({ namespace: "ops", workflow: "burst", limit: 3, cursor });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual([...ids].reverse());
    await expect(as(viewer).executions.list({ namespace: "ops", cursor: "bm90LWEtY3Vyc29y" })).rejects.toSatisfy(code("BAD_REQUEST", /^cursor: /));
  });

  it("filters by status, workflow, version, correlation id and time, and searches input/output by containment", async () => {
    const [a, b, c] = await startRuns(
      { db: database.db, blobs },
      { namespaceId: nsId, name: "flaky", count: 3, input: (i) => ({ n: i, customer: { id: i === 0 ? 42 : i === 1 ? "42" : 7, name: "Ada Lovelace" } }) },
    );
    await drive(false);
    const list = (filters: Record<string, unknown>) => as(viewer).executions.list({ namespace: "ops", workflow: "flaky", ...filters }).then((p) => p.items.map((r) => r.id));
    // A number matches its string form too: ids arrive as either.
    expect((await list({ search: "input.customer.id:42" })).sort()).toEqual([a, b].sort());
    expect(await list({ search: 'input.customer.id:7 input.customer.name:"Ada Lovelace" output.ok:true' })).toEqual([c]);
    expect(await list({ search: "output.ok:false" })).toEqual([]);
    expect((await list({ statuses: ["COMPLETED"], version: 1 })).sort()).toEqual([a, b, c].sort());
    expect(await list({ statuses: ["RUNNING", "FAILED"] })).toEqual([]);
    expect(await list({ version: 2 })).toEqual([]);
    expect(await list({ startedBefore: new Date(Date.now() - 3_600_000).toISOString() })).toEqual([]);
    expect((await list({ startedAfter: new Date(Date.now() - 3_600_000).toISOString() })).length).toBe(3);
    const row = (await as(viewer).executions.list({ namespace: "ops", workflow: "flaky", limit: 1 })).items[0];
    expect(row).toMatchObject({ workflow: "flaky", version: 1, status: "COMPLETED", parentWorkflowId: null });
    expect(typeof row?.startedAt).toBe("string");
    expect(row?.durationMs).toBeGreaterThanOrEqual(0);
    for (const term of ["customer.id:42", "input.:1", "input.x:", "input.x:{}", 'input.x:"open']) {
      await expect(list({ search: term })).rejects.toSatisfy(code("BAD_REQUEST", new RegExp(`^search: .*${term.slice(0, 8).replace(/[.{}]/g, "\\$&")}`)));
    }
    await expect(as(outsider).executions.list({ namespace: "ops" })).rejects.toSatisfy(code("NOT_FOUND"));
  });
});

describe("executions.get, task, payload, history", () => {
  it("returns the run with its graph, every attempt, lastSeq and history; big payloads are flagged and load through payload", async () => {
    const big = "x".repeat(70 * 1024);
    const [id] = await startRuns({ db: database.db, blobs }, { namespaceId: nsId, name: "flaky", count: 1, input: () => ({ n: 1, big }) });
    await drive(false);
    const page = await as(viewer).executions.get({ namespace: "ops", id: id! });
    expect(page.execution).toMatchObject({ id, status: "COMPLETED", input: null, inputTruncated: true, outputTruncated: false });
    expect(page.definition).toMatchObject({ name: "flaky" });
    expect(page.tasks.map((t) => [t.ref, t.status, t.attempt])).toEqual([["work", "COMPLETED", 0]]);
    expect(page.parent).toBeNull();
    expect(page.children).toEqual([]);
    const history = await as(viewer).executions.history({ namespace: "ops", id: id! });
    expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
    expect(history.at(-1)).toMatchObject({ seq: page.lastSeq, type: "WORKFLOW_COMPLETED" });
    expect(await as(viewer).executions.history({ namespace: "ops", id: id!, afterSeq: page.lastSeq - 1 })).toHaveLength(1);
    expect((await as(viewer).executions.payload({ namespace: "ops", id: id!, kind: "input" })).value).toEqual({ n: 1, big });
    const taskId = page.tasks[0]!.id;
    const task = await as(viewer).executions.task({ namespace: "ops", id: id!, taskId });
    expect(task.task).toMatchObject({ ref: "work", output: { ok: true }, outputTruncated: false, inputTruncated: false });
    expect(task.attempts).toHaveLength(1);
    expect(task.humanTaskId).toBeNull();
    expect(await as(viewer).executions.logs({ namespace: "ops", id: id!, taskId })).toEqual({ lines: [], next: 0 });

    await expect(as(outsider).executions.get({ namespace: "other", id: id! })).rejects.toSatisfy(code("NOT_FOUND"));
    await expect(as(viewer).executions.get({ namespace: "ops", id: "00000000-0000-0000-0000-000000000000" })).rejects.toSatisfy(code("NOT_FOUND"));
  });
});

describe("executions actions", () => {
  it("retries a failed run to completion, refuses wrong states with CONFLICT, and needs operate", async () => {
    const [id] = await startRuns({ db: database.db, blobs }, { namespaceId: nsId, name: "flaky", count: 1 });
    await drive(true);
    expect((await as(viewer).executions.get({ namespace: "ops", id: id! })).execution.status).toBe("FAILED");
    await expect(as(viewer).executions.retry({ namespace: "ops", id: id! })).rejects.toSatisfy(code("FORBIDDEN"));
    await expect(as(operator).executions.pause({ namespace: "ops", id: id! })).rejects.toSatisfy(code("CONFLICT", /not-running/));
    await expect(as(operator).executions.rerun({ namespace: "ops", id: id!, fromRef: "nope" })).rejects.toSatisfy(code("BAD_REQUEST", /nope/));
    expect(await as(operator).executions.retry({ namespace: "ops", id: id! })).toEqual({ ok: true });
    await drive(false);
    const page = await as(viewer).executions.get({ namespace: "ops", id: id! });
    expect(page.execution.status).toBe("COMPLETED");
    expect(page.tasks.map((t) => [t.attempt, t.status])).toEqual([
      [0, "FAILED_WITH_TERMINAL_ERROR"],
      [1, "COMPLETED"],
    ]);
    const history = await as(viewer).executions.history({ namespace: "ops", id: id! });
    expect(history.map((e) => e.type)).toContain("WORKFLOW_RETRIED");
  });

  it("bulk-restarts and terminates, one result per run", async () => {
    const ids = await startRuns({ db: database.db, blobs }, { namespaceId: nsId, name: "flaky", count: 2 });
    await drive(false);
    const restarted = await as(operator).executions.bulk({ namespace: "ops", action: "restart", ids: [...ids, "00000000-0000-0000-0000-000000000000"] });
    expect(restarted.results.map((r) => r.ok)).toEqual([true, true, false]);
    expect(restarted.results[2]?.error).toMatch(/not-found/);
    const terminated = await as(operator).executions.bulk({ namespace: "ops", action: "terminate", ids });
    expect(terminated.results.every((r) => r.ok)).toBe(true);
    const statuses = await as(viewer).executions.list({ namespace: "ops", statuses: ["TERMINATED"], workflow: "flaky" });
    expect(statuses.items.map((r) => r.id).sort()).toEqual([...ids].sort());
  });
});
