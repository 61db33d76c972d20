import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as v1 from "@/app/api/v1/[...path]/route";
import { useTestDatabase } from "../db/testing/test-database";
import { chain, simple, workflow } from "../engine/definition/test-fixtures";
import { createApiKey } from "../server/auth/api-keys";
import { historyProblems, waitForWorkflowsToEnd } from "../server/testing/runtime-fixtures";
import { startSidecar } from "../server/testing/sidecar-process";
import type { SidecarProcess } from "../server/testing/sidecar-process";
import { waitUntil } from "../server/testing/wait-until";
import { serveFetchHandler } from "../server/web/testing/serve-fetch-handler";
import { getWebContext } from "../server/web/web-context";
import { NodeFlowApiError } from "./api-error";
import type { JsonObject, Run } from "./api-types";
import { createNodeFlowClient } from "./http-client";
import type { NodeFlowClient } from "./http-client";
import { createWorker } from "./worker";
import type { NodeFlowWorker, TaskHandler, WorkerEvent, WorkerLogger, WorkerOptions } from "./worker";
import { TerminalError } from "./worker-errors";

/**
 * The SDK against the real server over real HTTP: a node:http server hands
 * each request to the exported handlers of app/api/v1/[...path]/route.ts (the
 * route table, authentication, validation and problem+json of production), on
 * a test database, with the decider and the lease sweeper in a real sidecar
 * process. The SDK sees nothing but HTTP and an API key.
 */

const t = useTestDatabase();
let dataDir: string;
let sidecar: SidecarProcess;
let server: Server;
let baseUrl: string;
let apiKey: string;
let client: NodeFlowClient;
const workers: NodeFlowWorker[] = [];
const SAVED_ENV = { ...process.env };

/** Polls the server is holding right now, by queue: what shows that a stopping worker's parked poll was let go. */
const openPolls = new Map<string, number>();

type RouteHandler = (request: Request) => Promise<Response>;
const handlers: Record<string, RouteHandler> = { GET: v1.GET, POST: v1.POST, PUT: v1.PUT, PATCH: v1.PATCH, DELETE: v1.DELETE };

/** The app's route handler behind node:http (a client that goes away aborts the request: long-polls stop on it), counting parked polls. */
function serveRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
  return serveFetchHandler(req, res, async (request) => {
    const handler = handlers[request.method];
    const pollQueue = request.url.endsWith("/tasks/poll") ? String(((await request.clone().json().catch(() => ({}))) as { queue?: unknown }).queue) : undefined;
    if (pollQueue !== undefined) openPolls.set(pollQueue, (openPolls.get(pollQueue) ?? 0) + 1);
    try {
      return handler ? await handler(request) : new Response(null, { status: 405 });
    } finally {
      if (pollQueue !== undefined) openPolls.set(pollQueue, openPolls.get(pollQueue)! - 1);
    }
  });
}

async function listen(s: Server): Promise<string> {
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

async function close(s: Server | undefined): Promise<void> {
  if (!s) return;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "nf-sdk-"));
  // The sidecar announces itself at info level, whatever this process's LOG_LEVEL.
  sidecar = startSidecar({ databaseUrl: t.url, dataDir, env: { LOG_LEVEL: "info" } });
  // The web context reads its configuration from the environment on first use (the first request).
  Object.assign(process.env, { DATABASE_URL: t.url, NODE_FLOW_SECRET: "s".repeat(64), NODE_FLOW_DATA_DIR: dataDir, NODE_FLOW_ROLES: "api", LOG_LEVEL: "warn" });
  server = createServer((req, res) => {
    serveRoute(req, res).catch((error: unknown) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    });
  });
  baseUrl = await listen(server);
  const namespace = await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  apiKey = (await createApiKey(t.db, { namespaceId: namespace.id, name: "sdk-int", scopes: ["worker", "admin"], createdBy: "sdk test" })).key;
  client = createNodeFlowClient({ baseUrl, apiKey, namespace: "default" });
  await sidecar.ready();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ timeoutMs: 1000 })));
  logged.length = 0;
});

