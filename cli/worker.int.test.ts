import { spawn } from "node:child_process";
import type { ChildProcessByStdio } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as live from "@/app/api/health/live/route";
import * as v1 from "@/app/api/v1/[...path]/route";
import { useTestDatabase } from "../db/testing/test-database";
import { createNodeFlowClient } from "../sdk";
import type { JsonObject, NodeFlowClient, Run } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { serveFetchHandler } from "../server/web/testing/serve-fetch-handler";
import { startSidecar } from "../server/testing/sidecar-process";
import type { SidecarProcess } from "../server/testing/sidecar-process";
import { waitUntil } from "../server/testing/wait-until";
import { getWebContext } from "../server/web/web-context";

/**
 * `nf worker` as a user runs it: a real `node --import tsx cli/nf.ts worker
 * examples/hello-worker.ts` process, configured by NODE_FLOW_URL and
 * NODE_FLOW_API_KEY, against the real REST route handlers served over
 * node:http on a test database, with the decider in a real sidecar. It must
 * carry the README's example workflow to COMPLETED and stop cleanly on a
 * signal.
 */

const t = useTestDatabase();
let dataDir: string;
let sidecar: SidecarProcess;
let server: Server;
let baseUrl: string;
let apiKey: string;
let client: NodeFlowClient;
const SAVED_ENV = { ...process.env };

type RouteHandler = (request: Request) => Promise<Response> | Response;
const v1Handlers: Record<string, RouteHandler> = { GET: v1.GET, POST: v1.POST, PUT: v1.PUT, PATCH: v1.PATCH, DELETE: v1.DELETE };

/** The app's route handlers behind node:http; a client that goes away aborts the request. */
function serveRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
  return serveFetchHandler(req, res, async (request) => {
    const handler = new URL(request.url).pathname.startsWith("/api/health/live") ? (request.method === "GET" ? live.GET : undefined) : v1Handlers[request.method];
    return handler ? await handler(request) : new Response(null, { status: 405 });
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "nf-worker-cli-"));
  sidecar = startSidecar({ databaseUrl: t.url, dataDir, env: { LOG_LEVEL: "info" } });
  Object.assign(process.env, { DATABASE_URL: t.url, NODE_FLOW_SECRET: "s".repeat(64), NODE_FLOW_DATA_DIR: dataDir, NODE_FLOW_ROLES: "api", LOG_LEVEL: "warn" });
  server = createServer((req, res) => {
    serveRoute(req, res).catch((error: unknown) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const namespace = await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  apiKey = (await createApiKey(t.db, { namespaceId: namespace.id, name: "nf-worker-int", scopes: ["worker", "admin"], createdBy: "nf worker test" })).key;
  client = createNodeFlowClient({ baseUrl, apiKey, namespace: "default" });
  await sidecar.ready();
});

const children: NfWorker[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.process.exitCode === null) child.process.kill("SIGKILL");
});

afterAll(async () => {
  const code = await sidecar?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  const context = getWebContext();
  await context.notifier()?.close();
  await context.db.destroy();
  delete (globalThis as { __nodeFlowWebContext?: unknown }).__nodeFlowWebContext;
  process.env = SAVED_ENV;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  expect(code, sidecar?.output()).toBe(0);
});

