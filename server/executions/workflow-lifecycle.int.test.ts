import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import type { TaskStatus } from "../../db/schema";
import { enqueueDecide } from "../store/decide-queues";
import { createHumanTask } from "../store/human-tasks";
import { insertTasks } from "../store/task-executions";
import { enqueueTask } from "../store/task-queues";
import { armTimer } from "../store/timers";
import { insertWorkflowExecution } from "../store/workflow-executions";
import { afterWorkflowEnded, terminateWorkflowTree } from "./workflow-lifecycle";

const t = useTestDatabase();
let namespaceId: string;
let otherNamespaceId: string;

beforeAll(async () => {
  const rows = await t.db
    .insertInto("Namespaces")
    .values([{ name: `ns-${randomUUID().slice(0, 8)}` }, { name: `ns-${randomUUID().slice(0, 8)}` }])
    .returning("id")
    .execute();
  namespaceId = rows[0]!.id;
  otherNamespaceId = rows[1]!.id;
});

async function workflowRow(parent?: { workflowId: string; taskId: string }, status: "RUNNING" | "PAUSED" = "RUNNING") {
  return insertWorkflowExecution(t.db, {
    namespaceId,
    defName: "wf",
    defVersion: 1,
    status,
    parentWorkflowId: parent?.workflowId ?? null,
    parentTaskId: parent?.taskId ?? null,
  });
}

async function task(workflowId: string, refName: string, fields: { status?: TaskStatus; taskType?: string; queueName?: string | null; subWorkflowId?: string | null } = {}) {
  const [row] = await insertTasks(t.db, [
    {
      workflowId,
      namespaceId,
      refName,
      iteration: 0,
      attempt: 0,
      taskType: fields.taskType ?? "SIMPLE",
      taskDefName: fields.taskType ?? "task",
      queueName: fields.queueName === undefined ? null : fields.queueName,
      status: fields.status ?? "IN_PROGRESS",
      startedAt: new Date(),
      endedAt: ["SCHEDULED", "IN_PROGRESS"].includes(fields.status ?? "IN_PROGRESS") ? null : new Date(),
      deciderSeenAt: ["SCHEDULED", "IN_PROGRESS"].includes(fields.status ?? "IN_PROGRESS") ? null : new Date(),
      subWorkflowId: fields.subWorkflowId ?? null,
    },
  ]);
  return row!;
}

/** A parent with an IN_PROGRESS SUB_WORKFLOW task and the child it started. */
async function parentAndChild() {
  const parent = await workflowRow();
  const childId = randomUUID();
  const sub = await task(parent.id, "sub", { taskType: "SUB_WORKFLOW", subWorkflowId: childId });
  const child = await insertWorkflowExecution(t.db, { id: childId, namespaceId, defName: "child", defVersion: 1, status: "RUNNING", parentWorkflowId: parent.id, parentTaskId: sub.id });
  return { parent, sub, child };
}

async function taskRow(workflowId: string, id: string) {
  return t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", workflowId).where("id", "=", id).executeTakeFirstOrThrow();
}

async function pendingDecide(workflowId: string) {
  return t.db.selectFrom("DecideQueues").selectAll().where("workflowId", "=", workflowId).executeTakeFirst();
}

async function events(workflowId: string) {
  return t.db.selectFrom("WorkflowEvents").selectAll().where("workflowId", "=", workflowId).orderBy("seq").execute();
}

