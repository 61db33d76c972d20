import { mkdtemp, rm } from "node:fs/promises";
import { createServer, get as httpGet } from "node:http";
import type { IncomingMessage } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { createSession } from "../auth/sessions";
import { FilesystemBlobStore } from "../lib/blob-store";
import { evaluateBatch } from "../evaluator/evaluator";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { upsertNamespaceMember } from "../store/namespace-members";
import { insertNamespace } from "../store/namespaces";
import { leaseTasks } from "../store/task-queues";
import { completeTaskFromWorker } from "../store/task-executions";
import { readWorkflowEvents } from "../store/workflow-events";
import { driveWorkflows } from "../testing/drive-workflows";
import { registerDefinition, startRuns } from "../testing/runtime-fixtures";
import { waitUntil } from "../testing/wait-until";
import { insertTestUser, useWebEnvironment } from "../trpc/testing";
import { getWebContext } from "../web/web-context";

/**
 * The SSE route handlers (app/api/executions/…/route.ts) behind a real
 * node:http server that streams their bodies with backpressure, read by a
 * real HTTP client; runs advanced by the real decider. Notifications on, as
 * in production: the web context's one LISTEN connection feeds every stream.
 */
const database = useTestDatabase();
useWebEnvironment(database, { NODE_FLOW_NOTIFICATIONS: "on" });

type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

let server: Server;
/** URLs whose response has waited for its socket to drain: the client is not keeping up. */
const stalled = new Set<string>();
let base: string;
let scripts: QuickJsScriptEvaluator;
let blobs: FilesystemBlobStore;
let blobRoot: string;
let nsId: string;
let otherNsId: string;
let cookie: string;
let outsiderCookie: string;

const flow = {
  schemaVersion: 1,
  name: "live",
  nodes: [{ ref: "work", type: "SIMPLE", name: "task", position: { x: 0, y: 0 } }],
  edges: [],
};

async function loadRoute(file: string): Promise<Handler> {
  // By path: server/ may not import app/ statically (layer rule); these are the real handlers.
  return ((await import(pathToFileURL(path.join(process.cwd(), file)).href)) as { GET: Handler }).GET;
}

beforeAll(async () => {
  const executionRoute = await loadRoute("app/api/executions/[id]/stream/route.ts");
  const listRoute = await loadRoute("app/api/executions/stream/route.ts");
  server = createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    const request = new Request(url, { headers, signal: controller.signal });
    const match = /^\/api\/executions\/([^/]+)\/stream$/.exec(url.pathname);
    const answer = url.pathname === "/api/executions/stream" ? listRoute(request, { params: Promise.resolve({}) }) : executionRoute(request, { params: Promise.resolve({ id: match?.[1] ?? "" }) });
    void (async () => {
      const response = await answer;
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      if (!response.body) return res.end();
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          // Backpressure as Next applies it: wait for the socket to drain before pulling more.
          if (!res.write(value)) {
            stalled.add(req.url ?? "");
            // Whichever comes first takes the other listener with it: one left behind per stall piled up on a
            // long stream (Node's MaxListenersExceededWarning on the response).
            await new Promise<void>((resolve) => {
              const done = () => {
                res.off("drain", done);
                res.off("close", done);
                resolve();
              };
              res.once("drain", done);
              res.once("close", done);
            });
          }
          if (controller.signal.aborted) break;
        }
      } finally {
        await reader.cancel().catch(() => undefined);
        res.end();
      }
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const db = database.db;
  scripts = await createQuickJsScriptEvaluator();
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-live-"));
  blobs = new FilesystemBlobStore({ root: blobRoot });
  nsId = (await insertNamespace(db, { name: "ops" })).id;
  otherNsId = (await insertNamespace(db, { name: "other" })).id;
  await registerDefinition(db, nsId, flow);
  await registerDefinition(db, otherNsId, flow);
  const viewer = await insertTestUser(db, "viewer@example.com");
  await upsertNamespaceMember(db, { namespaceId: nsId, userId: viewer.id, role: "viewer" });
  cookie = `nf_session=${(await createSession(db, { userId: viewer.id })).token}`;
  const outsider = await insertTestUser(db, "outsider@example.com");
  await upsertNamespaceMember(db, { namespaceId: otherNsId, userId: outsider.id, role: "admin" });
  outsiderCookie = `nf_session=${(await createSession(db, { userId: outsider.id })).token}`;
  await getWebContext().notifier()?.start();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await scripts.close();
  await rm(blobRoot, { recursive: true, force: true });
});

