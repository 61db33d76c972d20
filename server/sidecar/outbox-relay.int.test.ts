import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { outboxRetryDelaySeconds, relayOutboxBatch } from "./outbox-relay";
import type { OutboxRelayDeps } from "./outbox-relay";
import {
  OUTBOX_CHANNEL,
  OUTBOX_WAKE_KEY,
  claimOutboxEvents,
  insertOutboxEvent,
  listDeadLetteredEvents,
  markOutboxEventPublished,
  outboxBacklog,
  prunePublishedOutboxEvents,
  replayDeadLetteredEvent,
} from "../store/outbox-events";

const t = useTestDatabase();
let namespaceId: string;

/** The webhook receiver: answers each POST with the next status in `statuses` (200 once they run out). */
let server: http.Server;
let webhook: string;
let statuses: number[] = [];
let deliveries: { headers: http.IncomingHttpHeaders; body: unknown }[] = [];

beforeAll(async () => {
  namespaceId = (await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow()).id;
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      deliveries.push({ headers: req.headers, body: JSON.parse(body) as unknown });
      res.writeHead(statuses.shift() ?? 200, { "Content-Type": "text/plain" });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  webhook = `webhook:http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(async () => {
  statuses = [];
  deliveries = [];
  await t.db.deleteFrom("OutboxEvents").execute();
});

const T0 = new Date("2031-01-01T00:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const deps = (extra: Partial<OutboxRelayDeps> = {}): OutboxRelayDeps => ({ db: t.db, http: { allowPrivateNetworks: true }, ...extra });
const event = (id: number) => t.db.selectFrom("OutboxEvents").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

describe("relayOutboxBatch", () => {
  it("POSTs a webhook event's payload as JSON and marks it published", async () => {
    const row = await insertOutboxEvent(t.db, { namespaceId, topic: webhook, workflowId: randomUUID(), payload: { order: 42, note: "a\u0000b" }, now: T0 });
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(0) })).toBe(1);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.body).toEqual({ order: 42, note: "ab" });
    expect(deliveries[0]!.headers).toMatchObject({ "content-type": "application/json", "x-node-flow-event-id": String(row.id) });
    const stored = await event(row.id);
    expect(stored.publishedAt).toEqual(at(0));
    expect(stored.attempts).toBe(0);
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(3600) })).toBe(0);
    expect(deliveries).toHaveLength(1);
  });

  it("marks internal conductor events published without sending anything", async () => {
    const row = await insertOutboxEvent(t.db, { namespaceId, topic: "conductor:orders:notify", payload: {}, now: T0 });
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(0) })).toBe(1);
    expect((await event(row.id)).publishedAt).toEqual(at(0));
    expect(deliveries).toEqual([]);
  });

  it("retries a 500 with exponential backoff, recording the error, until it is delivered", async () => {
    const row = await insertOutboxEvent(t.db, { namespaceId, topic: webhook, payload: { n: 1 }, now: T0 });
    statuses = [500, 503];
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(0) })).toBe(1);
    expect(await event(row.id)).toMatchObject({ attempts: 1, lastError: "HTTP 500 Internal Server Error", nextAttemptAt: at(5), publishedAt: null });
    // Not due before its backoff.
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(4.9) })).toBe(0);
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(5) })).toBe(1);
    expect(await event(row.id)).toMatchObject({ attempts: 2, lastError: "HTTP 503 Service Unavailable", nextAttemptAt: at(15) });
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(14) })).toBe(0);
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(15) })).toBe(1);
    expect(await event(row.id)).toMatchObject({ attempts: 2, lastError: null, publishedAt: at(15) });
    expect(deliveries).toHaveLength(3);
  });

  it("dead-letters after 10 failed attempts, keeps the row, and a replay delivers it", async () => {
    const row = await insertOutboxEvent(t.db, { namespaceId, topic: webhook, payload: { n: 2 }, now: T0 });
    statuses = Array<number>(10).fill(500);
    let now = 0;
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect(await relayOutboxBatch(deps(), { limit: 10, now: at(now) }), `attempt ${attempt}`).toBe(1);
      now += outboxRetryDelaySeconds(attempt, 5, 3600);
    }
    const dead = await event(row.id);
    expect(dead.attempts).toBe(10);
    expect(dead.deadLetteredAt).not.toBeNull();
    expect(dead.lastError).toBe("HTTP 500 Internal Server Error");
    // Out of the delivery path for good, but kept and listed.
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(10 * 86400) })).toBe(0);
    expect((await listDeadLetteredEvents(t.db, { namespaceId, limit: 10 })).map((e) => e.id)).toEqual([row.id]);
    expect(await outboxBacklog(t.db)).toMatchObject({ pending: 0, deadLettered: 1 });

    expect(await replayDeadLetteredEvent(t.db, { namespaceId: randomUUID(), id: row.id })).toBe(false);
    expect(await replayDeadLetteredEvent(t.db, { namespaceId, id: row.id, now: at(20 * 86400) })).toBe(true);
    expect(await replayDeadLetteredEvent(t.db, { namespaceId, id: row.id })).toBe(false);
    expect(await outboxBacklog(t.db)).toMatchObject({ pending: 1, deadLettered: 0 });
    expect(await relayOutboxBatch(deps(), { limit: 10, now: at(20 * 86400) })).toBe(1);
    expect(await event(row.id)).toMatchObject({ publishedAt: at(20 * 86400), deadLetteredAt: null });
    expect(deliveries).toHaveLength(11);
  });

  it("honours a custom attempt budget and backoff", async () => {
    const row = await insertOutboxEvent(t.db, { namespaceId, topic: webhook, payload: {}, now: T0 });
    statuses = [500, 500];
    const custom = deps({ maxAttempts: 2, backoffBaseSeconds: 1, backoffMaxSeconds: 1 });
    await relayOutboxBatch(custom, { limit: 10, now: at(0) });
    expect((await event(row.id)).nextAttemptAt).toEqual(at(1));
    await relayOutboxBatch(custom, { limit: 10, now: at(1) });
    expect((await event(row.id)).deadLetteredAt).toEqual(at(1));
  });

  it("dead-letters at once what no retry can fix: a private address under the default policy, an unknown topic", async () => {
    const privateHook = await insertOutboxEvent(t.db, { namespaceId, topic: webhook, payload: {}, now: T0 });
    const unknown = await insertOutboxEvent(t.db, { namespaceId, topic: "kafka:orders", payload: {}, now: T0 });
    expect(await relayOutboxBatch(deps({ http: { allowPrivateNetworks: false } }), { limit: 10, now: at(0) })).toBe(2);
    expect(await event(privateHook.id)).toMatchObject({ attempts: 1, deadLetteredAt: at(0), lastError: expect.stringMatching(/refused.*loopback/) as unknown });
    expect(await event(unknown.id)).toMatchObject({ attempts: 1, deadLetteredAt: at(0), lastError: 'unsupported topic "kafka"' });
    expect(deliveries).toEqual([]);
  });

  it("two relays running at once deliver each event once", async () => {
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push((await insertOutboxEvent(t.db, { namespaceId, topic: webhook, payload: { i }, now: T0 })).id);
    const counts = await Promise.all([relayOutboxBatch(deps(), { limit: 50, now: at(0) }), relayOutboxBatch(deps(), { limit: 50, now: at(0) })]);
    const rest = await relayOutboxBatch(deps(), { limit: 50, now: at(0) });
    expect(counts[0] + counts[1] + rest).toBe(20);
    expect(deliveries.map((d) => (d.body as { i: number }).i).sort((a, b) => a - b)).toEqual(ids.map((_, i) => i));
  });
});

describe("outbox claims", () => {
  it("a relay whose claim ran out and was re-claimed cannot record over the newer claim", async () => {
    const row = await insertOutboxEvent(t.db, { namespaceId, topic: webhook, payload: {}, now: T0 });
    const [first] = await claimOutboxEvents(t.db, { limit: 10, claimSeconds: 30, now: at(0) });
    expect(first!.nextAttemptAt).toEqual(at(30));
    expect(await claimOutboxEvents(t.db, { limit: 10, claimSeconds: 30, now: at(29) })).toEqual([]);
    const [second] = await claimOutboxEvents(t.db, { limit: 10, claimSeconds: 30, now: at(30) });
    expect(second!.id).toBe(row.id);
    expect(await markOutboxEventPublished(t.db, { id: row.id, claimedUntil: first!.nextAttemptAt, now: at(31) })).toBe(false);
    expect(await markOutboxEventPublished(t.db, { id: row.id, claimedUntil: second!.nextAttemptAt, now: at(31) })).toBe(true);
  });

  it("counts the backlog and prunes old published events", async () => {
    const published = await insertOutboxEvent(t.db, { namespaceId, topic: "conductor:w:q", payload: {}, now: T0 });
    await insertOutboxEvent(t.db, { namespaceId, topic: webhook, payload: {}, now: at(100) });
    await relayOutboxBatch(deps(), { limit: 10, now: at(0) });
    expect(await outboxBacklog(t.db)).toEqual({ pending: 1, deadLettered: 0, oldestPendingAt: at(100) });
    expect(await prunePublishedOutboxEvents(t.db, { before: at(0), limit: 100 })).toBe(0);
    expect(await prunePublishedOutboxEvents(t.db, { before: at(1), limit: 100 })).toBe(1);
    expect(await t.db.selectFrom("OutboxEvents").select("id").where("id", "=", published.id).execute()).toEqual([]);
    expect(await outboxBacklog(t.db)).toMatchObject({ pending: 1 });
  });

  it("wakes the relay when an event commits, once per transaction, and not for a rollback", async () => {
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (message) => heard.push(`${message.channel} ${message.payload ?? ""}`));
    await listener.query(`LISTEN "${OUTBOX_CHANNEL}"`);
    await listener.query('LISTEN "marker"');
    try {
      await t.db
        .transaction()
        .execute(async (trx) => {
          await insertOutboxEvent(trx, { namespaceId, topic: webhook, payload: { n: 0 } });
          throw new Error("roll back");
        })
        .catch(() => undefined);
      const written = await t.db.transaction().execute(async (trx) => [
        await insertOutboxEvent(trx, { namespaceId, topic: webhook, payload: { n: 1 } }),
        await insertOutboxEvent(trx, { namespaceId, topic: webhook, payload: { n: 2 } }),
      ]);
      // The row comes back as it is stored: the notification is not one of its fields.
      expect(Object.keys(written[0]!).sort()).toEqual(Object.keys(await event(written[0]!.id)).sort());
      // Notifications arrive in commit order: once the marker is here, anything sent before it is too.
      await listener.query("NOTIFY marker");
      await new Promise<void>((resolve) => {
        const check = () => (heard.includes("marker ") ? resolve() : setTimeout(check, 10));
        check();
      });
      expect(heard).toEqual([`${OUTBOX_CHANNEL} ${OUTBOX_WAKE_KEY}`, "marker "]);
    } finally {
      await listener.end();
    }
  });
});
