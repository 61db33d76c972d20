import { randomBytes, randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../db/pool";
import { createDb } from "../../db/pool";
import { backendPid, blockedBy } from "../../db/testing/lock-observation";
import { useTestDatabase } from "../../db/testing/test-database";
import { configureSemaphore, expireSemaphoreHolders } from "../store/semaphores";
import { upsertTaskDefinition } from "../store/task-definitions";
import type { TaskDefinitionInput } from "../store/task-definitions";
import { completeTaskFromWorker } from "../store/task-executions";
import { enqueueTasks, leaseTasks } from "../store/task-queues";
import type { LeasedTask } from "../store/task-queues";
import { QueueGateCache, gatesHaveRoom, leaseGatedTasks, releaseTaskGates } from "./task-gates";

const t = useTestDatabase();
/** Enough connections for eight concurrent leasers plus a monitor. */
let wide: Db;
/** No caching: each test defines its gates right before leasing. */
const cache = new QueueGateCache(0);

beforeAll(() => {
  wide = createDb(t.url, { max: 12 });
});

afterAll(async () => {
  await wide?.destroy();
});

/** A 10 s rate-limit window's start, ahead of the clock so tasks enqueued now are visible to leases "at" it. */
const W = Math.ceil(Date.now() / 10_000) * 10_000 + 60_000;
const at = (ms: number) => new Date(W + ms).toISOString();

async function namespace(): Promise<string> {
  const row = await t.db
    .insertInto("Namespaces")
    .values({ name: `ns-${randomBytes(4).toString("hex")}` })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

async function define(ns: string, name: string, gates: Omit<TaskDefinitionInput, "name">): Promise<void> {
  await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name, ...gates } });
}

/** `n` SCHEDULED tasks on `queue`, each in a workflow of its own, queued in order. */
async function enqueue(ns: string, queue: string, n: number): Promise<string[]> {
  return t.db.transaction().execute(async (trx) => {
    const rows = await trx
      .insertInto("TaskExecutions")
      .values(
        Array.from({ length: n }, (_, i) => ({
          workflowId: randomUUID(),
          namespaceId: ns,
          refName: `t${i}`,
          taskType: "SIMPLE",
          taskDefName: queue,
          queueName: queue,
        })),
      )
      .returning(["id", "workflowId", "refName"])
      .execute();
    rows.sort((a, b) => Number(a.refName.slice(1)) - Number(b.refName.slice(1)));
    await enqueueTasks(
      trx,
      rows.map((r) => ({ namespaceId: ns, queueName: queue, taskId: r.id, workflowId: r.workflowId, taskType: "SIMPLE", priority: 0 })),
    );
    return rows.map((r) => r.id);
  });
}

function lease(
  db: Db,
  ns: string,
  queue: string,
  count: number,
  options: { now?: string; owner?: string; leaseSeconds?: number } = {},
) {
  return leaseGatedTasks(
    db,
    { namespaceId: ns, queueName: queue, count, leaseSeconds: options.leaseSeconds ?? 300, owner: options.owner ?? "w", now: options.now },
    cache,
  );
}

const ids = (leased: readonly LeasedTask[]) => leased.map((l) => l.task.id);

/** A worker's completion, with the gate release the lead wires into it. */
async function complete(db: Db, { task }: LeasedTask): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const result = await completeTaskFromWorker(trx, {
      namespaceId: task.namespaceId,
      workflowId: task.workflowId,
      taskId: task.id,
      status: "COMPLETED",
    });
    if (!result.ok) throw new Error(`completion refused: ${result.error}`);
    await releaseTaskGates(trx, { namespaceId: task.namespaceId, taskId: task.id, queueName: task.queueName });
  });
}

async function queueState(ns: string, queue: string) {
  const { rows } = await sql<{ waiting: number; held: number; inProgress: number; scheduled: number }>`
    SELECT
      (SELECT count(*) FROM "TaskQueues" WHERE "queueName" = ${queue} AND "namespaceId" = ${ns} AND "leaseExpiresAt" IS NULL)::int AS "waiting",
      (SELECT count(*) FROM "TaskQueues" WHERE "queueName" = ${queue} AND "namespaceId" = ${ns} AND "leaseExpiresAt" IS NOT NULL)::int AS "held",
      (SELECT count(*) FROM "TaskExecutions" WHERE "namespaceId" = ${ns} AND "queueName" = ${queue} AND "status" = 'IN_PROGRESS')::int AS "inProgress",
      (SELECT count(*) FROM "TaskExecutions" WHERE "namespaceId" = ${ns} AND "queueName" = ${queue} AND "status" = 'SCHEDULED')::int AS "scheduled"`.execute(
    t.db,
  );
  return rows[0]!;
}

