import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { chain, node, simple, workflow } from "../../../engine/definition/test-fixtures";
import { summary, useActionHarness } from "./action-test-harness";
import { completeExternalTask } from "./complete-external-task";

const h = useActionHarness();

const complete = (workflowId: string, extra: Record<string, unknown>, namespaceId = h.namespaceId, actor = h.actor) =>
  completeExternalTask(h.deps(), { namespaceId, workflowId, actor, ...extra });
/** A user who is a viewer of the harness's namespace: eligible for a HUMAN task assigned to anyone. */
async function member(): Promise<{ id: string }> {
  const user = await h.t.db.insertInto("Users").values({ email: `u-${randomUUID().slice(0, 8)}@example.com` }).returning("id").executeTakeFirstOrThrow();
  await h.t.db.insertInto("NamespaceMembers").values({ namespaceId: h.namespaceId, userId: user.id, role: "viewer" }).execute();
  return user;
}
const signalWait = (ref: string) => ({ ref, type: "WAIT", signal: true, position: { x: 0, y: 0 } });

describe("completeExternalTask", () => {
  it("completes a signal WAIT with an output that its successor reads", async () => {
    const name = await h.register(workflow([signalWait("w"), simple("after", { input: { got: "${w.output.answer}" } })], chain("w", "after")));
    const id = await h.start(name);
    await h.evaluate();
    expect(summary(await h.tasks(id))).toEqual([["w", 0, "IN_PROGRESS"]]);

    const result = await complete(id, { taskRef: "w", output: { answer: 42 } });
    expect(result).toMatchObject({ ok: true, workflowId: id, ref: "w", status: "COMPLETED" });
    expect((await h.tasks(id))[0]).toMatchObject({ status: "COMPLETED", output: { answer: 42 }, deciderSeenAt: null });
    expect(await h.pendingDecide(id)).toBe(true);
    expect((await h.drive()).map((t) => [t.refName, t.input])).toEqual([["after", { got: 42 }]]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });

    const events = await h.events(id);
    expect(events.find((e) => e.type === "TASK_COMPLETED" && e.refName === "w")).toMatchObject({ status: "COMPLETED", data: { external: true, actor: { type: "user", id: "operator-1" } } });
    expect((await h.audit(id)).map((a) => [a.action, a.details])).toEqual([["task.complete", { taskId: result.ok ? result.taskId : "", ref: "w", taskType: "WAIT", status: "COMPLETED" }]]);
  });

  it("completes a timed WAIT early and drops its timer", async () => {
    const name = await h.register(workflow([node("WAIT", "w", { duration: "1h" })]));
    const id = await h.start(name);
    await h.evaluate();
    const wait = (await h.tasks(id))[0]!;
    expect(await h.t.db.selectFrom("Timers").select("kind").where("taskId", "=", wait.id).execute()).toEqual([{ kind: "wait" }]);
    expect(await complete(id, { taskId: wait.id })).toMatchObject({ ok: true });
    expect(await h.t.db.selectFrom("Timers").select("kind").where("taskId", "=", wait.id).execute()).toEqual([]);
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
  });

  it("completes a HUMAN task and closes its inbox row with the response and the user who gave it", async () => {
    const user = await member();
    const name = await h.register(workflow([node("HUMAN", "approve"), simple("after", { input: { outcome: "${approve.output.outcome}" } })], chain("approve", "after")));
    const id = await h.start(name);
    await h.evaluate();
    const human = (await h.tasks(id))[0]!;

    expect(await complete(id, { taskRef: "approve", output: { outcome: "approve", note: "ok" } }, h.namespaceId, { type: "user", id: user.id })).toMatchObject({ ok: true });
    const inbox = await h.t.db.selectFrom("HumanTasks").selectAll().where("taskId", "=", human.id).executeTakeFirstOrThrow();
    expect(inbox).toMatchObject({ status: "COMPLETED", response: { outcome: "approve", note: "ok" }, completedByUserId: user.id });
    expect(inbox.completedAt).not.toBeNull();
    expect((await h.drive()).map((t) => t.input)).toEqual([{ outcome: "approve" }]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
  });

  it("FAILED hands the task to its retry policy like a worker's failure", async () => {
    const name = await h.register(workflow([{ ...node("HUMAN", "approve"), policy: { retryCount: 0 } }]));
    const id = await h.start(name);
    await h.evaluate();
    // A HUMAN task goes through the human-task rules: someone who is not a member of the namespace may not end it.
    expect(await complete(id, { taskRef: "approve", status: "FAILED", reason: "rejected by legal" })).toMatchObject({ ok: false, code: "forbidden" });
    const user = await member();
    expect(await complete(id, { taskRef: "approve", status: "FAILED", reason: "rejected by legal" }, h.namespaceId, { type: "user", id: user.id })).toMatchObject({ ok: true, status: "FAILED" });
    await h.drive();
    const wf = await h.execution(id);
    expect(wf.status).toBe("FAILED");
    expect(wf.reasonForIncompletion).toContain("rejected by legal");
  });

  it("refuses other task types, tasks not in progress, and other namespaces", async () => {
    const name = await h.register(workflow([simple("a"), signalWait("w")], chain("a", "w")));
    const id = await h.start(name);
    await h.evaluate();
    expect(await complete(id, { taskRef: "a" })).toMatchObject({ ok: false, code: "unsupported-task-type", message: expect.stringContaining("SIMPLE") as unknown });
    expect(await complete(id, { taskRef: "w" })).toMatchObject({ ok: false, code: "task-not-found" });
    await h.drive(undefined, { rounds: 1 });
    await h.evaluate();
    expect(await complete(id, { taskRef: "w" }, h.otherNamespaceId)).toMatchObject({ ok: false, code: "not-found" });
    expect(await complete(id, { taskRef: "w", status: "DONE" })).toMatchObject({ ok: false, code: "invalid-input" });
    expect(await complete(id, { taskRef: "w" })).toMatchObject({ ok: true });
    expect(await complete(id, { taskRef: "w" })).toMatchObject({ ok: false, code: "task-not-open", message: expect.stringContaining("COMPLETED") as unknown });
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    expect(await complete(id, { taskRef: "w" })).toMatchObject({ ok: false, code: "not-running" });
    expect((await h.audit(id)).map((a) => a.action)).toEqual(["task.complete"]);
  });
});