describe("afterWorkflowEnded", () => {
  it("a COMPLETED child completes the parent's SUB_WORKFLOW task with its output, unseen, and enqueues the parent's decide", async () => {
    const { parent, sub, child } = await parentAndChild();
    const now = new Date();
    await t.db.transaction().execute((trx) =>
      afterWorkflowEnded(trx, { id: child.id, namespaceId, status: "COMPLETED", output: { answer: 42 }, reasonForIncompletion: null, parentWorkflowId: parent.id, parentTaskId: sub.id }, now),
    );
    const row = await taskRow(parent.id, sub.id);
    expect(row).toMatchObject({ status: "COMPLETED", output: { answer: 42 }, reasonForIncompletion: null, deciderSeenAt: null });
    expect(row.endedAt?.getTime()).toBe(now.getTime());
    expect(await pendingDecide(parent.id)).toMatchObject({ namespaceId, reason: `sub-workflow ${child.id} COMPLETED` });
  });

  it.each(["FAILED", "TIMED_OUT", "TERMINATED"] as const)("a %s child fails the parent's task with the child's reason", async (status) => {
    const { parent, sub, child } = await parentAndChild();
    await t.db.transaction().execute((trx) =>
      afterWorkflowEnded(trx, { id: child.id, namespaceId, status, output: {}, reasonForIncompletion: "it broke", parentWorkflowId: parent.id, parentTaskId: sub.id }, new Date()),
    );
    const row = await taskRow(parent.id, sub.id);
    expect(row).toMatchObject({ status: "FAILED", reasonForIncompletion: `Sub-workflow ${child.id} ${status}: it broke`, deciderSeenAt: null });
    expect(await pendingDecide(parent.id)).toBeDefined();
  });

  it("does nothing to a parent task that already moved on (no decide either)", async () => {
    const parent = await workflowRow();
    const sub = await task(parent.id, "sub", { taskType: "SUB_WORKFLOW", status: "CANCELED" });
    await t.db.transaction().execute((trx) =>
      afterWorkflowEnded(trx, { id: randomUUID(), namespaceId, status: "COMPLETED", output: { x: 1 }, reasonForIncompletion: null, parentWorkflowId: parent.id, parentTaskId: sub.id }, new Date()),
    );
    expect((await taskRow(parent.id, sub.id)).status).toBe("CANCELED");
    expect(await pendingDecide(parent.id)).toBeUndefined();
  });
});

