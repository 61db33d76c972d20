import { describe, expect, it } from "vitest";
import { chain, edge, node, simple, workflow } from "../../../engine/definition/test-fixtures";
import { summary, useActionHarness } from "./action-test-harness";
import { rerunWorkflow } from "./rerun-workflow";

const h = useActionHarness();

const rerun = (workflowId: string, fromRef: string, extra: Record<string, unknown> = {}, namespaceId = h.namespaceId) =>
  rerunWorkflow(h.deps(), { namespaceId, workflowId, actor: h.actor, fromRef, ...extra });

describe("rerunWorkflow", () => {
  it("reruns a completed workflow from a middle node with a new input: that node and everything after run again, upstream does not", async () => {
    const name = await h.register(
      workflow([simple("a"), simple("b", { input: { x: "${workflow.input.x}", fromA: "${a.output.v}" } }), simple("c", { input: { fromB: "${b.output.v}" } })], chain("a", "b", "c")),
    );
    const id = await h.start(name, { x: 1 });
    const work = (task: { refName: string; input: unknown }) => ({ status: "COMPLETED" as const, output: { v: `${task.refName}:${JSON.stringify(task.input)}` } });
    await h.drive(work);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED", output: { v: 'c:{"fromB":"b:{\\"x\\":1,\\"fromA\\":\\"a:{}\\"}"}' } });
    const before = await h.tasks(id);

    const result = await rerun(id, "b", { input: { x: 2 } });
    expect(result).toMatchObject({ ok: true, status: "RUNNING", reactivated: ["a"], retried: [] });
    if (!result.ok) throw new Error("unreachable");
    expect(result.removed.map((r) => [r.ref, r.attempt, r.status])).toEqual([
      ["b", 0, "COMPLETED"],
      ["c", 0, "COMPLETED"],
    ]);
    expect(summary(await h.tasks(id))).toEqual([["a", 0, "COMPLETED"]]);
    expect(await h.execution(id)).toMatchObject({ status: "RUNNING", input: { x: 2 }, endedAt: null });

    const handled = await h.drive(work);
    expect(handled.map((t) => [t.refName, t.input])).toEqual([
      ["b", { x: 2, fromA: "a:{}" }],
      ["c", { fromB: 'b:{"x":2,"fromA":"a:{}"}' }],
    ]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED", output: { v: 'c:{"fromB":"b:{\\"x\\":2,\\"fromA\\":\\"a:{}\\"}"}' } });
    const after = await h.tasks(id);
    expect(after.find((r) => r.refName === "a")!.id).toBe(before.find((r) => r.refName === "a")!.id);
    expect(summary(after)).toEqual([
      ["a", 0, "COMPLETED"],
      ["b", 0, "COMPLETED"],
      ["c", 0, "COMPLETED"],
    ]);

    const events = await h.events(id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const rerunEvent = events.find((e) => e.type === "WORKFLOW_RERUN")!;
    expect(rerunEvent).toMatchObject({ refName: "b", status: "RUNNING" });
    expect(rerunEvent.data).toMatchObject({
      from: "COMPLETED",
      fromRef: "b",
      inputChanged: true,
      removedCount: 2,
      removed: [
        { ref: "b", attempt: 0, status: "COMPLETED", taskId: before.find((r) => r.refName === "b")!.id },
        { ref: "c", attempt: 0, status: "COMPLETED", taskId: before.find((r) => r.refName === "c")!.id },
      ],
      reactivated: ["a"],
      actor: { type: "user", id: "operator-1" },
    });
    expect(events.filter((e) => e.type === "WORKFLOW_COMPLETED")).toHaveLength(2);
    expect((await h.audit(id)).map((a) => [a.action, a.details])).toEqual([["workflow.rerun", { from: "COMPLETED", fromRef: "b", inputChanged: true, removedCount: 2 }]]);
  });

  it("rerun from a SWITCH with a new input takes the other case; the branch taken before is skipped now", async () => {
    const name = await h.register(
      workflow(
        [simple("a"), node("SWITCH", "s", { cases: ["x", "y"], evaluatorType: "value-param", expression: "kind", input: { kind: "${workflow.input.kind}" } }), simple("x1"), simple("y1")],
        [edge("a", "s"), edge("s", "x1", "x"), edge("s", "y1", "y")],
      ),
    );
    const id = await h.start(name, { kind: "x" });
    await h.drive();
    expect(summary(await h.tasks(id)).map(([ref, , status]) => `${ref}:${status}`)).toEqual(["a:COMPLETED", "s:COMPLETED", "x1:COMPLETED", "y1:SKIPPED"]);

    expect(await rerun(id, "s", { input: { kind: "y" } })).toMatchObject({ ok: true });
    const handled = await h.drive();
    expect(handled.map((t) => t.refName)).toEqual(["y1"]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    expect(summary(await h.tasks(id)).map(([ref, , status]) => `${ref}:${status}`)).toEqual(["a:COMPLETED", "s:COMPLETED", "x1:SKIPPED", "y1:COMPLETED"]);
  });

  it("reruns a failed workflow from its start node: every node runs again from attempt 0", async () => {
    const name = await h.register(workflow([simple("a"), simple("b", { policy: { retryCount: 0 } })], chain("a", "b")));
    const id = await h.start(name);
    let fail = true;
    const handler = (task: { refName: string }) => (fail && task.refName === "b" ? ({ status: "FAILED", reason: "x" } as const) : ({ status: "COMPLETED" } as const));
    await h.drive(handler);
    expect(await h.execution(id)).toMatchObject({ status: "FAILED" });
    fail = false;
    expect(await rerun(id, "a")).toMatchObject({ ok: true, reactivated: [] });
    expect(await h.tasks(id)).toEqual([]);
    expect((await h.drive(handler)).map((t) => t.refName)).toEqual(["a", "b"]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED", input: {} });
    expect(summary(await h.tasks(id))).toEqual([
      ["a", 0, "COMPLETED"],
      ["b", 0, "COMPLETED"],
    ]);
  });

  it("reopens failed work outside the rerun's reach, so a join downstream still gets both branches", async () => {
    const name = await h.register(
      workflow(
        [simple("a"), simple("b", { policy: { retryCount: 0 } }), simple("c", { name: "other" }), node("JOIN", "j", { joinOn: ["b", "c"] }), simple("z")],
        [edge("a", "b"), edge("a", "c"), edge("b", "j"), edge("c", "j"), edge("j", "z")],
      ),
    );
    const id = await h.start(name);
    // b fails while c waits on its own queue, unpolled: the failure cancels c.
    let fail = true;
    await h.drive((task) => (task.refName === "b" && fail ? { status: "FAILED", reason: "b broke" } : { status: "COMPLETED" }));
    expect(await h.execution(id)).toMatchObject({ status: "FAILED", failedTaskRef: "b" });
    expect(summary(await h.tasks(id)).map(([ref, , status]) => `${ref}:${status}`)).toEqual(["a:COMPLETED", "b:FAILED", "c:CANCELED"]);

    fail = false;
    const result = await rerun(id, "b");
    expect(result).toMatchObject({ ok: true, reactivated: ["a"], retried: [{ ref: "c", attempt: 1, previous: { status: "CANCELED" } }] });
    await h.drive(undefined, { queue: "other" });
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    expect(summary(await h.tasks(id)).map(([ref, attempt, status]) => `${ref}.${attempt}:${status}`)).toEqual([
      "a.0:COMPLETED",
      "b.0:COMPLETED",
      "c.0:CANCELED",
      "c.1:COMPLETED",
      "j.0:COMPLETED",
      "z.0:COMPLETED",
    ]);
  });

  it("refuses a running workflow, an unknown node, a node inside a loop, an input its schema rejects, and another namespace", async () => {
    const name = await h.register(
      workflow(
        [simple("a"), { ref: "loop", type: "DO_WHILE", items: "${workflow.input.items}", position: { x: 0, y: 0 } }, simple("step", { parent: "loop" })],
        chain("a", "loop"),
        { inputSchema: { type: "object", properties: { items: { type: "array" } }, required: ["items"] } },
      ),
    );
    const id = await h.start(name, { items: [1] });
    expect(await rerun(id, "a")).toMatchObject({ ok: false, code: "not-ended", message: expect.stringContaining("RUNNING") as unknown });
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
    expect(await rerun(id, "nope")).toMatchObject({ ok: false, code: "unknown-node" });
    expect(await rerun(id, "step")).toMatchObject({ ok: false, code: "unsupported-node", message: expect.stringContaining("rerun from loop") as unknown });
    expect(await rerun(id, "a", { input: { items: "not a list" } })).toMatchObject({ ok: false, code: "invalid-input", message: expect.stringContaining("items") as unknown });
    expect(await rerun(id, "a", {}, h.otherNamespaceId)).toMatchObject({ ok: false, code: "not-found" });
    expect(await rerun(id, "")).toMatchObject({ ok: false, code: "invalid-input" });
    expect(await h.audit(id)).toEqual([]);
    expect(await h.pendingDecide(id)).toBe(false);
    expect(summary(await h.tasks(id)).map(([ref]) => ref)).toEqual(["a", "loop", "step"]);

    // Rerun from the loop itself: the loop and its body start over.
    expect(await rerun(id, "loop", { input: { items: [1, 2] } })).toMatchObject({ ok: true, reactivated: ["a"] });
    expect((await h.drive()).map((t) => [t.refName, t.iteration])).toEqual([
      ["step", 1],
      ["step", 2],
    ]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED" });
  });
});
