import { randomUUID } from "node:crypto";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { planWithoutSeqScans } from "../../db/testing/scan-observation";
import { useTestDatabase } from "../../db/testing/test-database";
import { leaseSystemTasks, leaseSystemTasksStatement } from "./system-task-queues";
import { enqueueTask } from "./task-queues";
import { insertTasks } from "./task-executions";

const t = useTestDatabase();
let nsA: string;
let nsB: string;

beforeAll(async () => {
  nsA = (await t.db.insertInto("Namespaces").values({ name: `a-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
  nsB = (await t.db.insertInto("Namespaces").values({ name: `b-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
});
beforeEach(async () => {
  await t.db.deleteFrom("TaskQueues").execute();
});

const QUEUES = ["HTTP", "INLINE", "JSON_JQ_TRANSFORM", "EVENT"];

/** A SCHEDULED task and its queue row. `taskType` defaults to the queue name, as the decider queues system tasks. */
async function queued(namespaceId: string, queueName: string, extra: { priority?: number; visibleAt?: Date; taskType?: string; ref?: string } = {}) {
  const workflowId = randomUUID();
  const taskType = extra.taskType ?? queueName;
  const [task] = await insertTasks(t.db, [
    { workflowId, namespaceId, refName: extra.ref ?? "t", iteration: 0, attempt: 0, taskType, taskDefName: queueName, queueName, status: "SCHEDULED" },
  ]);
  await enqueueTask(t.db, { queueName, taskId: task!.id, workflowId, namespaceId, taskType, priority: extra.priority ?? 0, visibleAt: extra.visibleAt });
  return task!;
}

describe("leaseSystemTasks", () => {
  it("leases across namespaces and queues, highest priority first, then first in first out, and starts the tasks", async () => {
    const low = await queued(nsA, "HTTP", { priority: 0 });
    const high = await queued(nsB, "INLINE", { priority: 5 });
    const lowLater = await queued(nsB, "EVENT", { priority: 0 });
    const mid = await queued(nsA, "JSON_JQ_TRANSFORM", { priority: 3 });

    const leased = await leaseSystemTasks(t.db, { queueNames: QUEUES, count: 10, leaseSeconds: 60, owner: "sys-1" });
    expect(leased.map((l) => l.task.id)).toEqual([high.id, mid.id, low.id, lowLater.id]);
    for (const { task, queue } of leased) {
      expect(task).toMatchObject({ status: "IN_PROGRESS", workerId: "sys-1", pollCount: 1 });
      expect(task.startedAt).not.toBeNull();
      expect(queue.leaseOwner).toBe("sys-1");
      expect(queue.leaseExpiresAt).not.toBeNull();
    }
    expect(await leaseSystemTasks(t.db, { queueNames: QUEUES, count: 10, leaseSeconds: 60, owner: "sys-2" })).toEqual([]);
  });

  it("respects the count across queues, and takes the best of all queues, not the first queue's", async () => {
    await queued(nsA, "HTTP", { priority: 0 });
    await queued(nsA, "HTTP", { priority: 0 });
    const best = await queued(nsB, "EVENT", { priority: 9 });
    const [only, ...rest] = await leaseSystemTasks(t.db, { queueNames: QUEUES, count: 1, leaseSeconds: 60, owner: "sys" });
    expect(rest).toEqual([]);
    expect(only!.task.id).toBe(best.id);
    // The two HTTP rows the probe locked but the merge dropped are still there for the next lease.
    expect(await leaseSystemTasks(t.db, { queueNames: QUEUES, count: 5, leaseSeconds: 60, owner: "sys" })).toHaveLength(2);
  });

  it("leaves rows that are not visible yet, queues it was not asked for, and worker tasks on a queue named like a system type", async () => {
    const now = new Date("2030-01-01T00:00:00Z");
    await queued(nsA, "HTTP", { visibleAt: new Date(now.getTime() + 60_000) });
    await queued(nsA, "billing");
    // A SIMPLE task whose definition is named "HTTP" is queued on "HTTP" too: a remote worker's.
    await queued(nsA, "HTTP", { taskType: "SIMPLE" });
    expect(await leaseSystemTasks(t.db, { queueNames: QUEUES, count: 10, leaseSeconds: 60, owner: "sys", now })).toEqual([]);
    const later = await leaseSystemTasks(t.db, { queueNames: QUEUES, count: 10, leaseSeconds: 60, owner: "sys", now: new Date(now.getTime() + 61_000) });
    expect(later.map((l) => l.task.taskType)).toEqual(["HTTP"]);
  });

  it("concurrent leasers take disjoint tasks", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 40; i++) ids.add((await queued(i % 2 ? nsA : nsB, QUEUES[i % 4]!)).id);
    const batches = await Promise.all(
      Array.from({ length: 6 }, (_, i) => leaseSystemTasks(t.db, { queueNames: QUEUES, count: 10, leaseSeconds: 60, owner: `sys-${i}` })),
    );
    const leased = batches.flat().map((l) => l.task.id);
    expect(new Set(leased).size).toBe(leased.length);
    // Whatever SKIP LOCKED left behind is found by a later pass.
    const rest = await leaseSystemTasks(t.db, { queueNames: QUEUES, count: 100, leaseSeconds: 60, owner: "sys-late" });
    expect(new Set([...leased, ...rest.map((l) => l.task.id)])).toEqual(ids);
  });

  it("deletes the queue row of a task that ended while queued instead of handing it out", async () => {
    const task = await queued(nsA, "HTTP");
    await t.db.updateTable("TaskExecutions").set({ status: "CANCELED", endedAt: new Date() }).where("workflowId", "=", task.workflowId).execute();
    expect(await leaseSystemTasks(t.db, { queueNames: QUEUES, count: 10, leaseSeconds: 60, owner: "sys" })).toEqual([]);
    expect(await t.db.selectFrom("TaskQueues").select("id").where("taskId", "=", task.id).execute()).toEqual([]);
  });

  it("reads each queue through the dequeue index, with no sort below the merge", async () => {
    const plan = await planWithoutSeqScans(t.db, leaseSystemTasksStatement({ queueNames: QUEUES, count: 10, leaseSeconds: 60, owner: "plan" }));
    expect(plan).toMatch(/Index Scan using "TaskQueues_p\d+_queueName_priority_id_idx"/);
    // The partitions' index scans merge in index order (Merge Append); the
    // only Sort node is the merge of the probes' rows, at most count × queues.
    expect(plan).toMatch(/Merge Append/);
    expect(plan.match(/->\s+Sort\b/g)?.length ?? 0).toBe(1);
  });
});