async function advisoryLocksHeld(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS "n" FROM pg_locks WHERE "locktype" = 'advisory' AND "pid" = pg_backend_pid()`.execute(db);
  return rows[0]!.n;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("rate limit", () => {
  it("admits 2 per 10 s window and holds the third, still queued, until the next window", async () => {
    const ns = await namespace();
    await define(ns, "rated", { rateLimitPerFrequency: 2, rateLimitFrequencyInSeconds: 10 });
    const queued = await enqueue(ns, "rated", 3);

    const first = await lease(t.db, ns, "rated", 5, { now: at(1000) });
    expect(ids(first.leased)).toEqual(queued.slice(0, 2));
    expect(first).toMatchObject({ heldBy: "rateLimit", retryAfterMs: 9000 });

    const held = await lease(t.db, ns, "rated", 5, { now: at(9999) });
    expect(held).toEqual({ leased: [], heldBy: "rateLimit", retryAfterMs: 1 });
    // Not lost: queued, unleased, its task untouched.
    expect(await queueState(ns, "rated")).toEqual({ waiting: 1, held: 2, inProgress: 2, scheduled: 1 });

    const next = await lease(t.db, ns, "rated", 5, { now: at(10_000) });
    expect(ids(next.leased)).toEqual(queued.slice(2));
    // The queue ran dry before the window's tokens did: no gate held it.
    expect(next.heldBy).toBeNull();
    const buckets = await t.db.selectFrom("RateLimitBuckets").select(["windowStart", "count"]).where("namespaceId", "=", ns).orderBy("windowStart").execute();
    expect(buckets).toEqual([
      { windowStart: new Date(W), count: 2 },
      { windowStart: new Date(W + 10_000), count: 1 },
    ]);
  });

  it("takes tokens only for what it leased: polls of an empty queue spend none", async () => {
    const ns = await namespace();
    await define(ns, "sparse", { rateLimitPerFrequency: 2, rateLimitFrequencyInSeconds: 10 });
    for (let i = 0; i < 3; i++) expect((await lease(t.db, ns, "sparse", 5, { now: at(1000) })).leased).toEqual([]);
    const queued = await enqueue(ns, "sparse", 3);
    expect(ids((await lease(t.db, ns, "sparse", 1, { now: at(2000) })).leased)).toEqual(queued.slice(0, 1));
    expect(ids((await lease(t.db, ns, "sparse", 5, { now: at(3000) })).leased)).toEqual(queued.slice(1, 2));
  });
});

describe("concurrentExecLimit", () => {
  it("with a limit of 1 and two queued tasks leases one, and the second only after the first completes", async () => {
    const ns = await namespace();
    await define(ns, "single", { concurrentExecLimit: 1 });
    const [a, b] = await enqueue(ns, "single", 2);

    const first = await lease(t.db, ns, "single", 2);
    expect(ids(first.leased)).toEqual([a]);
    expect(first.heldBy).toBe("concurrency");
    expect(await lease(t.db, ns, "single", 2)).toEqual({ leased: [], heldBy: "concurrency" });
    expect(await queueState(ns, "single")).toEqual({ waiting: 1, held: 1, inProgress: 1, scheduled: 1 });

    await complete(t.db, first.leased[0]!);
    expect(ids((await lease(t.db, ns, "single", 2)).leased)).toEqual([b]);
  });

  it("counts held tasks, so a task whose lease expired and was requeued can be leased again (no wedge)", async () => {
    const ns = await namespace();
    await define(ns, "requeued", { concurrentExecLimit: 1 });
    const [a] = await enqueue(ns, "requeued", 1);
    expect(ids((await lease(t.db, ns, "requeued", 1)).leased)).toEqual([a]);
    // The worker died: the sweeper clears the lease; the task stays IN_PROGRESS.
    await t.db.updateTable("TaskQueues").set({ leaseExpiresAt: null, leaseOwner: null }).where("queueName", "=", "requeued").where("taskId", "=", a!).execute();
    expect(await queueState(ns, "requeued")).toMatchObject({ held: 0, inProgress: 1 });
    expect(ids((await lease(t.db, ns, "requeued", 1, { owner: "w2" })).leased)).toEqual([a]);
  });

  it("serialises gated leasers of a queue: the second counts only after the first commits", async () => {
    const ns = await namespace();
    await define(ns, "raced", { concurrentExecLimit: 2 });
    await enqueue(ns, "raced", 5);
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    let holderPid = 0;
    const first = t.db.transaction().execute(async (trx) => {
      holderPid = await backendPid(trx);
      const result = await leaseGatedTasks(trx, { namespaceId: ns, queueName: "raced", count: 2, leaseSeconds: 300, owner: "a" }, cache);
      await hold;
      return result;
    });
    while (holderPid === 0) await sleep(5);
    const second = wide.transaction().execute(async (trx) => {
      const pid = await backendPid(trx);
      const waiting = blockedBy(t.db, pid, holderPid);
      const result = leaseGatedTasks(trx, { namespaceId: ns, queueName: "raced", count: 2, leaseSeconds: 300, owner: "b" }, cache);
      try {
        await waiting;
      } finally {
        release();
      }
      return result;
    });
    expect((await first).leased).toHaveLength(2);
    // Counting before the first committed, it would have seen 0 held (the
    // first's rows are skipped as locked, not counted) and leased 2 more.
    expect(await second).toEqual({ leased: [], heldBy: "concurrency" });
    expect(await queueState(ns, "raced")).toMatchObject({ held: 2, waiting: 3 });
  });

  /**
   * Eight workers lease (2 at a time) and complete as fast as they can while a
   * monitor samples the committed state. `inFlight` counts a task from the
   * moment its lease returns until its completion starts: inside the span the
   * database holds it, so its maximum is a lower bound of the true maximum.
   */
  async function drain(ns: string, queue: string, total: number, leaseFn: (owner: string) => Promise<LeasedTask[]>) {
    let inFlight = 0;
    let maxInFlight = 0;
    let maxSampled = 0;
    let done = 0;
    const leasedIds: string[] = [];
    const monitor = (async () => {
      while (done < total) {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS "n" FROM "TaskExecutions"
          WHERE "namespaceId" = ${ns} AND "queueName" = ${queue} AND "status" = 'IN_PROGRESS'`.execute(wide);
        maxSampled = Math.max(maxSampled, rows[0]!.n);
      }
    })();
    const workers = Array.from({ length: 8 }, async (_, w) => {
      while (done < total) {
        const leased = await leaseFn(`w${w}`);
        if (leased.length === 0) {
          await sleep(1);
          continue;
        }
        inFlight += leased.length;
        maxInFlight = Math.max(maxInFlight, inFlight);
        leasedIds.push(...ids(leased));
        for (const task of leased) {
          await sleep(3 + Math.random() * 5);
          inFlight--;
          await complete(wide, task);
          done++;
        }
      }
    });
    await Promise.all([...workers, monitor]);
    return { maxInFlight, maxSampled, leasedIds };
  }

  it("8 concurrent gated leasers on a limit of 3 never have more than 3 IN_PROGRESS", async () => {
    const ns = await namespace();
    await define(ns, "crowded", { concurrentExecLimit: 3 });
    const queued = await enqueue(ns, "crowded", 24);
    const gated = await drain(ns, "crowded", 24, async (owner) => (await lease(wide, ns, "crowded", 2, { owner })).leased);
    expect(gated.maxSampled).toBeLessThanOrEqual(3);
    expect(gated.maxInFlight).toBeLessThanOrEqual(3);
    // The limit was reached (both measures are lower bounds of the true
    // maximum), so the bound above was under pressure.
    expect(Math.max(gated.maxInFlight, gated.maxSampled)).toBe(3);
    expect(gated.leasedIds.sort()).toEqual([...queued].sort());

    // Control: the same workers on plain leases exceed 3, so the checks above can fail.
    await enqueue(ns, "crowded_control", 24);
    const ungated = await drain(ns, "crowded_control", 24, (owner) =>
      leaseTasks(wide, { namespaceId: ns, queueName: "crowded_control", count: 2, leaseSeconds: 300, owner }),
    );
    expect(Math.max(ungated.maxInFlight, ungated.maxSampled)).toBeGreaterThan(3);
  });
});

