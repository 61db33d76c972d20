import { spawn } from "node:child_process";
import type { ChildProcessByStdio } from "node:child_process";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as executionStream from "@/app/api/executions/[id]/stream/route";
import * as namespaceStream from "@/app/api/executions/stream/route";
import * as live from "@/app/api/health/live/route";
import * as v1 from "@/app/api/v1/[...path]/route";
import { useTestDatabase } from "../db/testing/test-database";
import { TerminalError, createNodeFlowClient, createWorker } from "../sdk";
import type { JsonObject, NodeFlowClient, NodeFlowWorker, Run } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { startSidecar } from "../server/testing/sidecar-process";
import type { SidecarProcess } from "../server/testing/sidecar-process";
import { waitUntil } from "../server/testing/wait-until";
import { getWebContext } from "../server/web/web-context";

/**
 * The server-facing nf commands as a user runs them: real `node --import tsx
 * cli/nf.ts …` processes, configured by NODE_FLOW_URL and NODE_FLOW_API_KEY,
 * against the app's real route handlers (REST v1 and the SSE streams) served
 * over node:http with streamed bodies, a real sidecar deciding, and SDK
 * workers doing the tasks — on a test database. Each command's output and
 * exit code are what scripts rely on, so both are asserted.
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

type RouteHandler = (request: Request) => Promise<Response> | Response;
const v1Handlers: Record<string, RouteHandler> = { GET: v1.GET, POST: v1.POST, PUT: v1.PUT, PATCH: v1.PATCH, DELETE: v1.DELETE };

/** Set by a test: the SSE routes answer as a proxy that blocks them would, so --follow must poll. */
let blockStreams = false;
/** Run streams opened: --follow must read the live stream, not poll, when it can. */
let runStreamOpens = 0;

function route(request: Request): Promise<Response> | Response {
  const { pathname } = new URL(request.url);
  if (blockStreams && pathname.endsWith("/stream")) return new Response("<html>blocked</html>", { status: 502, headers: { "content-type": "text/html" } });
  if (request.method === "GET" && pathname === "/api/health/live") return live.GET();
  if (request.method === "GET" && pathname === "/api/executions/stream") return namespaceStream.GET(request);
  const stream = /^\/api\/executions\/([^/]+)\/stream$/.exec(pathname);
  if (request.method === "GET" && stream) runStreamOpens++;
  if (request.method === "GET" && stream) return executionStream.GET(request, { params: Promise.resolve({ id: decodeURIComponent(stream[1]!) }) });
  const handler = pathname.startsWith("/api/v1/") ? v1Handlers[request.method] : undefined;
  return handler ? handler(request) : new Response(null, { status: 404 });
}

/** node:http → the route handlers, streaming each answer's body as Next does (SSE must not be buffered). */
async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
  const method = req.method ?? "GET";
  const request = new Request(new URL(req.url ?? "/", baseUrl), { method, headers, body: method === "GET" || chunks.length === 0 ? undefined : Buffer.concat(chunks), signal: controller.signal });
  const response = await route(request);
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => (out[name] = value));
  res.writeHead(response.status, out);
  if (response.body === null) {
    res.end();
    return;
  }
  Readable.fromWeb(response.body as WebReadableStream).on("error", () => res.destroy()).pipe(res);
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "nf-remote-cli-"));
  sidecar = startSidecar({ databaseUrl: t.url, dataDir, env: { LOG_LEVEL: "info" } });
  Object.assign(process.env, { DATABASE_URL: t.url, NODE_FLOW_SECRET: "s".repeat(64), NODE_FLOW_DATA_DIR: dataDir, NODE_FLOW_ROLES: "api", LOG_LEVEL: "warn" });
  server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const namespace = await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  apiKey = (await createApiKey(t.db, { namespaceId: namespace.id, name: "nf-remote-int", scopes: ["worker", "admin"], createdBy: "nf remote test" })).key;
  client = createNodeFlowClient({ baseUrl, apiKey, namespace: "default" });
  await sidecar.ready();
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  // cli_work doubles n; cli_fail always fails for good; cli_slow takes a moment, so a follower sees IN_PROGRESS.
  workers.push(createWorker({ baseUrl, apiKey, namespace: "default", queue: "cli_work", pollTimeoutMs: 2000, logger: quiet, handler: (task) => ({ doubled: Number((task.input).n ?? 0) * 2 }) }));
  workers.push(
    createWorker({
      baseUrl,
      apiKey,
      namespace: "default",
      queue: "cli_fail",
      pollTimeoutMs: 2000,
      logger: quiet,
      handler: () => {
        throw new TerminalError("cli_fail always fails");
      },
    }),
  );
  await register(linear("cli_flow", ["a", "b"]));
  await register(linear("cli_failing", ["a"], "cli_fail"));
  await register({ schemaVersion: 1, name: "cli_waiting", nodes: [{ ref: "wait", type: "WAIT", signal: true, position: { x: 0, y: 0 } }], edges: [] });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop({ timeoutMs: 5000 })));
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

