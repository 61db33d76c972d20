import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { compile, validateDefinition } from "../../engine";
import { node, workflow } from "../../engine/definition/test-fixtures";
import type { Json } from "../../engine/definition/test-fixtures";
import { evaluateBatch } from "../evaluator/evaluator";
import { FilesystemBlobStore } from "../lib/blob-store";
import { createJqTransform } from "../sandbox/jq-transform";
import type { JqTransform } from "../sandbox/jq-transform";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { putSecret, secretLookup, sealingKeysOf } from "../secrets/secrets";
import { completeExternalTask } from "../executions/actions/complete-external-task";
import { retryWorkflow } from "../executions/actions/retry-workflow";
import { enqueueDecide } from "../store/decide-queues";
import { leaseTasks } from "../store/task-queues";
import { insertWorkflowExecution } from "../store/workflow-executions";
import { runSystemTaskBatch } from "../system-tasks/run-system-tasks";
import { reportTaskResult } from "../tasks/report-task-result";
import { saveAiProvider } from "./ai-providers";

/**
 * The AGENT node end to end: the real decider runs the loop, the real
 * system-task runner makes the model calls (an in-test OpenAI-compatible
 * server on loopback scripting tool calls and answers) and the HTTP tool's
 * calls (an in-test tool server), and the test plays the worker of a SIMPLE
 * tool. Call counts on both servers show what ran, and how often.
 */

const t = useTestDatabase();
const keys = sealingKeysOf({ secret: "b".repeat(64), previousSecrets: [] });
const KEY = "sk-test-agent-51c0d9";
const TOOL_TOKEN = "tool-token-8d2f41";
let namespaceId: string;
let blobRoot: string;
let blobs: FilesystemBlobStore;
let jq: JqTransform;
let server: http.Server;
let base: string;

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}
const seen: Seen[] = [];
/** Model answers to hand out, in order: a body (200), or a provider error. */
const answers: unknown[] = [];
class ProviderError {
  constructor(
    readonly status: number,
    readonly message: string,
  ) {}
}

const toolCall = (id: string, name: string, args: Json) => ({ id, type: "function", function: { name, arguments: JSON.stringify(args) } });
const asksFor = (...calls: ReturnType<typeof toolCall>[]) => ({
  choices: [{ message: { role: "assistant", content: "", tool_calls: calls }, finish_reason: "tool_calls" }],
  usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 },
});
const says = (text: string) => ({ choices: [{ message: { role: "assistant", content: text }, finish_reason: "stop" }], usage: { prompt_tokens: 90, completion_tokens: 12, total_tokens: 102 } });

