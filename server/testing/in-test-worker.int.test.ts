import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { enqueueTask } from "../store/task-queues";
import { startInTestWorker } from "./in-test-worker";
import { waitUntil } from "./wait-until";

const t = useTestDatabase();
let namespaceId: string;

beforeAll(async () => {
  namespaceId = (await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow()).id;
});

/** `count` SCHEDULED tasks on `queueName`, each queued, as the decider would leave them. */
async function queueTasks(queueName: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const taskId = randomUUID();
    const workflowId = randomUUID();
    await t.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("TaskExecutions")
        .values({ id: taskId, workflowId, namespaceId, refName: `t${i}`, taskType: "SIMPLE", taskDefName: queueName, queueName })
        .execute();
      await enqueueTask(trx, { namespaceId, queueName, taskId, workflowId, taskType: "SIMPLE", priority: 0 });
    });
    ids.push(taskId);
  }
  return ids;
}

describe("startInTestWorker", () => {
  it("holds at most `concurrency` tasks, and stop() finishes and reports those while leaving the rest queued", async () => {
    const queueName = "itw_concurrency";
    const ids = await queueTasks(queueName, 6);
    let active = 0;
    let peak = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const worker = startInTestWorker({
      db: t.db,
      notifier: null,
      namespaceId,
      queueName,
      concurrency: 3,
      recheckIntervalMs: 50,
      handler: async (task) => {
        peak = Math.max(peak, ++active);
        await gate;
        active--;
        return { status: "COMPLETED", output: { ref: task.refName } };
      },
    });
    await waitUntil(() => active === 3, { what: "three tasks in hand", timeoutMs: 10_000 });
    const leased = await t.db.selectFrom("TaskQueues").select("taskId").where("queueName", "=", queueName).where("leaseOwner", "is not", null).execute();
    expect(leased).toHaveLength(3);

    const stopped = worker.stop();
    release();
    await stopped;
    expect(peak).toBe(3);
    expect(worker.completed).toBe(3);
    expect(worker.refused).toEqual([]);
    expect(worker.errors).toEqual([]);
    const rows = await t.db.selectFrom("TaskExecutions").select(["id", "status", "workerId"]).where("id", "in", ids).execute();
    expect(rows.filter((r) => r.status === "COMPLETED").map((r) => r.workerId)).toEqual(["in-test-worker", "in-test-worker", "in-test-worker"]);
    expect(rows.filter((r) => r.status === "SCHEDULED")).toHaveLength(3);
    const queued = await t.db.selectFrom("TaskQueues").select(["taskId", "leaseOwner"]).where("queueName", "=", queueName).execute();
    expect(queued).toHaveLength(3);
    expect(queued.every((q) => q.leaseOwner === null)).toBe(true);
  });

  it("reports a handler that throws as FAILED with the error's message", async () => {
    const queueName = "itw_throws";
    const [id] = await queueTasks(queueName, 1);
    const worker = startInTestWorker({
      db: t.db,
      notifier: null,
      namespaceId,
      queueName,
      recheckIntervalMs: 50,
      handler: () => {
        throw new Error("handler blew up");
      },
    });
    try {
      await waitUntil(() => worker.completed === 1, { what: "the failure reported", timeoutMs: 10_000 });
    } finally {
      await worker.stop();
    }
    const row = await t.db.selectFrom("TaskExecutions").select(["status", "reasonForIncompletion"]).where("id", "=", id!).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: "FAILED", reasonForIncompletion: "handler blew up" });
  });
});
