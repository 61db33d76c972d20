import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../db/pool";
import { createDb } from "../../db/pool";
import { backendPid, blockedBy } from "../../db/testing/lock-observation";
import { useTestDatabase } from "../../db/testing/test-database";
import { Notifier } from "../lib/notifier";
import type { NotifierEvent } from "../lib/notifier";
import {
  acquireSemaphorePermits,
  configureSemaphore,
  deleteSemaphore,
  expireSemaphoreHolders,
  lockSemaphore,
  releaseTaskGates,
  renewSemaphorePermits,
} from "./semaphores";
import { upsertTaskDefinition } from "./task-definitions";
import { TASKS_CHANNEL, taskAvailableKey } from "./task-queues";

const t = useTestDatabase();
/** A second pool, so two transactions can hold connections at once. */
let other: Db;
let notifier: Notifier;

beforeAll(async () => {
  other = createDb(t.url, { max: 2 });
  notifier = new Notifier({ connectionString: t.url, applicationName: "semaphores-test" });
  await notifier.start();
});

afterAll(async () => {
  await notifier?.close();
  await other?.destroy();
});

/** Well ahead of the clock; each test passes its own `now`. */
const T0 = Date.now() + 3_600_000;
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

async function namespace(): Promise<string> {
  const row = await t.db
    .insertInto("Namespaces")
    .values({ name: `ns-${randomBytes(4).toString("hex")}` })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

const tasks = (n: number) => Array.from({ length: n }, () => ({ taskId: randomUUID(), workflowId: randomUUID() }));

async function acquire(
  db: Db,
  ns: string,
  asking: ReadonlyArray<{ taskId: string; workflowId: string }>,
  options: { name?: string; now?: string; leaseSeconds?: number } = {},
) {
  return db.transaction().execute((trx) =>
    acquireSemaphorePermits(trx, {
      namespaceId: ns,
      name: options.name ?? "s",
      tasks: asking,
      leaseSeconds: options.leaseSeconds ?? 30,
      now: options.now ?? at(0),
    }),
  );
}

async function holders(ns: string): Promise<string[]> {
  const rows = await t.db.selectFrom("SemaphoreHolders").select("taskId").where("namespaceId", "=", ns).orderBy("taskId").execute();
  return rows.map((r) => r.taskId);
}

/** Collects the task-availability notifications of some queues. */
function listen(ns: string, queues: string[]): { events: string[]; stop(): void } {
  const events: string[] = [];
  const stops = queues.map((q) =>
    notifier.subscribe(TASKS_CHANNEL, taskAvailableKey(ns, q), (event: NotifierEvent) => {
      if (event.kind === "notification") events.push(q);
    }),
  );
  return { events, stop: () => stops.forEach((stop) => stop()) };
}

async function eventually(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("acquireSemaphorePermits", () => {
  it("grants as many permits as are free, to the first tasks asking", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 3 });
    const [a, b, c, d] = tasks(4);
    expect(await acquire(t.db, ns, [a!, b!])).toEqual({ configured: true, granted: [a!.taskId, b!.taskId] });
    expect(await acquire(t.db, ns, [c!, d!])).toEqual({ configured: true, granted: [c!.taskId] });
    expect(await acquire(t.db, ns, tasks(1))).toEqual({ configured: true, granted: [] });
    expect(await holders(ns)).toEqual([a!.taskId, b!.taskId, c!.taskId].sort());
  });

  it("does not gate through a semaphore nobody configured, and writes nothing", async () => {
    const ns = await namespace();
    const asking = tasks(5);
    expect(await acquire(t.db, ns, asking, { name: "unconfigured" })).toEqual({
      configured: false,
      granted: asking.map((x) => x.taskId),
    });
    expect(await holders(ns)).toEqual([]);
  });

  it("lets a task that holds a live permit keep it without taking a second", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 1 });
    const [a] = tasks(1);
    expect((await acquire(t.db, ns, [a!])).granted).toEqual([a!.taskId]);
    // Full, but `a` already holds the permit: granted again, lease extended.
    expect((await acquire(t.db, ns, [a!], { now: at(20) })).granted).toEqual([a!.taskId]);
    const row = await t.db.selectFrom("SemaphoreHolders").select("leaseExpiresAt").where("taskId", "=", a!.taskId).executeTakeFirstOrThrow();
    expect(row.leaseExpiresAt.toISOString()).toBe(at(50));
  });

  it("stops counting a permit once its lease has run out, sweep or no sweep", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 1 });
    const [a, b] = tasks(2);
    expect((await acquire(t.db, ns, [a!], { leaseSeconds: 30 })).granted).toEqual([a!.taskId]);
    expect((await acquire(t.db, ns, [b!], { now: at(29) })).granted).toEqual([]);
    expect((await acquire(t.db, ns, [b!], { now: at(30) })).granted).toEqual([b!.taskId]);
  });

  it("serialises acquirers on the semaphore row: the second counts after the first commits", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 1 });
    const [a, b] = tasks(2);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holderPid = 0;
    const first = t.db.transaction().execute(async (trx) => {
      holderPid = await backendPid(trx);
      const result = await acquireSemaphorePermits(trx, { namespaceId: ns, name: "s", tasks: [a!], leaseSeconds: 30, now: at(0) });
      await held;
      return result;
    });
    await eventually(() => holderPid !== 0, "the first acquirer");
    const second = other.transaction().execute(async (trx) => {
      const pid = await backendPid(trx);
      const waiting = blockedBy(t.db, pid, holderPid);
      const result = acquireSemaphorePermits(trx, { namespaceId: ns, name: "s", tasks: [b!], leaseSeconds: 30, now: at(0) });
      try {
        await waiting;
      } finally {
        release();
      }
      return result;
    });
    expect((await first).granted).toEqual([a!.taskId]);
    // Had it counted before the first committed, it would have seen a free permit.
    expect((await second).granted).toEqual([]);
  });

  it("lockSemaphore reports permits, live permits and what is free; nothing for an unconfigured one", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 2 });
    await acquire(t.db, ns, tasks(1), { leaseSeconds: 10 });
    await acquire(t.db, ns, tasks(1), { leaseSeconds: 100 });
    const usage = (now: string, name = "s") => t.db.transaction().execute((trx) => lockSemaphore(trx, { namespaceId: ns, name, now }));
    expect(await usage(at(5))).toEqual({ permits: 2, inUse: 2, free: 0 });
    expect(await usage(at(10))).toEqual({ permits: 2, inUse: 1, free: 1 });
    expect(await usage(at(5), "none")).toBeUndefined();
    // Lowered below what is in use: nothing is revoked, nothing is free.
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 1 });
    expect(await usage(at(5))).toEqual({ permits: 1, inUse: 2, free: 0 });
  });
});

