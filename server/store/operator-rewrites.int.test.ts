import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { TaskStatus } from "../../db/schema";
import { useTestDatabase } from "../../db/testing/test-database";
import { enqueueDecide } from "./decide-queues";
import { cancelTaskIfOpen, countSeenSuccessfulForkInstances, deleteTaskRows, dropPendingDecide, latestTaskRowPerRef, markUnseen } from "./operator-rewrites";
import { insertTasks } from "./task-executions";

const t = useTestDatabase();
let namespaceId: string;

beforeAll(async () => {
  const ns = await t.db.insertInto("Namespaces").values({ name: `ns-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow();
  namespaceId = ns.id;
});

const TERMINAL = new Set<TaskStatus>(["COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "TIMED_OUT", "CANCELED", "SKIPPED"]);

async function row(workflowId: string, refName: string, iteration: number, attempt: number, status: TaskStatus, seen = true) {
  const ended = TERMINAL.has(status) ? new Date() : null;
  const [r] = await insertTasks(t.db, [
    { workflowId, namespaceId, refName, iteration, attempt, taskType: "SIMPLE", taskDefName: "task", queueName: null, status, endedAt: ended, deciderSeenAt: ended !== null && seen ? ended : null },
  ]);
  return r!;
}

describe("operator rewrites", () => {
  it("latestTaskRowPerRef returns each ref's row by (iteration DESC, attempt DESC), fork instances included", async () => {
    const wf = randomUUID();
    await row(wf, "a", 0, 0, "FAILED");
    const a1 = await row(wf, "a", 0, 1, "COMPLETED");
    await row(wf, "body", 1, 0, "COMPLETED");
    await row(wf, "body", 2, 0, "FAILED");
    const body21 = await row(wf, "body", 2, 1, "SCHEDULED");
    const inst = await row(wf, "fan#0", 0, 0, "COMPLETED");
    const latest = await latestTaskRowPerRef(t.db, wf);
    expect(latest.map((r) => r.id).sort()).toEqual([a1.id, body21.id, inst.id].sort());
  });

  it("deleteTaskRows removes every iteration and attempt of the refs (or all), and returns them", async () => {
    const wf = randomUUID();
    await row(wf, "a", 0, 0, "COMPLETED");
    await row(wf, "b", 0, 0, "FAILED");
    await row(wf, "b", 0, 1, "COMPLETED");
    await row(wf, "c", 1, 0, "COMPLETED");
    expect((await deleteTaskRows(t.db, wf, ["b", "c"])).map((r) => [r.refName, r.iteration, r.attempt])).toEqual([
      ["b", 0, 0],
      ["b", 0, 1],
      ["c", 1, 0],
    ]);
    expect(await deleteTaskRows(t.db, wf, [])).toEqual([]);
    expect((await deleteTaskRows(t.db, wf, "all")).map((r) => r.refName)).toEqual(["a"]);
  });

  it("countSeenSuccessfulForkInstances counts successful, seen instances of the fork's iteration only", async () => {
    const wf = randomUUID();
    await row(wf, "fan#0", 0, 0, "COMPLETED");
    await row(wf, "fan#1", 0, 0, "FAILED");
    await row(wf, "fan#1", 0, 1, "COMPLETED", false); // unseen: the next evaluation counts it
    await row(wf, "fan#2", 0, 0, "SKIPPED");
    await row(wf, "fan#3", 0, 0, "COMPLETED_WITH_ERRORS");
    await row(wf, "fan#4", 1, 0, "COMPLETED"); // another iteration
    await row(wf, "fan#9", 0, 0, "COMPLETED"); // beyond total
    expect(await countSeenSuccessfulForkInstances(t.db, { workflowId: wf, forkRef: "fan", iteration: 0, total: 5 })).toBe(3);
    expect(await countSeenSuccessfulForkInstances(t.db, { workflowId: wf, forkRef: "fan", iteration: 0, total: 0 })).toBe(0);
  });

  it("cancelTaskIfOpen cancels an open task whatever its status and leaves an ended one; markUnseen clears the watermark of ended rows", async () => {
    const wf = randomUUID();
    const open = await row(wf, "a", 0, 0, "SCHEDULED");
    const done = await row(wf, "b", 0, 0, "COMPLETED");
    const now = new Date();
    expect(await cancelTaskIfOpen(t.db, { workflowId: wf, taskId: open.id, reason: "stop", now })).toMatchObject({ status: "CANCELED", reasonForIncompletion: "stop" });
    expect(await cancelTaskIfOpen(t.db, { workflowId: wf, taskId: done.id, reason: "stop", now })).toBeUndefined();
    expect(await markUnseen(t.db, wf, [done.id, randomUUID()], now)).toEqual([done.id]);
    const after = await t.db.selectFrom("TaskExecutions").select(["id", "deciderSeenAt", "status"]).where("workflowId", "=", wf).orderBy("refName").execute();
    expect(after.map((r) => [r.status, r.deciderSeenAt === null])).toEqual([
      ["CANCELED", false],
      ["COMPLETED", true],
    ]);
  });

  it("dropPendingDecide skips a decide row a decider has claimed (never waits on it), and deletes an unclaimed one", async () => {
    const claimed = randomUUID();
    const free = randomUUID();
    await enqueueDecide(t.db, { workflowId: claimed, namespaceId, reason: "x" });
    await enqueueDecide(t.db, { workflowId: free, namespaceId, reason: "x" });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let claimedIt!: () => void;
    const claimedSignal = new Promise<void>((resolve) => (claimedIt = resolve));
    const decider = t.db
      .transaction()
      .execute(async (trx) => {
        await sql`DELETE FROM "DecideQueues" WHERE "workflowId" = ${claimed}::uuid`.execute(trx);
        claimedIt();
        await held;
        throw new Error("roll back");
      })
      .catch(() => undefined);
    await claimedSignal;
    // lock_timeout: if this waited on the claim, it would fail instead of hanging the test.
    const dropped = await t.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL lock_timeout = '2s'`.execute(trx);
      return [await dropPendingDecide(trx, claimed), await dropPendingDecide(trx, free)];
    });
    expect(dropped).toEqual([false, true]);
    release();
    await decider;
    expect((await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "in", [claimed, free]).execute()).map((r) => r.workflowId)).toEqual([claimed]);
  });
});