afterAll(async () => {
  const code = await sidecar?.stop();
  await close(server);
  const context = getWebContext();
  await context.notifier()?.close();
  await context.db.destroy();
  // The context is cached on globalThis; a later file in a reused worker process must not get this closed pool.
  delete (globalThis as { __nodeFlowWebContext?: unknown }).__nodeFlowWebContext;
  process.env = SAVED_ENV;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  expect(code, sidecar?.output()).toBe(0);
});

/** Errors and warnings the workers log: a correct run logs none, and a failed assertion shows them. */
const logged: string[] = [];
const testLogger: WorkerLogger = {
  info: () => undefined,
  warn: (fields, message) => logged.push(`warn ${message} ${JSON.stringify(fields)}`),
  error: (fields, message) => logged.push(`error ${message} ${JSON.stringify(fields)}`),
};

function startWorker(queue: string, handler: TaskHandler, options: Partial<WorkerOptions> = {}): NodeFlowWorker {
  const worker = createWorker({ baseUrl, apiKey, namespace: "default", queue, handler, pollTimeoutMs: 5000, logger: testLogger, ...options });
  workers.push(worker);
  return worker;
}

async function register(definition: JsonObject): Promise<string> {
  return (await client.registerDefinition(definition)).name;
}

/** Polls the run over the API until it has ended. */
async function waitForRun(id: string, timeoutMs = 20_000): Promise<Run> {
  let run: Run | undefined;
  await waitUntil(
    async () => {
      run = await client.getRun(id);
      return run.status !== "RUNNING";
    },
    { what: `run ${id} to end`, timeoutMs, intervalMs: 100, describe: () => `${JSON.stringify(run?.tasks.items.map((x) => [x.refName, x.attempt, x.status]))}\n${logged.join("\n")}\n${sidecar.output().slice(-2000)}` },
  );
  return run!;
}

/**
 * Until the workers' reports are answered: a run ends when its last report
 * commits, but that report's answer can wait up to a second for a next task
 * (the worker's `next`), and the stats count a report once it is answered.
 */
