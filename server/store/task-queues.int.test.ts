import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { Db } from "../../db/pool";
import { createDb } from "../../db/pool";
import type { TaskQueueRow } from "../../db/schema";
import { tablesScannedInTransaction } from "../../db/testing/scan-observation";
import { useTestDatabase } from "../../db/testing/test-database";
import { completeTaskFromWorker } from "./task-executions";
import {
  SYSTEM_TASKS_CHANNEL,
  SYSTEM_TASKS_WAKE_KEY,
  TASKS_CHANNEL,
  acknowledge,
  defer,
  enqueueTask,
  enqueueTasks,
  hasVisibleTask,
  leaseTasks,
  notifyTaskAvailable,
  queueDepths,
  releaseLease,
  removeQueuedTask,
  renewLease,
  requeueExpiredLeases,
} from "./task-queues";

const t = useTestDatabase();

interface Task {
  namespaceId: string;
  queueName: string;
  taskId: string;
  workflowId: string;
}

/** A SCHEDULED TaskExecutions row, as the decider would write it, not yet queued. */
async function scheduleTask(namespaceId: string, queueName: string, workflowId = randomUUID()): Promise<Task> {
  const row = await t.db
    .insertInto("TaskExecutions")
    .values({ workflowId, namespaceId, refName: `ref_${randomUUID()}`, taskType: "SIMPLE", taskDefName: queueName, queueName })
    .returning(["id", "workflowId"])
    .executeTakeFirstOrThrow();
  return { namespaceId, queueName, taskId: row.id, workflowId: row.workflowId };
}

async function queueTask(
  namespaceId: string,
  queueName: string,
  options: { priority?: number; visibleAt?: Date | string } = {},
): Promise<Task> {
  const task = await scheduleTask(namespaceId, queueName);
  expect(await enqueueTask(t.db, { ...task, taskType: "SIMPLE", priority: options.priority ?? 0, visibleAt: options.visibleAt })).toBe(true);
  return task;
}

async function queueRow(task: Task): Promise<TaskQueueRow | undefined> {
  return t.db
    .selectFrom("TaskQueues")
    .selectAll()
    .where("queueName", "=", task.queueName)
    .where("taskId", "=", task.taskId)
    .executeTakeFirst();
}

function taskRow(task: Task) {
  return t.db
    .selectFrom("TaskExecutions")
    .selectAll()
    .where("workflowId", "=", task.workflowId)
    .where("id", "=", task.taskId)
    .executeTakeFirstOrThrow();
}

const secondsFromNow = (seconds: number) => new Date(Date.now() + seconds * 1000);

function lease(namespaceId: string, queueName: string, owner: string, count = 10, now?: Date) {
  return leaseTasks(t.db, { namespaceId, queueName, count, leaseSeconds: 30, owner, now });
}

