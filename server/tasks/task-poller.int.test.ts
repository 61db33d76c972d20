import { randomBytes, randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../db/pool";
import { createDb } from "../../db/pool";
import { useTestDatabase } from "../../db/testing/test-database";
import { Notifier, TASKS_CHANNEL, notifyTaskAvailable, taskAvailableKey } from "../lib/notifier";
import { upsertTaskDefinition } from "../store/task-definitions";
import { completeTaskFromWorker } from "../store/task-executions";
import { enqueueTask } from "../store/task-queues";
import type { LeasedTask } from "../store/task-queues";
import { QueueGateCache, releaseTaskGates } from "./task-gates";
import { parkedPolls, pollTasks } from "./task-poller";
import type { PollTasksOptions } from "./task-poller";

const t = useTestDatabase();
let notifier: Notifier;
/** The writers' own pool: enqueues commit on connections the pollers never use. */
let writer: Db;

beforeAll(async () => {
  notifier = new Notifier({ connectionString: t.url, applicationName: "poller-test" });
  await notifier.start();
  writer = createDb(t.url, { max: 2 });
});

afterAll(async () => {
  await notifier?.close();
  await writer?.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** A scheduled task, enqueued (and so notified) in one transaction on the writer pool. */
async function enqueue(namespaceId: string, queueName: string, options: { rollback?: boolean } = {}): Promise<string> {
  const workflowId = randomUUID();
  const taskId = randomUUID();
  const write = writer.transaction().execute(async (trx) => {
    await trx
      .insertInto("TaskExecutions")
      .values({ id: taskId, workflowId, namespaceId, refName: `ref_${taskId}`, taskType: "SIMPLE", taskDefName: queueName, queueName })
      .execute();
    await enqueueTask(trx, { namespaceId, queueName, taskId, workflowId, taskType: "SIMPLE", priority: 0 });
    // Redundant with enqueueTask's own notify; here to prove even an explicit
    // notify in a rolled-back transaction reaches nobody.
    await notifyTaskAvailable(trx, namespaceId, queueName);
    if (options.rollback) throw new Error("roll back");
  });
  if (options.rollback) await write.catch(() => undefined);
  else await write;
  return taskId;
}

function options(namespaceId: string, queueName: string, overrides: Partial<PollTasksOptions> = {}): PollTasksOptions {
  return { namespaceId, queueName, count: 1, timeoutMs: 10_000, workerId: "worker", leaseSeconds: 30, ...overrides };
}

/** Starts a poll and reports how long it took and what it returned. */
function startPoll(deps: Parameters<typeof pollTasks>[0], opts: PollTasksOptions) {
  const started = performance.now();
  let settledAt: number | undefined;
  const result = pollTasks(deps, opts).then((leased) => {
    settledAt = performance.now();
    return leased;
  });
  return { result, started, settled: () => settledAt !== undefined, settledAt: () => settledAt };
}

/** Until `count` polls of the queue have found it empty and parked. */
async function parked(namespaceId: string, queueName: string, count: number, on: Notifier = notifier): Promise<void> {
  await waitFor(() => parkedPolls(on, namespaceId, queueName) >= count, `${count} parked polls on ${queueName}`);
}

describe("pollTasks", () => {
  it("returns at once when a task is already there", async () => {
    const ns = randomUUID();
    const taskId = await enqueue(ns, "ready");
    const poll = startPoll({ db: t.db, notifier }, options(ns, "ready"));
    const leased = await poll.result;
    expect(leased.map((l) => l.queue.taskId)).toEqual([taskId]);
    expect(leased[0]?.task).toMatchObject({ status: "IN_PROGRESS", workerId: "worker" });
    expect(poll.settledAt()! - poll.started).toBeLessThan(5000);
  });

  it("a timeout of 0 is a plain poll", async () => {
    expect(await pollTasks({ db: t.db, notifier }, options(randomUUID(), "empty", { timeoutMs: 0 }))).toEqual([]);
  });

  it("wakes on an enqueue committed by another connection, long before its timeout", async () => {
    const ns = randomUUID();
    // A re-check interval far beyond the timeout: only the notification can wake it.
    const poll = startPoll({ db: t.db, notifier }, options(ns, "wake", { recheckIntervalMs: 600_000 }));
    await parked(ns, "wake", 1);
    expect(poll.settled()).toBe(false);
    const enqueuedAt = performance.now();
    const taskId = await enqueue(ns, "wake");
    const leased = await poll.result;
    expect(leased.map((l) => l.queue.taskId)).toEqual([taskId]);
    // Typically a few milliseconds; the bound is loose for a shared machine, and
    // still far inside the 10 s the poll would otherwise have waited.
    expect(poll.settledAt()! - enqueuedAt).toBeLessThan(5000);
  });

  it("is not woken by a rolled-back enqueue, and returns nothing at its timeout", async () => {
    const ns = randomUUID();
    const wakes: unknown[] = [];
    const unsubscribe = notifier.subscribe(TASKS_CHANNEL, taskAvailableKey(ns, "rollback"), (event) => wakes.push(event));
    try {
      const poll = startPoll({ db: t.db, notifier }, options(ns, "rollback", { timeoutMs: 2000, recheckIntervalMs: 600_000 }));
      await parked(ns, "rollback", 1);
      await enqueue(ns, "rollback", { rollback: true });
      expect(await poll.result).toEqual([]);
      expect(poll.settledAt()! - poll.started).toBeGreaterThanOrEqual(1900);
      expect(wakes).toEqual([]);
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM "TaskQueues" WHERE "namespaceId" = ${ns}`.execute(t.db);
      expect(rows[0]?.n).toBe(0);
    } finally {
      unsubscribe();
    }
  });

  it("with no notifier at all, still gets the task through its periodic re-check", async () => {
    const ns = randomUUID();
    const poll = startPoll({ db: t.db, notifier: null }, options(ns, "off", { recheckIntervalMs: 200 }));
    await sleep(300);
    const enqueuedAt = performance.now();
    const taskId = await enqueue(ns, "off");
    expect((await poll.result).map((l) => l.queue.taskId)).toEqual([taskId]);
    expect(poll.settledAt()! - enqueuedAt).toBeLessThan(5000);
  });

  it("with a notifier that never connected, still gets the task through its periodic re-check", async () => {
    const ns = randomUUID();
    const idle = new Notifier({ connectionString: t.url }); // never started
    const poll = startPoll({ db: t.db, notifier: idle }, options(ns, "unstarted", { recheckIntervalMs: 200 }));
    await sleep(300);
    const taskId = await enqueue(ns, "unstarted");
    expect((await poll.result).map((l) => l.queue.taskId)).toEqual([taskId]);
  });

  it("without notifications, the re-check is what finds the task (control for the two above)", async () => {
    const ns = randomUUID();
    // Generous margins: on a loaded 2-core machine the poll's first read must
    // have happened before the enqueue, or the control finds the task at once.
    const poll = startPoll({ db: t.db, notifier: null }, options(ns, "control", { timeoutMs: 4000, recheckIntervalMs: 600_000 }));
    await sleep(1500);
    await enqueue(ns, "control");
    expect(await poll.result).toEqual([]);
    // Still there for the next poll.
    expect(await pollTasks({ db: t.db, notifier: null }, options(ns, "control", { timeoutMs: 0 }))).toHaveLength(1);
  });

  it("ends promptly when aborted, and leases nothing once aborted", async () => {
    const ns = randomUUID();
    const abort = new AbortController();
    const poll = startPoll({ db: t.db, notifier }, options(ns, "abort", { signal: abort.signal }));
    await sleep(200);
    const abortedAt = performance.now();
    abort.abort();
    expect(await poll.result).toEqual([]);
    expect(poll.settledAt()! - abortedAt).toBeLessThan(3000);
    expect(notifier.stats.waiters).toBe(0);

    await enqueue(ns, "abort");
    expect(await pollTasks({ db: t.db, notifier }, options(ns, "abort", { signal: abort.signal }))).toEqual([]);
    const { rows } = await sql<{ owner: string | null }>`
      SELECT "leaseOwner" AS "owner" FROM "TaskQueues" WHERE "namespaceId" = ${ns}`.execute(t.db);
    expect(rows).toEqual([{ owner: null }]);
  });

  it("several parked polls on one queue are woken one after another and split the tasks, none leased twice", async () => {
    const ns = randomUUID();
    const polls = Array.from({ length: 4 }, (_, i) =>
      startPoll({ db: t.db, notifier }, options(ns, "split", { workerId: `w${i}`, recheckIntervalMs: 600_000 })),
    );
    await parked(ns, "split", 4);
    const taskIds = await writer.transaction().execute(async (trx) => {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const taskId = randomUUID();
        const workflowId = randomUUID();
        await trx
          .insertInto("TaskExecutions")
          .values({ id: taskId, workflowId, namespaceId: ns, refName: `r${i}`, taskType: "SIMPLE", taskDefName: "split", queueName: "split" })
          .execute();
        await enqueueTask(trx, { namespaceId: ns, queueName: "split", taskId, workflowId, taskType: "SIMPLE", priority: 0 });
        ids.push(taskId);
      }
      return ids;
    });
    const results = await Promise.all(polls.map((p) => p.result));
    for (const [i, leased] of results.entries()) {
      expect(leased).toHaveLength(1);
      expect(leased[0]?.queue.leaseOwner).toBe(`w${i}`);
    }
    expect(new Set(results.flat().map((l) => l.queue.taskId))).toEqual(new Set(taskIds));
  });

  it("one task wakes one of several parked polls, and the chain it starts ends at the first empty lease", async () => {
    const ns = randomUUID();
    // Counts this test's lease transactions: every statement the polls send through this handle.
    let statements = 0;
    const counted = t.db.withPlugin({
      transformQuery: (args) => {
        statements++;
        return args.node;
      },
      transformResult: (args) => Promise.resolve(args.result),
    });
    const abort = new AbortController();
    const polls = Array.from({ length: 4 }, (_, i) =>
      startPoll({ db: counted, notifier }, options(ns, "herd", { workerId: `w${i}`, recheckIntervalMs: 600_000, signal: abort.signal })),
    );
    await parked(ns, "herd", 4);
    const before = statements;
    const taskId = await enqueue(ns, "herd");
    await waitFor(() => polls.some((p) => p.settled()), "a poll to lease the task");
    // Long enough for any other woken poll to have run its lease.
    await sleep(300);
    // The longest-parked poll took it (its lease: one statement) and, having
    // leased all it asked for, passed the wake on: the next poll's one empty
    // lease ends the chain. Woken all at once, the three others would each
    // have run a lease.
    expect(polls.map((p) => p.settled())).toEqual([true, false, false, false]);
    expect((await polls[0]!.result).map((l) => l.queue.taskId)).toEqual([taskId]);
    expect(statements - before).toBe(2);
    expect(parkedPolls(notifier, ns, "herd")).toBe(3);
    abort.abort();
    expect(await Promise.all(polls.slice(1).map((p) => p.result))).toEqual([[], [], []]);
    expect(parkedPolls(notifier, ns, "herd")).toBe(0);
  });

  it("re-reads after the notifier reconnects, so a notification sent while it was down costs only latency", async () => {
    const ns = randomUUID();
    // Slow to reconnect, so the enqueue below lands while nobody is listening.
    const flaky = new Notifier({ connectionString: t.url, applicationName: "poller-test-flaky", initialReconnectDelayMs: 1500 });
    await flaky.start();
    try {
      const poll = startPoll({ db: t.db, notifier: flaky }, options(ns, "gap", { timeoutMs: 20_000, recheckIntervalMs: 600_000 }));
      await sleep(300);
      const pid = flaky.stats.backendPid;
      await sql`SELECT pg_terminate_backend(${pid})`.execute(t.db);
      await waitFor(() => !flaky.connected, "the notifier to notice");
      const taskId = await enqueue(ns, "gap");
      expect(flaky.connected).toBe(false);
      const leased = await poll.result;
      expect(leased.map((l) => l.queue.taskId)).toEqual([taskId]);
      expect(flaky.stats.reconnects).toBe(1);
      expect(poll.settledAt()! - poll.started).toBeLessThan(15_000);
    } finally {
      await flaky.close();
    }
  });

  it("rejects a timeout beyond the maximum", async () => {
    await expect(pollTasks({ db: t.db, notifier }, options(randomUUID(), "q", { timeoutMs: 60_000 }))).rejects.toThrow(RangeError);
  });
});

describe("pollTasks through gates", () => {
  /** Gates are read fresh on every lease: each test defines them right before polling. */
  const gateCache = new QueueGateCache(0);

  async function gatedNamespace(name: string, gates: { concurrentExecLimit?: number; rateLimitPerFrequency?: number; rateLimitFrequencyInSeconds?: number }) {
    const { id } = await t.db
      .insertInto("Namespaces")
      .values({ name: `ns-${randomBytes(4).toString("hex")}` })
      .returning("id")
      .executeTakeFirstOrThrow();
    await upsertTaskDefinition(t.db, { namespaceId: id, definition: { name, ...gates } });
    return id;
  }

  /** A worker's completion with the gate release it carries, committed on the writer pool. */
  async function complete({ task }: LeasedTask): Promise<void> {
    await writer.transaction().execute(async (trx) => {
      const result = await completeTaskFromWorker(trx, { namespaceId: task.namespaceId, workflowId: task.workflowId, taskId: task.id, status: "COMPLETED" });
      if (!result.ok) throw new Error(result.error);
      await releaseTaskGates(trx, { namespaceId: task.namespaceId, taskId: task.id, queueName: task.queueName });
    });
  }

  it("a poll held back by concurrentExecLimit parks, and the held task's completion wakes it", async () => {
    const ns = await gatedNamespace("gated", { concurrentExecLimit: 1 });
    const first = await enqueue(ns, "gated");
    const second = await enqueue(ns, "gated");
    const deps = { db: t.db, notifier, gateCache };
    const held = await pollTasks(deps, options(ns, "gated", { timeoutMs: 0, workerId: "w1" }));
    expect(held.map((l) => l.queue.taskId)).toEqual([first]);

    // A re-check interval far beyond the timeout: only the completion's notification can wake it.
    const poll = startPoll(deps, options(ns, "gated", { workerId: "w2", recheckIntervalMs: 600_000 }));
    await parked(ns, "gated", 1);
    expect(poll.settled()).toBe(false);
    await complete(held[0]!);
    expect((await poll.result).map((l) => l.queue.taskId)).toEqual([second]);
  });

  it("a poll held back by a rate limit wakes when the next window opens, with no notification at all", async () => {
    const ns = await gatedNamespace("rated", { rateLimitPerFrequency: 1, rateLimitFrequencyInSeconds: 2 });
    await enqueue(ns, "rated");
    await enqueue(ns, "rated");
    const deps = { db: t.db, notifier: null, gateCache };
    const [a] = await pollTasks(deps, options(ns, "rated", { timeoutMs: 0 }));
    // Only the window's own hint can wake it before its 10 s timeout.
    const [b] = await pollTasks(deps, options(ns, "rated", { recheckIntervalMs: 600_000 }));
    expect(a && b).toBeTruthy();
    // Leased in a later 2 s window than the first (both by the database's clock).
    expect(Math.floor(b!.task.startedAt!.getTime() / 2000)).toBeGreaterThan(Math.floor(a!.task.startedAt!.getTime() / 2000));
  });
});