async function reportsAnswered(...workers: NodeFlowWorker[]): Promise<void> {
  await waitUntil(() => workers.every((w) => w.stats().inFlight === 0), { what: "the workers' reports to be answered", timeoutMs: 5000, intervalMs: 10 });
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

describe("the SDK against the real server", () => {
  it("completes 20 runs of a two-step chain with concurrency 4, every report accepted", async () => {
    const queue = "sdk_chain";
    const name = await register(
      workflow([simple("a", { name: queue, input: { n: "${workflow.input.n}" } }), simple("b", { name: queue, input: { n: "${a.output.n}" } })], chain("a", "b"), {
        name: "sdk_chain",
      }),
    );
    let inFlight = 0;
    let maxInFlight = 0;
    const worker = startWorker(
      queue,
      async (task, ctx) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          ctx.log(`${task.refName} got ${String(task.input.n)}`);
          await sleep(20);
          const n = Number(task.input.n);
          return { n: task.refName === "a" ? n * 10 : n + 1 };
        } finally {
          inFlight -= 1;
        }
      },
      { concurrency: 4 },
    );

    const started = await Promise.all(Array.from({ length: 20 }, (_, i) => client.startRun({ name, input: { n: i } }, { idempotencyKey: `chain-${i}` })));
    expect(started.every((s) => s.created)).toBe(true);
    // The same key again names the same run, and starts nothing.
    expect(await client.startRun({ name, input: { n: 0 } }, { idempotencyKey: "chain-0" })).toEqual({ id: started[0]!.id, created: false });

    // Watched in the database: twenty clients polling the API would compete with the worker for this process's event loop.
    await waitForWorkflowsToEnd(t.db, started.map((s) => s.id), { timeoutMs: 25_000, context: () => `${logged.join("\n")}\n${sidecar.output().slice(-2000)}` });
    const runs = await Promise.all(started.map((s) => client.getRun(s.id)));
    for (const [i, run] of runs.entries()) {
      expect(run, run.id).toMatchObject({ status: "COMPLETED", output: { n: i * 10 + 1 } });
      expect(run.tasks.items.map((x) => [x.refName, x.status, x.attempt, x.workerId])).toEqual([
        ["a", "COMPLETED", 0, worker.workerId],
        ["b", "COMPLETED", 0, worker.workerId],
      ]);
    }
    expect(await historyProblems(t.db, started.map((s) => s.id))).toEqual([]);
    await reportsAnswered(worker);
    expect(worker.stats()).toMatchObject({ tasksReceived: 40, completed: 40, refused: 0, unconfirmed: 0, reportErrors: 0, pollErrors: 0, leaseLost: 0 });
    expect(maxInFlight).toBeLessThanOrEqual(4);
    // Twenty runs queued at once: reports carry the next task, and the polls they save are not made.
    const { polls, tasksWithReports } = worker.stats();
    expect(tasksWithReports).toBeGreaterThan(0);
    expect(polls).toBeLessThan(40 - tasksWithReports + 1);
    const firstTask = runs[3]!.tasks.items[0]!;
    expect((await client.listTaskLogs(firstTask.id)).items.map((l) => l.line)).toEqual(["a got 3"]);
    expect(logged).toEqual([]);
  });

  it("keeps a long task held by heartbeats past its 3 s lease; without them it is handed to another worker", async () => {
    const name = await register(workflow([simple("slow", { name: "sdk_long", policy: { responseTimeoutSeconds: 3 } })], [], { name: "sdk_long" }));
    const controlName = await register(workflow([simple("slow", { name: "sdk_long_control", policy: { responseTimeoutSeconds: 3 } })], [], { name: "sdk_long_control" }));

    // Held: A works 7 s, heartbeating every 500 ms; B polls the same queue all the while after A took the task.
    // The lease is 3 s, not 1: on a loaded 2-core machine one heartbeat round trip can take most of a second,
    // and the point is that heartbeats keep a task held, not how tight the window can be.
    let aStarted = false;
    const a = startWorker(
      "sdk_long",
      async (_task, ctx) => {
        aStarted = true;
        for (let i = 0; i < 7; i++) {
          ctx.log(`step ${i}`);
          await sleep(1000, ctx.signal);
          if (ctx.signal.aborted) throw ctx.signal.reason;
        }
        return { by: "a" };
      },
      { workerId: "long-a", heartbeatIntervalMs: 500 },
    );

    // Control: A' never heartbeats within the lease, so the sweeper requeues the task and B' gets it.
    let controlHandedOn = false;
    const aPrime = startWorker(
      "sdk_long_control",
      async () => {
        await waitUntil(() => controlHandedOn, { what: "the control task to reach the second worker", timeoutMs: 15_000, intervalMs: 20 });
        return { by: "a-prime" };
      },
      { workerId: "control-a", heartbeatIntervalMs: 60_000 },
    );
    const bPrimeStarted = new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (aPrime.stats().inFlight === 1) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    });

    const run = await client.startRun({ name });
    await waitUntil(() => aStarted, { what: "A to start the long task", timeoutMs: 10_000, intervalMs: 10 });
    // Only now: had B been polling first, it could have taken the task fairly.
    const b = startWorker("sdk_long", () => ({ by: "b" }), { workerId: "long-b", pollTimeoutMs: 500 });
    const controlRun = await client.startRun({ name: controlName });
    await bPrimeStarted;
    const bPrime = startWorker(
      "sdk_long_control",
      () => {
        controlHandedOn = true;
        return { by: "b-prime" };
      },
      { workerId: "control-b", pollTimeoutMs: 500 },
    );

    const held = await waitForRun(run.id);
    expect(held.status).toBe("COMPLETED");
    expect(held.output).toEqual({ by: "a" });
    expect(held.tasks.items).toHaveLength(1);
    expect(held.tasks.items[0]).toMatchObject({ attempt: 0, pollCount: 1, workerId: "long-a", status: "COMPLETED" });
    await reportsAnswered(a);
    expect(a.stats()).toMatchObject({ completed: 1, refused: 0, leaseLost: 0, heartbeatErrors: 0 });
    expect(b.stats().tasksReceived).toBe(0);
    expect((await client.listTaskLogs(held.tasks.items[0]!.id)).items.map((l) => l.line)).toEqual(["step 0", "step 1", "step 2", "step 3", "step 4", "step 5", "step 6"]);

    const handedOn = await waitForRun(controlRun.id);
    expect(handedOn.output).toEqual({ by: "b-prime" });
    expect(handedOn.tasks.items[0]).toMatchObject({ attempt: 0, pollCount: 2, workerId: "control-b", status: "COMPLETED" });
    await waitUntil(() => aPrime.stats().inFlight === 0, { what: "A' to report", timeoutMs: 5000, intervalMs: 20 });
    expect(aPrime.stats()).toMatchObject({ completed: 0, refused: 1 });
    await reportsAnswered(bPrime);
    expect(bPrime.stats().completed).toBe(1);
  }, 60_000);

  it("stop() lets the task in hand finish and report, aborts the parked poll, and takes nothing more", async () => {
    const queue = "sdk_graceful";
    const name = await register(workflow([simple("only", { name: queue })], [], { name: "sdk_graceful" }));
    let started = false;
    let finished = false;
    const events: WorkerEvent["type"][] = [];
    const worker = startWorker(
      queue,
      async () => {
        started = true;
        await sleep(1000);
        finished = true;
        return { finished: true };
      },
      // Two slots: while one task runs, the other slot's poll is parked on the server for up to 20 s.
      { concurrency: 2, pollTimeoutMs: 20_000, onEvent: (e) => events.push(e.type) },
    );
    const first = await client.startRun({ name });
    await waitUntil(() => started, { what: "the handler to start", timeoutMs: 10_000, intervalMs: 10 });

    await waitUntil(() => openPolls.get(queue) === 1, { what: "the free slot's poll to park on the server", timeoutMs: 5000, intervalMs: 5 });
    const stopped = worker.stop({ timeoutMs: 15_000 });
    // The poll parked for 20 s is aborted as the stop begins, and the server lets it go, while the handler still runs.
    await waitUntil(() => openPolls.get(queue) === 0, { what: "the parked poll to end on the server", timeoutMs: 3000, intervalMs: 10 });
    expect(await stopped).toEqual({ drained: true, released: 0, abandoned: 0 });
    expect(finished).toBe(true);
    expect((await client.getRun(first.id)).tasks.items[0]).toMatchObject({ status: "COMPLETED", output: { finished: true } });
    expect(events.at(-1)).toBe("stopped");

    // The parked poll was aborted and gave back nothing: a task enqueued now waits, unleased, for the next worker.
    const second = await client.startRun({ name });
    await waitUntil(async () => (await client.getRun(second.id)).tasks.items.length === 1, { what: "the second task to be scheduled", timeoutMs: 10_000, intervalMs: 20 });
    await sleep(300);
    expect((await client.getRun(second.id)).tasks.items[0]).toMatchObject({ status: "SCHEDULED", pollCount: 0 });
    expect(worker.stats().tasksReceived).toBe(1);
    const next = startWorker(queue, () => ({ finished: "by the next worker" }));
    expect((await waitForRun(second.id)).status).toBe("COMPLETED");
    await next.stop();
    expect(logged).toEqual([]);
  });

  it("at the shutdown timeout, gives the unfinished task back: the next worker runs the same attempt at once, no retry spent", async () => {
    const queue = "sdk_shutdown_timeout";
    // No retries, and a lease window of an hour: only a release can get this run finished within the test.
    const name = await register(workflow([simple("only", { name: queue, policy: { retryCount: 0, responseTimeoutSeconds: 3600 } })], [], { name: "sdk_shutdown_timeout" }));
    let started = false;
    const stuck = startWorker(
      queue,
      async (_task, ctx) => {
        started = true;
        ctx.log("started, then stopped");
        await sleep(60_000, ctx.signal);
        throw ctx.signal.reason;
      },
      { workerId: "stuck" },
    );
    const run = await client.startRun({ name });
    await waitUntil(() => started, { what: "the handler to start", timeoutMs: 10_000, intervalMs: 10 });
    expect(await stuck.stop({ timeoutMs: 200 })).toEqual({ drained: false, released: 1, abandoned: 0 });

    const next = startWorker(queue, () => ({ second: true }), { workerId: "next" });
    const ended = await waitForRun(run.id, 10_000);
    expect(ended.status).toBe("COMPLETED");
    expect(ended.tasks.items.map((x) => [x.attempt, x.status, x.pollCount, x.workerId, x.reasonForIncompletion])).toEqual([[0, "COMPLETED", 2, "next", null]]);
    expect((await client.listTaskLogs(ended.tasks.items[0]!.id)).items.map((l) => l.line)).toEqual(["started, then stopped"]);
    expect(stuck.stats()).toMatchObject({ released: 1, abandoned: 0, failed: 0, refused: 0 });
    await next.stop();
  });

  it("fails a task terminally on a TerminalError (no retry), retryably on any other error", async () => {
    const queue = "sdk_failures";
    const name = await register(workflow([simple("only", { name: queue, input: { mode: "${workflow.input.mode}" }, policy: { retryCount: 2, retryDelaySeconds: 0 } })], [], { name: "sdk_failures" }));
    const worker = startWorker(queue, (task) => {
      if (task.input.mode === "terminal") throw new TerminalError("the card was declined", { output: { code: "declined" } });
      if (task.attempt === 0) throw new Error("the gateway timed out");
      return { charged: true };
    });
    const terminal = await client.startRun({ name, input: { mode: "terminal" } });
    const transient = await client.startRun({ name, input: { mode: "transient" } });

    const failed = await waitForRun(terminal.id);
    expect(failed.status).toBe("FAILED");
    expect(failed.tasks.items.map((x) => [x.attempt, x.status, x.reasonForIncompletion, x.output])).toEqual([
      [0, "FAILED_WITH_TERMINAL_ERROR", "the card was declined", { code: "declined" }],
    ]);
    const recovered = await waitForRun(transient.id);
    expect(recovered.status).toBe("COMPLETED");
    expect(recovered.tasks.items.map((x) => [x.attempt, x.status, x.reasonForIncompletion])).toEqual([
      [0, "FAILED", "the gateway timed out"],
      [1, "COMPLETED", null],
    ]);
    await reportsAnswered(worker);
    expect(worker.stats()).toMatchObject({ failedTerminal: 1, failed: 1, completed: 1, refused: 0 });
    expect(logged).toEqual([]);
  });

  it("rides out a flaky proxy: 5xx, 429 and lost answers are retried, nothing is done twice", async () => {
    // In front of the server: every third request is answered 503 without reaching it, one is
    // answered 429 with Retry-After, and the first start and the first completion reach the server
    // but lose their answer (502) — the retry must not start a second run, nor count as a refusal.
    let count = 0;
    const injected: string[] = [];
    const lostOnce = new Set<string>();
    // A request whose last attempt was answered 503 goes through next time: with the count alone, a retry that kept
    // landing on a multiple of three (in step with the workers' polls) ran out of attempts now and then.
    const refusedLast = new Set<string>();
    const upstream = new URL(baseUrl);
    const proxy = createServer((req, res) => {
      count += 1;
      const route = `${req.method} ${(req.url ?? "").replace(/[0-9a-f-]{36}/g, ":id")}`;
      if (count === 2) {
        injected.push(`429 ${route}`);
        res.writeHead(429, { "retry-after": "0", "content-type": "application/problem+json" }).end(JSON.stringify({ title: "Slow down", status: 429 }));
        return;
      }
      const key = `${req.method} ${req.url}`;
      if (count % 3 === 0 && !refusedLast.has(key)) {
        refusedLast.add(key);
        injected.push(`503 ${route}`);
        res.writeHead(503, { "content-type": "text/html" }).end("<h1>upstream unavailable</h1>");
        return;
      }
      refusedLast.delete(key);
      const loseAnswer = (/^POST \/api\/v1\/ns\/default\/runs\?|^POST \/api\/v1\/ns\/default\/runs$/.test(route) || route.endsWith("/complete")) && !lostOnce.has(route.split(" ")[1]!.split("/").at(-1)!);
      if (loseAnswer) lostOnce.add(route.split(" ")[1]!.split("/").at(-1)!);
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => body.push(chunk));
          answer.on("end", () => {
            if (loseAnswer) {
              injected.push(`502-after-forwarding ${route}`);
              res.writeHead(502, { "content-type": "text/plain" }).end("bad gateway");
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
          });
        },
      );
      forward.on("error", () => {
        if (!res.headersSent) res.writeHead(502).end();
      });
      res.on("close", () => forward.destroy());
      req.pipe(forward);
    });
    const proxyUrl = await listen(proxy);
    try {
      const fast = { minDelayMs: 10, maxDelayMs: 50 };
      const flakyClient = createNodeFlowClient({ baseUrl: proxyUrl, apiKey, namespace: "default", retry: fast });
      const queue = "sdk_flaky";
      const name = (await flakyClient.registerDefinition(workflow([simple("a", { name: queue }), simple("b", { name: queue })], chain("a", "b"), { name: "sdk_flaky" }))).name;
      let retries = 0;
      const worker = startWorker(queue, (task) => ({ ref: task.refName }), {
        baseUrl: proxyUrl,
        concurrency: 2,
        pollTimeoutMs: 1000,
        retry: fast,
        onEvent: (e) => {
          if (e.type === "retry") retries += 1;
        },
      });
      const started = [];
      for (let i = 0; i < 5; i++) started.push(await flakyClient.startRun({ name, input: { i } }));
      const runs = await Promise.all(started.map((s) => waitForRun(s.id)));
      expect(runs.map((r) => r.status)).toEqual(Array(5).fill("COMPLETED"));

      // Five starts made five runs, though one start's answer was lost and it was sent again.
      const all = await client.searchRuns({ workflow: name, limit: 100 });
      expect(all.items).toHaveLength(5);
      expect(injected.filter((i) => i.startsWith("503")).length).toBeGreaterThan(0);
      expect(injected).toContain("502-after-forwarding POST /api/v1/ns/default/runs");
      expect(injected.some((i) => /^502-after-forwarding POST .*\/complete$/.test(i))).toBe(true);
      expect(retries).toBeGreaterThan(0);
      // The lost completion's retry was answered as its first attempt was: completed, with the task that attempt leased.
      await reportsAnswered(worker);
      expect(worker.stats()).toMatchObject({ completed: 10, unconfirmed: 0, refused: 0, reportErrors: 0, pollErrors: 0 });
      await worker.stop();

      // A 4xx is never retried: a wrong key fails at once with the server's problem.
      const wrongKey = createNodeFlowClient({ baseUrl: proxyUrl, apiKey: "nf_wrong", retry: fast });
      const before = count;
      const error = (await wrongKey.getRun(started[0]!.id).catch((e: unknown) => e)) as NodeFlowApiError;
      expect(error).toBeInstanceOf(NodeFlowApiError);
      expect(error.status).toBe(401);
      expect(count - before).toBeLessThanOrEqual(2);
    } finally {
      await close(proxy);
    }
  });

  it("maps the server's problem+json onto typed errors", async () => {
    const invalid = (await client.registerDefinition({ schemaVersion: 1, name: "sdk_bad", nodes: [{ ref: "x", type: "NOPE" }], edges: [] }).catch((e: unknown) => e)) as NodeFlowApiError;
    expect(invalid).toBeInstanceOf(NodeFlowApiError);
    expect(invalid.status).toBe(400);
    expect(invalid.type).toBe("https://node-flow.dev/problems/validation");
    expect(invalid.errors.length).toBeGreaterThan(0);
    expect(invalid.errors.every((e) => e.pointer.startsWith("/body"))).toBe(true);

    const badPoll = (await client.pollTasks({ queue: "", workerId: "w" }).catch((e: unknown) => e)) as NodeFlowApiError;
    expect(badPoll.status).toBe(400);
    expect(badPoll.fieldError("/body/queue")).toBeDefined();

    const missing = (await client.getRun("00000000-0000-4000-8000-000000000000").catch((e: unknown) => e)) as NodeFlowApiError;
    expect(missing).toMatchObject({ status: 404, title: "Not found", attempts: 1 });

    const anonymous = (await createNodeFlowClient({ baseUrl }).searchRuns().catch((e: unknown) => e)) as NodeFlowApiError;
    expect(anonymous).toMatchObject({ status: 401, attempts: 1 });

    const otherNamespace = (await client.withNamespace("nope").searchRuns().catch((e: unknown) => e)) as NodeFlowApiError;
    expect([403, 404]).toContain(otherNamespace.status);
  });
});