describe("enqueueTask", () => {
  it("is idempotent per (queueName, taskId)", async () => {
    const ns = randomUUID();
    const task = await scheduleTask(ns, "idem");
    const entry = { ...task, taskType: "SIMPLE", priority: 0 };
    expect(await enqueueTask(t.db, entry)).toBe(true);
    expect(await enqueueTask(t.db, entry)).toBe(false);
    expect(await enqueueTask(t.db, { ...entry, priority: 50 })).toBe(false);

    // A batch returns only what it inserted.
    const other = await scheduleTask(ns, "idem");
    const inserted = await enqueueTasks(t.db, [entry, { ...other, taskType: "SIMPLE", priority: 0 }]);
    expect(inserted.map((row) => row.taskId)).toEqual([other.taskId]);

    const rows = await t.db.selectFrom("TaskQueues").select(["taskId", "priority"]).where("namespaceId", "=", ns).execute();
    expect(rows).toHaveLength(2);
    expect(rows.find((row) => row.taskId === task.taskId)?.priority).toBe(0);
  });

  it("notifies in its own statement: at commit, not on rollback, not for a duplicate or a delayed row", async () => {
    const ns = randomUUID();
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const payloads: string[] = [];
    listener.on("notification", (message) => payloads.push(message.payload ?? ""));
    await listener.query(`LISTEN "${TASKS_CHANNEL}"`);
    try {
      const rolledBack = await scheduleTask(ns, "rolled-back");
      await t.db
        .transaction()
        .execute(async (trx) => {
          await enqueueTask(trx, { ...rolledBack, taskType: "SIMPLE", priority: 0 });
          throw new Error("roll back");
        })
        .catch(() => undefined);
      await queueTask(ns, "later", { visibleAt: secondsFromNow(60) });
      // Stamped "now" by a clock a little ahead of the transaction's now(), as
      // the application's clock is after the evaluator's transaction began.
      await queueTask(ns, "app-clock", { visibleAt: secondsFromNow(0.3) });
      const dup = await queueTask(ns, "dup");
      expect(await enqueueTask(t.db, { ...dup, taskType: "SIMPLE", priority: 0 })).toBe(false);
      // A marker committed last: notifications arrive in commit order, so once it
      // is here, anything the statements above sent would be too.
      await t.db.transaction().execute((trx) => notifyTaskAvailable(trx, ns, "marker"));
      await waitFor(() => payloads.includes(`${ns}:marker`));
      expect(payloads).toEqual([`${ns}:app-clock`, `${ns}:dup`, `${ns}:marker`]);
    } finally {
      await listener.end();
    }
  });
  it("announces a system task on the sidecar's channel, once per transaction, and a worker task on the workers'", async () => {
    const ns = randomUUID();
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (message) => heard.push(`${message.channel} ${message.payload ?? ""}`));
    await listener.query(`LISTEN "${TASKS_CHANNEL}"`);
    await listener.query(`LISTEN "${SYSTEM_TASKS_CHANNEL}"`);
    try {
      // Two INLINE rows and a JSON_JQ_TRANSFORM row in one transaction: one wake (the payload is the same).
      const system = [await scheduleTask(ns, "INLINE"), await scheduleTask(ns, "INLINE"), await scheduleTask(ns, "JSON_JQ_TRANSFORM")];
      await t.db.transaction().execute(async (trx) => {
        for (const task of system) await enqueueTask(trx, { ...task, taskType: task.queueName, priority: 0 });
      });
      await queueTask(ns, "orders");
      await t.db.transaction().execute((trx) => notifyTaskAvailable(trx, ns, "marker"));
      await waitFor(() => heard.includes(`${TASKS_CHANNEL} ${ns}:marker`));
      expect(heard).toEqual([`${SYSTEM_TASKS_CHANNEL} ${SYSTEM_TASKS_WAKE_KEY}`, `${TASKS_CHANNEL} ${ns}:orders`, `${TASKS_CHANNEL} ${ns}:marker`]);
    } finally {
      await listener.end();
    }
  });
});

