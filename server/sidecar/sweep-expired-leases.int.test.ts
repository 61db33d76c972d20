import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { sweepExpiredLeases } from "./sweep-expired-leases";
import { enqueueTask, leaseTasks } from "../store/task-queues";
import type { ExpiredLease } from "../store/task-queues";

const t = useTestDatabase();

async function queuedTask(namespaceId: string, queueName: string, responseTimeoutSeconds: number | null) {
  const row = await t.db
    .insertInto("TaskExecutions")
    .values({ workflowId: randomUUID(), namespaceId, refName: "r", taskType: "SIMPLE", taskDefName: queueName, queueName, responseTimeoutSeconds })
    .returning(["id", "workflowId"])
    .executeTakeFirstOrThrow();
  await enqueueTask(t.db, { namespaceId, queueName, taskId: row.id, workflowId: row.workflowId, taskType: "SIMPLE", priority: 0, visibleAt: new Date(0) });
  return row.id;
}

describe("sweepExpiredLeases", () => {
  it("requeues expired leases in batches of `limit`, reports them for the expiry metric, and logs them", async () => {
    const ns = randomUUID();
    const t0 = new Date(Date.now() - 60_000);
    const short = [await queuedTask(ns, "sweep", 5), await queuedTask(ns, "sweep", 5), await queuedTask(ns, "sweep", 5)];
    const long = await queuedTask(ns, "sweep", null);
    expect(await leaseTasks(t.db, { namespaceId: ns, queueName: "sweep", count: 10, leaseSeconds: 3600, owner: "gone", now: t0 })).toHaveLength(4);

    const reported: ExpiredLease[] = [];
    const logged: object[] = [];
    const options = {
      limit: 2,
      now: new Date(t0.getTime() + 6_000),
      onExpired: (tasks: readonly ExpiredLease[]) => reported.push(...tasks),
      logger: { info: (obj: object) => logged.push(obj) },
    };
    expect(await sweepExpiredLeases(t.db, options)).toBe(2);
    expect(await sweepExpiredLeases(t.db, options)).toBe(1);
    expect(await sweepExpiredLeases(t.db, options)).toBe(0);
    expect(reported.map((e) => e.taskId).sort()).toEqual([...short].sort());
    expect(reported.every((e) => e.previousOwner === "gone")).toBe(true);
    expect(logged).toEqual([expect.objectContaining({ count: 2 }), expect.objectContaining({ count: 1 })]);

    // The plain lease (no response timeout) runs its hour; the requeued three are leasable again.
    const again = await leaseTasks(t.db, { namespaceId: ns, queueName: "sweep", count: 10, leaseSeconds: 30, owner: "next" });
    expect(again.map((l) => l.task.id).sort()).toEqual([...short].sort());
    expect(again.map((l) => l.task.id)).not.toContain(long);
  });
});
