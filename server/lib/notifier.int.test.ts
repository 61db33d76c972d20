import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { Notifier, TASKS_CHANNEL, WORKFLOW_EVENTS_CHANNEL, notificationKey, notifyTaskAvailable } from "./notifier";
import type { NotifierChannel, NotifierEvent } from "./notifier";

const t = useTestDatabase();
let notifier: Notifier;

beforeAll(async () => {
  notifier = new Notifier({ connectionString: t.url, applicationName: "notifier-test" });
  await notifier.start();
});

afterAll(async () => {
  await notifier?.close();
});

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records what one subscription receives. */
function record(on: Notifier, channel: NotifierChannel, key: string) {
  const events: NotifierEvent[] = [];
  const unsubscribe = on.subscribe(channel, key, (event) => events.push(event));
  const payloads = () => events.flatMap((e) => (e.kind === "notification" ? [e.payload] : []));
  return { events, payloads, unsubscribe };
}

/**
 * Commits a notification on the channel and waits for it to arrive. Postgres
 * delivers one session's notifications in commit order, so once this marker is
 * in, anything committed before it would have been dispatched already.
 */
async function marker(on: Notifier = notifier): Promise<void> {
  const ns = randomUUID();
  const seen = record(on, TASKS_CHANNEL, `${ns}:marker`);
  try {
    await t.db.transaction().execute((trx) => notifyTaskAvailable(trx, ns, "marker"));
    await waitFor(() => seen.payloads().length > 0, "the marker notification");
  } finally {
    seen.unsubscribe();
  }
}

describe("notificationKey", () => {
  it("routes tasks by the whole payload and workflow events by the workflow id", () => {
    expect(notificationKey(TASKS_CHANNEL, "ns:billing:charge")).toBe("ns:billing:charge");
    expect(notificationKey(WORKFLOW_EVENTS_CHANNEL, "wf-1:42")).toBe("wf-1");
  });
});