describe("leaseTasks", () => {
  it("leases by priority, highest first, then first in first out", async () => {
    const ns = randomUUID();
    const priorities = [0, 5, 0, 9, 5, 0];
    const tasks: Task[] = [];
    for (const priority of priorities) tasks.push(await queueTask(ns, "prio", { priority }));
    const expected = [3, 1, 4, 0, 2, 5].map((i) => tasks[i]!.taskId);

    const first = await lease(ns, "prio", "w1", 2);
    const rest = await lease(ns, "prio", "w1", 10);
    expect([...first, ...rest].map((l) => l.queue.taskId)).toEqual(expected);
    expect(await lease(ns, "prio", "w1")).toEqual([]);
  });

  it("starts the task: IN_PROGRESS, startedAt once, pollCount + 1, workerId", async () => {
    const ns = randomUUID();
    const task = await queueTask(ns, "start");
    const [leased] = await lease(ns, "start", "worker-a");
    expect(leased?.task).toMatchObject({ id: task.taskId, status: "IN_PROGRESS", pollCount: 1, workerId: "worker-a" });
    expect(leased?.queue).toMatchObject({ taskId: task.taskId, leaseOwner: "worker-a", queueName: "start" });
    expect(leased?.queue.leaseExpiresAt).toBeInstanceOf(Date);
    const startedAt = leased?.task.startedAt;
    expect(startedAt).toBeInstanceOf(Date);

    expect(await releaseLease(t.db, { ...task, owner: "worker-a" })).toBe(true);
    const [again] = await lease(ns, "start", "worker-b");
    expect(again?.task).toMatchObject({ status: "IN_PROGRESS", pollCount: 2, workerId: "worker-b", startedAt });
    expect(await taskRow(task)).toMatchObject({ status: "IN_PROGRESS", pollCount: 2, workerId: "worker-b" });
  });

  it("leases only visible rows of its own namespace and queue", async () => {
    const ns = randomUUID();
    const visible = await queueTask(ns, "vis");
    const later = await queueTask(ns, "vis", { visibleAt: secondsFromNow(60), priority: 9 });
    await queueTask(randomUUID(), "vis");
    await queueTask(ns, "vis-other");

    expect((await lease(ns, "vis", "w")).map((l) => l.queue.taskId)).toEqual([visible.taskId]);
    expect(await lease(ns, "vis", "w")).toEqual([]);
    expect((await lease(ns, "vis", "w", 10, secondsFromNow(61))).map((l) => l.queue.taskId)).toEqual([later.taskId]);
  });

  it("hasVisibleTask sees exactly what a lease would take", async () => {
    const ns = randomUUID();
    const probe = (now?: Date) => hasVisibleTask(t.db, { namespaceId: ns, queueName: "probe", now });
    expect(await probe()).toBe(false);
    await queueTask(ns, "probe", { visibleAt: secondsFromNow(60) });
    await queueTask(randomUUID(), "probe");
    expect(await probe()).toBe(false);
    expect(await probe(secondsFromNow(61))).toBe(true);
    await queueTask(ns, "probe");
    expect(await probe()).toBe(true);
    expect(await lease(ns, "probe", "w")).toHaveLength(1);
    expect(await probe()).toBe(false);
  });

  it("drops a queue row whose task has already ended instead of handing it out", async () => {
    const ns = randomUUID();
    const dead = await queueTask(ns, "dead", { priority: 9 });
    const live = await queueTask(ns, "dead");
    await t.db
      .updateTable("TaskExecutions")
      .set({ status: "CANCELED", endedAt: new Date() })
      .where("workflowId", "=", dead.workflowId)
      .where("id", "=", dead.taskId)
      .execute();

    expect((await lease(ns, "dead", "w")).map((l) => l.queue.taskId)).toEqual([live.taskId]);
    expect(await queueRow(dead)).toBeUndefined();
    expect((await taskRow(dead)).status).toBe("CANCELED");
  });

  it("splits the work between 8 concurrent leasers: each of 200 tasks leased exactly once", async () => {
    const ns = randomUUID();
    const tasks = await Promise.all(Array.from({ length: 200 }, () => scheduleTask(ns, "skip-locked")));
    await enqueueTasks(t.db, tasks.map((task) => ({ ...task, taskType: "SIMPLE", priority: 0 })));
    const db: Db = createDb(t.url, { max: 8 });
    try {
      const perWorker = await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          const mine: string[] = [];
          for (;;) {
            const got = await leaseTasks(db, { namespaceId: ns, queueName: "skip-locked", count: 1 + (w % 4), leaseSeconds: 30, owner: `w${w}` });
            if (got.length === 0) return mine;
            for (const l of got) {
              expect(l.queue.leaseOwner).toBe(`w${w}`);
              mine.push(l.queue.taskId);
            }
          }
        }),
      );
      const all = perWorker.flat();
      expect(all).toHaveLength(200);
      expect(new Set(all).size).toBe(200);
      expect(new Set(all)).toEqual(new Set(tasks.map((task) => task.taskId)));
      // More than one leaser got work: they really ran side by side.
      expect(perWorker.filter((mine) => mine.length > 0).length).toBeGreaterThan(1);
      const counts = await t.db
        .selectFrom("TaskExecutions")
        .select(["pollCount", sql<number>`count(*)::int`.as("n")])
        .where("namespaceId", "=", ns)
        .groupBy("pollCount")
        .execute();
      expect(counts).toEqual([{ pollCount: 1, n: 200 }]);
    } finally {
      await db.destroy();
    }
  });

  it("runs each of its statements on one partition, the dequeue by an ordered index scan with no sort", async () => {
    const ns = randomUUID();
    for (const queueName of ["plan", "plan-a", "plan-b", "plan-c"]) {
      await t.db
        .insertInto("TaskQueues")
        .columns(["queueName", "taskId", "workflowId", "namespaceId", "taskType", "priority"])
        .expression(sql`SELECT ${queueName}, uuidv7(), uuidv7(), ${ns}::uuid, 'SIMPLE', (g % 3) FROM generate_series(1, 3000) AS g`)
        .execute();
    }
    // Ten of them with tasks, of two workflows, so the function has something to start.
    const heads = await t.db
      .selectFrom("TaskQueues")
      .selectAll()
      .where("queueName", "=", "plan")
      .orderBy("priority", "desc")
      .orderBy("id")
      .limit(10)
      .execute();
    const workflows = [randomUUID(), randomUUID()];
    for (const [i, head] of heads.entries()) {
      await t.db.updateTable("TaskQueues").set({ workflowId: workflows[i % 2]! }).where("queueName", "=", "plan").where("id", "=", head.id).execute();
      await t.db
        .insertInto("TaskExecutions")
        .values({ id: head.taskId, workflowId: workflows[i % 2]!, namespaceId: ns, refName: `t${i}`, taskType: "SIMPLE", taskDefName: "plan", queueName: "plan" })
        .execute();
    }
    await sql`ANALYZE "TaskQueues"`.execute(t.db);
    await sql`ANALYZE "TaskExecutions"`.execute(t.db);

    // auto_explain, told to report at NOTICE, sends the plan of every statement
    // inside the function to this client as it ran (after run-time pruning).
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    const plans: Record<string, unknown>[] = [];
    client.on("notice", (notice) => {
      const text = notice.message ?? "";
      const json = text.slice(text.indexOf("{"));
      if (text.includes("Query Text")) plans.push((JSON.parse(json) as { Plan: Record<string, unknown> }).Plan);
    });
    try {
      await client.query(`LOAD 'auto_explain'`);
      for (const setting of [
        "plan_cache_mode = force_generic_plan",
        "auto_explain.log_min_duration = 0",
        "auto_explain.log_nested_statements = on",
        "auto_explain.log_format = json",
        "auto_explain.log_level = notice",
      ]) {
        await client.query(`SET ${setting}`);
      }
      const { rows } = await client.query(`SELECT * FROM "nf_lease_tasks"($1, 'plan', 10, 30, 'w', NULL, NULL)`, [ns]);
      expect(rows).toHaveLength(10);
    } finally {
      await client.end();
    }

    const nodesOf = (plan: Record<string, unknown>): Record<string, unknown>[] => [
      plan,
      ...((plan.Plans as Record<string, unknown>[] | undefined) ?? []).flatMap(nodesOf),
    ];
    const relations = (nodes: Record<string, unknown>[], prefix: string) =>
      new Set(nodes.map((n) => n["Relation Name"]).filter((name): name is string => typeof name === "string" && name.startsWith(prefix)));
    const statements = plans.map(nodesOf);
    const dequeue = statements.find((nodes) => nodes.some((n) => n["Node Type"] === "LockRows"));
    expect(dequeue).toBeDefined();
    expect(relations(dequeue!, "TaskQueues_p").size).toBe(1);
    expect(dequeue!.map((n) => n["Node Type"])).not.toContain("Sort");
    expect(dequeue!.map((n) => n["Node Type"])).not.toContain("Seq Scan");
    expect(dequeue!.some((n) => n["Node Type"] === "Index Scan" && String(n["Index Name"]).includes("priority"))).toBe(true);
    // Every other statement (ten task starts, ten lease stamps) touched one partition of one table; the
    // queue's by index (the tasks' partitions hold a row or two here, so a scan of one is the cheaper plan).
    const others = statements.filter((nodes) => nodes !== dequeue && nodes.some((n) => typeof n["Relation Name"] === "string"));
    expect(others).toHaveLength(20);
    for (const nodes of others) {
      expect(relations(nodes, "TaskQueues_p").size + relations(nodes, "TaskExecutions_p").size).toBe(1);
      if (relations(nodes, "TaskQueues_p").size === 1) expect(nodes.map((n) => n["Node Type"])).not.toContain("Seq Scan");
    }
  });

  it("rejects a count or lease length it cannot honour", async () => {
    await expect(lease(randomUUID(), "q", "w", 0)).rejects.toThrow(RangeError);
    await expect(leaseTasks(t.db, { namespaceId: randomUUID(), queueName: "q", count: 1, leaseSeconds: 0, owner: "w" })).rejects.toThrow(
      RangeError,
    );
  });
});

