import { randomUUID } from "node:crypto";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json } from "../../db/json";
import { createDb } from "../../db/pool";
import { useTestDatabase } from "../../db/testing/test-database";
import { Metrics } from "../lib/metrics";
import { startMetricsServer } from "./metrics-server";
import type { MetricsServer } from "./metrics-server";
import { enqueueDecide } from "../store/decide-queues";
import { enqueueTasks } from "../store/task-queues";

const t = useTestDatabase();

/** The value of the sample `name{labels}` in a text exposition, or undefined when there is no such line. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = [...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]);
    if (JSON.stringify(found.sort()) === wanted) return Number(match[3]);
  }
  return undefined;
}

const DB_GAUGES = ["node_flow_task_queue_depth", "node_flow_decide_queue_depth", "node_flow_outbox_backlog", "node_flow_outbox_dead_letters"];

async function scrape(server: MetricsServer, init: RequestInit = {}, path = "/metrics") {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, init);
  return { status: response.status, contentType: response.headers.get("content-type"), body: await response.text() };
}

/** A TCP port nothing listens on: connecting to it is refused at once. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("the metrics server", () => {
  let defaultNamespaceId: string;
  const strayNamespaceId = randomUUID();
  const queue = `metrics_${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    ({ id: defaultNamespaceId } = await t.db
      .selectFrom("Namespaces")
      .select("id")
      .where("name", "=", "default")
      .executeTakeFirstOrThrow());
    const row = (namespaceId: string, queueName: string, visibleAt?: Date) => ({
      queueName,
      namespaceId,
      taskId: randomUUID(),
      workflowId: randomUUID(),
      taskType: "SIMPLE",
      priority: 0,
      visibleAt,
    });
    const future = new Date(Date.now() + 3_600_000);
    // In `queue`: 3 ready, 1 deferred, then one of the ready leased (2 ready left).
    const inserted = await enqueueTasks(t.db, [
      row(defaultNamespaceId, queue),
      row(defaultNamespaceId, queue),
      row(defaultNamespaceId, queue),
      row(defaultNamespaceId, queue, future),
      // A namespace id with no Namespaces row is labelled by its id.
      row(strayNamespaceId, "other"),
    ]);
    expect(inserted).toHaveLength(5);
    await t.db
      .updateTable("TaskQueues")
      .set({ leaseExpiresAt: future, leaseOwner: "w1" })
      .where("queueName", "=", queue)
      .where("id", "=", inserted[0]!.id)
      .execute();

    for (let i = 0; i < 2; i++) await enqueueDecide(t.db, { workflowId: randomUUID(), namespaceId: defaultNamespaceId, reason: "test" });
    const event = (over: { publishedAt?: Date; deadLetteredAt?: Date; nextAttemptAt?: Date } = {}) => ({
      namespaceId: defaultNamespaceId,
      topic: "t",
      payload: json({ n: 1 }),
      ...over,
    });
    await t.db
      .insertInto("OutboxEvents")
      .values([
        event(),
        // Backing off after a failed attempt: not due, but still owed.
        event({ nextAttemptAt: future }),
        event({ publishedAt: new Date() }),
        event({ deadLetteredAt: new Date() }),
      ])
      .execute();
  });

  describe("with the database up", () => {
    const metrics = new Metrics({ defaultMetrics: false });
    let server: MetricsServer;
    beforeAll(async () => {
      server = await startMetricsServer({ port: 0, host: "127.0.0.1", metrics, db: t.db });
    });
    afterAll(() => server.close());

    it("serves the database gauges with their labels and values", async () => {
      metrics.countLeaseExpiries(2);
      const { status, contentType, body } = await scrape(server);
      expect(status).toBe(200);
      expect(contentType).toBe("text/plain; version=0.0.4; charset=utf-8");

      const depth = (namespace: string, queueName: string, state: string) =>
        sample(body, "node_flow_task_queue_depth", { namespace, queue: queueName, state });
      expect(depth("default", queue, "ready")).toBe(2);
      expect(depth("default", queue, "deferred")).toBe(1);
      expect(depth("default", queue, "leased")).toBe(1);
      expect(depth(strayNamespaceId, "other", "ready")).toBe(1);
      expect(sample(body, "node_flow_decide_queue_depth")).toBe(2);
      expect(sample(body, "node_flow_outbox_backlog")).toBe(2);
      expect(sample(body, "node_flow_outbox_dead_letters")).toBe(1);
      // The process's own counters come in the same exposition.
      expect(sample(body, "node_flow_lease_expiries_total")).toBe(2);
      expect(sample(body, "node_flow_scrape_errors_total", { reason: "error" })).toBe(0);
      expect(body.match(/^# TYPE node_flow_task_queue_depth gauge$/gm)).toHaveLength(1);
    });

    it("follows the queue between scrapes rather than caching it", async () => {
      await t.db.deleteFrom("TaskQueues").where("queueName", "=", "other").execute();
      const { body } = await scrape(server);
      expect(sample(body, "node_flow_task_queue_depth", { namespace: strayNamespaceId, queue: "other", state: "ready" })).toBeUndefined();
      expect(sample(body, "node_flow_task_queue_depth", { namespace: "default", queue, state: "ready" })).toBe(2);
    });

    it("answers 404 for anything but GET /metrics", async () => {
      expect((await scrape(server, {}, "/")).status).toBe(404);
      expect((await scrape(server, {}, "/metricsx")).status).toBe(404);
      expect((await scrape(server, { method: "POST" })).status).toBe(404);
      expect((await scrape(server, {}, "/metrics?x=1")).status).toBe(200);
    });
  });

  it("requires the bearer token when one is set", async () => {
    const server = await startMetricsServer({ port: 0, host: "127.0.0.1", metrics: new Metrics({ defaultMetrics: false }), db: t.db, token: "tok-123" });
    try {
      const missing = await scrape(server);
      expect(missing.status).toBe(401);
      expect(missing.body).not.toContain("node_flow");
      expect((await scrape(server, { headers: { authorization: "Bearer tok-12" } })).status).toBe(401);
      expect((await scrape(server, { headers: { authorization: "Basic tok-123" } })).status).toBe(401);
      const ok = await scrape(server, { headers: { authorization: "Bearer tok-123" } });
      expect(ok.status).toBe(200);
      expect(sample(ok.body, "node_flow_decide_queue_depth")).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("folds queues outside NODE_FLOW_METRICS_TASKS into \"other\", adding them up and keeping the oldest", async () => {
    const unlisted = [`${queue}_x`, `${queue}_y`];
    const older = new Date(Date.now() - 120_000);
    await enqueueTasks(
      t.db,
      unlisted.map((queueName) => ({ queueName, namespaceId: defaultNamespaceId, taskId: randomUUID(), workflowId: randomUUID(), taskType: "SIMPLE", priority: 0 })),
    );
    await t.db.updateTable("TaskQueues").set({ enqueuedAt: older }).where("queueName", "=", unlisted[0]!).execute();
    const server = await startMetricsServer({ port: 0, host: "127.0.0.1", metrics: new Metrics({ defaultMetrics: false, tasks: [queue] }), db: t.db });
    try {
      const { body } = await scrape(server);
      expect(sample(body, "node_flow_task_queue_depth", { namespace: "default", queue: "other", state: "ready" })).toBe(2);
      expect(sample(body, "node_flow_task_queue_depth", { namespace: "default", queue, state: "ready" })).toBe(2);
      for (const name of unlisted) expect(body).not.toContain(name);
      // The older of the two: two minutes and the moment since.
      expect(sample(body, "node_flow_task_queue_oldest_ready_age_seconds", { namespace: "default", queue: "other" })).toBeGreaterThanOrEqual(120);
      expect(sample(body, "node_flow_task_queue_oldest_ready_age_seconds", { namespace: "default", queue })).toBeGreaterThan(0);
    } finally {
      await server.close();
      await t.db.deleteFrom("TaskQueues").where("queueName", "in", unlisted).execute();
    }
  });

  it("still answers with the database down: gauges absent, the error counted", async () => {
    const down = createDb(`postgres://nobody:nothing@127.0.0.1:${await closedPort()}/none`, { max: 1 });
    const metrics = new Metrics({ defaultMetrics: false });
    const server = await startMetricsServer({ port: 0, host: "127.0.0.1", metrics, db: down });
    try {
      metrics.recordRunnerPass("decide", { durationMs: 5, items: 3 });
      const first = await scrape(server);
      expect(first.status).toBe(200);
      for (const gauge of DB_GAUGES) expect(first.body).not.toContain(gauge);
      expect(sample(first.body, "node_flow_scrape_errors_total", { reason: "error" })).toBe(1);
      expect(sample(first.body, "node_flow_runner_items_total", { loop: "decide" })).toBe(3);
      const second = await scrape(server);
      expect(sample(second.body, "node_flow_scrape_errors_total", { reason: "error" })).toBe(2);
    } finally {
      await server.close();
      await down.destroy();
    }
  });

  it("gives up on a database that hangs, and does not pile up connections to it", async () => {
    // Accepts connections and never answers: the shape of a partitioned network,
    // where no statement_timeout applies because no statement was ever sent.
    const sockets: net.Socket[] = [];
    const hung = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
    const db = createDb(`postgres://nobody:nothing@127.0.0.1:${(hung.address() as AddressInfo).port}/none`, { max: 5 });
    const metrics = new Metrics({ defaultMetrics: false });
    const server = await startMetricsServer({ port: 0, host: "127.0.0.1", metrics, db, scrapeTimeoutMs: 200 });
    try {
      const first = await scrape(server);
      expect(first.status).toBe(200);
      for (const gauge of DB_GAUGES) expect(first.body).not.toContain(gauge);
      expect(sample(first.body, "node_flow_scrape_errors_total", { reason: "timeout" })).toBe(1);
      const second = await scrape(server);
      expect(sample(second.body, "node_flow_scrape_errors_total", { reason: "timeout" })).toBe(2);
      // Both scrapes waited on the one read still in flight.
      expect(sockets).toHaveLength(1);
    } finally {
      await server.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => hung.close(() => resolve()));
      await db.destroy().catch(() => undefined);
    }
  });
});