describe("Notifier", () => {
  it("delivers a task notification only once the writing transaction commits", async () => {
    const ns = randomUUID();
    const seen = record(notifier, TASKS_CHANNEL, `${ns}:orders`);
    try {
      await t.db.transaction().execute(async (trx) => {
        await notifyTaskAvailable(trx, ns, "orders");
        await sleep(300);
        expect(seen.events).toEqual([]);
      });
      await waitFor(() => seen.payloads().length === 1, "the committed notification");
      expect(seen.events).toEqual([{ kind: "notification", channel: TASKS_CHANNEL, key: `${ns}:orders`, payload: `${ns}:orders` }]);
    } finally {
      seen.unsubscribe();
    }
  });

  it("delivers nothing for a rolled-back transaction", async () => {
    const ns = randomUUID();
    const seen = record(notifier, TASKS_CHANNEL, `${ns}:orders`);
    try {
      await expect(
        t.db.transaction().execute(async (trx) => {
          await notifyTaskAvailable(trx, ns, "orders");
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
      await marker();
      expect(seen.events).toEqual([]);
    } finally {
      seen.unsubscribe();
    }
  });

  it("fans out by key: every subscriber of the key, nobody else, and not after unsubscribing", async () => {
    const ns = randomUUID();
    const a = record(notifier, TASKS_CHANNEL, `${ns}:q`);
    const b = record(notifier, TASKS_CHANNEL, `${ns}:q`);
    const other = record(notifier, TASKS_CHANNEL, `${ns}:other`);
    const throwing = notifier.subscribe(TASKS_CHANNEL, `${ns}:q`, () => {
      throw new Error("a broken waiter");
    });
    try {
      await t.db.transaction().execute((trx) => notifyTaskAvailable(trx, ns, "q"));
      await waitFor(() => a.payloads().length === 1 && b.payloads().length === 1, "both subscribers");
      b.unsubscribe();
      await t.db.transaction().execute((trx) => notifyTaskAvailable(trx, ns, "q"));
      await waitFor(() => a.payloads().length === 2, "the second notification");
      await marker();
      expect(b.payloads()).toHaveLength(1);
      expect(other.events).toEqual([]);
    } finally {
      a.unsubscribe();
      other.unsubscribe();
      throwing();
    }
  });

  it("delivers workflowId:seq from the WorkflowEvents trigger, keyed by workflow, once per workflow per statement", async () => {
    const workflowId = randomUUID();
    const other = randomUUID();
    const namespaceId = randomUUID();
    const seen = record(notifier, WORKFLOW_EVENTS_CHANNEL, workflowId);
    const seenOther = record(notifier, WORKFLOW_EVENTS_CHANNEL, other);
    try {
      await t.db
        .insertInto("WorkflowEvents")
        .values([
          { workflowId, namespaceId, seq: 1, type: "WORKFLOW_STARTED" },
          { workflowId, namespaceId, seq: 2, type: "TASK_SCHEDULED" },
          { workflowId: other, namespaceId, seq: 7, type: "TASK_SCHEDULED" },
        ])
        .execute();
      await waitFor(() => seen.payloads().length === 1 && seenOther.payloads().length === 1, "one notification per workflow");
      await marker();
      expect(seen.payloads()).toEqual([`${workflowId}:2`]);
      expect(seenOther.payloads()).toEqual([`${other}:7`]);
      seenOther.unsubscribe();
    } finally {
      seen.unsubscribe();
    }
  });

  it("ignores an empty payload (what a statement-level trigger referencing NEW sends)", async () => {
    const tasks = record(notifier, TASKS_CHANNEL, "");
    const events = record(notifier, WORKFLOW_EVENTS_CHANNEL, "");
    const before = notifier.stats.notifications;
    try {
      await sql`SELECT pg_notify(${WORKFLOW_EVENTS_CHANNEL}, ''), pg_notify(${TASKS_CHANNEL}, '')`.execute(t.db);
      await marker();
      expect(tasks.events).toEqual([]);
      expect(events.events).toEqual([]);
      expect(notifier.stats.notifications - before).toBe(1); // the marker only
    } finally {
      tasks.unsubscribe();
      events.unsubscribe();
    }
  });

  it("reconnects after its backend is terminated, tells every waiter to resync, and keeps delivering", async () => {
    const ns = randomUUID();
    const seen = record(notifier, TASKS_CHANNEL, `${ns}:after`);
    try {
      const { backendPid, reconnects } = notifier.stats;
      expect(backendPid).not.toBeNull();
      const { rows } = await sql<{ terminated: boolean }>`SELECT pg_terminate_backend(${backendPid}) AS "terminated"`.execute(t.db);
      expect(rows[0]?.terminated).toBe(true);

      await waitFor(() => notifier.stats.reconnects === reconnects + 1 && notifier.connected, "the reconnect");
      expect(notifier.stats.backendPid).not.toBe(backendPid);
      expect(seen.events).toContainEqual({ kind: "resync" });

      await t.db.transaction().execute((trx) => notifyTaskAvailable(trx, ns, "after"));
      await waitFor(() => seen.payloads().length === 1, "a notification after the reconnect");
    } finally {
      seen.unsubscribe();
    }
  });

  it("keeps retrying an unreachable database until closed, and close() ends start()", async () => {
    const url = new URL(t.url);
    url.port = "1"; // nothing listens there
    const unreachable = new Notifier({ connectionString: url.toString(), initialReconnectDelayMs: 20, maxReconnectDelayMs: 50 });
    let started = false;
    const starting = unreachable.start().then(() => {
      started = true;
    });
    await sleep(300);
    expect(started).toBe(false);
    expect(unreachable.connected).toBe(false);
    await unreachable.close();
    await starting;
    expect(unreachable.connected).toBe(false);
  });

  it("stops listening on close() and does not come back", async () => {
    const own = new Notifier({ connectionString: t.url, applicationName: "notifier-test-close" });
    await own.start();
    expect(own.connected).toBe(true);
    const pid = own.stats.backendPid;
    await own.close();
    expect(own.connected).toBe(false);
    await sleep(300);
    expect(own.connected).toBe(false);
    // Its backend goes away (it may take a moment to exit after the goodbye).
    let sessions = 1;
    for (let i = 0; i < 50 && sessions > 0; i++) {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${pid}`.execute(t.db);
      sessions = rows[0]?.n ?? 0;
      if (sessions > 0) await sleep(100);
    }
    expect(sessions).toBe(0);
  });
});
