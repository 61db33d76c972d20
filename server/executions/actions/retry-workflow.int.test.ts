import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { chain, edge, node, simple, workflow } from "../../../engine/definition/test-fixtures";
import { summary, useActionHarness } from "./action-test-harness";
import { retryWorkflow } from "./retry-workflow";
import { terminateWorkflow } from "./terminate-workflow";

const h = useActionHarness();

const retry = (workflowId: string, namespaceId = h.namespaceId) => retryWorkflow(h.deps(), { namespaceId, workflowId, actor: h.actor });
const children = (id: string) => h.t.db.selectFrom("WorkflowExecutions").selectAll().where("parentWorkflowId", "=", id).orderBy("id").execute();

describe("retryWorkflow", () => {
  it("a failed SIMPLE task runs again as attempt 1 and the workflow completes; completed work is not redone", async () => {
    const name = await h.register(workflow([simple("a"), simple("b", { input: { from: "${a.output.v}" }, policy: { retryCount: 0 } })], chain("a", "b")));
    const id = await h.start(name);
    await h.drive((task) => (task.refName === "b" ? { status: "FAILED", reason: "flaky" } : { status: "COMPLETED", output: { v: "A" } }));
    expect(await h.execution(id)).toMatchObject({ status: "FAILED", failedTaskRef: "b" });

    const result = await retry(id);
    expect(result).toMatchObject({ ok: true, workflowId: id, status: "RUNNING", retried: [{ ref: "b", iteration: 0, attempt: 1, how: "queued", previous: { status: "FAILED" } }] });
    expect(await h.execution(id)).toMatchObject({ status: "RUNNING", endedAt: null, reasonForIncompletion: null, failedTaskRef: null });
    expect(await h.pendingDecide(id)).toBe(true);

    const handled = await h.drive(() => ({ status: "COMPLETED", output: { v: "B" } }));
    expect(handled.map((t) => [t.refName, t.attempt, t.input])).toEqual([["b", 1, { from: "A" }]]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED", output: { v: "B" } });
    expect(summary(await h.tasks(id))).toEqual([
      ["a", 0, "COMPLETED"],
      ["b", 0, "FAILED"],
      ["b", 1, "COMPLETED"],
    ]);

    const events = await h.events(id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((e) => e.type);
    expect(types.indexOf("WORKFLOW_FAILED")).toBeLessThan(types.indexOf("WORKFLOW_RETRIED"));
    expect(types.at(-1)).toBe("WORKFLOW_COMPLETED");
    const retried = events.find((e) => e.type === "WORKFLOW_RETRIED")!;
    expect(retried.data).toMatchObject({ from: "FAILED", actor: { type: "user", id: "operator-1" }, tasks: [{ ref: "b", attempt: 1 }] });
    expect(events.find((e) => e.type === "TASK_SCHEDULED" && e.refName === "b" && (e.data as { attempt: number }).attempt === 1)).toBeDefined();
    const audit = await h.audit(id);
    expect(audit.map((a) => [a.action, a.actorType, a.actorId])).toEqual([["workflow.retry", "user", "operator-1"]]);
    expect(audit[0]!.details).toMatchObject({ from: "FAILED", tasks: ["b"] });
  });

  it("a TERMINATED workflow resumes its canceled branches and joins them", async () => {
    const name = await h.register(
      workflow([simple("a"), simple("b"), simple("c"), node("JOIN", "j", { joinOn: ["b", "c"] })], [edge("a", "b"), edge("a", "c"), edge("b", "j"), edge("c", "j")]),
    );
    const id = await h.start(name);
    await h.drive(() => ({ status: "COMPLETED" }), { rounds: 1 });
    await h.evaluate();
    expect(summary(await h.tasks(id)).map(([ref, , status]) => `${ref}:${status}`)).toEqual(["a:COMPLETED", "b:SCHEDULED", "c:SCHEDULED"]);
    await terminateWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor });

    const result = await retry(id);
    expect(result.ok && result.retried.map((r) => [r.ref, r.attempt, r.previous.status])).toEqual([
      ["b", 1, "CANCELED"],
      ["c", 1, "CANCELED"],
    ]);
    await h.drive(() => ({ status: "COMPLETED" }));
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    expect(summary(await h.tasks(id))).toEqual([
      ["a", 0, "COMPLETED"],
      ["b", 0, "CANCELED"],
      ["b", 1, "COMPLETED"],
      ["c", 0, "CANCELED"],
      ["c", 1, "COMPLETED"],
      ["j", 0, "COMPLETED"],
    ]);
  });

  it("a failed SUB_WORKFLOW task runs again with a new child; the failed child stays as history", async () => {
    let failChild = true;
    const child = await h.register(workflow([simple("work", { policy: { retryCount: 0 } })], [], { outputParameters: { done: "${work.output.done}" } }));
    const parent = await h.register(workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: child }, policy: { retryCount: 0 } })]));
    const id = await h.start(parent);
    const handler = () => (failChild ? ({ status: "FAILED", reason: "child broke" } as const) : ({ status: "COMPLETED", output: { done: true } } as const));
    await h.drive(handler);
    expect(await h.execution(id)).toMatchObject({ status: "FAILED" });
    const [first] = await children(id);
    expect(first).toMatchObject({ status: "FAILED" });

    failChild = false;
    const result = await retry(id);
    expect(result).toMatchObject({ ok: true, retried: [{ ref: "sub", attempt: 1, how: "external" }] });
    await h.drive(handler);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED", output: { done: true } });
    const kids = await children(id);
    expect(kids.map((k) => k.status)).toEqual(["FAILED", "COMPLETED"]);
    const rows = await h.tasks(id);
    expect(summary(rows)).toEqual([
      ["sub", 0, "FAILED"],
      ["sub", 1, "COMPLETED"],
    ]);
    expect(kids[1]!.parentTaskId).toBe(rows[1]!.id);
    expect(rows[1]!.subWorkflowId).toBe(kids[1]!.id);
  });

  it("a dynamic fork that failed on one instance reopens with its counter recomputed, and aggregates every instance", async () => {
    const name = await h.register(
      workflow(
        [node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "work", items: "${workflow.input.items}", policy: { retryCount: 0 } }), simple("after", { input: { all: "${fan.output.results}" } })],
        chain("fan", "after"),
      ),
    );
    const id = await h.start(name, { items: [1, 2, 3] });
    await h.drive((task) => ((task.input as { item: number }).item === 2 && task.attempt === 0 ? { status: "FAILED", reason: "no 2s" } : { status: "COMPLETED", output: { twice: (task.input as { item: number }).item * 2 } }), { queue: "work" });
    expect(await h.execution(id)).toMatchObject({ status: "FAILED" });
    const fan = (await h.tasks(id)).find((r) => r.refName === "fan")!;
    expect(fan.status).toBe("FAILED_WITH_TERMINAL_ERROR");

    const result = await retry(id);
    expect(result.ok && result.retried.map((r) => [r.ref, r.attempt, r.how])).toEqual([
      ["fan", 1, "container"],
      ["fan#1", 1, "queued"],
    ]);
    const reopened = (await h.tasks(id)).find((r) => r.refName === "fan" && r.attempt === 1)!;
    // Instances 0 and 2 succeeded and were seen before the failure: they count; instance 1 will be added by the decider.
    expect(reopened).toMatchObject({ status: "IN_PROGRESS", output: { total: 3, completed: 2 } });

    await h.drive((task) => ({ status: "COMPLETED", output: { twice: (task.input as { item: number }).item * 2 } }), { queue: "work" });
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    const rows = await h.tasks(id);
    expect(rows.find((r) => r.refName === "fan" && r.attempt === 1)).toMatchObject({ status: "COMPLETED", output: { results: [{ twice: 2 }, { twice: 4 }, { twice: 6 }] } });
    expect(rows.find((r) => r.refName === "after")!.input).toEqual({ all: [{ twice: 2 }, { twice: 4 }, { twice: 6 }] });
  });

  it("a DO_WHILE whose body failed in iteration 2 resumes that iteration", async () => {
    const name = await h.register(
      workflow(
        [{ ref: "loop", type: "DO_WHILE", items: "${workflow.input.items}", position: { x: 0, y: 0 } }, simple("step", { parent: "loop", input: { item: "${loop.output.item}" }, policy: { retryCount: 0 } }), simple("post")],
        chain("loop", "post"),
      ),
    );
    const id = await h.start(name, { items: ["x", "y", "z"] });
    let failY = true;
    const handler = (task: { refName: string; input: unknown }) =>
      failY && (task.input as { item?: string }).item === "y" ? ({ status: "FAILED", reason: "y broke" } as const) : ({ status: "COMPLETED", output: { saw: (task.input as { item?: string }).item ?? task.refName } } as const);
    await h.drive(handler);
    expect(await h.execution(id)).toMatchObject({ status: "FAILED" });
    expect((await h.tasks(id)).filter((r) => r.refName === "step").map((r) => [r.iteration, r.attempt, r.status])).toEqual([
      [1, 0, "COMPLETED"],
      [2, 0, "FAILED"],
    ]);

    failY = false;
    const result = await retry(id);
    expect(result.ok && result.retried.map((r) => [r.ref, r.iteration, r.attempt, r.how])).toEqual([
      ["loop", 0, 1, "container"],
      ["step", 2, 1, "queued"],
    ]);
    const handled = await h.drive(handler);
    expect(handled.map((t) => [t.refName, t.iteration, t.attempt])).toEqual([
      ["step", 2, 1],
      ["step", 3, 0],
      ["post", 0, 0],
    ]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    const loop = (await h.tasks(id)).find((r) => r.refName === "loop" && r.attempt === 1)!;
    expect(loop.output).toMatchObject({ "1": { step: { saw: "x" } }, "2": { step: { saw: "y" } }, "3": { step: { saw: "z" } } });
  });

  it("refuses a workflow that is running or completed, one failed by decide's own evaluation, and one with nothing failed", async () => {
    const simpleName = await h.register(workflow([simple("a")]));
    const running = await h.start(simpleName);
    expect(await retry(running)).toMatchObject({ ok: false, code: "not-retryable-status", message: expect.stringContaining("RUNNING") as unknown });
    await h.drive();
    expect(await retry(running)).toMatchObject({ ok: false, code: "not-retryable-status", message: expect.stringContaining("rerun or restart") as unknown });

    const switchName = await h.register(
      workflow([node("SWITCH", "s", { cases: ["x"], evaluatorType: "javascript", expression: "throw new Error('nope')" }), simple("x1")], [edge("s", "x1", "x")]),
    );
    const broken = await h.start(switchName);
    await h.drive();
    expect(await h.execution(broken)).toMatchObject({ status: "FAILED" });
    expect(await retry(broken)).toMatchObject({ ok: false, code: "not-retryable", message: expect.stringContaining("rerun the workflow from s") as unknown });

    const terminateName = await h.register(workflow([node("TERMINATE", "t", { terminationStatus: "FAILED", terminationReason: "by design" })]));
    const terminated = await h.start(terminateName);
    await h.drive();
    expect(await h.execution(terminated)).toMatchObject({ status: "FAILED" });
    expect(await retry(terminated)).toMatchObject({ ok: false, code: "nothing-to-retry", message: expect.stringContaining("by design") as unknown });

    for (const id of [running, broken, terminated]) {
      expect(await h.audit(id)).toEqual([]);
      expect((await h.events(id)).some((e) => e.type === "WORKFLOW_RETRIED")).toBe(false);
      expect(await h.pendingDecide(id)).toBe(false);
    }
  });

  it("refuses when the workflow's own timeout has run out, and across namespaces", async () => {
    const name = await h.register(workflow([simple("a", { policy: { retryCount: 0 } })], [], { timeoutSeconds: 60, timeoutPolicy: "TIME_OUT_WF" }));
    const id = await h.start(name);
    await h.drive(() => ({ status: "FAILED", reason: "x" }));
    expect(await h.execution(id)).toMatchObject({ status: "FAILED" });
    expect(await retry(id, h.otherNamespaceId)).toMatchObject({ ok: false, code: "not-found" });
    expect(await retry(randomUUID())).toMatchObject({ ok: false, code: "not-found" });
    const later = await retryWorkflow({ ...h.deps(), now: () => Date.now() + 120_000 }, { namespaceId: h.namespaceId, workflowId: id, actor: h.actor });
    expect(later).toMatchObject({ ok: false, code: "workflow-timeout-passed" });
    expect((await h.execution(id)).status).toBe("FAILED");
    // Within the timeout it is retried, and its timeout timer is armed again.
    expect(await retry(id)).toMatchObject({ ok: true });
    const timers = await h.t.db.selectFrom("Timers").select(["kind", "taskId"]).where("workflowId", "=", id).execute();
    expect(timers).toContainEqual({ kind: "workflowTimeout", taskId: null });
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
  });
});