describe("the report and lease functions' plans", () => {
  it("find every row by its key: a lease and a completion read no table whole, however small its partitions", async () => {
    // Each connection plans the functions' statements once. On small
    // partitions that have statistics (the sidecar's planner-statistics loop
    // analyzes them early) a sequential scan looks cheapest, and a connection
    // that drew one kept reading the queue's whole partition, dead rows
    // included, on every lease (migration 0018).
    const ns = randomUUID();
    const task = await queueTask(ns, `keyed_${randomUUID()}`);
    await sql`ANALYZE "TaskQueues", "TaskExecutions"`.execute(t.db);
    const db = createDb(t.url, { max: 1, applicationName: "lease-plan-test" });
    try {
      const readWhole = await db.transaction().execute(async (trx) => {
        const leased = await leaseTasks(trx, { namespaceId: ns, queueName: task.queueName, count: 1, leaseSeconds: 30, owner: "w" });
        expect(leased.map((l) => l.task.id)).toEqual([task.taskId]);
        await completeTaskFromWorker(trx, { namespaceId: ns, workflowId: task.workflowId, taskId: task.taskId, status: "COMPLETED", output: {}, workerId: "w" });
        return tablesScannedInTransaction(trx);
      });
      expect(readWhole).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});

describe("renewLease / acknowledge / releaseLease / defer", () => {
  async function leasedTask(queueName: string): Promise<Task> {
    const ns = randomUUID();
    const task = await queueTask(ns, queueName);
    expect(await lease(ns, queueName, "owner")).toHaveLength(1);
    return task;
  }

  it("refuse a wrong owner, queue or namespace, and change nothing", async () => {
    const task = await leasedTask("guarded");
    const before = await queueRow(task);
    const wrong = [
      { ...task, owner: "someone-else" },
      { ...task, owner: "owner", queueName: "other-queue" },
      { ...task, owner: "owner", namespaceId: randomUUID() },
    ];
    for (const held of wrong) {
      expect(await renewLease(t.db, { ...held, leaseSeconds: 600 })).toBe(false);
      expect(await releaseLease(t.db, held)).toBe(false);
      expect(await defer(t.db, { ...held, delaySeconds: 60 })).toBe(false);
      expect(await acknowledge(t.db, held)).toBe(false);
    }
    expect(await queueRow(task)).toEqual(before);

    // A task nobody leased is held by nobody either.
    const unleased = await queueTask(task.namespaceId, "guarded-2");
    const unleasedBefore = await queueRow(unleased);
    expect(await renewLease(t.db, { ...unleased, owner: "owner", leaseSeconds: 60 })).toBe(false);
    expect(await acknowledge(t.db, { ...unleased, owner: "owner" })).toBe(false);
    expect(await releaseLease(t.db, { ...unleased, owner: "owner" })).toBe(false);
    expect(await queueRow(unleased)).toEqual(unleasedBefore);
  });

  it("renewLease extends the holder's lease", async () => {
    const task = await leasedTask("renew");
    const before = (await queueRow(task))!.leaseExpiresAt!;
    expect(await renewLease(t.db, { ...task, owner: "owner", leaseSeconds: 600 })).toBe(true);
    const after = (await queueRow(task))!.leaseExpiresAt!;
    expect(after.getTime() - before.getTime()).toBeGreaterThan(500_000);
  });

  it("acknowledge deletes the row, once", async () => {
    const task = await leasedTask("ack");
    expect(await acknowledge(t.db, { ...task, owner: "owner" })).toBe(true);
    expect(await queueRow(task)).toBeUndefined();
    expect(await acknowledge(t.db, { ...task, owner: "owner" })).toBe(false);
  });

  it("releaseLease makes it leasable again at once, by anyone", async () => {
    const task = await leasedTask("release");
    expect(await lease(task.namespaceId, "release", "other")).toEqual([]);
    expect(await releaseLease(t.db, { ...task, owner: "owner" })).toBe(true);
    expect(await queueRow(task)).toMatchObject({ leaseExpiresAt: null, leaseOwner: null });
    expect((await lease(task.namespaceId, "release", "other")).map((l) => l.queue.taskId)).toEqual([task.taskId]);
    expect(await releaseLease(t.db, { ...task, owner: "owner" })).toBe(false);
  });

  it("defer hides it until the delay has passed", async () => {
    const task = await leasedTask("defer");
    expect(await defer(t.db, { ...task, owner: "owner", delaySeconds: 120 })).toBe(true);
    expect(await lease(task.namespaceId, "defer", "other")).toEqual([]);
    expect(await lease(task.namespaceId, "defer", "other", 10, secondsFromNow(60))).toEqual([]);
    const later = await lease(task.namespaceId, "defer", "other", 10, secondsFromNow(121));
    expect(later.map((l) => l.queue.taskId)).toEqual([task.taskId]);
    expect(later[0]?.task.pollCount).toBe(2);
  });

  it("removeQueuedTask deletes whoever holds it", async () => {
    const task = await leasedTask("remove");
    expect(await removeQueuedTask(t.db, { ...task, namespaceId: randomUUID() })).toBe(false);
    expect(await removeQueuedTask(t.db, task)).toBe(true);
    expect(await queueRow(task)).toBeUndefined();
  });
});

describe("requeueExpiredLeases", () => {
  it("requeues only expired leases, reports them, and the old holder loses the task", async () => {
    const ns = randomUUID();
    const task = await queueTask(ns, "expire");
    expect(await lease(ns, "expire", "crashed")).toHaveLength(1);

    // Other tests' leases may be swept here too: filter to this namespace.
    const mine = (result: { tasks: { namespaceId: string }[] }) => result.tasks.filter((e) => e.namespaceId === ns);
    expect(mine(await requeueExpiredLeases(t.db, { limit: 1000, now: secondsFromNow(10) }))).toEqual([]);
    const swept = mine(await requeueExpiredLeases(t.db, { limit: 1000, now: secondsFromNow(31) }));
    expect(swept).toEqual([
      {
        namespaceId: ns,
        queueName: "expire",
        taskId: task.taskId,
        workflowId: task.workflowId,
        previousOwner: "crashed",
        leaseExpiredAt: expect.any(Date) as Date,
      },
    ]);
    expect(await queueRow(task)).toMatchObject({ leaseExpiresAt: null, leaseOwner: null });

    expect(await renewLease(t.db, { ...task, owner: "crashed", leaseSeconds: 30 })).toBe(false);
    expect(await acknowledge(t.db, { ...task, owner: "crashed" })).toBe(false);
    const again = await lease(ns, "expire", "rescuer");
    expect(again.map((l) => l.queue.taskId)).toEqual([task.taskId]);
    expect(again[0]?.task).toMatchObject({ pollCount: 2, workerId: "rescuer" });
  });

  it("works in batches of `limit`, oldest expiry first", async () => {
    const ns = randomUUID();
    const tasks: Task[] = [];
    for (let i = 0; i < 5; i++) {
      const task = await queueTask(ns, `batch-${i}`, { visibleAt: secondsFromNow(-2000) });
      // Expired 1000 + i seconds ago: all older than anything other tests leave behind.
      await leaseTasks(t.db, { namespaceId: ns, queueName: `batch-${i}`, count: 1, leaseSeconds: 1, owner: "w", now: secondsFromNow(-1000 - (5 - i)) });
      tasks.push(task);
    }
    const first = await requeueExpiredLeases(t.db, { limit: 2 });
    expect(first.count).toBe(2);
    expect(first.tasks.map((e) => e.taskId)).toEqual([tasks[0]!.taskId, tasks[1]!.taskId]);
    const second = await requeueExpiredLeases(t.db, { limit: 2 });
    expect(second.tasks.map((e) => e.taskId)).toEqual([tasks[2]!.taskId, tasks[3]!.taskId]);
    const third = await requeueExpiredLeases(t.db, { limit: 2 });
    expect(third.tasks[0]?.taskId).toBe(tasks[4]!.taskId);
  });

  it("notifies each requeued task's queue", async () => {
    const ns = randomUUID();
    await queueTask(ns, "expire-notify", { visibleAt: secondsFromNow(-120) });
    await leaseTasks(t.db, { namespaceId: ns, queueName: "expire-notify", count: 1, leaseSeconds: 1, owner: "w", now: secondsFromNow(-60) });
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const payloads: string[] = [];
    listener.on("notification", (message) => payloads.push(message.payload ?? ""));
    await listener.query(`LISTEN "${TASKS_CHANNEL}"`);
    try {
      await requeueExpiredLeases(t.db, { limit: 1000 });
      await waitFor(() => payloads.includes(`${ns}:expire-notify`));
    } finally {
      await listener.end();
    }
  });
});

describe("the timeouts a lease starts", () => {
  /** A queued task with the timeouts the decider snapshots from its policy. */
  async function queueTimedTask(
    namespaceId: string,
    queueName: string,
    timeouts: { timeoutSeconds?: number | null; responseTimeoutSeconds?: number | null },
  ): Promise<Task> {
    const row = await t.db
      .insertInto("TaskExecutions")
      .values({
        workflowId: randomUUID(),
        namespaceId,
        refName: `ref_${randomUUID()}`,
        taskType: "SIMPLE",
        taskDefName: queueName,
        queueName,
        timeoutSeconds: timeouts.timeoutSeconds ?? null,
        responseTimeoutSeconds: timeouts.responseTimeoutSeconds ?? null,
      })
      .returning(["id", "workflowId"])
      .executeTakeFirstOrThrow();
    const task = { namespaceId, queueName, taskId: row.id, workflowId: row.workflowId };
    expect(await enqueueTask(t.db, { ...task, taskType: "SIMPLE", priority: 0, visibleAt: new Date(Date.now() - 60_000) })).toBe(true);
    return task;
  }

  const timersOf = (task: Task) =>
    t.db.selectFrom("Timers").select(["kind", "fireAt", "namespaceId", "workflowId", "taskId", "claimedAt"]).where("workflowId", "=", task.workflowId).execute();
  const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

  it("arms a startToClose timer at startedAt + timeoutSeconds on the first lease only", async () => {
    const ns = randomUUID();
    const timed = await queueTimedTask(ns, "s2c", { timeoutSeconds: 120 });
    const untimed = await queueTimedTask(ns, "s2c", { timeoutSeconds: 0 });
    const unset = await queueTimedTask(ns, "s2c", {});
    const t0 = new Date(Date.now() - 1_000);

    const leased = await lease(ns, "s2c", "w1", 10, t0);
    expect(leased.map((l) => l.task.id).sort()).toEqual([timed.taskId, untimed.taskId, unset.taskId].sort());
    expect(leased.find((l) => l.task.id === timed.taskId)?.task.startedAt).toEqual(t0);
    expect(await timersOf(timed)).toEqual([
      { kind: "startToClose", fireAt: at(t0, 120), namespaceId: ns, workflowId: timed.workflowId, taskId: timed.taskId, claimedAt: null },
    ]);
    expect(await timersOf(untimed)).toEqual([]);
    expect(await timersOf(unset)).toEqual([]);

    // Given back and leased again (as after a requeue): the deadline still runs
    // from the first start, and no second timer is armed.
    expect(await releaseLease(t.db, { ...timed, owner: "w1", now: at(t0, 5) })).toBe(true);
    const [again] = await lease(ns, "s2c", "w2", 10, at(t0, 10));
    expect(again?.task).toMatchObject({ id: timed.taskId, pollCount: 2, workerId: "w2", startedAt: t0 });
    expect(await timersOf(timed)).toHaveLength(1);
  });

  it("arms nothing for a queue row whose task has ended, and rolls back with the lease", async () => {
    const ns = randomUUID();
    const dead = await queueTimedTask(ns, "s2c-dead", { timeoutSeconds: 60 });
    await t.db.updateTable("TaskExecutions").set({ status: "CANCELED", endedAt: new Date() }).where("workflowId", "=", dead.workflowId).execute();
    expect(await lease(ns, "s2c-dead", "w")).toEqual([]);
    expect(await timersOf(dead)).toEqual([]);

    const live = await queueTimedTask(ns, "s2c-rollback", { timeoutSeconds: 60 });
    await t.db
      .transaction()
      .execute(async (trx) => {
        expect(await leaseTasks(trx, { namespaceId: ns, queueName: "s2c-rollback", count: 1, leaseSeconds: 30, owner: "w" })).toHaveLength(1);
        throw new Error("roll back");
      })
      .catch(() => undefined);
    expect(await timersOf(live)).toEqual([]);
    expect((await taskRow(live)).startedAt).toBeNull();
  });

  it("leases for the task's responseTimeoutSeconds when it has one, and renews by the same window", async () => {
    const ns = randomUUID();
    const heartbeat = await queueTimedTask(ns, "rto", { responseTimeoutSeconds: 10 });
    const plain = await queueTimedTask(ns, "rto", { responseTimeoutSeconds: null });
    const t0 = new Date(Date.now() - 1_000);
    const leased = await leaseTasks(t.db, { namespaceId: ns, queueName: "rto", count: 10, leaseSeconds: 300, owner: "w1", now: t0 });
    const expiry = (task: Task) => leased.find((l) => l.task.id === task.taskId)?.queue.leaseExpiresAt;
    expect(expiry(heartbeat)).toEqual(at(t0, 10));
    expect(expiry(plain)).toEqual(at(t0, 300));
    expect((await queueRow(heartbeat))?.leaseExpiresAt).toEqual(at(t0, 10));
    expect((await queueRow(plain))?.leaseExpiresAt).toEqual(at(t0, 300));

    // A heartbeat extends by the task's window, whatever lease it asks for;
    // passing the workflow id (the pruned form) gives the same.
    expect(await renewLease(t.db, { ...heartbeat, owner: "w1", leaseSeconds: 600, now: at(t0, 8) })).toBe(true);
    expect((await queueRow(heartbeat))?.leaseExpiresAt).toEqual(at(t0, 18));
    expect(await renewLease(t.db, { ...heartbeat, owner: "w1", leaseSeconds: 600, now: at(t0, 9) })).toBe(true);
    expect((await queueRow(heartbeat))?.leaseExpiresAt).toEqual(at(t0, 19));
    expect(await renewLease(t.db, { ...heartbeat, workflowId: randomUUID(), owner: "w1", leaseSeconds: 600, now: at(t0, 9) })).toBe(false);
    expect(await renewLease(t.db, { ...plain, owner: "w1", leaseSeconds: 600, now: at(t0, 8) })).toBe(true);
    expect((await queueRow(plain))?.leaseExpiresAt).toEqual(at(t0, 608));
  });

  it("a worker that stops heartbeating loses the task after responseTimeoutSeconds: requeued, leased by another, its report refused", async () => {
    const ns = randomUUID();
    const task = await queueTimedTask(ns, "rto-lost", { responseTimeoutSeconds: 10, timeoutSeconds: 600 });
    const t0 = new Date(Date.now() - 60_000);
    const [first] = await leaseTasks(t.db, { namespaceId: ns, queueName: "rto-lost", count: 1, leaseSeconds: 300, owner: "w1", now: t0 });
    expect(first?.task.workerId).toBe("w1");

    const mine = (result: { tasks: { taskId: string }[] }) => result.tasks.filter((e) => e.taskId === task.taskId);
    expect(mine(await requeueExpiredLeases(t.db, { limit: 1000, now: at(t0, 9) }))).toEqual([]);
    expect(mine(await requeueExpiredLeases(t.db, { limit: 1000, now: at(t0, 11) }))).toHaveLength(1);

    const [second] = await leaseTasks(t.db, { namespaceId: ns, queueName: "rto-lost", count: 1, leaseSeconds: 300, owner: "w2", now: at(t0, 12) });
    expect(second?.task).toMatchObject({ id: task.taskId, workerId: "w2", pollCount: 2 });
    expect(second?.queue.leaseExpiresAt).toEqual(at(t0, 22));

    const report = { namespaceId: ns, workflowId: task.workflowId, taskId: task.taskId, status: "COMPLETED" as const };
    expect(await completeTaskFromWorker(t.db, { ...report, workerId: "w1", output: { late: true } })).toEqual({
      ok: false,
      error: "not_held",
      status: "IN_PROGRESS",
    });
    expect(await queueRow(task)).toMatchObject({ leaseOwner: "w2" });
    expect((await completeTaskFromWorker(t.db, { ...report, workerId: "w2" })).ok).toBe(true);
    // The run timeout was armed once, from the first start.
    expect((await timersOf(task)).map((timer) => timer.fireAt)).toEqual([at(t0, 600)]);
  });
});

describe("queueDepths", () => {
  it("counts ready, deferred and leased rows per queue", async () => {
    const ns = randomUUID();
    await queueTask(ns, "depth-a");
    await queueTask(ns, "depth-a");
    await queueTask(ns, "depth-a", { visibleAt: secondsFromNow(600) });
    await queueTask(ns, "depth-b");
    await lease(ns, "depth-b", "w");
    await queueTask(randomUUID(), "depth-a");

    const depths = await queueDepths(t.db, ns);
    expect(depths).toEqual([
      { namespaceId: ns, queueName: "depth-a", ready: 2, deferred: 1, leased: 0, oldestReadyAt: expect.any(Date) as Date },
      { namespaceId: ns, queueName: "depth-b", ready: 0, deferred: 0, leased: 1, oldestReadyAt: null },
    ]);
    const all = await queueDepths(t.db);
    expect(all.filter((d) => d.queueName === "depth-a").length).toBeGreaterThanOrEqual(2);
  });
});

async function waitFor(predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("condition not met within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