describe("semaphores", () => {
  it("shares 2 permits between two queues", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "printer", permits: 2 });
    await define(ns, "qa", { semaphoreName: "printer" });
    await define(ns, "qb", { semaphoreName: "printer" });
    const qa = await enqueue(ns, "qa", 2);
    const qb = await enqueue(ns, "qb", 2);

    const a = await lease(t.db, ns, "qa", 5);
    expect(ids(a.leased)).toEqual(qa);
    expect(await lease(t.db, ns, "qb", 5)).toEqual({ leased: [], heldBy: "semaphore" });

    await complete(t.db, a.leased[0]!);
    const b = await lease(t.db, ns, "qb", 5);
    expect(ids(b.leased)).toEqual(qb.slice(0, 1));
    expect(b.heldBy).toBe("semaphore");
    expect(await lease(t.db, ns, "qb", 5)).toEqual({ leased: [], heldBy: "semaphore" });
    const holders = await t.db.selectFrom("SemaphoreHolders").select("taskId").where("namespaceId", "=", ns).execute();
    expect(holders.map((h) => h.taskId).sort()).toEqual([qa[1], qb[0]].sort());
  });

  it("an expired permit is swept and frees capacity", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "one", permits: 1 });
    await define(ns, "crashy", { semaphoreName: "one" });
    const [a, b] = await enqueue(ns, "crashy", 2);
    // The worker holding `a` dies: nobody completes it or renews its permit.
    expect(ids((await lease(t.db, ns, "crashy", 2, { now: at(0), leaseSeconds: 30 })).leased)).toEqual([a]);
    expect(await lease(t.db, ns, "crashy", 2, { now: at(29_000) })).toEqual({ leased: [], heldBy: "semaphore" });

    expect((await expireSemaphoreHolders(t.db, { limit: 1000, now: at(30_000) })).count).toBeGreaterThanOrEqual(1);
    expect(await t.db.selectFrom("SemaphoreHolders").select("taskId").where("namespaceId", "=", ns).execute()).toEqual([]);
    expect(ids((await lease(t.db, ns, "crashy", 2, { now: at(30_000) })).leased)).toEqual([b]);
  });

  it("a semaphore named but never configured does not gate", async () => {
    const ns = await namespace();
    await define(ns, "free", { semaphoreName: "nobody-configured-this" });
    const queued = await enqueue(ns, "free", 3);
    const result = await lease(t.db, ns, "free", 3);
    expect(ids(result.leased)).toEqual(queued);
    expect(result.heldBy).toBeNull();
    expect(await t.db.selectFrom("SemaphoreHolders").select("taskId").where("namespaceId", "=", ns).execute()).toEqual([]);
  });
});

