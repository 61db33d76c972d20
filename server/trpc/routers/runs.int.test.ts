import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import type { Principal } from "../../auth/principal";
import { registerWorkflowDefinition } from "../../register-workflow-definition";
import { upsertNamespaceMember } from "../../store/namespace-members";
import { insertNamespace } from "../../store/namespaces";
import { insertTasks } from "../../store/task-executions";
import { InputProblemsError } from "../problem-errors";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

/** runs.start and runs.get on a real Postgres: what the editor's Run dialog and the first run page call. */
const database = useTestDatabase();

let operator: Principal;
let viewer: Principal;
let outsider: Principal;
let nsId: string;
let otherNsId: string;

function as(principal: Principal) {
  return callerAs(database.db, database.url, principal);
}

function code(expected: string) {
  return (error: unknown) => error instanceof TRPCError && error.code === expected;
}

const greet = {
  schemaVersion: 1,
  name: "greet",
  nodes: [{ ref: "hello", type: "SIMPLE", name: "hello", position: { x: 0, y: 0 }, input: { who: "${workflow.input.who}" } }],
  edges: [],
  inputSchema: { type: "object", properties: { who: { type: "string" } }, required: ["who"] },
  variables: { attempts: 0 },
};

beforeAll(async () => {
  const db = database.db;
  nsId = (await insertNamespace(db, { name: "ops" })).id;
  otherNsId = (await insertNamespace(db, { name: "other" })).id;
  for (const ns of [nsId, otherNsId]) {
    const saved = await registerWorkflowDefinition(db, { namespaceId: ns, definition: greet });
    if (!saved.ok) throw new Error(JSON.stringify(saved));
  }
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

describe("runs.start", () => {
  it("creates a RUNNING execution of the latest version with a decide queued, and returns its id", async () => {
    const { id } = await as(operator).runs.start({ namespace: "ops", name: "greet", input: { who: "Ada" }, correlationId: "order-7" });
    const row = await database.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ namespaceId: nsId, defName: "greet", defVersion: 1, status: "RUNNING", input: { who: "Ada" }, correlationId: "order-7", variables: { attempts: 0 } });
    expect(row.createdBy).toBe(`user:${(operator as { userId: string }).userId}`);
    const decide = await database.db.selectFrom("DecideQueues").select(["reason"]).where("workflowId", "=", id).executeTakeFirst();
    expect(decide?.reason).toBe("start");
  });

  it("refuses an input the inputSchema rejects, with each problem's path, and starts nothing", async () => {
    const before = await database.db.selectFrom("WorkflowExecutions").select("id").where("namespaceId", "=", nsId).execute();
    const error = await as(operator).runs.start({ namespace: "ops", name: "greet", input: { who: 42 } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toSatisfy(code("BAD_REQUEST"));
    const cause = (error as TRPCError).cause;
    expect(cause).toBeInstanceOf(InputProblemsError);
    expect((cause as InputProblemsError).problems.map((p) => p.path)).toEqual([["who"]]);
    expect(await database.db.selectFrom("WorkflowExecutions").select("id").where("namespaceId", "=", nsId).execute()).toHaveLength(before.length);
  });

  it("answers NOT_FOUND for an unknown workflow or version", async () => {
    await expect(as(operator).runs.start({ namespace: "ops", name: "nope", input: {} })).rejects.toSatisfy(code("NOT_FOUND"));
    await expect(as(operator).runs.start({ namespace: "ops", name: "greet", version: 5, input: { who: "x" } })).rejects.toSatisfy(code("NOT_FOUND"));
  });

  it("a viewer cannot start a run (FORBIDDEN)", async () => {
    await expect(as(viewer).runs.start({ namespace: "ops", name: "greet", input: { who: "x" } })).rejects.toSatisfy(code("FORBIDDEN"));
  });
});

describe("runs.get", () => {
  let runId: string;

  beforeAll(async () => {
    runId = (await as(operator).runs.start({ namespace: "ops", name: "greet", input: { who: "Grace" } })).id;
    await insertTasks(database.db, [
      { workflowId: runId, namespaceId: nsId, refName: "hello", iteration: 0, attempt: 0, taskType: "SIMPLE", taskDefName: "hello", queueName: "hello", status: "FAILED", startedAt: new Date("2026-01-01T00:00:01Z"), endedAt: new Date("2026-01-01T00:00:02Z"), workerId: "w-1", reasonForIncompletion: "boom" },
      { workflowId: runId, namespaceId: nsId, refName: "hello", iteration: 0, attempt: 1, taskType: "SIMPLE", taskDefName: "hello", queueName: "hello", status: "SCHEDULED" },
    ]);
  });

  it("returns the run with its payloads and its task rows in scheduling order", async () => {
    const run = await as(viewer).runs.get({ namespace: "ops", id: runId });
    expect(run).toMatchObject({ id: runId, defName: "greet", defVersion: 1, status: "RUNNING", input: { who: "Grace" }, output: {}, variables: { attempts: 0 }, endedAt: null, reasonForIncompletion: null });
    expect(run.startedAt).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
    expect(run.tasks.nextCursor).toBeNull();
    expect(run.tasks.items.map((t) => [t.refName, t.iteration, t.attempt, t.status, t.workerId, t.reasonForIncompletion])).toEqual([
      ["hello", 0, 0, "FAILED", "w-1", "boom"],
      ["hello", 0, 1, "SCHEDULED", null, null],
    ]);
    expect(run.tasks.items[0]).toMatchObject({ startedAt: "2026-01-01T00:00:01.000Z", endedAt: "2026-01-01T00:00:02.000Z" });
  });

  it("pages the tasks", async () => {
    const first = await as(viewer).runs.get({ namespace: "ops", id: runId, taskLimit: 1 });
    expect(first.tasks.items.map((t) => t.attempt)).toEqual([0]);
    const second = await as(viewer).runs.get({ namespace: "ops", id: runId, taskLimit: 1, taskCursor: first.tasks.nextCursor ?? "" });
    expect(second.tasks.items.map((t) => t.attempt)).toEqual([1]);
    await expect(as(viewer).runs.get({ namespace: "ops", id: runId, taskCursor: "not-a-cursor" })).rejects.toSatisfy(code("BAD_REQUEST"));
  });

  it("resolves an input that was offloaded to the blob store", async () => {
    const big = "x".repeat(300 * 1024);
    const { id } = await as(operator).runs.start({ namespace: "ops", name: "greet", input: { who: big } });
    const row = await database.db.selectFrom("WorkflowExecutions").select(["inputRef", "input"]).where("id", "=", id).executeTakeFirstOrThrow();
    expect(row.inputRef).not.toBeNull();
    expect(row.input).toEqual({});
    expect(((await as(viewer).runs.get({ namespace: "ops", id })).input as { who: string }).who).toHaveLength(big.length);
  });

  it("a run of another namespace is NOT_FOUND, through either namespace, exactly like an unknown id", async () => {
    const foreign = (await as(outsider).runs.start({ namespace: "other", name: "greet", input: { who: "Eve" } })).id;
    // Asking ops (where the viewer is a member) for other's run: it is not there.
    await expect(as(viewer).runs.get({ namespace: "ops", id: foreign })).rejects.toSatisfy(code("NOT_FOUND"));
    // Asking other directly: the viewer is no member of it.
    await expect(as(viewer).runs.get({ namespace: "other", id: foreign })).rejects.toSatisfy(code("NOT_FOUND"));
    await expect(as(outsider).runs.get({ namespace: "other", id: runId })).rejects.toSatisfy(code("NOT_FOUND"));
    await expect(as(viewer).runs.get({ namespace: "ops", id: "00000000-0000-0000-0000-000000000000" })).rejects.toSatisfy(code("NOT_FOUND"));
    await expect(as(viewer).runs.get({ namespace: "ops", id: "not-a-uuid" })).rejects.toSatisfy(code("BAD_REQUEST"));
  });
});