describe("terminateWorkflowTree", () => {
  it("terminates a workflow, its child and grandchild: tasks canceled, queue rows, timers and pending decides gone, events appended", async () => {
    const { parent, sub, child } = await parentAndChild();
    const queued = await task(parent.id, "a", { status: "SCHEDULED", queueName: "q_terminate" });
    await enqueueTask(t.db, { queueName: "q_terminate", taskId: queued.id, workflowId: parent.id, namespaceId, taskType: "SIMPLE", priority: 0 });
    const completed = await task(parent.id, "done", { status: "COMPLETED" });
    const grandSub = await task(child.id, "sub2", { taskType: "SUB_WORKFLOW" });
    const grandchild = await workflowRow({ workflowId: child.id, taskId: grandSub.id }, "PAUSED");
    const human = await task(grandchild.id, "approve", { taskType: "HUMAN" });
    await createHumanTask(t.db, { namespaceId, workflowId: grandchild.id, taskId: human.id, refName: "approve", title: "Approve", input: {} });
    await armTimer(t.db, { kind: "workflowTimeout", fireAt: new Date(Date.now() + 3_600_000), namespaceId, workflowId: parent.id });
    await armTimer(t.db, { kind: "wait", fireAt: new Date(Date.now() + 3_600_000), namespaceId, workflowId: child.id, taskId: grandSub.id });
    for (const id of [parent.id, child.id, grandchild.id]) await enqueueDecide(t.db, { workflowId: id, namespaceId, reason: "test" });

    const now = new Date();
    const done = await t.db.transaction().execute((trx) => terminateWorkflowTree(trx, { workflowId: parent.id, namespaceId, reason: "operator said so", notifyParent: true, now }));
    expect(done).toBe(true);

    const workflows = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "in", [parent.id, child.id, grandchild.id]).execute();
    const byId = new Map(workflows.map((w) => [w.id, w]));
    expect(byId.get(parent.id)).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "operator said so" });
    expect(byId.get(child.id)).toMatchObject({ status: "TERMINATED", reasonForIncompletion: `Parent workflow ${parent.id} terminated: operator said so` });
    expect(byId.get(grandchild.id)).toMatchObject({ status: "TERMINATED", reasonForIncompletion: `Parent workflow ${child.id} terminated: Parent workflow ${parent.id} terminated: operator said so` });
    for (const w of workflows) expect(w.endedAt?.getTime()).toBe(now.getTime());

    expect(await taskRow(parent.id, queued.id)).toMatchObject({ status: "CANCELED", reasonForIncompletion: "Workflow terminated: operator said so" });
    expect((await taskRow(parent.id, queued.id)).deciderSeenAt).not.toBeNull();
    expect((await taskRow(parent.id, sub.id)).status).toBe("CANCELED");
    expect((await taskRow(parent.id, completed.id)).status).toBe("COMPLETED");
    expect((await taskRow(child.id, grandSub.id)).status).toBe("CANCELED");
    expect((await taskRow(grandchild.id, human.id)).status).toBe("CANCELED");
    expect((await t.db.selectFrom("HumanTasks").select("status").where("taskId", "=", human.id).executeTakeFirstOrThrow()).status).toBe("CANCELED");
    expect(await t.db.selectFrom("TaskQueues").select("taskId").where("taskId", "=", queued.id).execute()).toEqual([]);
    expect(await t.db.selectFrom("Timers").select("id").where("workflowId", "in", [parent.id, child.id]).execute()).toEqual([]);
    for (const id of [parent.id, child.id, grandchild.id]) expect(await pendingDecide(id)).toBeUndefined();

    const parentEvents = await events(parent.id);
    expect(parentEvents.map((e) => e.seq)).toEqual(parentEvents.map((_, i) => i + 1));
    expect(parentEvents.map((e) => [e.type, e.refName]).sort()).toEqual([
      ["TASK_CANCELED", "a"],
      ["TASK_CANCELED", "sub"],
      ["WORKFLOW_TERMINATED", null],
    ]);
    expect(parentEvents.at(-1)).toMatchObject({ type: "WORKFLOW_TERMINATED", data: { reason: "operator said so" } });
    expect((await events(grandchild.id)).map((e) => e.type)).toEqual(["TASK_CANCELED", "WORKFLOW_TERMINATED"]);
  });

  it("with notifyParent, fails the parent's SUB_WORKFLOW task and enqueues the parent's decide without touching the parent's row", async () => {
    const { parent, sub, child } = await parentAndChild();
    const before = await t.db.selectFrom("WorkflowExecutions").select(["version", "status"]).where("id", "=", parent.id).executeTakeFirstOrThrow();
    await t.db.transaction().execute((trx) => terminateWorkflowTree(trx, { workflowId: child.id, namespaceId, reason: "stop", notifyParent: true, now: new Date() }));
    expect(await taskRow(parent.id, sub.id)).toMatchObject({ status: "FAILED", reasonForIncompletion: `Sub-workflow ${child.id} TERMINATED: stop`, deciderSeenAt: null });
    expect(await pendingDecide(parent.id)).toBeDefined();
    expect(await t.db.selectFrom("WorkflowExecutions").select(["version", "status"]).where("id", "=", parent.id).executeTakeFirstOrThrow()).toEqual(before);
  });

  it("without notifyParent leaves the parent's task alone", async () => {
    const { parent, sub, child } = await parentAndChild();
    await t.db.transaction().execute((trx) => terminateWorkflowTree(trx, { workflowId: child.id, namespaceId, reason: "stop", notifyParent: false, now: new Date() }));
    expect((await taskRow(parent.id, sub.id)).status).toBe("IN_PROGRESS");
    expect(await pendingDecide(parent.id)).toBeUndefined();
  });

  it("returns false for a finished, missing or other-namespace workflow and changes nothing", async () => {
    const wf = await workflowRow();
    const other = async (input: { workflowId: string; namespaceId: string }) =>
      t.db.transaction().execute((trx) => terminateWorkflowTree(trx, { ...input, reason: "x", notifyParent: true, now: new Date() }));
    expect(await other({ workflowId: randomUUID(), namespaceId })).toBe(false);
    expect(await other({ workflowId: wf.id, namespaceId: otherNamespaceId })).toBe(false);
    expect((await t.db.selectFrom("WorkflowExecutions").select("status").where("id", "=", wf.id).executeTakeFirstOrThrow()).status).toBe("RUNNING");
    expect(await other({ workflowId: wf.id, namespaceId })).toBe(true);
    expect(await other({ workflowId: wf.id, namespaceId })).toBe(false);
    expect((await events(wf.id)).map((e) => e.type)).toEqual(["WORKFLOW_TERMINATED"]);
  });
});
