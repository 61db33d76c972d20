import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { chain, node, simple, workflow } from "../../../engine/definition/test-fixtures";
import { registerWorkflowDefinition } from "../../definitions/register-workflow-definition";
import { summary, useActionHarness } from "./action-test-harness";
import { restartWorkflow } from "./restart-workflow";

const h = useActionHarness();

const restart = (workflowId: string, extra: Record<string, unknown> = {}, namespaceId = h.namespaceId) =>
  restartWorkflow(h.deps(), { namespaceId, workflowId, actor: h.actor, ...extra });

describe("restartWorkflow", () => {
  it("restarts a completed workflow in place: same id, every task row gone, a fresh run with its variables and clock reset", async () => {
    const name = await h.register(
      workflow([node("SET_VARIABLE", "set", { input: { seen: "${workflow.input.x}" } }), simple("a", { input: { x: "${workflow.input.x}", before: "${workflow.variables.seen}" } })], chain("set", "a"), {
        variables: { seen: "initial" },
      }),
    );
    const id = await h.start(name, { x: 1 });
    await h.drive((task) => ({ status: "COMPLETED", output: { got: task.input } }));
    const first = await h.execution(id);
    expect(first).toMatchObject({ status: "COMPLETED", variables: { seen: 1 } });

    const result = await restart(id, { input: { x: 2 } });
    expect(result).toEqual({ ok: true, workflowId: id, status: "RUNNING", defVersion: 1, removedTasks: 2 });
    const reopened = await h.execution(id);
    expect(reopened).toMatchObject({ status: "RUNNING", input: { x: 2 }, variables: { seen: "initial" }, output: {}, endedAt: null });
    expect(reopened.startedAt.getTime()).toBeGreaterThanOrEqual(first.endedAt!.getTime());
    expect(await h.tasks(id)).toEqual([]);

    const handled = await h.drive((task) => ({ status: "COMPLETED", output: { got: task.input } }));
    expect(handled.map((t) => [t.refName, t.input])).toEqual([["a", { x: 2, before: 2 }]]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED", output: { got: { x: 2, before: 2 } } });
    expect(summary(await h.tasks(id))).toEqual([
      ["a", 0, "COMPLETED"],
      ["set", 0, "COMPLETED"],
    ]);

    const events = await h.events(id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === "WORKFLOW_STARTED")).toHaveLength(1);
    expect(types.filter((t) => t === "WORKFLOW_COMPLETED")).toHaveLength(2);
    expect(events.find((e) => e.type === "WORKFLOW_RESTARTED")!.data).toEqual({
      from: "COMPLETED",
      defVersion: 1,
      previousDefVersion: 1,
      inputChanged: true,
      removedTasks: 2,
      actor: { type: "user", id: "operator-1" },
    });
    expect((await h.audit(id)).map((a) => [a.action, a.actorId])).toEqual([["workflow.restart", "operator-1"]]);
  });

  it("restarts with the latest definition version, or a given one", async () => {
    const name = `wf_${randomUUID().slice(0, 8)}`;
    const register = async (nodes: unknown[]) => {
      const r = await registerWorkflowDefinition(h.t.db, { namespaceId: h.namespaceId, definition: workflow(nodes, [], { name }) });
      if (!r.ok) throw new Error(JSON.stringify(r));
      return r.version;
    };
    expect(await register([simple("v1_task")])).toBe(1);
    const id = await h.start(name);
    await h.drive();
    expect(await register([simple("v2_task")])).toBe(2);

    expect(await restart(id, { version: "latest" })).toMatchObject({ ok: true, defVersion: 2 });
    expect((await h.drive()).map((t) => t.refName)).toEqual(["v2_task"]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED", defVersion: 2 });

    expect(await restart(id, { version: 1 })).toMatchObject({ ok: true, defVersion: 1 });
    expect((await h.drive()).map((t) => t.refName)).toEqual(["v1_task"]);
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED", defVersion: 1 });

    expect(await restart(id, { version: 9 })).toMatchObject({ ok: false, code: "definition-not-found" });
    expect(await restart(id, { version: 0 })).toMatchObject({ ok: false, code: "invalid-input" });
    expect(await h.execution(id)).toMatchObject({ status: "COMPLETED", defVersion: 1 });
  });

  it("refuses a running workflow, an input the schema rejects, and another namespace's workflow", async () => {
    const name = await h.register(workflow([simple("a")], [], { inputSchema: { type: "object", properties: { n: { type: "number" } } } }));
    const id = await h.start(name, { n: 1 });
    expect(await restart(id)).toMatchObject({ ok: false, code: "not-ended", message: expect.stringContaining("RUNNING") as unknown });
    await h.drive();
    expect(await restart(id, { input: { n: "one" } })).toMatchObject({ ok: false, code: "invalid-input", message: expect.stringContaining("input.n") as unknown });
    expect(await restart(id, {}, h.otherNamespaceId)).toMatchObject({ ok: false, code: "not-found" });
    expect(await h.audit(id)).toEqual([]);
    expect(summary(await h.tasks(id))).toEqual([["a", 0, "COMPLETED"]]);
    expect(await h.pendingDecide(id)).toBe(false);
  });
});
