import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { cancelOpenHumanTasks, completeHumanTask, createHumanTask, existingUserId, getHumanTaskByTaskId } from "./human-tasks";

const t = useTestDatabase();
let namespaceId: string;
let otherNamespaceId: string;

beforeAll(async () => {
  const rows = await t.db.insertInto("Namespaces").values([{ name: `a-${randomUUID().slice(0, 8)}` }, { name: `b-${randomUUID().slice(0, 8)}` }]).returning("id").execute();
  namespaceId = rows[0]!.id;
  otherNamespaceId = rows[1]!.id;
});

const create = (workflowId: string, taskId: string, title = "Approve") =>
  createHumanTask(t.db, { namespaceId, workflowId, taskId, refName: "approve", title, input: { amount: "10\u0000" }, dueAt: new Date("2030-01-01T00:00:00Z") });

describe("HumanTasks repository", () => {
  it("createHumanTask is idempotent on taskId: a second call lands on the first row and returns undefined", async () => {
    const workflowId = randomUUID();
    const taskId = randomUUID();
    const first = await create(workflowId, taskId);
    expect(first).toMatchObject({ status: "PENDING", title: "Approve", input: { amount: "10" }, response: null });
    expect(await create(workflowId, taskId, "Another title")).toBeUndefined();
    expect(await getHumanTaskByTaskId(t.db, namespaceId, taskId)).toMatchObject({ id: first!.id, title: "Approve" });
    expect(await getHumanTaskByTaskId(t.db, otherNamespaceId, taskId)).toBeUndefined();
  });

  it("completeHumanTask closes an open row once, only inside its namespace", async () => {
    const taskId = randomUUID();
    await create(randomUUID(), taskId);
    expect(await completeHumanTask(t.db, { namespaceId: otherNamespaceId, taskId, response: { ok: true } })).toBeUndefined();
    const done = await completeHumanTask(t.db, { namespaceId, taskId, response: { ok: true } });
    expect(done).toMatchObject({ status: "COMPLETED", response: { ok: true }, completedByUserId: null });
    expect(done!.completedAt).not.toBeNull();
    expect(await completeHumanTask(t.db, { namespaceId, taskId, response: { ok: false } })).toBeUndefined();
    expect((await getHumanTaskByTaskId(t.db, namespaceId, taskId))!.response).toEqual({ ok: true });
  });

  it("cancelOpenHumanTasks cancels PENDING and CLAIMED rows of one workflow (or one task), nothing else", async () => {
    const workflowId = randomUUID();
    const [pending, claimed, completed, other] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    for (const id of [pending, claimed, completed]) await create(workflowId, id);
    await create(randomUUID(), other);
    await t.db.updateTable("HumanTasks").set({ status: "CLAIMED" }).where("taskId", "=", claimed).execute();
    await completeHumanTask(t.db, { namespaceId, taskId: completed, response: {} });

    expect(await cancelOpenHumanTasks(t.db, workflowId, { taskId: claimed })).toBe(1);
    expect(await cancelOpenHumanTasks(t.db, workflowId)).toBe(1);
    expect(await cancelOpenHumanTasks(t.db, workflowId)).toBe(0);
    const statuses = Object.fromEntries(
      (await t.db.selectFrom("HumanTasks").select(["taskId", "status"]).where("taskId", "in", [pending, claimed, completed, other]).execute()).map((r) => [r.taskId, r.status]),
    );
    expect(statuses).toEqual({ [pending]: "CANCELED", [claimed]: "CANCELED", [completed]: "COMPLETED", [other]: "PENDING" });
  });

  it("existingUserId names only users that exist", async () => {
    const user = await t.db.insertInto("Users").values({ email: `u-${randomUUID().slice(0, 8)}@example.com` }).returning("id").executeTakeFirstOrThrow();
    expect(await existingUserId(t.db, user.id)).toBe(user.id);
    expect(await existingUserId(t.db, randomUUID())).toBeUndefined();
    expect(await existingUserId(t.db, "not-a-uuid")).toBeUndefined();
  });
});