beforeAll(async () => {
  namespaceId = (await t.db.insertInto("Namespaces").values({ name: `agent-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-agent-"));
  blobs = new FilesystemBlobStore({ root: blobRoot });
  jq = await createJqTransform();
  server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const p = req.url ?? "";
      const body = (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>;
      seen.push({ path: p, headers: req.headers, body });
      if (p === "/openai/v1/chat/completions") {
        const answer = answers.shift() ?? new ProviderError(500, "no scripted answer left");
        res.writeHead(answer instanceof ProviderError ? answer.status : 200, { "content-type": "application/json" });
        res.end(JSON.stringify(answer instanceof ProviderError ? { error: { message: answer.message } } : answer));
      } else if (p === "/tools/weather") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ city: body.city, tempC: 7 }));
      } else {
        res.writeHead(404, { "content-type": "application/json" });
        res.end("{}");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const actor = { type: "system" as const, id: "test" };
  await putSecret(t.db, keys, { namespaceId, name: "OPENAI_KEY", value: KEY, actor, updatedBy: "test" });
  await putSecret(t.db, keys, { namespaceId, name: "TOOL_TOKEN", value: TOOL_TOKEN, actor, updatedBy: "test" });
  const saved = await saveAiProvider(t.db, {
    namespaceId,
    name: "local",
    config: { kind: "openai", baseUrl: `${base}/openai/v1`, apiKeySecret: "OPENAI_KEY", models: ["gpt-test"], allowPrivateNetwork: true },
    actor,
    updatedBy: "test",
  });
  if (!saved.ok) throw new Error(JSON.stringify(saved.problems));
});
afterAll(async () => {
  await jq?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(blobRoot, { recursive: true, force: true });
});
beforeEach(() => {
  seen.length = 0;
  answers.length = 0;
});

async function start(definition: Json, input: Json = {}): Promise<string> {
  const name = `wf_${randomUUID().slice(0, 8)}`;
  const valid = validateDefinition({ ...definition, name });
  if (!valid.ok) throw new Error(`invalid test definition: ${JSON.stringify(valid.problems)}`);
  await t.db
    .insertInto("WorkflowDefinitions")
    .values({ namespaceId, name, version: 1, graph: JSON.stringify(valid.definition), blueprint: JSON.stringify(compile(valid.definition)) })
    .execute();
  const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: name, defVersion: 1, status: "RUNNING", input });
  await enqueueDecide(t.db, { workflowId: wf.id, namespaceId, reason: "start" });
  return wf.id;
}

/** One "process": its own sandbox and runner deps, as a sidecar has. */
async function sidecar() {
  const scripts: QuickJsScriptEvaluator = await createQuickJsScriptEvaluator();
  const runnerDeps = { db: t.db, blobs, scripts, jq, http: { allowPrivateNetworks: true }, secrets: secretLookup(t.db, keys) };
  return {
    evaluate: () => evaluateBatch({ db: t.db, scripts, blobs }, { limit: 10 }),
    runSystemTasks: () => runSystemTaskBatch(runnerDeps, { limit: 10, owner: "sys-agent" }),
    /** Decider and runner passes until neither has anything to do (a worker task may still wait on its queue). */
    async settle() {
      for (let round = 0; round < 30; round++) {
        const evaluated = await this.evaluate();
        const ran = await this.runSystemTasks();
        if (evaluated === 0 && ran === 0) return;
      }
      throw new Error("the workflow did not settle in 30 rounds");
    },
    close: () => scripts.close(),
  };
}

async function rows(workflowId: string) {
  return t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", workflowId).orderBy("scheduledAt").orderBy("refName").orderBy("iteration").execute();
}

async function workflowRow(workflowId: string) {
  return t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", workflowId).executeTakeFirstOrThrow();
}

/** Plays the worker of queue `queue`: leases its task and completes it with `output`. */
async function completeWorkerTask(workflowId: string, queue: string, output: Json) {
  const leased = await leaseTasks(t.db, { queueName: queue, namespaceId, count: 10, leaseSeconds: 30, owner: "w1" });
  expect(leased).toHaveLength(1);
  const task = leased[0]!.task;
  const report = await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId: task.id, status: "COMPLETED", output, reason: null, workerId: "w1" });
  expect(report.ok).toBe(true);
  return task;
}

const tools = () => [
  {
    name: "get_weather",
    type: "HTTP",
    description: "The weather in a city",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    httpRequest: { uri: `${base}/tools/weather`, method: "POST" },
  },
  { name: "lookup_user", type: "SIMPLE", description: "A user by id", inputSchema: { type: "object", properties: { id: { type: "string" } } }, taskName: "user_lookup" },
];

const agentNode = (agent: Json) =>
  node("AGENT", "helper", { agent: { llmProvider: "local", model: "gpt-test", instructions: "You help.", prompt: "Weather for user ${workflow.input.user}?", tools: tools(), ...agent }, policy: { retryCount: 0 } });

const chatCalls = () => seen.filter((s) => s.path === "/openai/v1/chat/completions");
const weatherCalls = () => seen.filter((s) => s.path === "/tools/weather");

describe("AGENT", () => {
  it("runs two tool calls of one turn in parallel, hands their results back to the model, and ends with its answer", async () => {
    answers.push(asksFor(toolCall("c1", "get_weather", { city: "Oslo" }), toolCall("c2", "lookup_user", { id: "u1" })), says("Ada: 7 °C in Oslo."));
    const id = await start(workflow([agentNode({})]), { user: "u1" });
    const side = await sidecar();
    try {
      await side.settle();
      // Both calls were scheduled by one evaluation: the HTTP one has run while the worker's still waits.
      let all = await rows(id);
      const tool0 = all.find((r) => r.refName === "helper#tool0")!;
      const tool1 = all.find((r) => r.refName === "helper#tool1")!;
      expect([tool0.taskType, tool0.iteration, tool0.status]).toEqual(["HTTP", 1, "COMPLETED"]);
      expect([tool1.taskType, tool1.iteration, tool1.status]).toEqual(["SIMPLE", 1, "SCHEDULED"]);
      expect(tool0.scheduledAt.getTime()).toBe(tool1.scheduledAt.getTime());
      expect(tool1.input).toEqual({ id: "u1" });
      expect(weatherCalls().map((s) => s.body)).toEqual([{ city: "Oslo" }]);
      expect((await workflowRow(id)).status).toBe("RUNNING");

      await completeWorkerTask(id, "user_lookup", { name: "Ada" });
      await side.settle();

      const wf = await workflowRow(id);
      expect(wf.status).toBe("COMPLETED");
      all = await rows(id);
      expect(all.map((r) => [r.refName, r.iteration, r.taskType, r.status])).toEqual([
        ["helper", 0, "AGENT", "COMPLETED"],
        ["helper#llm", 1, "LLM_CHAT_COMPLETE", "COMPLETED"],
        ["helper#tool0", 1, "HTTP", "COMPLETED"],
        ["helper#tool1", 1, "SIMPLE", "COMPLETED"],
        ["helper#llm", 2, "LLM_CHAT_COMPLETE", "COMPLETED"],
      ]);
      const agent = all[0]!;
      expect(agent.output).toEqual({
        result: "Ada: 7 °C in Oslo.",
        finishReason: "stop",
        turns: 2,
        tokenUsage: { promptTokens: 130, completionTokens: 22, totalTokens: 152 },
        llmProvider: "local",
        model: "gpt-test",
      });
      expect(wf.output).toEqual(agent.output);

      // The model saw the tools, then its own calls and both results, in OpenAI's tool protocol.
      const [first, second] = chatCalls();
      expect(first!.body).toMatchObject({
        messages: [
          { role: "system", content: "You help." },
          { role: "user", content: "Weather for user u1?" },
        ],
        tools: [{ type: "function", function: { name: "get_weather" } }, { type: "function", function: { name: "lookup_user" } }],
      });
      expect((second!.body.messages as unknown[]).slice(2)).toEqual([
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
            { id: "c2", type: "function", function: { name: "lookup_user", arguments: '{"id":"u1"}' } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: JSON.stringify({ statusCode: 200, body: { city: "Oslo", tempC: 7 } }) },
        { role: "tool", tool_call_id: "c2", content: JSON.stringify({ name: "Ada" }) },
      ]);
      expect(JSON.stringify(all.map((r) => [r.input, r.output]))).not.toContain(KEY);
    } finally {
      await side.close();
    }
  });

  it("fails clearly when the model still asks for tools in its last turn, running none of them", async () => {
    answers.push(asksFor(toolCall("c1", "get_weather", { city: "Oslo" })));
    const id = await start(workflow([agentNode({ maxTurns: 1 })]), { user: "u1" });
    const side = await sidecar();
    try {
      await side.settle();
    } finally {
      await side.close();
    }
    const wf = await workflowRow(id);
    expect(wf.status).toBe("FAILED");
    expect(wf.reasonForIncompletion).toContain("limit of 1 turn and the model still asked for tools (get_weather)");
    const all = await rows(id);
    expect(all.map((r) => [r.refName, r.status])).toEqual([
      ["helper", "FAILED_WITH_TERMINAL_ERROR"],
      ["helper#llm", "COMPLETED"],
    ]);
    expect(weatherCalls()).toHaveLength(0);
    expect(await t.db.selectFrom("TaskQueues").select("taskId").where("workflowId", "=", id).execute()).toEqual([]);
  });

  it("fails clearly when the turns pass the token budget", async () => {
    answers.push(asksFor(toolCall("c1", "get_weather", { city: "Oslo" })));
    const id = await start(workflow([agentNode({ tokenBudget: 30 })]), { user: "u1" });
    const side = await sidecar();
    try {
      await side.settle();
    } finally {
      await side.close();
    }
    const wf = await workflowRow(id);
    expect(wf.status).toBe("FAILED");
    expect(wf.reasonForIncompletion).toContain("used 50 tokens in 1 turn, over its tokenBudget of 30");
  });

  it("hands a tool call that cannot run back to the model as an error, and goes on", async () => {
    answers.push(asksFor(toolCall("c1", "no_such_tool", {})), says("Sorry."));
    const id = await start(workflow([agentNode({})]), { user: "u1" });
    const side = await sidecar();
    try {
      await side.settle();
    } finally {
      await side.close();
    }
    expect((await workflowRow(id)).status).toBe("COMPLETED");
    const toolMessage = (chatCalls()[1]!.body.messages as { role: string; content: string }[]).at(-1)!;
    expect(toolMessage.role).toBe("tool");
    expect(toolMessage.content).toContain('the agent has no tool named "no_such_tool"');
  });

  it("fails when a model call fails for good, and an operator's retry goes on from that turn", async () => {
    answers.push(asksFor(toolCall("c1", "get_weather", { city: "Oslo" })), new ProviderError(400, "context too long"), says("Retried."));
    const id = await start(workflow([agentNode({})]), { user: "u1" });
    const side = await sidecar();
    try {
      await side.settle();
      const failed = await workflowRow(id);
      expect(failed.status).toBe("FAILED");
      expect(failed.reasonForIncompletion).toContain("turn 2's model call failed");
      expect(failed.reasonForIncompletion).toContain("context too long");
      const retried = await retryWorkflow({ db: t.db }, { namespaceId, workflowId: id, actor: { type: "user", id: "operator-1" } });
      expect(retried.ok).toBe(true);
      await side.settle();
    } finally {
      await side.close();
    }
    const wf = await workflowRow(id);
    expect(wf.status).toBe("COMPLETED");
    expect((wf.output as Json).turns).toBe(2);
    expect(chatCalls()).toHaveLength(3);
    expect(weatherCalls()).toHaveLength(1);
    expect((await rows(id)).map((r) => [r.refName, r.iteration, r.attempt, r.status])).toEqual([
      ["helper", 0, 0, "FAILED_WITH_TERMINAL_ERROR"],
      ["helper#llm", 1, 0, "COMPLETED"],
      ["helper#tool0", 1, 0, "COMPLETED"],
      ["helper#llm", 2, 0, "FAILED_WITH_TERMINAL_ERROR"],
      ["helper", 0, 1, "COMPLETED"],
      ["helper#llm", 2, 1, "COMPLETED"],
    ]);
  });

  it("runs a tool that asks for approval only once a person approved the call in the inbox", async () => {
    answers.push(asksFor(toolCall("c1", "get_weather", { city: "Tromsø" })), says("Cold."));
    const [weather, lookup] = tools();
    const id = await start(workflow([agentNode({ tools: [{ ...weather, approval: true }, lookup] })]), { user: "u1" });
    const side = await sidecar();
    try {
      await side.settle();
      // Waiting for a person: nothing ran, the inbox holds the call.
      expect(weatherCalls()).toHaveLength(0);
      const approval = (await rows(id)).find((r) => r.refName === "helper#approve0")!;
      expect([approval.taskType, approval.status, approval.iteration]).toEqual(["HUMAN", "IN_PROGRESS", 1]);
      const inbox = await t.db.selectFrom("HumanTasks").select(["title", "status"]).where("taskId", "=", approval.id).executeTakeFirstOrThrow();
      expect(inbox.title).toBe("Approve a call of get_weather");
      const done = await completeExternalTask({ db: t.db }, { namespaceId, workflowId: id, taskId: approval.id, output: { outcome: "approve" }, actor: { type: "system", id: "test" } });
      expect(done).toMatchObject({ ok: true });
      await side.settle();
    } finally {
      await side.close();
    }
    expect((await workflowRow(id)).status).toBe("COMPLETED");
    expect(weatherCalls().map((s) => s.body)).toEqual([{ city: "Tromsø" }]);
  });

  it("sends a secret in a tool's headers, and only there: the stored input, the output and the model never see it", async () => {
    answers.push(asksFor(toolCall("c1", "get_weather", { city: "${workflow.secrets.TOOL_TOKEN}" })), says("Done."));
    const [weather, lookup] = tools();
    const secretWeather = { ...weather, httpRequest: { ...weather!.httpRequest, headers: { Authorization: "Bearer ${workflow.secrets.TOOL_TOKEN}" } } };
    const id = await start(workflow([agentNode({ tools: [secretWeather, lookup] })]), { user: "u1" });
    const side = await sidecar();
    try {
      await side.settle();
    } finally {
      await side.close();
    }
    expect((await workflowRow(id)).status).toBe("COMPLETED");
    const [call] = weatherCalls();
    expect(call!.headers.authorization).toBe(`Bearer ${TOOL_TOKEN}`);
    // The model's arguments are data: a reference in them is sent as written, never resolved.
    expect(call!.body).toEqual({ city: "${workflow.secrets.TOOL_TOKEN}" });
    const all = await rows(id);
    expect((all.find((r) => r.refName === "helper#tool0")!.input as { http_request: { headers: unknown } }).http_request.headers).toEqual({ Authorization: "Bearer ***" });
    expect(JSON.stringify(all.map((r) => [r.input, r.output]))).not.toContain(TOOL_TOKEN);
    expect(JSON.stringify(chatCalls().map((c) => c.body))).not.toContain(TOOL_TOKEN);
  });

  it("resumes after a crash mid-agent from the last finished step, repeating none", async () => {
    answers.push(asksFor(toolCall("c1", "get_weather", { city: "Bergen" }), toolCall("c2", "lookup_user", { id: "u2" })), says("Done."));
    const id = await start(workflow([agentNode({})]), { user: "u2" });
    const before = await sidecar();
    // The first sidecar starts the agent, makes the model call, schedules both tools and runs the HTTP one — then dies
    // before any evaluation reacts to that tool.
    expect(await before.evaluate()).toBe(1);
    expect(await before.runSystemTasks()).toBe(1);
    expect(await before.evaluate()).toBe(1);
    expect(await before.runSystemTasks()).toBe(1);
    await before.close();
    expect(chatCalls()).toHaveLength(1);
    expect(weatherCalls()).toHaveLength(1);
    expect((await rows(id)).find((r) => r.refName === "helper#tool0")!.status).toBe("COMPLETED");

    // A fresh sidecar, and the worker finishing its task meanwhile.
    await completeWorkerTask(id, "user_lookup", { name: "Bo" });
    const after = await sidecar();
    try {
      await after.settle();
    } finally {
      await after.close();
    }
    const wf = await workflowRow(id);
    expect(wf.status).toBe("COMPLETED");
    expect((wf.output as Json).result).toBe("Done.");
    // Two model calls in all and one weather call: nothing that had finished ran again.
    expect(chatCalls()).toHaveLength(2);
    expect(weatherCalls()).toHaveLength(1);
    const all = await rows(id);
    expect(all.filter((r) => r.refName.startsWith("helper#")).map((r) => [r.refName, r.iteration, r.attempt])).toEqual([
      ["helper#llm", 1, 0],
      ["helper#tool0", 1, 0],
      ["helper#tool1", 1, 0],
      ["helper#llm", 2, 0],
    ]);
  });
});
