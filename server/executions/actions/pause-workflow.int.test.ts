import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { chain, simple, workflow } from "../../../engine/definition/test-fixtures";
import { enqueueDecide, lockWorkflow } from "../../store/decide-queues";
import { leaseTasks } from "../../store/task-queues";
import { waitUntil } from "../../testing/wait-until";
import { completeTaskFromWorker } from "../../store/task-executions";
import { summary, useActionHarness } from "./action-test-harness";
import { pauseWorkflow } from "./pause-workflow";
import { resumeWorkflow } from "./resume-workflow";

const h = useActionHarness();

describe("pauseWorkflow / resumeWorkflow", () => {
  it("pauses a running workflow: nothing new is scheduled, an in-flight completion is kept and acted on at resume", async () => {
    const name = await h.register(workflow([simple("a"), simple("b")], chain("a", "b")));
    const id = await h.start(name);
    await h.evaluate();
    const [leased] = await leaseTasks(h.t.db, { queueName: "task", namespaceId: h.namespaceId, count: 1, leaseSeconds: 30, owner: "w1" });
    expect(leased?.task.refName).toBe("a");

    const paused = await pauseWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor, reason: "maintenance" });
    expect(paused).toEqual({ ok: true, workflowId: id, status: "PAUSED" });
    expect((await h.execution(id)).status).toBe("PAUSED");

    // The worker finishes the task it held; the decide it enqueues is dropped while paused.
    expect(await completeTaskFromWorker(h.t.db, { namespaceId: h.namespaceId, workflowId: id, taskId: leased!.task.id, status: "COMPLETED", output: { n: 1 }, workerId: "w1" })).toMatchObject({ ok: true });
    await h.drive();
    expect(summary(await h.tasks(id))).toEqual([["a", 0, "COMPLETED"]]);
    expect((await h.tasks(id))[0]!.deciderSeenAt).toBeNull();
    expect((await h.execution(id)).status).toBe("PAUSED");

    const resumed = await resumeWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor });
    expect(resumed).toEqual({ ok: true, workflowId: id, status: "RUNNING" });
    expect(await h.pendingDecide(id)).toBe(true);
    await h.drive();
    expect(summary(await h.tasks(id))).toEqual([
      ["a", 0, "COMPLETED"],
      ["b", 0, "COMPLETED"],
    ]);
    expect((await h.execution(id)).status).toBe("COMPLETED");

    const events = await h.events(id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const pausedEvent = events.find((e) => e.type === "WORKFLOW_PAUSED");
    expect(pausedEvent).toMatchObject({ status: "PAUSED", data: { reason: "maintenance", actor: { type: "user", id: "operator-1" } } });
    expect(events.find((e) => e.type === "WORKFLOW_RESUMED")).toMatchObject({ status: "RUNNING", data: { actor: { type: "user", id: "operator-1" } } });
    // Paused before b was scheduled, resumed before it.
    const order = events.map((e) => `${e.type}${e.refName ? `:${e.refName}` : ""}`);
    expect(order.indexOf("WORKFLOW_PAUSED")).toBeLessThan(order.indexOf("WORKFLOW_RESUMED"));
    expect(order.indexOf("WORKFLOW_RESUMED")).toBeLessThan(order.indexOf("TASK_SCHEDULED:b"));

    const audit = await h.audit(id);
    expect(audit.map((a) => [a.action, a.actorType, a.actorId, a.namespaceId])).toEqual([
      ["workflow.pause", "user", "operator-1", h.namespaceId],
      ["workflow.resume", "user", "operator-1", h.namespaceId],
    ]);
    expect(audit[0]!.details).toEqual({ from: "RUNNING", reason: "maintenance" });
  });

  it("refuses what does not fit the status, and writes nothing when it refuses", async () => {
    const name = await h.register(workflow([simple("a")]));
    const id = await h.start(name);
    const base = { namespaceId: h.namespaceId, workflowId: id, actor: h.actor };
    expect(await resumeWorkflow(h.deps(), base)).toMatchObject({ ok: false, code: "not-paused", message: expect.stringContaining("RUNNING") as unknown });
    expect(await pauseWorkflow(h.deps(), base)).toMatchObject({ ok: true });
    expect(await pauseWorkflow(h.deps(), base)).toMatchObject({ ok: false, code: "not-running", message: expect.stringContaining("PAUSED") as unknown });
    expect(await resumeWorkflow(h.deps(), base)).toMatchObject({ ok: true });
    await h.drive();
    expect((await h.execution(id)).status).toBe("COMPLETED");
    expect(await pauseWorkflow(h.deps(), base)).toMatchObject({ ok: false, code: "not-running" });
    expect(await resumeWorkflow(h.deps(), base)).toMatchObject({ ok: false, code: "not-paused" });
    expect((await h.audit(id)).map((a) => a.action)).toEqual(["workflow.pause", "workflow.resume"]);
    expect((await h.events(id)).filter((e) => e.type === "WORKFLOW_PAUSED")).toHaveLength(1);
  });

  it("refuses bad input with every problem, and never throws", async () => {
    const refused = await pauseWorkflow(h.deps(), { namespaceId: "nope", workflowId: randomUUID(), actor: { type: "robot", id: "" } });
    expect(refused).toMatchObject({ ok: false, code: "invalid-input" });
    if (refused.ok) throw new Error("unreachable");
    expect(refused.message).toContain("namespaceId");
    expect(refused.message).toContain("actor.type");
    expect(refused.message).toContain("actor.id");
    expect(await resumeWorkflow(h.deps(), null)).toMatchObject({ ok: false, code: "invalid-input" });
  });

  it("never acts across namespaces: another namespace's workflow is not found, and stays as it was", async () => {
    const name = await h.register(workflow([simple("a")]));
    const id = await h.start(name);
    expect(await pauseWorkflow(h.deps(), { namespaceId: h.otherNamespaceId, workflowId: id, actor: h.actor })).toEqual({ ok: false, code: "not-found", message: `Workflow ${id} not found` });
    expect(await pauseWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: randomUUID(), actor: h.actor })).toMatchObject({ ok: false, code: "not-found" });
    expect((await h.execution(id)).status).toBe("RUNNING");
    await pauseWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor });
    expect(await resumeWorkflow(h.deps(), { namespaceId: h.otherNamespaceId, workflowId: id, actor: h.actor })).toMatchObject({ ok: false, code: "not-found" });
    expect((await h.execution(id)).status).toBe("PAUSED");
    expect(await h.audit(id)).toHaveLength(1);
    await resumeWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor });
    await h.drive();
  });

  it("takes the decide-queue row before the workflow row, as the evaluator does, so a decider holding a claim never deadlocks with it", async () => {
    const name = await h.register(workflow([simple("a")]));
    const id = await h.start(name);
    await h.evaluate();
    await pauseWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor });
    await enqueueDecide(h.t.db, { workflowId: id, namespaceId: h.namespaceId, reason: "poke" });

    // A decider: claims (deletes) the decide row, and — once the resume is waiting — locks the workflow.
    let claimed!: () => void;
    const claimedSignal = new Promise<void>((resolve) => (claimed = resolve));
    let proceed!: () => void;
    const proceedSignal = new Promise<void>((resolve) => (proceed = resolve));
    const decider = h.t.db.transaction().execute(async (trx) => {
      // Shorter than deadlock_timeout (1 s): had the resume locked the workflow first, this would fail here.
      await sql`SET LOCAL lock_timeout = '500ms'`.execute(trx);
      await sql`DELETE FROM "DecideQueues" WHERE "workflowId" = ${id}::uuid`.execute(trx);
      claimed();
      await proceedSignal;
      return (await lockWorkflow(trx, id))?.status;
    });
    await claimedSignal;
    const resume = resumeWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor });
    await waitUntil(
      async () => {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS "n" FROM pg_stat_activity
          WHERE "datname" = current_database() AND "wait_event_type" = 'Lock' AND "pid" <> pg_backend_pid()`.execute(h.t.db);
        return (rows[0]?.n ?? 0) > 0;
      },
      { what: "the resume to wait on the claimed decide row", timeoutMs: 10_000, intervalMs: 20 },
    );
    proceed();
    expect(await decider).toBe("PAUSED");
    expect(await resume).toMatchObject({ ok: true });
    expect(await h.pendingDecide(id)).toBe(true);
    await h.drive();
    expect((await h.execution(id)).status).toBe("COMPLETED");
  });
});