/** A chain of SIMPLE nodes on `queue`, each passing n on; the output is the last node's. */
function linear(name: string, refs: string[], queue = "cli_work"): JsonObject {
  return {
    schemaVersion: 1,
    name,
    nodes: refs.map((ref, i) => ({ ref, type: "SIMPLE", name: queue, position: { x: 0, y: i * 160 }, input: { n: i === 0 ? "${workflow.input.n}" : `\${${refs[i - 1]}.output.doubled}` } })),
    edges: refs.slice(1).map((ref, i) => ({ source: refs[i]!, target: ref })),
    outputParameters: { result: `\${${refs.at(-1)!}.output.doubled}` },
  };
}

async function register(definition: JsonObject): Promise<number> {
  return (await client.registerDefinition(definition)).version;
}

interface NfProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** `nf <args>` as its own process, with only the NODE_FLOW_* settings given here (the test's key and URL by default). */
function spawnNf(args: string[], env: Record<string, string> = {}): NfProcess {
  const base: NodeJS.ProcessEnv = { ...SAVED_ENV };
  for (const key of Object.keys(base)) if (key.startsWith("NODE_FLOW_") || key === "DATABASE_URL") delete base[key];
  const child = spawn(process.execPath, ["--import", "tsx", "cli/nf.ts", ...args], { env: { ...base, NODE_FLOW_URL: baseUrl, NODE_FLOW_API_KEY: apiKey, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function nf(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = spawnNf(args, env);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

async function endedRun(id: string): Promise<Run> {
  let run: Run | undefined;
  await waitUntil(async () => {
    run = await client.getRun(id);
    return run.endedAt !== null;
  }, { what: `run ${id} to end`, timeoutMs: 20_000, describe: () => JSON.stringify(run) });
  return run!;
}

describe("help and usage", () => {
  it("every command answers --help with its own text and exit 0", async () => {
    for (const [command, line] of [
      ["run", "nf run <workflow>"],
      ["runs", "nf runs <list|get|retry|rerun|restart|terminate>"],
      ["tail", "nf tail [--workflow W]"],
      ["export", "nf export [NAME…]"],
      ["import", "nf import <FILE|DIR>…"],
      ["test", "nf test <workflow file>"],
      ["replay", "nf replay <run id>"],
    ] as const) {
      const run = await nf([command, "--help"]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(line);
    }
  });

  it("bad flags exit 2, a missing key exits 2 before anything is sent, a refused key 3, an unknown workflow 4", async () => {
    expect((await nf(["run"])).code).toBe(2);
    expect((await nf(["runs", "list", "--status", "DONE"])).code).toBe(2);
    const noKey = await nf(["run", "cli_flow"], { NODE_FLOW_API_KEY: "" });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("no API key");
    const badKey = await nf(["runs", "list"], { NODE_FLOW_API_KEY: "nf_notakey_0000" });
    expect(badKey.code).toBe(3);
    expect(badKey.stderr).toMatch(/refused the API key \(401/);
    const unknown = await nf(["run", "cli_nope"]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain("cli_nope");
    expect(await client.searchRuns({ workflow: "cli_nope" })).toMatchObject({ items: [] });
  });
});

describe("nf run", () => {
  it("starts a run and prints only its id", async () => {
    const run = await nf(["run", "cli_flow", "--input", '{"n":1}']);
    expect(run.code, run.stderr).toBe(0);
    const id = run.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await endedRun(id)).output).toEqual({ result: 4 });
  });

  it("--follow shows each node's statuses as they change and exits 0 when the run completes", async () => {
    const opensBefore = runStreamOpens;
    const run = await nf(["run", "cli_flow", "--input", '{"n":3}', "--follow"]);
    expect(run.code, run.stderr).toBe(0);
    expect(runStreamOpens).toBe(opensBefore + 1);
    const lines = run.stdout.split("\n");
    // One line per change (stdout is not a terminal): a and b each end COMPLETED, in order, then the run.
    const aDone = lines.findIndex((l) => /^\+\d+\.\ds {2}a {2}COMPLETED$/.test(l));
    const bDone = lines.findIndex((l) => /^\+\d+\.\ds {2}b {2}COMPLETED$/.test(l));
    const runDone = lines.findIndex((l) => /^\+\d+\.\ds {2}run COMPLETED$/.test(l));
    expect(aDone, run.stdout).toBeGreaterThanOrEqual(0);
    expect(bDone).toBeGreaterThan(aDone);
    expect(runDone).toBeGreaterThan(bDone);
    expect(run.stdout).toMatch(/run [0-9a-f-]{36} COMPLETED in \d+\.\d\ds\noutput: \{"result":12\}\n$/);
  });

  it("--follow reaches the run's end by polling when the live stream cannot be reached", async () => {
    blockStreams = true;
    try {
      const run = await nf(["run", "cli_flow", "--input", '{"n":4}', "--follow", "--json"]);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", output: { result: 16 } });
      // The view went to stderr (stdout carries the JSON): b completed, then the run.
      expect(run.stderr).toMatch(/b {2}COMPLETED\n(.*\n)*\+\d+\.\ds {2}run COMPLETED\n/);
    } finally {
      blockStreams = false;
    }
  });

  it("--wait --json prints the ended run and exits 1 when it failed", async () => {
    const run = await nf(["run", "cli_failing", "--input", '{"n":1}', "--wait", "--json"]);
    expect(run.code, run.stderr).toBe(1);
    const ended = JSON.parse(run.stdout) as Run;
    expect(ended).toMatchObject({ workflowName: "cli_failing", status: "FAILED" });
    expect(ended.reasonForIncompletion).toContain("cli_fail always fails");
  });

  it("--input from a file that does not exist is a usage error", async () => {
    const run = await nf(["run", "cli_flow", "--input", "/nonexistent/input.json"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--input: cannot read "/nonexistent/input.json" (ENOENT)');
  });
});

describe("nf runs", () => {
  it("list and get, as tables and as JSON", async () => {
    const { id } = await client.startRun({ name: "cli_flow", input: { n: 5 } });
    await endedRun(id);
    const list = await nf(["runs", "list", "--workflow", "cli_flow", "--status", "COMPLETED", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const page = JSON.parse(list.stdout) as { items: { id: string; status: string }[] };
    expect(page.items.map((r) => r.id)).toContain(id);
    expect(new Set(page.items.map((r) => r.status))).toEqual(new Set(["COMPLETED"]));
    const table = await nf(["runs", "list", "--workflow", "cli_flow", "--limit", "100"]);
    expect(table.stdout).toMatch(new RegExp(`^${id}\\s+cli_flow v1\\s+COMPLETED`, "m"));
    const get = await nf(["runs", "get", id, "--json"]);
    expect(JSON.parse(get.stdout)).toMatchObject({ id, status: "COMPLETED", output: { result: 20 }, tasks: { items: [{ refName: "a" }, { refName: "b" }], nextCursor: null } });
    const shown = await nf(["runs", "get", id]);
    expect(shown.stdout).toMatch(/^b\s+SIMPLE\s+0\s+COMPLETED/m);
    const missing = await nf(["runs", "get", "0191d6a4-0000-7000-8000-00000000dead"]);
    expect(missing.code).toBe(4);
  });

  it("terminate ends a waiting run; terminating it again is refused (exit 3)", async () => {
    const { id } = await client.startRun({ name: "cli_waiting" });
    await waitUntil(async () => (await client.getRun(id)).tasks.items.some((t) => t.status === "IN_PROGRESS"), { what: "the WAIT to start", timeoutMs: 20_000 });
    const first = await nf(["runs", "terminate", id, "--reason", "done with it", "--json"]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ id, status: "TERMINATED" });
    const again = await nf(["runs", "terminate", id]);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/409/);
  });

  it("retry, rerun and restart act on an ended run and --wait exits with its new outcome", async () => {
    const failedRun = await client.startRun({ name: "cli_failing", input: { n: 1 } });
    await endedRun(failedRun.id);
    const retry = await nf(["runs", "retry", failedRun.id, "--wait"]);
    expect(retry.code, retry.stderr).toBe(1);
    expect(retry.stdout).toContain(`run ${failedRun.id} FAILED`);
    const tasks = await client.getRun(failedRun.id);
    expect(tasks.tasks.items.map((t) => t.attempt)).toEqual([0, 1]);

    const done = await client.startRun({ name: "cli_flow", input: { n: 1 } });
    await endedRun(done.id);
    const rerun = await nf(["runs", "rerun", done.id, "--from", "b", "--follow"]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toMatch(/b {2}COMPLETED/);
    const restart = await nf(["runs", "restart", done.id, "--input", '{"n":10}', "--wait", "--json"]);
    expect(restart.code, restart.stderr).toBe(0);
    expect(JSON.parse(restart.stdout)).toMatchObject({ id: done.id, status: "COMPLETED", output: { result: 40 } });
    const refused = await nf(["runs", "rerun", done.id]);
    expect(refused.code).toBe(2);
  });
});

describe("nf tail", () => {
  it("prints a run's start, its tasks' changes and its end as they happen, until Ctrl-C", async () => {
    const tail = spawnNf(["tail", "--workflow", "cli_flow", "--json"]);
    try {
      await waitUntil(() => tail.stderr().includes("watching namespace default"), { what: "tail to connect", timeoutMs: 20_000, describe: () => tail.stderr() });
      const other = await client.startRun({ name: "cli_failing", input: { n: 1 } });
      const { id } = await client.startRun({ name: "cli_flow", input: { n: 2 } });
      await endedRun(id);
      await endedRun(other.id);
      const events = () =>
        tail
          .stdout()
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as { kind: string; id?: string; runId?: string; status: string; ref?: string });
      await waitUntil(() => events().some((e) => e.kind === "run" && e.id === id && e.status === "COMPLETED") && events().filter((e) => e.kind === "task" && e.runId === id && e.status === "COMPLETED").length === 2, {
        what: "tail to show the run and its tasks",
        timeoutMs: 20_000,
        describe: () => tail.stdout() + tail.stderr(),
      });
      const mine = events().filter((e) => e.id === id || e.runId === id);
      expect(mine.filter((e) => e.kind === "task" && e.status === "COMPLETED").map((e) => e.ref)).toEqual(["a", "b"]);
      expect(events().some((e) => e.id === other.id || e.runId === other.id)).toBe(false);
    } finally {
      tail.child.kill("SIGINT");
    }
    expect(await tail.exited).toBe(0);
  });
});

describe("nf export and nf import", () => {
  it("imports a folder of node-flow and Conductor files, reports each, and saves a version only for a change", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "nf-import-"));
    try {
      await writeFile(path.join(dir, "a-graph.json"), JSON.stringify(linear("cli_imported", ["x"])));
      const conductor = { name: "cli_conductor", schemaVersion: 2, tasks: [{ name: "cli_work", taskReferenceName: "c1", type: "SIMPLE", inputParameters: { n: "${workflow.input.n}" } }] };
      await writeFile(path.join(dir, "b-conductor.json"), JSON.stringify(conductor));
      const first = await nf(["import", dir]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toBe(`${path.join(dir, "a-graph.json")}: cli_imported created v1\n${path.join(dir, "b-conductor.json")}: cli_conductor created v1\n`);
      const second = await nf(["import", dir, "--json"]);
      expect(JSON.parse(second.stdout)).toMatchObject({ files: [{ name: "cli_imported", outcome: "unchanged", version: 1 }, { name: "cli_conductor", outcome: "unchanged", version: 1 }] });

      await writeFile(path.join(dir, "a-graph.json"), JSON.stringify(linear("cli_imported", ["x", "y"])));
      await writeFile(path.join(dir, "c-broken.json"), JSON.stringify({ schemaVersion: 1, name: "cli_broken", nodes: [{ ref: "x", type: "SIMPLE", position: { x: 0, y: 0 } }], edges: [{ source: "x", target: "nowhere" }] }));
      const third = await nf(["import", dir]);
      expect(third.code).toBe(1);
      expect(third.stdout).toContain("cli_imported updated v2");
      expect(third.stdout).toContain("cli_conductor unchanged v1");
      expect(third.stdout).toMatch(/c-broken\.json: cli_broken failed: .*nowhere/);
      await expect(client.getDefinition("cli_broken")).rejects.toMatchObject({ status: 404 });
      expect((await client.getDefinition("cli_imported")).version).toBe(2);

      const out = path.join(dir, "exported");
      const exported = await nf(["export", "cli_imported", "cli_conductor", "--out", out]);
      expect(exported.code, exported.stderr).toBe(0);
      expect((await readdir(out)).sort()).toEqual(["cli_conductor.json", "cli_imported.json"]);
      const text = await readFile(path.join(out, "cli_imported.json"), "utf8");
      expect(text).not.toMatch(/"version"/);
      expect(text.endsWith("}\n")).toBe(true);
      // Stable: a second export writes the same bytes, and importing the folder changes nothing.
      await nf(["export", "cli_imported", "cli_conductor", "--out", out]);
      expect(await readFile(path.join(out, "cli_imported.json"), "utf8")).toBe(text);
      const reimport = await nf(["import", out]);
      expect(reimport.stdout).toContain("cli_imported unchanged v2");

      const asConductor = await nf(["export", "cli_imported", "--format", "conductor"]);
      expect(asConductor.code, asConductor.stderr).toBe(0);
      expect(JSON.parse(asConductor.stdout)).toMatchObject({ name: "cli_imported", tasks: [{ taskReferenceName: "x" }, { taskReferenceName: "y" }] });
      expect((await nf(["export", "cli_missing"])).code).toBe(4);
      const everything = await nf(["export"]);
      expect((JSON.parse(everything.stdout) as { name: string }[]).map((d) => d.name)).toEqual(expect.arrayContaining(["cli_flow", "cli_imported", "cli_conductor"]));

      await writeFile(path.join(dir, "a-graph.json"), JSON.stringify(linear("cli_imported", ["x", "y", "z"])));
      const dry = await nf(["import", path.join(dir, "a-graph.json"), "--dry-run"]);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toContain("cli_imported valid");
      expect((await client.getDefinition("cli_imported")).version).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("nf test", () => {
  it("passes the example's cases, and fails a wrong expectation with a readable diff", async () => {
    const pass = await nf(["test", "examples/order-approval.json"]);
    expect(pass.code, pass.stdout + pass.stderr).toBe(0);
    expect(pass.stdout).toContain("3 passed, 0 failed");
    const dir = await mkdtemp(path.join(tmpdir(), "nf-test-"));
    try {
      const cases = JSON.parse(await readFile("examples/order-approval.cases.json", "utf8")) as { cases: { expect: { output?: JsonObject } }[] };
      cases.cases[0]!.expect.output = { chargeId: "c-9" };
      await writeFile(path.join(dir, "wrong.cases.json"), JSON.stringify(cases));
      const fail = await nf(["test", "examples/order-approval.json", "--cases", path.join(dir, "wrong.cases.json")]);
      expect(fail.code).toBe(1);
      expect(fail.stdout).toContain('✗ a small order is charged without review (COMPLETED, 3 evaluations)\n    output.chargeId:\n      - expected c-9\n      + actual   c-1\n');
      const json = await nf(["test", "examples/order-approval.json", "--cases", path.join(dir, "wrong.cases.json"), "--json"]);
      expect(JSON.parse(json.stdout)).toMatchObject({ passed: 2, failed: 1 });
      await writeFile(path.join(dir, "typo.cases.json"), JSON.stringify({ cases: [{ name: "x", expect: { stauts: "COMPLETED" } }] }));
      const typo = await nf(["test", "examples/order-approval.json", "--cases", path.join(dir, "typo.cases.json")]);
      expect(typo.code).toBe(2);
      expect(typo.stderr).toContain("cases.0.expect");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("nf replay", () => {
  it("replays a run cleanly against its own version and finds the divergence a later version plants", async () => {
    const v1 = await register(linear("cli_replayed", ["a", "b"]));
    const { id } = await client.startRun({ name: "cli_replayed", input: { n: 1 }, version: v1 });
    expect((await endedRun(id)).status).toBe("COMPLETED");
    const same = await nf(["replay", id]);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    expect(same.stdout).toMatch(new RegExp(`✓ run ${id} \\(v1\\) replays against cli_replayed v1: \\d+ evaluation\\(s\\), same commands`));

    // v2 runs c where v1 ran b: a run like this one would now take another path.
    await register(linear("cli_replayed", ["a", "c"]));
    const diverged = await nf(["replay", id]);
    expect(diverged.code, diverged.stderr).toBe(1);
    expect(diverged.stdout).toContain(`✗ run ${id} (v1) diverges against cli_replayed v2 at evaluation 2:`);
    expect(diverged.stdout).toMatch(/recorded:\n {6}scheduleTask b\[0\.0\] SIMPLE\n/);
    expect(diverged.stdout).toMatch(/now:\n {6}scheduleTask c\[0\.0\] SIMPLE\n/);
    const json = await nf(["replay", id, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, stage: "replay", evaluation: 2, against: { version: 2 } });
    expect((await nf(["replay", id, "--version", "1"])).code).toBe(0);
    expect((await nf(["replay", id, "--version", "9"])).code).toBe(4);
  });

  it("finds where today's decider parts from what production recorded", async () => {
    const { id } = await client.startRun({ name: "cli_flow", input: { n: 1 } });
    expect((await endedRun(id)).status).toBe("COMPLETED");
    // Planted: production's record says node b ran as "b_old", which no version of cli_flow has.
    await t.db.updateTable("TaskExecutions").set({ refName: "b_old" }).where("workflowId", "=", id).where("refName", "=", "b").execute();
    const replayed = await nf(["replay", id, "--json"]);
    expect(replayed.code, replayed.stderr).toBe(1);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ ok: false, stage: "production", explanation: "today's decider schedules b[0.0] (SIMPLE), which production never ran" });
  });

  it("replays a run that is still running, up to where it is", async () => {
    const { id } = await client.startRun({ name: "cli_waiting" });
    await waitUntil(async () => (await client.getRun(id)).tasks.items.some((t) => t.status === "IN_PROGRESS"), { what: "the WAIT to start", timeoutMs: 20_000 });
    try {
      const replayed = await nf(["replay", id]);
      expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
      expect(replayed.stdout).toContain("replays against cli_waiting v1");
    } finally {
      await client.terminateRun(id);
    }
  });

  it("exports the history it replays, and refuses a run an operator changed", async () => {
    const { id } = await client.startRun({ name: "cli_waiting" });
    await waitUntil(async () => (await client.getRun(id)).tasks.items.some((t) => t.status === "IN_PROGRESS"), { what: "the WAIT to start", timeoutMs: 20_000 });
    await client.terminateRun(id, { reason: "operator" });
    const history = await client.request<{ events: { type: string }[]; nextAfter: number | null }>({ method: "GET", path: `/ns/default/runs/${id}/history` });
    expect(history.events.map((e) => e.type)).toContain("WORKFLOW_STARTED");
    expect(history.nextAfter).toBeNull();
    const refused = await nf(["replay", id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/cannot replay: run .* was changed by an operator \((TERMINATE_REQUESTED|WORKFLOW_TERMINATED)/);
  });
});
