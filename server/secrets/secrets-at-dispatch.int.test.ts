import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { createSession } from "../auth/sessions";
import { evaluateBatch } from "../evaluator/evaluator";
import { createJqTransform } from "../sandbox/jq-transform";
import type { JqTransform } from "../sandbox/jq-transform";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { createTestKey, createTestNamespace, startRestHarness, TEST_INSTANCE_SECRET } from "../rest/testing/rest-fixtures";
import type { RestHarness, TestNamespace } from "../rest/testing/rest-fixtures";
import { runSystemTaskBatch } from "../system-tasks/run-system-tasks";
import { upsertNamespaceMember } from "../store/namespace-members";
import { waitUntil } from "../testing/wait-until";
import { insertTestUser, useWebEnvironment } from "../trpc/testing";
import { getWebContext } from "../web/web-context";
import { keyPair, startConductorHarness } from "../conductor/testing/conductor-harness";
import type { ConductorHarness } from "../conductor/testing/conductor-harness";
import { putEnvironmentVariable } from "./environment-variables";
import { sealingKeysOf, secretLookup } from "./secrets";

/**
 * A secret used in an HTTP header, an HTTP body, a URL, an INLINE input and
 * a worker's input, over real HTTP against real Postgres: the loopback server
 * and the allowed worker receive the value; every other place — each row of
 * every table, every log line, every SSE frame of the run, every API answer —
 * holds `***` instead, or nothing.
 */

const database = useTestDatabase();
useWebEnvironment(database, { NODE_FLOW_NOTIFICATIONS: "on" });

type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

const SECRET = `s3cr3t-${randomBytes(8).toString("hex")}`;
const position = { x: 0, y: 0 };

let harness: RestHarness;
let scripts: QuickJsScriptEvaluator;
let jq: JqTransform;
let ns: TestNamespace;
let adminKey: string;
let workerKey: string;
let cookie: string;
let echo: Server;
let echoBase: string;
let sse: Server;
let sseBase: string;
const received: { url: string; headers: Record<string, unknown>; body: string }[] = [];
const logs: unknown[] = [];

const logger = {
  debug: (obj: unknown, msg?: string) => logs.push([msg, obj]),
  info: (obj: unknown, msg?: string) => logs.push([msg, obj]),
  warn: (obj: unknown, msg?: string) => logs.push([msg, obj]),
  error: (obj: unknown, msg?: string) => logs.push([msg, obj instanceof Error ? obj.message : obj]),
};

/** Everything a log line could carry, errors included (JSON.stringify drops an Error's message). */
const logText = () => JSON.stringify(logs, (_k, v: unknown) => (v instanceof Error ? { message: v.message, stack: v.stack } : v));

beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator();
  jq = await createJqTransform();
  harness = await startRestHarness(database.db, database.url);
  harness.deps.logger = logger;
  ns = await createTestNamespace(database.db, "sec");
  adminKey = await createTestKey(database.db, ns, ["admin"]);
  workerKey = await createTestKey(database.db, ns, ["worker"]);
  const viewer = await insertTestUser(database.db, "secret-viewer@example.com");
  await upsertNamespaceMember(database.db, { namespaceId: ns.id, userId: viewer.id, role: "viewer" });
  cookie = `nf_session=${(await createSession(database.db, { userId: viewer.id })).token}`;

  // The endpoint the HTTP task calls: it records the request and echoes it back, headers and all.
  echo = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      received.push({ url: req.url ?? "", headers: req.headers, body });
      res.writeHead(200, { "Content-Type": "application/json", "X-Echo-Auth": String(req.headers.authorization ?? "") });
      res.end(JSON.stringify({ headers: req.headers, body: body === "" ? null : (JSON.parse(body) as unknown), url: req.url }));
    });
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  echoBase = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;

  // The run's live stream: the real route handler behind node:http, as live-streams.int.test.ts serves it.
  const route = ((await import(pathToFileURL(path.join(process.cwd(), "app/api/executions/[id]/stream/route.ts")).href)) as { GET: Handler }).GET;
  sse = createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const url = new URL(req.url ?? "/", "http://localhost");
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    const id = /^\/api\/executions\/([^/]+)\/stream$/.exec(url.pathname)?.[1] ?? "";
    void (async () => {
      const response = await route(new Request(url, { headers, signal: controller.signal }), { params: Promise.resolve({ id }) });
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      if (!response.body) return res.end();
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done || controller.signal.aborted) break;
          res.write(value);
        }
      } finally {
        await reader.cancel().catch(() => undefined);
        res.end();
      }
    })();
  });
  await new Promise<void>((resolve) => sse.listen(0, "127.0.0.1", resolve));
  sseBase = `http://127.0.0.1:${(sse.address() as AddressInfo).port}`;
  await getWebContext().notifier()?.start();
});