interface NfWorker {
  process: ChildProcessByStdio<null, Readable, Readable>;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** `nf worker <args>` as its own process, with only the NODE_FLOW_* settings given here. */
function nfWorker(args: string[], env: Record<string, string>): NfWorker {
  const base: NodeJS.ProcessEnv = { ...SAVED_ENV };
  for (const key of Object.keys(base)) if (key.startsWith("NODE_FLOW_") || key === "DATABASE_URL") delete base[key];
  const child = spawn(process.execPath, ["--import", "tsx", "cli/nf.ts", "worker", ...args], { env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const handle = { process: child, stdout: () => stdout, stderr: () => stderr, exited };
  children.push(handle);
  return handle;
}

async function waitForRun(id: string, describe: () => string): Promise<Run> {
  let run: Run | undefined;
  await waitUntil(
    async () => {
      run = await client.getRun(id);
      return run.status !== "RUNNING";
    },
    { what: `run ${id} to end`, timeoutMs: 20_000, intervalMs: 100, describe: () => `${JSON.stringify(run?.tasks.items.map((x) => [x.refName, x.status]))}\n${describe()}\n${sidecar.output().slice(-2000)}` },
  );
  return run!;
}

describe("nf worker", () => {
  it("runs examples/hello-worker.ts until the README's example workflow completes, then stops on SIGTERM with exit 0", async () => {
    const definition = JSON.parse(readFileSync("examples/hello-workflow.json", "utf8")) as JsonObject;
    const registered = await client.registerDefinition(definition);
    expect(registered).toMatchObject({ name: "hello", version: 1 });

    const worker = nfWorker(["examples/hello-worker.ts"], { NODE_FLOW_URL: baseUrl, NODE_FLOW_API_KEY: apiKey });
    const output = () => `stdout:\n${worker.stdout()}\nstderr:\n${worker.stderr()}`;
    await waitUntil(() => worker.stdout().includes("polling"), { what: "nf worker to start polling", timeoutMs: 20_000, intervalMs: 50, describe: output });
    expect(worker.stdout()).toMatch(/polling "greet" in namespace "default" at http:\/\/127\.0\.0\.1:\d+ \(concurrency 4\)/);

    const started = await client.startRun({ name: "hello", input: { name: "Ada" } });
    const run = await waitForRun(started.id, output);
    expect(run.status, output()).toBe("COMPLETED");
    expect(run.output).toEqual({ greeting: "Hello, Ada!", reply: 'node-flow says: thanks! (you said "Hello, Ada!")' });
    expect(run.tasks.items.map((x) => [x.refName, x.status, x.attempt])).toEqual([
      ["greet", "COMPLETED", 0],
      ["reply", "COMPLETED", 0],
    ]);
    expect((await client.listTaskLogs(run.tasks.items[0]!.id)).items.map((l) => l.line)).toEqual(["greeting Ada"]);
    await waitUntil(() => (worker.stdout().match(/: completed in/g) ?? []).length === 2, { what: "both tasks to be printed", timeoutMs: 5000, intervalMs: 20, describe: output });

    worker.process.kill("SIGTERM");
    expect(await worker.exited, output()).toBe(0);
    expect(worker.stdout()).toMatch(/SIGTERM: stopping\. No task is running\./);
    expect(worker.stdout()).toMatch(/stopped: 2 completed, 0 failed\./);
    expect(worker.stderr()).toBe("");
  });

  it("a second Ctrl-C gives a task still running back to its queue at once, unspent", async () => {
    const scratch = await mkdtemp(path.join(tmpdir(), "nf-worker-module-"));
    try {
      const module = path.join(scratch, "stuck-worker.ts");
      // Imports the SDK by path, as a worker module outside this repository would import the package.
      await writeFile(
        module,
        `import { defineWorker } from ${JSON.stringify(path.resolve("sdk/index.ts"))};\n` +
          `export default defineWorker({ queues: { stuck: (_task, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({}))) } });\n`,
      );
      await client.registerDefinition({ schemaVersion: 1, name: "stuck", nodes: [{ ref: "only", type: "SIMPLE", name: "stuck", position: { x: 0, y: 0 }, policy: { retryCount: 0 } }], edges: [] });
      const worker = nfWorker([module, "--shutdown-timeout", "60", "--quiet"], { NODE_FLOW_URL: baseUrl, NODE_FLOW_API_KEY: apiKey });
      const output = () => `stdout:\n${worker.stdout()}\nstderr:\n${worker.stderr()}`;
      const started = await client.startRun({ name: "stuck" });
      const leased = async () => (await t.db.selectFrom("TaskQueues").select(["leaseOwner", "taskId"]).where("workflowId", "=", started.id).executeTakeFirst()) ?? null;
      await waitUntil(async () => (await leased())?.leaseOwner != null, { what: "the task to be leased", timeoutMs: 20_000, intervalMs: 50, describe: output });

      worker.process.kill("SIGINT");
      await waitUntil(() => worker.stdout().includes("Waiting up to 60 s for 1 running task"), { what: "the first signal to be taken", timeoutMs: 5000, intervalMs: 20, describe: output });
      worker.process.kill("SIGINT");
      expect(await worker.exited, output()).toBe(0);
      expect(worker.stdout()).toMatch(/stopped: 0 completed, 0 failed, 1 given back to the queue\./);

      // Back in the queue, unleased, the same attempt: the next poll gets it.
      expect(await leased()).toMatchObject({ leaseOwner: null });
      const tasks = await t.db.selectFrom("TaskExecutions").select(["attempt", "pollCount"]).where("workflowId", "=", started.id).execute();
      expect(tasks).toEqual([{ attempt: 0, pollCount: 1 }]);
      await client.terminateRun(started.id, { reason: "test over" });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it("a key the server refuses: exit 1 with the reason and how to get a key, not a worker that polls forever", async () => {
    const worker = nfWorker(["examples/hello-worker.ts"], { NODE_FLOW_URL: baseUrl, NODE_FLOW_API_KEY: "nf_notakey_0000" });
    expect(await worker.exited).toBe(1);
    expect(worker.stderr()).toMatch(/refused the API key \(401: .*\).*Settings → API keys/);
  });
});