describe("renewSemaphorePermits", () => {
  it("extends a live permit, but does not revive an expired one", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 2 });
    const [a, b] = tasks(2);
    await acquire(t.db, ns, [a!, b!], { leaseSeconds: 30 });
    expect(await renewSemaphorePermits(t.db, { namespaceId: ns, taskId: a!.taskId, leaseSeconds: 30, now: at(20) })).toBe(1);
    expect(await renewSemaphorePermits(t.db, { namespaceId: ns, taskId: b!.taskId, leaseSeconds: 30, now: at(31) })).toBe(0);
    const rows = await t.db.selectFrom("SemaphoreHolders").select(["taskId", "leaseExpiresAt"]).where("namespaceId", "=", ns).execute();
    expect(Object.fromEntries(rows.map((r) => [r.taskId, r.leaseExpiresAt.toISOString()]))).toEqual({
      [a!.taskId]: at(50),
      [b!.taskId]: at(30),
    });
  });
});

describe("releaseTaskGates", () => {
  it("gives back the task's permits and wakes every queue using the semaphore", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 1 });
    await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "qa", semaphoreName: "s" } });
    await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "qb", semaphoreName: "s" } });
    await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "unrelated", semaphoreName: "other" } });
    const [a, b] = tasks(2);
    await acquire(t.db, ns, [a!]);
    const heard = listen(ns, ["qa", "qb", "unrelated"]);
    try {
      expect(await releaseTaskGates(t.db, { namespaceId: ns, taskId: a!.taskId, queueName: "qa" })).toEqual({ released: ["s"] });
      expect(await holders(ns)).toEqual([]);
      expect((await acquire(t.db, ns, [b!])).granted).toEqual([b!.taskId]);
      await eventually(() => heard.events.length >= 2, "both queues woken");
      expect(heard.events.sort()).toEqual(["qa", "qb"]);
    } finally {
      heard.stop();
    }
  });

  it("wakes a queue with a concurrency limit even without permits, and an ungated one not at all", async () => {
    const ns = await namespace();
    await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "limited", concurrentExecLimit: 2 } });
    await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "ungated" } });
    const heard = listen(ns, ["limited", "ungated"]);
    try {
      expect(await releaseTaskGates(t.db, { namespaceId: ns, taskId: randomUUID(), queueName: "ungated" })).toEqual({ released: [] });
      expect(await releaseTaskGates(t.db, { namespaceId: ns, taskId: randomUUID(), queueName: "limited" })).toEqual({ released: [] });
      await eventually(() => heard.events.length >= 1, "the limited queue woken");
      // The ungated release was committed first; its notification would have come first.
      expect(heard.events).toEqual(["limited"]);
    } finally {
      heard.stop();
    }
  });

  it("keeps the permits when its transaction rolls back", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 1 });
    const [a] = tasks(1);
    await acquire(t.db, ns, [a!]);
    await t.db
      .transaction()
      .execute(async (trx) => {
        await releaseTaskGates(trx, { namespaceId: ns, taskId: a!.taskId });
        throw new Error("roll back");
      })
      .catch(() => undefined);
    expect(await holders(ns)).toEqual([a!.taskId]);
  });
});