interface SseMessage {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

/** An SSE client over fetch: every message parsed as it arrives. */
async function openStream(pathAndQuery: string, headers: Record<string, string> = { cookie }) {
  const controller = new AbortController();
  const response = await fetch(`${base}${pathAndQuery}`, { headers, signal: controller.signal });
  const messages: SseMessage[] = [];
  const reading = (async () => {
    if (!response.body || response.status !== 200) return;
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      const reader = response.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(
            block
              .split("\n")
              .filter((line) => !line.startsWith(":") && line.includes(":"))
              .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trimStart()]),
          );
          if (fields.event !== undefined) messages.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data ?? "{}") as Record<string, unknown> });
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return {
    status: response.status,
    headers: response.headers,
    messages,
    history: () => messages.filter((m) => m.event === "history").map((m) => m.data as { seq: number; type: string; status: string | null }),
    async waitFor(what: string, check: (messages: SseMessage[]) => boolean, timeoutMs = 10_000) {
      await waitUntil(() => check(messages), { what, timeoutMs, intervalMs: 20, describe: () => JSON.stringify(messages.map((m) => [m.event, m.id])) });
    },
    async close() {
      controller.abort();
      await reading;
    },
  };
}

const evaluator = () => ({ db: database.db, scripts, blobs });

function drive(namespaceId = nsId) {
  return driveWorkflows({ db: database.db, evaluator: evaluator(), namespaceId, handler: () => ({ status: "COMPLETED", output: { ok: true } }) });
}

async function startOne(namespaceId = nsId): Promise<string> {
  const [id] = await startRuns({ db: database.db, blobs }, { namespaceId, name: "live", count: 1 });
  return id!;
}

async function allSeqs(id: string): Promise<number[]> {
  return (await readWorkflowEvents(database.db, id, { limit: 1000 })).map((e) => e.seq);
}

