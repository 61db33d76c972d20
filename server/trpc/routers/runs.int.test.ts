import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import type { Principal } from "../../auth/principal";
import { registerWorkflowDefinition } from "../../definitions/register-workflow-definition";
import { upsertNamespaceMember } from "../../store/namespace-members";
import { insertNamespace } from "../../store/namespaces";
import { InputProblemsError } from "../problem-errors";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

/** runs.start on a real Postgres: what the editor's Run dialog calls. */
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

  it("a member of another namespace cannot start one here: NOT_FOUND, as if the namespace did not exist", async () => {
    await expect(as(outsider).runs.start({ namespace: "ops", name: "greet", input: { who: "x" } })).rejects.toSatisfy(code("NOT_FOUND"));
  });

  it("a viewer cannot start a run (FORBIDDEN)", async () => {
    await expect(as(viewer).runs.start({ namespace: "ops", name: "greet", input: { who: "x" } })).rejects.toSatisfy(code("FORBIDDEN"));
  });
});