afterAll(async () => {
  for (const server of [echo, sse]) {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  }
  await harness?.close();
  await scripts?.close();
  await jq?.close();
});

/** The raw text of a run's SSE stream, read until `stop()`. */
async function openStream(workflowId: string) {
  const controller = new AbortController();
  const response = await fetch(`${sseBase}/api/executions/${workflowId}/stream`, { headers: { cookie }, signal: controller.signal });
  expect(response.status).toBe(200);
  let text = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      const reader = response.body!.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // aborted by stop()
    }
  })();
  return {
    text: () => text,
    stop: async () => {
      controller.abort();
      await reading;
    },
  };
}

const systemTasks = () =>
  runSystemTaskBatch(
    { db: database.db, blobs: harness.blobs, scripts, jq, http: { allowPrivateNetworks: true }, logger, secrets: secretLookup(database.db, sealingKeysOf({ secret: TEST_INSTANCE_SECRET, previousSecrets: [] })) },
    { limit: 20, owner: "system:test" },
  );

async function decide(): Promise<void> {
  for (let i = 0; i < 20 && (await evaluateBatch({ db: database.db, scripts, blobs: harness.blobs, logger }, { limit: 50 })) > 0; i++);
}

interface PolledTask {
  taskId: string;
  workflowId: string;
  refName: string;
  input: Record<string, unknown>;
}

