import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { createTestKey, createTestNamespace } from "../rest/testing/rest-fixtures";
import { startSidecar } from "../testing/sidecar-process";
import type { SidecarProcess } from "../testing/sidecar-process";
import { waitUntil } from "../testing/wait-until";
import { corpusTaskTypes, loadConductorCorpus, withEchoUrl } from "./testing/conductor-corpus";
import type { CorpusCase } from "./testing/conductor-corpus";
import { keyPair, startConductorHarness } from "./testing/conductor-harness";
import type { ConductorHarness } from "./testing/conductor-harness";

/**
 * The Conductor corpus end to end (fixtures/corpus/README.md): each case, in a
 * namespace of its own, registers its TaskDefs and WorkflowDefs through
 * /conductor/api/metadata, starts through /workflow, is driven by a generic
 * worker speaking Conductor's REST protocol with plain fetch (every SIMPLE task
 * answered COMPLETED with `{ref, echo: inputData}` unless the case says
 * otherwise) and a real sidecar process, and must end as Conductor documents:
 * the status, the output keys, the tasks that ran and those that never did.
 */

const t = useTestDatabase();
const corpus = loadConductorCorpus();
let h: ConductorHarness;
let sidecar: SidecarProcess;
let echoServer: Server;
let echoUrl: string;

beforeAll(async () => {
  h = await startConductorHarness(t.db, t.url);
  echoServer = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ method: req.method, path: req.url, echo: body === "" ? null : (JSON.parse(body) as unknown) }));
    });
  });
  await new Promise<void>((resolve) => echoServer.listen(0, "127.0.0.1", resolve));
  echoUrl = `http://127.0.0.1:${(echoServer.address() as AddressInfo).port}/echo`;
  sidecar = startSidecar({ databaseUrl: t.url, dataDir: h.dataDir, env: { NODE_FLOW_HTTP_ALLOW_PRIVATE: "true" } });
  await sidecar.ready();
});

afterAll(async () => {
  const code = await sidecar?.stop();
  await h?.close();
  await new Promise<void>((resolve) => (echoServer ? echoServer.close(() => resolve()) : resolve()));
  expect(code, sidecar?.output()).toBe(0);
});

interface Task {
  taskId: string;
  workflowInstanceId: string;
  taskType: string;
  referenceTaskName: string;
  status: string;
  inputData: Record<string, unknown>;
  reasonForIncompletion: string | null;
}

interface Workflow {
  status: string;
  output: Record<string, unknown>;
  reasonForIncompletion: string | null;
  tasks: Task[];
}

interface Tokens {
  admin: string;
  worker: string;
}

async function tokensFor(label: string): Promise<Tokens> {
  const ns = await createTestNamespace(t.db, label);
  const token = async (key: string) => (await h.call<{ token: string }>("POST", "/token", { body: keyPair(key) })).body.token;
  return { admin: await token(await createTestKey(t.db, ns, ["admin"])), worker: await token(await createTestKey(t.db, ns, ["worker"])) };
}