describe("expireSemaphoreHolders", () => {
  // The sweep sees every namespace's permits; tests in a file run one at a
  // time, so clearing the earlier tests' leaves each count to its own test.
  beforeEach(async () => {
    await t.db.deleteFrom("SemaphoreHolders").execute();
  });

  it("deletes expired permits only, in batches, and wakes the queues using them", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 10 });
    await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "q", semaphoreName: "s" } });
    const short = tasks(3);
    const long = tasks(2);
    await acquire(t.db, ns, short, { leaseSeconds: 10 });
    await acquire(t.db, ns, long, { leaseSeconds: 100 });
    const heard = listen(ns, ["q"]);
    try {
      expect(await expireSemaphoreHolders(t.db, { limit: 2, now: at(10) })).toEqual({ count: 2 });
      expect(await expireSemaphoreHolders(t.db, { limit: 2, now: at(10) })).toEqual({ count: 1 });
      expect(await expireSemaphoreHolders(t.db, { limit: 2, now: at(10) })).toEqual({ count: 0 });
      expect(await holders(ns)).toEqual(long.map((x) => x.taskId).sort());
      await eventually(() => heard.events.length >= 1, "the queue woken");
    } finally {
      heard.stop();
    }
  });

  it("passes over a permit being renewed, and never sweeps one renewed in time", async () => {
    const ns = await namespace();
    await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 1 });
    const [a] = tasks(1);
    await acquire(t.db, ns, [a!], { leaseSeconds: 10, now: at(1000) });
    // The renewal holds the row while the sweep runs: SKIP LOCKED passes it over.
    await t.db.transaction().execute(async (trx) => {
      expect(await renewSemaphorePermits(trx, { namespaceId: ns, taskId: a!.taskId, leaseSeconds: 60, now: at(1005) })).toBe(1);
      expect(await expireSemaphoreHolders(other, { limit: 100, now: at(1010) })).toEqual({ count: 0 });
    });
    expect(await expireSemaphoreHolders(t.db, { limit: 100, now: at(1010) })).toEqual({ count: 0 });
    expect(await holders(ns)).toEqual([a!.taskId]);
  });
});

describe("configureSemaphore and deleteSemaphore", () => {
  it("sets and changes the permits; a deleted semaphore no longer gates", async () => {
    const ns = await namespace();
    expect(await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 1 })).toMatchObject({ permits: 1 });
    expect(await configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 4 })).toMatchObject({ permits: 4 });
    expect(await deleteSemaphore(t.db, { namespaceId: ns, name: "s" })).toBe(true);
    expect(await deleteSemaphore(t.db, { namespaceId: ns, name: "s" })).toBe(false);
    expect((await acquire(t.db, ns, tasks(2))).configured).toBe(false);
    await expect(configureSemaphore(t.db, { namespaceId: ns, name: "s", permits: 0 })).rejects.toThrow(RangeError);
  });
});