describe("authorization on every stream", () => {
  it("401 without a session, 404 for a foreign or unknown run, the list stream only for a readable namespace", async () => {
    const foreign = await startOne(otherNsId);
    const anonymous = await fetch(`${base}/api/executions/${foreign}/stream`);
    expect(anonymous.status).toBe(401);
    expect((await fetch(`${base}/api/executions/stream?namespace=ops`)).status).toBe(401);
    for (const id of [foreign, "00000000-0000-0000-0000-000000000000", "not-a-uuid"]) {
      const response = await fetch(`${base}/api/executions/${id}/stream`, { headers: { cookie } });
      expect(response.status).toBe(404);
      expect(await response.text()).not.toContain("other");
    }
    expect((await fetch(`${base}/api/executions/stream?namespace=ops`, { headers: { cookie: outsiderCookie } })).status).toBe(404);
    const own = await openStream(`/api/executions/${foreign}/stream`, { cookie: outsiderCookie });
    expect(own.status).toBe(200);
    expect(own.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await own.close();
  });
});

describe("GET /api/executions/{id}/stream", () => {
  it("delivers every event once in seq order, with the run's status, while the run moves", async () => {
    const id = await startOne();
    const stream = await openStream(`/api/executions/${id}/stream`);
    await stream.waitFor("WORKFLOW_STARTED", () => stream.history().length >= 1);
    await drive();
    await stream.waitFor("the end of the run", () => stream.history().some((e) => e.type === "WORKFLOW_COMPLETED"));
    await stream.waitFor("status COMPLETED", (m) => m.some((x) => x.event === "workflow" && x.data.status === "COMPLETED"));
    await stream.close();
    const seqs = await allSeqs(id);
    expect(stream.history().map((e) => e.seq)).toEqual(seqs);
    expect(stream.messages.filter((m) => m.event === "history").map((m) => Number(m.id))).toEqual(seqs);
    const scheduled = stream.history().find((e) => e.type === "TASK_SCHEDULED") as Record<string, unknown> | undefined;
    expect(scheduled).toMatchObject({ ref: "work", status: "SCHEDULED", iteration: 0, attempt: 0 });
    expect(Object.keys(scheduled ?? {}).sort()).toEqual(["at", "attempt", "iteration", "ref", "seq", "status", "taskId", "type"]);
    // The end carries the task's own times — what a reload reads from the row — not the recording's.
    const row = await database.db.selectFrom("TaskExecutions").select(["id", "startedAt", "endedAt"]).where("workflowId", "=", id).where("refName", "=", "work").executeTakeFirstOrThrow();
    const completed = stream.history().find((e) => e.type === "TASK_COMPLETED") as Record<string, unknown> | undefined;
    expect(completed).toMatchObject({ taskId: row.id, startedAt: row.startedAt?.toISOString(), endedAt: row.endedAt?.toISOString() });
  });

  it("resumes from Last-Event-ID after a cut with nothing missed or repeated; ?after= starts later", async () => {
    const id = await startOne();
    await evaluateBatch(evaluator(), { limit: 50 });
    const first = await openStream(`/api/executions/${id}/stream`);
    await first.waitFor("the first events", () => first.history().length >= 2);
    await first.close();
    const cut = first.history();
    await drive(); // the run moves on while the client is away
    const resumed = await openStream(`/api/executions/${id}/stream`, { cookie, "last-event-id": String(cut.at(-1)!.seq) });
    await resumed.waitFor("the end of the run", () => resumed.history().some((e) => e.type === "WORKFLOW_COMPLETED"));
    await resumed.close();
    expect([...cut, ...resumed.history()].map((e) => e.seq)).toEqual(await allSeqs(id));
    const later = await openStream(`/api/executions/${id}/stream?after=2`);
    await later.waitFor("the tail", () => later.history().some((e) => e.type === "WORKFLOW_COMPLETED"));
    await later.close();
    expect(later.history().map((e) => e.seq)).toEqual((await allSeqs(id)).slice(2));
  });

  it("shows a worker's lease (IN_PROGRESS, no WorkflowEvent) live in a tasks snapshot", async () => {
    const id = await startOne();
    await evaluateBatch(evaluator(), { limit: 50 });
    const stream = await openStream(`/api/executions/${id}/stream`);
    const tasksWith = (status: string) => (m: SseMessage[]) =>
      m.some((x) => x.event === "tasks" && (x.data.tasks as { status: string; workerId: string | null }[]).some((t) => t.status === status));
    await stream.waitFor("the SCHEDULED snapshot", tasksWith("SCHEDULED"));
    const [leased] = await leaseTasks(database.db, { queueName: "task", namespaceId: nsId, count: 1, leaseSeconds: 30, owner: "worker-7" });
    expect(leased?.task.workflowId).toBe(id);
    await stream.waitFor("the IN_PROGRESS snapshot", tasksWith("IN_PROGRESS"), 3_000);
    const snapshot = stream.messages.filter((m) => m.event === "tasks").at(-1)?.data.tasks as Record<string, unknown>[];
    expect(snapshot[0]).toMatchObject({ ref: "work", status: "IN_PROGRESS", workerId: "worker-7", pollCount: 1, attempt: 0, iteration: 0 });
    const report = await completeTaskFromWorker(database.db, { namespaceId: nsId, workflowId: id, taskId: leased!.task.id, status: "COMPLETED", output: {}, reason: null, workerId: "worker-7" });
    expect(report.ok).toBe(true);
    await drive();
    await stream.waitFor("the empty frontier", (m) => m.some((x) => x.event === "tasks" && (x.data.tasks as unknown[]).length === 0));
    await stream.close();
  });
});

describe("a stalled client", () => {
  it("holds up nobody: another viewer of the same run sees it end while the stalled one's stream waits, which then resumes with nothing lost", async () => {
    const id = await startOne();
    // A history far bigger than the loopback socket buffers (~25 MB of messages), so the stalled reader's
    // stream really does block on backpressure; the rows are written in one statement.
    await sql`
      INSERT INTO "WorkflowEvents" ("workflowId", "seq", "namespaceId", "type", "data")
      SELECT ${id}::uuid, 1 + g, ${nsId}::uuid, 'TASK_UPDATED', jsonb_build_object('reason', repeat('x', 490) || g)
      FROM generate_series(1, 40000) AS g`.execute(database.db);
    const url = `/api/executions/${id}/stream?stall=1`;
    let stalledResponse: IncomingMessage | undefined;
    const stalledRequest = httpGet(`${base}${url}`, { headers: { cookie } }, (response) => {
      stalledResponse = response;
      response.pause(); // reads nothing: the kernel's buffers fill and the server's writes stop draining
    });
    await waitUntil(() => stalled.has(url), { what: "the stalled client's stream to block on backpressure", timeoutMs: 20_000 });

    // A second viewer, read as it arrives (counted, not parsed, at this size).
    const controller = new AbortController();
    const live = await fetch(`${base}/api/executions/${id}/stream`, { headers: { cookie }, signal: controller.signal });
    let seen = "";
    const watching = (async () => {
      const decoder = new TextDecoder();
      const reader = live.body!.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        seen = (seen + decoder.decode(value, { stream: true })).slice(-4096);
        if (seen.includes('"WORKFLOW_COMPLETED"')) return;
      }
    })();
    await drive();
    await watching;
    controller.abort();
    expect(stalled.has(url)).toBe(true);

    // The stalled client reads again and gets every event, in order, once.
    // Chunks kept and only the tail searched: searching the whole growing body on every chunk made this read
    // quadratic (~20 s of the test's time, past its limit on a loaded machine).
    const chunks: string[] = [];
    await new Promise<void>((resolve) => {
      let tail = "";
      stalledResponse!.setEncoding("utf8");
      stalledResponse!.on("data", (chunk: string) => {
        chunks.push(chunk);
        tail = (tail + chunk).slice(-4096);
        if (tail.includes('"WORKFLOW_COMPLETED"')) resolve();
      });
      stalledResponse!.resume();
    });
    const body = chunks.join("");
    stalledRequest.destroy();
    const ids = [...body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    const stored = await database.db.selectFrom("WorkflowEvents").select("seq").where("workflowId", "=", id).orderBy("seq").execute();
    expect(ids).toEqual(stored.map((e) => Number(e.seq)));
  }, 60_000);
});

describe("GET /api/executions/stream?namespace=", () => {
  it("sends each of the namespace's runs as it starts and changes status, and nothing of another namespace", async () => {
    // Waiters the process keeps for good (the API-key cache's subscription) are not the stream's.
    const waitersBefore = getWebContext().notifier()?.stats.waiters ?? 0;
    const stream = await openStream(`/api/executions/stream?namespace=ops`);
    expect(stream.status).toBe(200);
    const foreign = await startOne(otherNsId);
    const id = await startOne();
    const summaries = () => stream.messages.filter((m) => m.event === "execution").map((m) => m.data as { id: string; status: string; workflow: string });
    await stream.waitFor("the new run", () => summaries().some((s) => s.id === id && s.status === "RUNNING"));
    await drive();
    await stream.waitFor("its completion", () => summaries().some((s) => s.id === id && s.status === "COMPLETED"));
    await stream.close();
    expect(summaries().find((s) => s.id === id)).toMatchObject({ workflow: "live" });
    expect(summaries().some((s) => s.id === foreign)).toBe(false);
    // The stream unsubscribed on close: no waiter left behind.
    await waitUntil(() => getWebContext().notifier()?.stats.waiters === waitersBefore, { what: "every stream to unsubscribe", timeoutMs: 3_000 });
  });
});