/** The generic worker: one long-poll loop per task type, each task answered at once. */
function startGenericWorker(c: CorpusCase, tokens: Tokens) {
  let running = true;
  const errors: string[] = [];
  const loops = corpusTaskTypes(c).map(async (taskType) => {
    while (running) {
      const polled = await h.call<Task[]>("GET", `/tasks/poll/batch/${taskType}?count=10&timeout=500&workerid=corpus-worker`, { token: tokens.worker });
      if (polled.status !== 200) {
        errors.push(`poll ${taskType}: ${polled.status} ${JSON.stringify(polled.body)}`);
        continue;
      }
      for (const task of polled.body) {
        const reply = c.workers?.[taskType] ?? { status: "COMPLETED", outputData: { ref: task.referenceTaskName, echo: task.inputData } };
        const body = { workflowInstanceId: task.workflowInstanceId, taskId: task.taskId, workerId: "corpus-worker", ...reply };
        const answer = await h.call("POST", "/tasks", { token: tokens.worker, body });
        if (answer.status !== 200) errors.push(`update ${task.referenceTaskName}: ${answer.status} ${JSON.stringify(answer.body)}`);
      }
    }
  });
  return {
    errors,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function register(tokens: Tokens, def: Record<string, unknown>): Promise<string[]> {
  const answer = await h.call<{ warnings?: { code: string }[] }>("POST", "/metadata/workflow", { token: tokens.admin, body: def });
  expect(answer.status, `register ${String(def.name)}: ${JSON.stringify(answer.body)}`).toBe(200);
  return (answer.body.warnings ?? []).map((w) => w.code);
}

async function read(tokens: Tokens, id: string): Promise<Workflow> {
  return (await h.call<Workflow>("GET", `/workflow/${id}?includeTasks=true`, { token: tokens.admin })).body;
}

/** Latest attempt of each task by its reference name. */
function latestByRef(wf: Workflow): Map<string, Task> {
  const out = new Map<string, Task>();
  for (const task of wf.tasks) out.set(task.referenceTaskName, task);
  return out;
}

describe("the Conductor corpus registers, runs and ends as Conductor documents", () => {
  it("has cases", () => {
    expect(corpus.length).toBeGreaterThan(0);
  });

  it.each(corpus.map((c) => [c.file, c] as const))("%s", async (_file, c) => {
    const tokens = await tokensFor("corpus");
    if (c.taskDefs !== undefined) {
      const answer = await h.call("POST", "/metadata/taskdefs", { token: tokens.admin, body: c.taskDefs });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
    for (const def of c.register ?? []) await register(tokens, def);
    const warnings = await register(tokens, c.workflow);
    if (c.expect.warnings !== undefined) expect([...warnings].sort()).toEqual([...c.expect.warnings].sort());

    const worker = startGenericWorker(c, tokens);
    let wf: Workflow | undefined;
    try {
      const started = await h.call<string>("POST", "/workflow", { token: tokens.admin, body: { name: c.workflow.name, input: withEchoUrl(c.input, echoUrl) } });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const id = started.body;
      const pending = [...(c.complete ?? [])];
      await waitUntil(
        async () => {
          wf = await read(tokens, id);
          const next = pending[0];
          const open = next === undefined ? undefined : latestByRef(wf).get(next.ref);
          if (next !== undefined && open?.status === "IN_PROGRESS") {
            const done = await h.call("POST", "/tasks", { token: tokens.admin, body: { workflowInstanceId: id, taskId: open.taskId, status: next.status, outputData: next.outputData } });
            expect(done.status, JSON.stringify(done.body)).toBe(200);
            pending.shift();
          }
          return wf.status !== "RUNNING" && wf.status !== "PAUSED";
        },
        { what: `${c.file} to end`, timeoutMs: 20_000, intervalMs: 150, describe: () => `${JSON.stringify(wf?.tasks.map((x) => [x.referenceTaskName, x.status, x.reasonForIncompletion]))}\n${sidecar.output().slice(-2000)}` },
      );
    } finally {
      await worker.stop();
    }
    expect(worker.errors).toEqual([]);
    const end = wf!;
    const summary = JSON.stringify({ status: end.status, reason: end.reasonForIncompletion, output: end.output, tasks: end.tasks.map((x) => [x.referenceTaskName, x.status]) });
    expect(end.status, summary).toBe(c.expect.status);
    if (c.expect.output !== undefined) expect(end.output, summary).toMatchObject(c.expect.output);
    if (c.expect.reason !== undefined) expect(end.reasonForIncompletion ?? "", summary).toContain(c.expect.reason);
    const tasks = latestByRef(end);
    for (const [ref, status] of Object.entries(c.expect.tasks ?? {})) {
      // Never ran: Conductor lists no task; node-flow lists the nodes of a path not taken as SKIPPED.
      const seen = tasks.get(ref)?.status;
      expect(seen === undefined || seen === "SKIPPED" ? null : seen, `${ref} in ${summary}`).toBe(status);
    }
  });
});