describe("ungated queues", () => {
  it("lease exactly as before: everything asked for, no lock, no gate rows", async () => {
    const ns = await namespace();
    await define(ns, "zeros", { concurrentExecLimit: 0, rateLimitPerFrequency: 0 });
    for (const queue of ["undefined_queue", "zeros"]) {
      const queued = await enqueue(ns, queue, 4);
      const result = await t.db.transaction().execute(async (trx) => {
        const leased = await leaseGatedTasks(trx, { namespaceId: ns, queueName: queue, count: 4, leaseSeconds: 30, owner: "w" }, cache);
        return { ...leased, locks: await advisoryLocksHeld(trx) };
      });
      expect(ids(result.leased)).toEqual(queued);
      expect(result).toMatchObject({ heldBy: null, locks: 0 });
    }
    expect(await t.db.selectFrom("RateLimitBuckets").select("count").where("namespaceId", "=", ns).execute()).toEqual([]);
    expect(await t.db.selectFrom("SemaphoreHolders").select("taskId").where("namespaceId", "=", ns).execute()).toEqual([]);
  });

  it("a gated queue's lease holds its gate lock until commit (the control for the test above)", async () => {
    const ns = await namespace();
    await define(ns, "locked", { concurrentExecLimit: 5 });
    await enqueue(ns, "locked", 1);
    const locks = await t.db.transaction().execute(async (trx) => {
      await leaseGatedTasks(trx, { namespaceId: ns, queueName: "locked", count: 1, leaseSeconds: 30, owner: "w" }, cache);
      return advisoryLocksHeld(trx);
    });
    expect(locks).toBe(1);
  });
});