/** Polls `queue` as a worker, and completes what it got with `{ done: true }`. */
async function work(queue: string): Promise<PolledTask[]> {
  const polled = await harness.api<{ tasks: PolledTask[] }>("POST", `/ns/${ns.name}/tasks/poll`, { key: workerKey, body: { queue, count: 5, timeoutMs: 0, workerId: "w1" } });
  expect(polled.status, JSON.stringify(polled.body)).toBe(200);
  for (const task of polled.body.tasks) {
    const done = await harness.api("POST", `/ns/${ns.name}/tasks/${task.taskId}/complete`, { key: workerKey, body: { workflowId: task.workflowId, workerId: "w1", output: { done: true } } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
  }
  return polled.body.tasks;
}

/** Every row of every table, as text: what a `pg_dump` of the data would show. */
async function everyRowAsText(): Promise<{ table: string; row: string }[]> {
  const { rows: tables } = await sql<{ name: string }>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`.execute(database.db);
  const out: { table: string; row: string }[] = [];
  for (const { name } of tables) {
    const { rows } = await sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM ${sql.table(name)} AS t`.execute(database.db);
    for (const { row } of rows) out.push({ table: name, row });
  }
  return out;
}

const flow = (name: string) => ({
  schemaVersion: 1,
  name,
  nodes: [
    {
      ref: "call",
      type: "HTTP",
      position,
      httpRequest: {
        uri: "${workflow.env.ECHO_BASE}/echo/${workflow.input.id}?key=${workflow.secrets.API_TOKEN}",
        method: "POST",
        headers: { Authorization: "Bearer ${workflow.secrets.API_TOKEN}" },
        body: { token: "${workflow.secrets.API_TOKEN}", id: "${workflow.input.id}" },
      },
    },
    { ref: "script", type: "INLINE", position, evaluatorType: "javascript", expression: "({ echoed: $.key, shout: $.key + '!' })", input: { key: "${workflow.secrets.API_TOKEN}" } },
    { ref: "trusted", type: "SIMPLE", name: "trusted_worker", position, input: { token: "${workflow.secrets.API_TOKEN}" } },
    { ref: "plain", type: "SIMPLE", name: "plain_worker", position, input: { token: "Bearer ${workflow.secrets.API_TOKEN}", region: "${workflow.env.REGION}", upstream: "${call.output.response.body.body.token}" } },
  ],
  edges: [
    { id: "e1", source: "call", target: "script" },
    { id: "e2", source: "script", target: "trusted" },
    { id: "e3", source: "trusted", target: "plain" },
  ],
});

describe("a secret in task input", () => {
  it("reaches the endpoint and the allowed worker, and reads *** everywhere it is stored or shown", async () => {
    const put = await harness.api("PUT", `/ns/${ns.name}/secrets/API_TOKEN`, { key: adminKey, body: { value: SECRET, description: "the echo server's token" } });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    for (const [name, value] of [
      ["ECHO_BASE", echoBase],
      ["REGION", "eu-west"],
    ]) {
      const variable = await harness.api("PUT", `/ns/${ns.name}/variables/${name}`, { key: adminKey, body: { value } });
      expect(variable.status, JSON.stringify(variable.body)).toBe(201);
    }
    for (const [queue, allowSecrets] of [
      ["trusted_worker", true],
      ["plain_worker", false],
    ] as const) {
      const def = await harness.api("PUT", `/ns/${ns.name}/task-definitions/${queue}`, { key: adminKey, body: { retryCount: 0, allowSecrets } });
      expect(def.status, JSON.stringify(def.body)).toBeLessThan(300);
    }
    const created = await harness.api("POST", `/ns/${ns.name}/definitions`, { key: adminKey, body: flow("secret_calls") });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const started = await harness.api<{ id: string }>("POST", `/ns/${ns.name}/runs`, { key: adminKey, body: { name: "secret_calls", input: { id: 42 } } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const runId = started.body.id;
    const stream = await openStream(runId);

    await decide();
    expect(await systemTasks()).toBe(1); // call
    await decide();
    expect(await systemTasks()).toBe(1); // script
    await decide();
    const trusted = await work("trusted_worker");
    await decide();
    const plain = await work("plain_worker");
    await decide();

    const run = await harness.api<{ status: string; tasks: { items: { refName: string; status: string; input: Record<string, unknown>; output: Record<string, unknown> }[] } }>("GET", `/ns/${ns.name}/runs/${runId}`, { key: adminKey });
    expect(run.body.status, JSON.stringify(run.body)).toBe("COMPLETED");
    await waitUntil(() => stream.text().includes("COMPLETED"), { what: "the stream to show the run completed", timeoutMs: 10_000, intervalMs: 20 });
    await stream.stop();

    // What was sent: the value, where the definition put it.
    expect(received).toHaveLength(1);
    expect(received[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(received[0]!.url).toBe(`/echo/42?key=${SECRET}`);
    expect(JSON.parse(received[0]!.body)).toEqual({ token: SECRET, id: 42 });
    expect(trusted.map((t) => t.input)).toEqual([{ token: SECRET }]);
    // A worker its task definition does not trust reads ***; variables it always gets; data is never re-read for references.
    expect(plain.map((t) => t.input)).toEqual([{ token: "Bearer ***", region: "eu-west", upstream: "***" }]);

    // What is stored and shown: ***.
    const tasks = new Map(run.body.tasks.items.map((t) => [t.refName, t]));
    expect(tasks.get("call")!.input).toMatchObject({ http_request: { uri: "${workflow.env.ECHO_BASE}/echo/42?key=***", headers: { Authorization: "Bearer ***" }, body: { token: "***", id: 42 } } });
    const echoed = tasks.get("call")!.output as { response: { headers: Record<string, string[]>; body: { headers: Record<string, string>; body: unknown; url: string } } };
    expect(echoed.response.body.headers.authorization).toBe("Bearer ***");
    expect(echoed.response.body.url).toBe("/echo/42?key=***");
    expect(Object.entries(echoed.response.headers).find(([name]) => name.toLowerCase() === "x-echo-auth")?.[1]).toEqual(["Bearer ***"]);
    expect(tasks.get("script")!.output).toEqual({ result: { echoed: "***", shout: "***!" } });

    // And nowhere else: not in any row of any table, any log line, any SSE frame, the run's API answer.
    const rows = await everyRowAsText();
    // The dump is real: the stored inputs are in it, masked.
    expect(rows.some((r) => r.table.startsWith("TaskExecutions") && r.row.includes("Bearer ***"))).toBe(true);
    expect(rows.filter((r) => r.row.includes(SECRET))).toEqual([]);
    expect(logText()).not.toContain(SECRET);
    // (The stream carries statuses and history, not payloads: the value has no way in, and the frames show it has none.)
    expect(stream.text()).toContain("WORKFLOW_COMPLETED");
    expect(stream.text()).not.toContain(SECRET);
    expect(JSON.stringify(run.body)).not.toContain(SECRET);
    // The audit row names the secret, never its value.
    const audit = await database.db.selectFrom("AuditEvents").select(["action", "details"]).where("namespaceId", "=", ns.id).where("resourceType", "=", "secret").execute();
    expect(audit).toEqual([{ action: "secret.create", details: { name: "API_TOKEN" } }]);
  });

  it("refuses a definition naming a secret or variable that does not exist, on the node, and stores nothing", async () => {
    const before = await database.db.selectFrom("WorkflowDefinitions").select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
    const body = {
      schemaVersion: 1,
      name: "missing_refs",
      nodes: [{ ref: "call", type: "HTTP", position, httpRequest: { uri: "${workflow.env.NO_SUCH_BASE}/x", headers: { Authorization: "Bearer ${workflow.secrets.NO_SUCH_TOKEN}" } } }],
      edges: [],
    };
    const created = await harness.api<{ errors?: { pointer: string; code: string; message: string }[] }>("POST", `/ns/${ns.name}/definitions`, { key: adminKey, body });
    expect(created.status).toBe(400);
    const text = JSON.stringify(created.body);
    expect(text).toContain("unknown-secret");
    expect(text).toContain("NO_SUCH_TOKEN");
    expect(text).toContain("unknown-variable");
    expect(text).toContain("/nodes/0/httpRequest/headers/Authorization");
    const validated = await harness.api<{ valid: boolean; problems: unknown[] }>("POST", `/ns/${ns.name}/definitions/validate`, { key: adminKey, body });
    expect(validated.body.valid).toBe(false);
    expect(validated.body.problems).toHaveLength(2);
    const after = await database.db.selectFrom("WorkflowDefinitions").select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it("fails a task whose secret was deleted after the definition was saved, saying which, and sends nothing", async () => {
    const put = await harness.api("PUT", `/ns/${ns.name}/secrets/SHORT_LIVED`, { key: adminKey, body: { value: `gone-${SECRET}` } });
    expect(put.status).toBe(201);
    const created = await harness.api("POST", `/ns/${ns.name}/definitions`, {
      key: adminKey,
      body: { schemaVersion: 1, name: "short_lived", nodes: [{ ref: "call", type: "HTTP", position, httpRequest: { uri: `${echoBase}/gone`, headers: { "X-Key": "${workflow.secrets.SHORT_LIVED}" } } }], edges: [] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await harness.api("DELETE", `/ns/${ns.name}/secrets/SHORT_LIVED`, { key: adminKey })).status).toBe(200);
    const started = await harness.api<{ id: string }>("POST", `/ns/${ns.name}/runs`, { key: adminKey, body: { name: "short_lived", input: {} } });
    const sentBefore = received.length;
    await decide();
    await systemTasks();
    await decide();
    const run = await harness.api<{ status: string; tasks: { items: { refName: string; status: string; reasonForIncompletion: string | null }[] } }>("GET", `/ns/${ns.name}/runs/${started.body.id}`, { key: adminKey });
    expect(run.body.status).toBe("FAILED");
    expect(run.body.tasks.items[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    expect(run.body.tasks.items[0]!.reasonForIncompletion).toContain("${workflow.secrets.SHORT_LIVED} names no secret");
    expect(received.length).toBe(sentBefore);
  });
});

describe("variables over REST", () => {
  it("creates, replaces (keeping the description when none is given), reads, lists and deletes, auditing each change by name", async () => {
    const path = `/ns/${ns.name}/variables/API_BASE`;
    expect((await harness.api("PUT", path, { key: adminKey, body: { value: "https://a.example", description: "orders API" } })).status).toBe(201);
    const replaced = await harness.api<{ value: string; description: string | null }>("PUT", path, { key: adminKey, body: { value: "https://b.example" } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ value: "https://b.example", description: "orders API" });
    expect((await harness.api<{ value: string }>("GET", path, { key: adminKey })).body.value).toBe("https://b.example");
    const listed = await harness.api<{ items: { name: string }[] }>("GET", `/ns/${ns.name}/variables`, { key: adminKey });
    expect(listed.body.items.map((v) => v.name)).toContain("API_BASE");
    expect((await harness.api("DELETE", path, { key: adminKey })).status).toBe(200);
    expect((await harness.api("GET", path, { key: adminKey })).status).toBe(404);
    const audit = await database.db.selectFrom("AuditEvents").select(["action", "details"]).where("namespaceId", "=", ns.id).where("resourceId", "=", "API_BASE").orderBy("at").execute();
    expect(audit).toEqual([
      { action: "variable.create", details: { name: "API_BASE" } },
      { action: "variable.update", details: { name: "API_BASE" } },
      { action: "variable.delete", details: { name: "API_BASE" } },
    ]);
  });
});

describe("bad input to secrets and variables", () => {
  it.each([
    ["a secret name with odd characters", "secrets", "bad-name!", { value: "v" }, "/params/name"],
    ["a secret value over 64 KiB", "secrets", "OK_NAME", { value: "x".repeat(64 * 1024 + 1) }, "/body/value"],
    ["an empty secret value", "secrets", "OK_NAME", { value: "" }, "/body/value"],
    ["a variable name starting with a digit", "variables", "1_STARTS_WITH_DIGIT", { value: "v" }, "/params/name"],
    ["a variable value over 64 KiB", "variables", "OK_NAME", { value: "y".repeat(64 * 1024 + 1) }, "/body/value"],
  ])("%s is refused naming the field, and nothing is written", async (_what, kind, name, body, pointer) => {
    const count = async () => Number((await sql<{ n: number }>`SELECT (SELECT count(*) FROM "Secrets") + (SELECT count(*) FROM "EnvironmentVariables") + (SELECT count(*) FROM "AuditEvents") AS n`.execute(database.db)).rows[0]!.n);
    const before = await count();
    const answer = await harness.api("PUT", `/ns/${ns.name}/${kind}/${encodeURIComponent(name)}`, { key: adminKey, body });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toContain(pointer);
    expect(await count()).toBe(before);
  });
});

describe("a secret in a Conductor worker's task", () => {
  let conductor: ConductorHarness;
  let space: TestNamespace;
  let admin: string;
  let worker: string;
  const value = `conductor-${SECRET}`;

  beforeAll(async () => {
    conductor = await startConductorHarness(database.db, database.url);
    space = await createTestNamespace(database.db, "csec");
    const token = async (key: string) => (await conductor.call<{ token: string }>("POST", "/token", { body: keyPair(key) })).body.token;
    admin = await token(await createTestKey(database.db, space, ["admin"]));
    worker = await token(await createTestKey(database.db, space, ["worker"]));
  });
  afterAll(async () => {
    await conductor?.close();
  });

  it("is handed to a worker whose TaskDef allows it, and reads *** in every read of the task", async () => {
    // Conductor's clients: PUT the value as the body; existence, never the value, comes back.
    expect((await conductor.call("PUT", "/secrets/C_TOKEN", { token: admin, rawBody: value, headers: { "content-type": "text/plain" } })).status).toBe(200);
    expect((await conductor.call("GET", "/secrets/C_TOKEN/exists", { token: admin })).body).toBe(true);
    const readBack = await conductor.call("GET", "/secrets/C_TOKEN", { token: admin });
    expect(readBack.status).toBe(403);
    expect(JSON.stringify(readBack.body)).not.toContain(value);
    await putEnvironmentVariable(database.db, { namespaceId: space.id, name: "C_REGION", value: "ap-south", actor: { type: "system", id: "test" }, updatedBy: "test" });
    expect((await conductor.call("POST", "/metadata/taskdefs", { token: admin, body: [{ name: "c_trusted", retryCount: 0, responseTimeoutSeconds: 60, allowSecrets: true }] })).status).toBe(200);
    const def = {
      name: "c_secret_flow",
      version: 1,
      schemaVersion: 2,
      tasks: [{ name: "c_trusted", taskReferenceName: "work", type: "SIMPLE", inputParameters: { token: "${workflow.secrets.C_TOKEN}", region: "${workflow.env.C_REGION}" } }],
    };
    const registered = await conductor.call("POST", "/metadata/workflow", { token: admin, body: def });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    const started = await conductor.call<string>("POST", "/workflow", { token: admin, body: { name: "c_secret_flow", version: 1, input: {} } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    await decide();

    const polled = await conductor.call<{ taskId: string; inputData: Record<string, unknown> }>("GET", "/tasks/poll/c_trusted?workerid=cw", { token: worker });
    expect(polled.status).toBe(200);
    expect(polled.body.inputData).toEqual({ token: value, region: "ap-south" });
    const read = await conductor.call<{ inputData: Record<string, unknown> }>("GET", `/tasks/${polled.body.taskId}`, { token: admin });
    expect(read.body.inputData).toEqual({ token: "***", region: "${workflow.env.C_REGION}" });
    const run = await conductor.call("GET", `/workflow/${started.body}?includeTasks=true`, { token: admin });
    expect(JSON.stringify(run.body)).not.toContain(value);
  });

  it("refuses to register a WorkflowDef naming a secret the namespace lacks, saying which", async () => {
    const def = { name: "c_missing", version: 1, schemaVersion: 2, tasks: [{ name: "c_trusted", taskReferenceName: "work", type: "SIMPLE", inputParameters: { token: "${workflow.secrets.C_NOPE}" } }] };
    const answer = await conductor.call("POST", "/metadata/workflow", { token: admin, body: def });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toContain("${workflow.secrets.C_NOPE} names no secret");
  });
});
