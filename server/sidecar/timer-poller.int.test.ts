import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { createDb } from "../../db/pool";
import type { TaskStatus, TimerKind, WorkflowStatus } from "../../db/schema";
import { useTestDatabase } from "../../db/testing/test-database";
import { decodeTimerReason, fireDueTimerBatch, fireDueTimers, releaseStaleTimerClaims } from "./timer-poller";
import type { FireDueTimersResult } from "./timer-poller";
import { armTimer, claimDueTimers } from "../store/timers";
import { insertWorkflowExecution } from "../store/workflow-executions";

const t = useTestDatabase();
const MINUTE = 60_000;

beforeEach(async () => {
  await t.db.deleteFrom("Timers").execute();
  await t.db.deleteFrom("DecideQueues").execute();
});

async function workflow(status: WorkflowStatus = "RUNNING", namespaceId = randomUUID()): Promise<{ id: string; namespaceId: string }> {
  const row = await insertWorkflowExecution(t.db, { namespaceId, defName: "timers", defVersion: 1, status });
  return { id: row.id, namespaceId };
}

async function task(wf: { id: string; namespaceId: string }, status: TaskStatus = "IN_PROGRESS"): Promise<string> {
  const terminal = !["SCHEDULED", "IN_PROGRESS"].includes(status);
  const row = await t.db
    .insertInto("TaskExecutions")
    .values({
      workflowId: wf.id,
      namespaceId: wf.namespaceId,
      refName: `ref_${randomUUID().slice(0, 8)}`,
      taskType: "SIMPLE",
      taskDefName: "t",
      status,
      endedAt: terminal ? new Date() : null,
      deciderSeenAt: terminal ? new Date() : null,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

function arm(wf: { id: string; namespaceId: string }, fireAt: Date, extra: { kind?: TimerKind; taskId?: string; payload?: unknown } = {}) {
  return armTimer(t.db, { kind: extra.kind ?? "workflowTimeout", fireAt, namespaceId: wf.namespaceId, workflowId: wf.id, taskId: extra.taskId, payload: extra.payload });
}

async function decides(): Promise<Map<string, string | null>> {
  const rows = await t.db.selectFrom("DecideQueues").select(["workflowId", "reason"]).execute();
  return new Map(rows.map((row) => [row.workflowId, row.reason]));
}

async function timerIds(): Promise<string[]> {
  return (await t.db.selectFrom("Timers").select("id").execute()).map((row) => row.id);
}

describe("fireDueTimers", () => {
  it("enqueues a decide per due timer's workflow, with a reason that decodes to the timer, and deletes the timer", async () => {
    const now = new Date();
    const a = await workflow();
    const b = await workflow("PAUSED");
    const taskId = await task(a);
    const key = { ref: "slow", iteration: 0, attempt: 1 };
    const taskTimer = await arm(a, new Date(now.getTime() - MINUTE), { kind: "startToClose", taskId, payload: { key } });
    const pausedTimer = await arm(b, new Date(now.getTime() - 1_000), { kind: "wait" });
    const future = await arm(a, new Date(now.getTime() + MINUTE));

    expect(await fireDueTimers(t.db, { limit: 10, owner: "p1", now })).toBe(2);

    const queued = await decides();
    expect([...queued.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(decodeTimerReason(queued.get(a.id) ?? null)).toEqual({ kind: "startToClose", taskId, key, fireAt: taskTimer.fireAt.getTime() });
    expect(decodeTimerReason(queued.get(b.id) ?? null)).toEqual({ kind: "wait", fireAt: pausedTimer.fireAt.getTime() });
    expect(await timerIds()).toEqual([future.id]);
    // Nothing left due: an empty pass.
    expect(await fireDueTimers(t.db, { limit: 10, owner: "p1", now })).toBe(0);
  });

  it("drops, without a decide, a timer whose workflow has ended or is gone, or whose task has ended", async () => {
    const now = new Date();
    const past = new Date(now.getTime() - MINUTE);
    const ended = await workflow("COMPLETED");
    const terminated = await workflow("TERMINATED");
    const gone = { id: randomUUID(), namespaceId: randomUUID() };
    const running = await workflow();
    const doneTask = await task(running, "COMPLETED");
    const missingTask = randomUUID();
    await arm(ended, past);
    await arm(terminated, past, { kind: "startToClose", taskId: await task(terminated) });
    await arm(gone, past);
    await arm(running, past, { kind: "startToClose", taskId: doneTask });
    await arm(running, past, { kind: "scheduleToStart", taskId: missingTask });

    const result = await fireDueTimerBatch(t.db, { limit: 10, owner: "p1", now });
    expect(result.claimed).toBe(5);
    expect(result.decides).toEqual([]);
    const why = Object.fromEntries(result.dropped.map((d) => [`${d.workflowId}:${d.why}`, true]));
    expect(Object.keys(why).sort()).toEqual(
      [`${ended.id}:workflow-ended`, `${terminated.id}:workflow-ended`, `${gone.id}:workflow-missing`, `${running.id}:task-ended`].sort(),
    );
    expect(result.dropped).toHaveLength(5);
    expect(await decides()).toEqual(new Map());
    expect(await timerIds()).toEqual([]);
  });

  it("makes one decide of several due timers of one workflow, naming a task timer", async () => {
    const now = new Date();
    const wf = await workflow();
    const taskId = await task(wf);
    await arm(wf, new Date(now.getTime() - 3 * MINUTE), { kind: "workflowTimeout" });
    const taskTimer = await arm(wf, new Date(now.getTime() - MINUTE), { kind: "taskTimeout", taskId });
    await arm(wf, new Date(now.getTime() - 2 * MINUTE), { kind: "wait", taskId });

    const result = await fireDueTimerBatch(t.db, { limit: 10, owner: "p1", now });
    expect(result.decides).toHaveLength(1);
    expect(result.decides[0]?.timerIds).toHaveLength(3);
    // A task timer before a workflow one, then the earliest: the wait at -2 min.
    const reason = decodeTimerReason((await decides()).get(wf.id) ?? null);
    expect(reason).toMatchObject({ kind: "wait", taskId });
    expect(reason?.fireAt).toBeLessThan(taskTimer.fireAt.getTime());
    expect(await timerIds()).toEqual([]);
  });

  it("fires a full batch of `limit` and leaves the rest for the next pass, earliest first", async () => {
    const now = new Date();
    const wfs = [];
    for (let i = 0; i < 5; i++) {
      const wf = await workflow();
      await arm(wf, new Date(now.getTime() - (10 - i) * 1_000));
      wfs.push(wf.id);
    }
    expect(await fireDueTimers(t.db, { limit: 3, owner: "p", now })).toBe(3);
    expect([...(await decides()).keys()].sort()).toEqual(wfs.slice(0, 3).sort());
    expect(await fireDueTimers(t.db, { limit: 3, owner: "p", now })).toBe(2);
    expect(await timerIds()).toEqual([]);
  });

  it("never fires one timer twice when two pollers run at once", async () => {
    const now = new Date();
    const due = new Map<string, string>();
    const workflows = await Promise.all(Array.from({ length: 150 }, () => workflow()));
    for (const [i, wf] of workflows.entries()) {
      const timer = await arm(wf, new Date(now.getTime() - (i % 50) * 1_000));
      due.set(timer.id, wf.id);
    }
    const pools = [createDb(t.url, { max: 2 }), createDb(t.url, { max: 2 })];
    try {
      const passes = await Promise.all(
        pools.map(async (db, p) => {
          const mine: FireDueTimersResult[] = [];
          for (;;) {
            const result = await fireDueTimerBatch(db, { limit: 7, owner: `poller-${p}`, now });
            if (result.claimed === 0) return mine;
            mine.push(result);
          }
        }),
      );
      const fired = passes.flat().flatMap((result) => result.decides.flatMap((d) => d.timerIds));
      expect(fired).toHaveLength(due.size);
      expect(new Set(fired)).toEqual(new Set(due.keys()));
      // Both pollers took part: they really ran side by side.
      expect(passes.filter((mine) => mine.length > 0)).toHaveLength(2);
      expect((await decides()).size).toBe(workflows.length);
      expect(await timerIds()).toEqual([]);
    } finally {
      await Promise.all(pools.map((db) => db.destroy()));
    }
  });

  it("hands its claims back at once when the batch fails, so the next pass fires them", async () => {
    const now = new Date();
    const wf = await workflow();
    const timer = await arm(wf, new Date(now.getTime() - MINUTE));
    // A decide enqueue that fails, for this workflow only.
    await sql`
      CREATE FUNCTION "fail_decide"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'decide refused'; END; $$`.execute(t.db);
    await sql.raw(`CREATE TRIGGER "fail_decide" BEFORE INSERT ON "DecideQueues" FOR EACH ROW
      WHEN (NEW."workflowId" = '${wf.id}') EXECUTE FUNCTION "fail_decide"()`).execute(t.db);
    try {
      await expect(fireDueTimers(t.db, { limit: 10, owner: "p1", now })).rejects.toThrow(/decide refused/);
      const row = await t.db.selectFrom("Timers").select(["id", "claimedAt", "claimedBy"]).executeTakeFirstOrThrow();
      expect(row).toEqual({ id: timer.id, claimedAt: null, claimedBy: null });
    } finally {
      await sql`DROP TRIGGER "fail_decide" ON "DecideQueues"`.execute(t.db);
      await sql`DROP FUNCTION "fail_decide"()`.execute(t.db);
    }
    expect(await fireDueTimers(t.db, { limit: 10, owner: "p2", now })).toBe(1);
    expect((await decides()).has(wf.id)).toBe(true);
  });

  it("refuses a transaction: the claim must commit on its own", async () => {
    await expect(t.db.transaction().execute((trx) => fireDueTimers(trx, { limit: 1, owner: "p" }))).rejects.toThrow(/pass the pool/);
  });
});

describe("releaseStaleTimerClaims", () => {
  it("hands back claims older than the window, which the next pass then fires", async () => {
    const now = new Date();
    const wf = await workflow();
    await arm(wf, new Date(now.getTime() - 10 * MINUTE));
    // A poller claimed it five minutes ago and died before acting.
    expect(await claimDueTimers(t.db, { now: new Date(now.getTime() - 5 * MINUTE), limit: 10, owner: "dead" })).toHaveLength(1);
    expect(await fireDueTimers(t.db, { limit: 10, owner: "live", now })).toBe(0);

    expect(await releaseStaleTimerClaims(t.db, { staleAfterMs: 10 * MINUTE, now })).toBe(0);
    expect(await releaseStaleTimerClaims(t.db, { staleAfterMs: 2 * MINUTE, now })).toBe(1);
    expect(await fireDueTimers(t.db, { limit: 10, owner: "live", now })).toBe(1);
    expect((await decides()).has(wf.id)).toBe(true);
  });
});
