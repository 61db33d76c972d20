import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { chain, node, simple, workflow } from "../../../engine/definition/test-fixtures";
import { completeTaskFromWorker } from "../../store/task-executions";
import { leaseTasks } from "../../store/task-queues";
import { summary, useActionHarness } from "./action-test-harness";
import { skipTask } from "./skip-task";

const h = useActionHarness();

const skip = (workflowId: string, extra: Record<string, unknown>, namespaceId = h.namespaceId) => skipTask(h.deps(), { namespaceId, workflowId, actor: h.actor, ...extra });

describe("skipTask", () => {
  it("skips a task a worker holds: it counts as COMPLETED with the given output, successors run (no dead path), the worker's late report is refused", async () => {
    const name = await h.register(workflow([simple("a"), simple("b", { input: { fromA: "${a.output.v}" } })], chain("a", "b")));
    const id = await h.start(name);
    await h.evaluate();
    const [held] = await leaseTasks(h.t.db, { queueName: "task", namespaceId: h.namespaceId, count: 1, leaseSeconds: 30, owner: "w1" });
    expect(held?.task.refName).toBe("a");

    const result = await skip(id, { taskRef: "a", output: { v: "operator value" }, reason: "vendor down" });
    expect(result).toEqual({ ok: true, workflowId: id, taskId: held!.task.id, ref: "a", status: "COMPLETED", terminatedChild: null });
    expect((await h.tasks(id))[0]).toMatchObject({ status: "COMPLETED", output: { v: "operator value" }, reasonForIncompletion: "Skipped by user operator-1: vendor down", deciderSeenAt: null });
    expect(await h.t.db.selectFrom("TaskQueues").select("taskId").where("taskId", "=", held!.task.id).execute()).toEqual([]);
    expect(await completeTaskFromWorker(h.t.db, { namespaceId: h.namespaceId, workflowId: id, taskId: held!.task.id, status: "COMPLETED", output: { v: "late" }, workerId: "w1" })).toMatchObject({
      ok: false,
      error: "not_in_progress",
    });

    const handled = await h.drive();
    expect(handled.map((t) => [t.refName, t.input])).toEqual([["b", { fromA: "operator value" }]]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    expect(summary(await h.tasks(id))).toEqual([
      ["a", 0, "COMPLETED"],
      ["b", 0, "COMPLETED"],
    ]);

    const events = await h.events(id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.find((e) => e.type === "TASK_SKIPPED_BY_OPERATOR")).toMatchObject({
      refName: "a",
      taskId: held!.task.id,
      status: "COMPLETED",
      data: { from: "IN_PROGRESS", reason: "vendor down", actor: { type: "user", id: "operator-1" } },
    });
    expect((await h.audit(id)).map((a) => [a.action, a.details])).toEqual([["task.skip", { taskId: held!.task.id, ref: "a", from: "IN_PROGRESS", reason: "vendor down" }]]);
  });

  it("skips a SUB_WORKFLOW task by id: its child is terminated and the parent carries on", async () => {
    const child = await h.register(workflow([simple("work")]));
    const parent = await h.register(workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: child } }), simple("after")], chain("sub", "after")));
    const id = await h.start(parent);
    for (let i = 0; i < 3; i++) await h.evaluate();
    const sub = (await h.tasks(id))[0]!;
    expect(sub).toMatchObject({ refName: "sub", status: "IN_PROGRESS" });
    const kid = sub.subWorkflowId!;

    expect(await skip(id, { taskId: sub.id })).toMatchObject({ ok: true, ref: "sub", terminatedChild: kid });
    expect(await h.execution(kid)).toMatchObject({ status: "TERMINATED" });
    expect((await h.drive()).map((t) => t.refName)).toEqual(["after"]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    expect(summary(await h.tasks(kid))).toEqual([["work", 0, "CANCELED"]]);
  });

  it("skips a HUMAN task: its inbox row is canceled", async () => {
    const name = await h.register(workflow([node("HUMAN", "approve"), simple("after")], chain("approve", "after")));
    const id = await h.start(name);
    await h.evaluate();
    const human = (await h.tasks(id))[0]!;
    expect(await h.t.db.selectFrom("HumanTasks").select("status").where("taskId", "=", human.id).executeTakeFirstOrThrow()).toEqual({ status: "PENDING" });
    expect(await skip(id, { taskRef: "approve", output: { outcome: "approve" } })).toMatchObject({ ok: true });
    expect(await h.t.db.selectFrom("HumanTasks").select("status").where("taskId", "=", human.id).executeTakeFirstOrThrow()).toEqual({ status: "CANCELED" });
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
  });

  it("refuses ended tasks, containers, unknown tasks, ended workflows, bad selectors and other namespaces", async () => {
    const name = await h.register(
      workflow([simple("a"), { ref: "loop", type: "DO_WHILE", items: [1], position: { x: 0, y: 0 } }, simple("step", { parent: "loop" })], chain("a", "loop")),
    );
    const id = await h.start(name);
    await h.drive(undefined, { rounds: 1 });
    await h.evaluate();
    expect(summary(await h.tasks(id)).map(([ref, , status]) => `${ref}:${status}`)).toEqual(["a:COMPLETED", "loop:IN_PROGRESS", "step:SCHEDULED"]);

    expect(await skip(id, { taskRef: "a" })).toMatchObject({ ok: false, code: "task-not-open", message: expect.stringContaining("COMPLETED") as unknown });
    expect(await skip(id, { taskRef: "loop" })).toMatchObject({ ok: false, code: "unsupported-task-type", message: expect.stringContaining("DO_WHILE") as unknown });
    expect(await skip(id, { taskRef: "nope" })).toMatchObject({ ok: false, code: "task-not-found" });
    expect(await skip(id, { taskId: randomUUID() })).toMatchObject({ ok: false, code: "task-not-found" });
    expect(await skip(id, { taskRef: "a", taskId: randomUUID() })).toMatchObject({ ok: false, code: "invalid-input", message: expect.stringContaining("exactly one") as unknown });
    expect(await skip(id, {})).toMatchObject({ ok: false, code: "invalid-input" });
    expect(await skip(id, { taskRef: "step" }, h.otherNamespaceId)).toMatchObject({ ok: false, code: "not-found" });
    expect(await h.audit(id)).toEqual([]);

    // A body task inside the loop can be skipped; the loop then completes.
    expect(await skip(id, { taskRef: "step" })).toMatchObject({ ok: true });
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    expect(await skip(id, { taskRef: "step" })).toMatchObject({ ok: false, code: "not-running" });
  });
});