describe("gatesHaveRoom", () => {
  const room = (ns: string, queue: string, now?: string) => gatesHaveRoom(t.db, { namespaceId: ns, queueName: queue, now }, cache);

  it("says whether each gate has room, without leasing anything", async () => {
    const ns = await namespace();
    expect(await room(ns, "ungated")).toBe(true);

    await define(ns, "limited", { concurrentExecLimit: 1 });
    await enqueue(ns, "limited", 2);
    expect(await room(ns, "limited")).toBe(true);
    const [held] = (await lease(t.db, ns, "limited", 1)).leased;
    expect(await room(ns, "limited")).toBe(false);
    await complete(t.db, held!);
    expect(await room(ns, "limited")).toBe(true);

    await define(ns, "rated", { rateLimitPerFrequency: 1, rateLimitFrequencyInSeconds: 10 });
    await enqueue(ns, "rated", 2);
    expect((await lease(t.db, ns, "rated", 1, { now: at(1000) })).leased).toHaveLength(1);
    expect(await room(ns, "rated", at(2000))).toBe(false);
    expect(await room(ns, "rated", at(10_000))).toBe(true);

    await configureSemaphore(t.db, { namespaceId: ns, name: "one", permits: 1 });
    await define(ns, "permitted", { semaphoreName: "one" });
    await define(ns, "unconfigured", { semaphoreName: "none" });
    await enqueue(ns, "permitted", 2);
    expect(await room(ns, "permitted")).toBe(true);
    await lease(t.db, ns, "permitted", 1);
    expect(await room(ns, "permitted")).toBe(false);
    expect(await room(ns, "unconfigured")).toBe(true);
    // Nothing above leased a task the leases did not.
    expect(await queueState(ns, "permitted")).toMatchObject({ held: 1, waiting: 1 });
  });
});

describe("QueueGateCache", () => {
  it("keeps a queue's gates for its TTL, until invalidated", async () => {
    const ns = await namespace();
    const cached = new QueueGateCache(60_000);
    expect(await cached.get(t.db, ns, "later")).toBeNull();
    await define(ns, "later", { concurrentExecLimit: 1 });
    expect(await cached.get(t.db, ns, "later")).toBeNull();
    cached.invalidate(ns, "later");
    expect(await cached.get(t.db, ns, "later")).toEqual({ rateLimit: null, concurrentExecLimit: 1, semaphoreName: null });
    // A TTL of 0 reads every time.
    await define(ns, "later", { concurrentExecLimit: 2 });
    expect(await new QueueGateCache(0).get(t.db, ns, "later")).toMatchObject({ concurrentExecLimit: 2 });
  });

  it("never hands a caller another caller's read that is still waiting: a report's transaction reads with its own connection", async () => {
    const ns = await namespace();
    await define(ns, "busy", { concurrentExecLimit: 3 });
    const cached = new QueueGateCache(60_000);
    // A pool whose one connection is taken: a read through it waits for as long as the holder likes.
    const exhausted = createDb(t.url, { max: 1 });
    let letGo = () => {};
    const released = new Promise<void>((resolve) => (letGo = resolve));
    const holder = exhausted.transaction().execute(() => released);
    try {
      const waiting = cached.get(exhausted, ns, "busy");
      // The report's read, in its transaction on another connection, must not wait behind it.
      const own = await t.db.transaction().execute((trx) => cached.get(trx, ns, "busy"));
      expect(own).toMatchObject({ concurrentExecLimit: 3 });
      letGo();
      expect(await waiting).toMatchObject({ concurrentExecLimit: 3 });
    } finally {
      letGo();
      await holder;
      await exhausted.destroy();
    }
  });

  it("does not keep a read that began before an invalidation", async () => {
    const ns = await namespace();
    await define(ns, "moving", { concurrentExecLimit: 1 });
    const cached = new QueueGateCache(60_000);
    const stale = cached.get(t.db, ns, "moving");
    cached.invalidate(ns, "moving");
    await define(ns, "moving", { concurrentExecLimit: 4 });
    await stale;
    expect(await cached.get(t.db, ns, "moving")).toMatchObject({ concurrentExecLimit: 4 });
  });

  it("does not keep a failed read", async () => {
    const ns = await namespace();
    const cached = new QueueGateCache(60_000);
    const url = new URL(t.url);
    url.pathname = "/no_such_database";
    const broken = createDb(url.toString(), { max: 1 });
    try {
      await expect(cached.get(broken, ns, "q")).rejects.toThrow(/no_such_database/);
    } finally {
      await broken.destroy();
    }
    await define(ns, "q", { concurrentExecLimit: 1 });
    expect(await cached.get(t.db, ns, "q")).toMatchObject({ concurrentExecLimit: 1 });
  });
});
