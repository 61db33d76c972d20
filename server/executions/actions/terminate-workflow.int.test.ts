import { describe, expect, it } from "vitest";
import { chain, edge, node, simple, workflow } from "../../../engine/definition/test-fixtures";
import { completeTaskFromWorker } from "../../store/task-executions";
import { leaseTasks } from "../../store/task-queues";
import { summary, useActionHarness } from "./action-test-harness";
import { pauseWorkflow } from "./pause-workflow";
import { terminateWorkflow } from "./terminate-workflow";

const h = useActionHarness();

const children = (id: string) => h.t.db.selectFrom("WorkflowExecutions").selectAll().where("parentWorkflowId", "=", id).execute();

describe("terminateWorkflow", () => {
  it("ends a running workflow: open tasks canceled and dequeued, a late worker report refused, history and audit written", async () => {
    const name = await h.register(workflow([simple("a"), simple("b"), { ref: "w", type: "WAIT", signal: true, position: { x: 0, y: 0 } }], [edge("a", "b"), edge("a", "w")]));
    const id = await h.start(name);
    await h.drive(() => ({ status: "COMPLETED" }), { rounds: 1 }); // a runs
    await h.evaluate(); // b is queued, w waits
    const [held] = await leaseTasks(h.t.db, { queueName: "task", namespaceId: h.namespaceId, count: 1, leaseSeconds: 30, owner: "w1" });
    expect(held?.task.refName).toBe("b");

    const result = await terminateWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor, reason: "bad deploy" });
    expect(result).toEqual({ ok: true, workflowId: id, status: "TERMINATED" });
    expect(await h.execution(id)).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "bad deploy" });
    expect(summary(await h.tasks(id))).toEqual([
      ["a", 0, "COMPLETED"],
      ["b", 0, "CANCELED"],
      ["w", 0, "CANCELED"],
    ]);
    expect(await h.t.db.selectFrom("TaskQueues").select("taskId").where("workflowId", "=", id).execute()).toEqual([]);
    expect(await h.pendingDecide(id)).toBe(false);
    expect(await completeTaskFromWorker(h.t.db, { namespaceId: h.namespaceId, workflowId: id, taskId: held!.task.id, status: "COMPLETED", workerId: "w1" })).toMatchObject({
      ok: false,
      error: "not_in_progress",
      status: "CANCELED",
    });

    const events = await h.events(id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const tail = events.slice(-4).map((e) => [e.type, e.refName]);
    expect(tail[0]).toEqual(["TERMINATE_REQUESTED", null]);
    expect(tail.slice(1, 3).sort()).toEqual([
      ["TASK_CANCELED", "b"],
      ["TASK_CANCELED", "w"],
    ]);
    expect(tail[3]).toEqual(["WORKFLOW_TERMINATED", null]);
    expect(events.find((e) => e.type === "TERMINATE_REQUESTED")!.data).toEqual({ reason: "bad deploy", actor: { type: "user", id: "operator-1" } });
    expect((await h.audit(id)).map((a) => [a.action, a.actorId, a.details])).toEqual([["workflow.terminate", "operator-1", { from: "RUNNING", reason: "bad deploy" }]]);
  });

  it("cascades to a running child started by SUB_WORKFLOW, through the real evaluator", async () => {
    const child = await h.register(workflow([simple("work")]));
    const parent = await h.register(workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: child } }), simple("after")], chain("sub", "after")));
    const id = await h.start(parent);
    for (let i = 0; i < 3; i++) await h.evaluate(); // parent starts the child; the child queues "work".
    const [kid] = await children(id);
    expect(kid?.status).toBe("RUNNING");
    expect(summary(await h.tasks(kid!.id))).toEqual([["work", 0, "SCHEDULED"]]);

    expect(await terminateWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor })).toMatchObject({ ok: true });
    expect(await h.execution(id)).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "Terminated by an operator" });
    expect(await h.execution(kid!.id)).toMatchObject({ status: "TERMINATED", reasonForIncompletion: `Parent workflow ${id} terminated: Terminated by an operator` });
    expect(summary(await h.tasks(id))).toEqual([["sub", 0, "CANCELED"]]);
    expect(summary(await h.tasks(kid!.id))).toEqual([["work", 0, "CANCELED"]]);
    expect(await h.t.db.selectFrom("TaskQueues").select("taskId").where("workflowId", "=", kid!.id).execute()).toEqual([]);
    // Nothing runs afterwards: the deciders find both ended.
    expect(await h.drive()).toEqual([]);
    expect((await h.events(kid!.id)).at(-1)).toMatchObject({ type: "WORKFLOW_TERMINATED" });
  });

  it("terminating a child fails its parent's SUB_WORKFLOW task, and the parent's decider fails the parent", async () => {
    const child = await h.register(workflow([simple("work")]));
    const parent = await h.register(workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: child }, policy: { retryCount: 0 } })]));
    const id = await h.start(parent);
    for (let i = 0; i < 3; i++) await h.evaluate();
    const [kid] = await children(id);

    expect(await terminateWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: kid!.id, actor: h.actor, reason: "stuck" })).toMatchObject({ ok: true });
    expect((await h.tasks(id))[0]).toMatchObject({ status: "FAILED", reasonForIncompletion: `Sub-workflow ${kid!.id} TERMINATED: stuck` });
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "FAILED" });
    expect((await h.execution(id)).reasonForIncompletion).toContain(`Sub-workflow ${kid!.id} TERMINATED: stuck`);
  });

  it("terminates a PAUSED workflow; refuses an ended one and another namespace's", async () => {
    const name = await h.register(workflow([simple("a")]));
    const id = await h.start(name);
    await h.evaluate();
    await pauseWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor });
    expect(await terminateWorkflow(h.deps(), { namespaceId: h.otherNamespaceId, workflowId: id, actor: h.actor })).toMatchObject({ ok: false, code: "not-found" });
    expect((await h.execution(id)).status).toBe("PAUSED");
    expect(await terminateWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor })).toMatchObject({ ok: true });
    expect(await terminateWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor })).toMatchObject({ ok: false, code: "not-running", message: expect.stringContaining("TERMINATED") as unknown });
    expect(await terminateWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor, reason: "" })).toMatchObject({ ok: false, code: "invalid-input" });
    expect((await h.audit(id)).map((a) => a.action)).toEqual(["workflow.pause", "workflow.terminate"]);
  });
});
