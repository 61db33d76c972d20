import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { compile, validateDefinition } from "../../engine";
import { chain, node, workflow } from "../../engine/definition/test-fixtures";
import type { Json } from "../../engine/definition/test-fixtures";
import { evaluateBatch } from "../evaluator/evaluator";
import { FilesystemBlobStore } from "../lib/blob-store";
import { createJqTransform } from "../sandbox/jq-transform";
import type { JqTransform } from "../sandbox/jq-transform";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { putSecret, secretLookup, sealingKeysOf } from "../secrets/secrets";
import { enqueueDecide } from "../store/decide-queues";
import { insertWorkflowExecution } from "../store/workflow-executions";
import { runSystemTaskBatch } from "../system-tasks/run-system-tasks";
import { saveAiProvider } from "./ai-providers";
import { RATE_LIMIT_WAITS } from "./llm-tasks";
import { hasPgvector, searchChunks } from "./vector-documents";

/**
 * The AI tasks end to end: scheduled by the real decider, run by the real
 * system-task runner against this test's Postgres, calling an in-test
 * OpenAI-compatible server and an Anthropic-shaped one on loopback that
 * script answers, provider errors and rate limits. The network policy stays
 * closed (no NODE_FLOW_HTTP_ALLOW_PRIVATE): the providers reach loopback
 * because their configuration allows it. The runner's clock is virtual, so
 * a task put back for a Retry-After is due on the next pass.
 */

const t = useTestDatabase();
const keys = sealingKeysOf({ secret: "a".repeat(64), previousSecrets: [] });
const OPENAI_KEY = "sk-test-openai-3f9a7c";
const ANTHROPIC_KEY = "sk-ant-test-77b1e2";
let namespaceId: string;
let blobRoot: string;
let blobs: FilesystemBlobStore;
let scripts: QuickJsScriptEvaluator;
let jq: JqTransform;
let server: http.Server;
let base: string;

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}
type Scripted = { status: number; body: unknown; headers?: Record<string, string> };
const seen: Seen[] = [];
/** Answers to hand out, in order, per path; an empty list answers the default. */
const scripted = new Map<string, Scripted[]>();

/** A 4-dimensional bag of words, so similarity is known: cat, dog, fish, bird. */
function embed(text: string): number[] {
  const words = text.toLowerCase().split(/\W+/);
  return ["cat", "dog", "fish", "bird"].map((w) => words.filter((x) => x === w || x === `${w}s`).length + 0.01);
}

function defaultAnswer(p: string, body: Record<string, unknown>): Scripted {
  if (p === "/openai/v1/embeddings") {
    const input = body.input as string[];
    return { status: 200, body: { data: input.map((text, index) => ({ index, embedding: embed(text) })), usage: { prompt_tokens: input.length * 3, total_tokens: input.length * 3 } } };
  }
  if (p === "/openai/v1/chat/completions") {
    return { status: 200, body: { choices: [{ message: { role: "assistant", content: "Hello from OpenAI" }, finish_reason: "stop" }], usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 } } };
  }
  if (p === "/anthropic/v1/messages") {
    return { status: 200, body: { content: [{ type: "text", text: "Hello from Claude" }], stop_reason: "end_turn", usage: { input_tokens: 9, output_tokens: 5 } } };
  }
  return { status: 404, body: { error: { message: `no route ${p}` } } };
}

beforeAll(async () => {
  namespaceId = (await t.db.insertInto("Namespaces").values({ name: `ai-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-ai-"));
  blobs = new FilesystemBlobStore({ root: blobRoot });
  scripts = await createQuickJsScriptEvaluator();
  jq = await createJqTransform();
  server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const p = req.url ?? "";
      const body = (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>;
      seen.push({ path: p, headers: req.headers, body });
      const answer = scripted.get(p)?.shift() ?? defaultAnswer(p, body);
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const actor = { type: "system" as const, id: "test" };
  await putSecret(t.db, keys, { namespaceId, name: "OPENAI_KEY", value: OPENAI_KEY, actor, updatedBy: "test" });
  await putSecret(t.db, keys, { namespaceId, name: "ANTHROPIC_KEY", value: ANTHROPIC_KEY, actor, updatedBy: "test" });
  for (const [name, kind, url, secret, models] of [
    ["local", "openai", `${base}/openai/v1`, "OPENAI_KEY", ["gpt-test", "embed-test"]],
    ["claude", "anthropic", `${base}/anthropic`, "ANTHROPIC_KEY", ["claude-test"]],
  ] as const) {
    const saved = await saveAiProvider(t.db, {
      namespaceId,
      name,
      config: { kind, baseUrl: url, apiKeySecret: secret, models: [...models], allowPrivateNetwork: true },
      actor,
      updatedBy: "test",
    });
    if (!saved.ok) throw new Error(JSON.stringify(saved.problems));
  }
});
afterAll(async () => {
  await scripts?.close();
  await jq?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(blobRoot, { recursive: true, force: true });
});
beforeEach(() => {
  seen.length = 0;
  scripted.clear();
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

const deps = (now: () => Date) => ({ db: t.db, blobs, scripts, jq, http: { allowPrivateNetworks: false }, secrets: secretLookup(t.db, keys), now });

/** Alternates decider and runner passes until neither moves; the runner's clock moves an hour a pass. */
async function run(workflowId: string) {
  let clock = Date.now();
  for (let round = 0; round < 40; round++) {
    const evaluated = await evaluateBatch({ db: t.db, scripts, blobs }, { limit: 10 });
    const ran = await runSystemTaskBatch(deps(() => new Date(clock)), { limit: 10, owner: "sys-ai" });
    clock += 3_600_000;
    if (evaluated === 0 && ran === 0) {
      const pending = await t.db.selectFrom("TaskQueues").select("taskId").where("workflowId", "=", workflowId).execute();
      if (pending.length === 0) break;
    }
  }
  return t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", workflowId).executeTakeFirstOrThrow();
}

async function taskOf(workflowId: string, ref: string) {
  return t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", workflowId).where("refName", "=", ref).orderBy("attempt", "desc").executeTakeFirstOrThrow();
}

const noRetry = { policy: { retryCount: 0 } };
const chat = (ref: string, llm: Json, extra: Json = {}) => node("LLM_CHAT_COMPLETE", ref, { llm, ...noRetry, ...extra });

describe("LLM_CHAT_COMPLETE and LLM_TEXT_COMPLETE", () => {
  it("send resolved messages, sampling, stop words and tools in OpenAI's shape, and report the answer, tool calls, usage and latency", async () => {
    scripted.set("/openai/v1/chat/completions", [
      {
        status: 200,
        body: {
          choices: [{ message: { role: "assistant", content: "", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] }, finish_reason: "tool_calls" }],
          usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 },
        },
      },
    ]);
    const id = await start(
      workflow([
        chat("ask", {
          llmProvider: "local",
          model: "gpt-test",
          instructions: "You are {{persona}}.",
          messages: [{ role: "user", message: "Weather in ${workflow.input.city}?" }],
          promptVariables: { persona: "a forecaster" },
          temperature: 0.2,
          maxTokens: 64,
          stopWords: ["END"],
          tools: [{ name: "get_weather", description: "Weather by city", inputSchema: { type: "object", properties: { city: { type: "string" } } } }],
        }),
      ]),
      { city: "Oslo" },
    );
    expect((await run(id)).status).toBe("COMPLETED");
    const request = seen.find((s) => s.path === "/openai/v1/chat/completions")!;
    expect(request.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(request.body).toMatchObject({
      model: "gpt-test",
      messages: [
        { role: "system", content: "You are a forecaster." },
        { role: "user", content: "Weather in Oslo?" },
      ],
      temperature: 0.2,
      max_tokens: 64,
      stop: ["END"],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
    });
    const task = await taskOf(id, "ask");
    expect(task.output).toMatchObject({
      result: "",
      finishReason: "tool_calls",
      toolCalls: [{ id: "call_1", name: "get_weather", arguments: { city: "Oslo" } }],
      tokenUsage: { promptTokens: 20, completionTokens: 7, totalTokens: 27 },
      llmProvider: "local",
      model: "gpt-test",
    });
    expect(typeof (task.output as { latencyMs: unknown }).latencyMs).toBe("number");
    // The key went in the header only: never into the task's input or output.
    expect(JSON.stringify([task.input, task.output])).not.toContain(OPENAI_KEY);
  });

  it("speak Anthropic's Messages API, and parse a JSON answer that matches its schema", async () => {
    scripted.set("/anthropic/v1/messages", [{ status: 200, body: { content: [{ type: "text", text: '```json\n{"sentiment":"positive","score":0.9}\n```' }], stop_reason: "end_turn", usage: { input_tokens: 30, output_tokens: 12 } } }]);
    const schema = { type: "object", required: ["sentiment", "score"], properties: { sentiment: { enum: ["positive", "negative"] }, score: { type: "number" } } };
    const id = await start(workflow([node("LLM_TEXT_COMPLETE", "classify", { llm: { llmProvider: "claude", model: "claude-test", prompt: "Classify: ${workflow.input.text}", jsonOutput: true, jsonSchema: schema }, ...noRetry })]), {
      text: "I love it",
    });
    expect((await run(id)).status).toBe("COMPLETED");
    const request = seen.find((s) => s.path === "/anthropic/v1/messages")!;
    expect(request.headers["x-api-key"]).toBe(ANTHROPIC_KEY);
    expect(request.headers["anthropic-version"]).toBe("2023-06-01");
    expect(request.body).toMatchObject({ model: "claude-test", max_tokens: 1024, messages: [{ role: "user", content: "Classify: I love it" }] });
    expect(request.body.system).toContain("JSON");
    expect((await taskOf(id, "classify")).output).toMatchObject({ result: { sentiment: "positive", score: 0.9 }, tokenUsage: { promptTokens: 30, completionTokens: 12, totalTokens: 42 } });
  });

  it("fail with the reason when the JSON answer does not match its schema, or is not JSON", async () => {
    scripted.set("/openai/v1/chat/completions", [
      { status: 200, body: { choices: [{ message: { content: '{"sentiment":"meh"}' }, finish_reason: "stop" }] } },
      { status: 200, body: { choices: [{ message: { content: "Sure! Here you go" }, finish_reason: "stop" }] } },
    ]);
    const llm = { llmProvider: "local", model: "gpt-test", messages: [{ role: "user", message: "Classify" }], jsonOutput: true, jsonSchema: { type: "object", required: ["score"], properties: { sentiment: { enum: ["positive", "negative"] } } } };
    const mismatch = await start(workflow([chat("c", llm)]));
    expect((await run(mismatch)).status).toBe("FAILED");
    const task = await taskOf(mismatch, "c");
    expect(task.status).toBe("FAILED");
    expect(task.reasonForIncompletion).toMatch(/^LLM_CHAT_COMPLETE task: the model's JSON answer does not match jsonSchema: .*score.*is required/);
    expect(seen.at(-1)!.body.response_format).toEqual({ type: "json_object" });
    const notJson = await start(workflow([chat("c", llm)]));
    expect((await run(notJson)).status).toBe("FAILED");
    expect((await taskOf(notJson, "c")).reasonForIncompletion).toMatch(/^LLM_CHAT_COMPLETE task: the model's answer is not JSON/);
  });

  it("fail terminally, naming it, for a missing provider, a model not allowed, a prompt template and a provider's 4xx", async () => {
    const reasonOf = async (definition: Json) => {
      const id = await start(workflow([definition]));
      expect((await run(id)).status).toBe("FAILED");
      const task = await taskOf(id, "c");
      expect(task.status).toBe("FAILED_WITH_TERMINAL_ERROR");
      return task.reasonForIncompletion;
    };
    const messages = [{ role: "user", message: "hi" }];
    expect(await reasonOf(chat("c", { llmProvider: "nope", model: "gpt-test", messages }))).toBe(
      'LLM_CHAT_COMPLETE task: llmProvider: there is no AI provider "nope" in this namespace (Settings → AI providers)',
    );
    expect(await reasonOf(chat("c", { llmProvider: "local", model: "gpt-5", messages }))).toBe(
      'LLM_CHAT_COMPLETE task: model: the provider "local" does not allow the model "gpt-5" (it allows "gpt-test", "embed-test")',
    );
    expect(await reasonOf(node("LLM_TEXT_COMPLETE", "c", { llm: { llmProvider: "local", model: "gpt-test", promptName: "my_prompt" }, ...noRetry }))).toMatch(/promptName "my_prompt": node-flow keeps no prompt templates/);
    scripted.set("/openai/v1/chat/completions", [{ status: 400, body: { error: { message: `Invalid 'messages': too long (key ${OPENAI_KEY})` } } }]);
    const reason = await reasonOf(chat("c", { llmProvider: "local", model: "gpt-test", messages }, { policy: { retryCount: 3 } }));
    expect(reason).toBe('LLM_CHAT_COMPLETE task: the provider "local" answered 400: Invalid \'messages\': too long (key ***)');
    expect(seen.filter((s) => s.path === "/openai/v1/chat/completions")).toHaveLength(1);
  });

  it("wait out a 429 for its Retry-After on the queue, then complete", async () => {
    scripted.set("/openai/v1/chat/completions", [{ status: 429, body: { error: { message: "Rate limit reached" } }, headers: { "retry-after": "7" } }]);
    const id = await start(workflow([chat("c", { llmProvider: "local", model: "gpt-test", messages: [{ role: "user", message: "hi" }] })]));
    await evaluateBatch({ db: t.db, scripts, blobs }, { limit: 10 });
    // A second on, so the queue row written at the database's now() is due.
    const now = new Date(Date.now() + 1000);
    expect(await runSystemTaskBatch(deps(() => now), { limit: 10, owner: "sys-ai" })).toBe(1);
    const waiting = await taskOf(id, "c");
    expect(waiting.status).toBe("IN_PROGRESS");
    expect(waiting.output).toMatchObject({ waiting: { attempt: 1, retryAfterSeconds: 7, reason: 'LLM_CHAT_COMPLETE task: the provider "local" answered 429: Rate limit reached' } });
    const queued = await t.db.selectFrom("TaskQueues").select("visibleAt").where("taskId", "=", waiting.id).executeTakeFirstOrThrow();
    expect(new Date(queued.visibleAt).getTime() - now.getTime()).toBe(7000);
    // Not due before its Retry-After…
    expect(await runSystemTaskBatch(deps(() => new Date(now.getTime() + 6000)), { limit: 10, owner: "sys-ai" })).toBe(0);
    // …and answered once it is.
    expect(await runSystemTaskBatch(deps(() => new Date(now.getTime() + 7000)), { limit: 10, owner: "sys-ai" })).toBe(1);
    expect((await run(id)).status).toBe("COMPLETED");
    expect((await taskOf(id, "c")).output).toMatchObject({ result: "Hello from OpenAI" });
    expect(seen.filter((s) => s.path === "/openai/v1/chat/completions")).toHaveLength(2);
  });

  it("back off over 5xx answers, then fail the attempt so its retry policy decides", async () => {
    scripted.set("/anthropic/v1/messages", Array.from({ length: RATE_LIMIT_WAITS + 1 }, () => ({ status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } })));
    const id = await start(workflow([chat("c", { llmProvider: "claude", model: "claude-test", messages: [{ role: "user", message: "hi" }] })]));
    expect((await run(id)).status).toBe("FAILED");
    const task = await taskOf(id, "c");
    expect(task.status).toBe("FAILED");
    expect(task.reasonForIncompletion).toBe(`LLM_CHAT_COMPLETE task: the provider "claude" answered 529: Overloaded (after ${RATE_LIMIT_WAITS + 1} tries)`);
    expect(seen).toHaveLength(RATE_LIMIT_WAITS + 1);
  });
});

describe("embeddings, indexing and search", () => {
  it("LLM_GENERATE_EMBEDDINGS returns the vector with usage and latency, and refuses an Anthropic provider", async () => {
    const id = await start(workflow([node("LLM_GENERATE_EMBEDDINGS", "e", { llm: { llmProvider: "local", model: "embed-test", text: "two cats" }, ...noRetry })]));
    expect((await run(id)).status).toBe("COMPLETED");
    expect((await taskOf(id, "e")).output).toMatchObject({ result: embed("two cats"), dimensions: 4, tokenUsage: { promptTokens: 3, totalTokens: 3 } });
    const anthropic = await start(workflow([node("LLM_GENERATE_EMBEDDINGS", "e", { llm: { llmProvider: "claude", model: "claude-test", text: "x" }, ...noRetry })]));
    expect((await run(anthropic)).status).toBe("FAILED");
    expect((await taskOf(anthropic, "e")).reasonForIncompletion).toMatch(/Anthropic's API computes no embeddings/);
  });

  it("LLM_INDEX_TEXT chunks and stores documents; LLM_SEARCH_INDEX ranks them by cosine similarity, top k, filtered by metadata", async () => {
    const index = (ref: string, docId: string, text: string, metadata: Json) =>
      node("LLM_INDEX_TEXT", ref, { llm: { index: "pets", namespace: "kb", embeddingModelProvider: "local", embeddingModel: "embed-test", docId, text, metadata, chunkSize: 60, chunkOverlap: 0 }, ...noRetry });
    const indexed = await start(
      workflow(
        [
          index("i1", "cats", "Cats sleep all day. A cat purrs when it is happy and content.", { kind: "mammal" }),
          index("i2", "dogs", "Dogs bark at the mail carrier. A dog fetches the stick and the ball.", { kind: "mammal" }),
          index("i3", "fish", "Fish swim in the pond all day. The fish eat flakes and they grow.", { kind: "aquatic" }),
        ],
        chain("i1", "i2", "i3"),
      ),
    );
    expect((await run(indexed)).status).toBe("COMPLETED");
    expect((await taskOf(indexed, "i1")).output).toMatchObject({ index: "pets", namespace: "kb", docId: "cats", chunks: 2, dimensions: 4, tokenUsage: { promptTokens: 6 } });
    const stored = await t.db.selectFrom("VectorDocuments").select(["docId", "chunk", "metadata", "embeddingModel"]).where("namespaceId", "=", namespaceId).where("indexName", "=", "pets").orderBy("docId").orderBy("chunk").execute();
    expect(stored.map((r) => `${r.docId}#${r.chunk}`)).toEqual(["cats#0", "cats#1", "dogs#0", "dogs#1", "fish#0", "fish#1"]);
    expect(stored[0]).toMatchObject({ metadata: { kind: "mammal" }, embeddingModel: "embed-test" });

    const search = (ref: string, extra: Json) =>
      node("LLM_SEARCH_INDEX", ref, { llm: { index: "pets", namespace: "kb", embeddingModelProvider: "local", embeddingModel: "embed-test", query: "${workflow.input.q}", ...extra }, ...noRetry });
    const searched = await start(workflow([search("top", { maxResults: 2 }), search("filtered", { maxResults: 5, metadataFilter: { kind: "aquatic" } })]), { q: "a cat" });
    expect((await run(searched)).status).toBe("COMPLETED");
    const top = (await taskOf(searched, "top")).output as { result: { docId: string; chunk: number; score: number; text: string }[]; tokenUsage: unknown; latencyMs: number };
    expect(top.result.map((h) => h.docId)).toEqual(["cats", "cats"]);
    expect(top.result[0]!.score).toBeGreaterThanOrEqual(top.result[1]!.score);
    expect(top.tokenUsage).toMatchObject({ promptTokens: 3 });
    const filtered = (await taskOf(searched, "filtered")).output as { result: { docId: string; metadata: unknown }[] };
    expect(filtered.result.map((h) => h.docId)).toEqual(["fish", "fish"]);
    expect(filtered.result[0]!.metadata).toEqual({ kind: "aquatic" });

    // Re-indexing a document replaces its chunks.
    const again = await start(workflow([index("i1", "cats", "A bird sings.", { kind: "bird" })]));
    expect((await run(again)).status).toBe("COMPLETED");
    expect(await t.db.selectFrom("VectorDocuments").select("text").where("namespaceId", "=", namespaceId).where("docId", "=", "cats").execute()).toEqual([{ text: "A bird sings." }]);
  });

  it("ranks with the SQL cosine function exactly as cosine similarity computed here does", async () => {
    const address = { namespaceId, indexName: "ranking", indexNamespace: "" };
    const docs = Array.from({ length: 40 }, (_, i) => ({ docId: `d${String(i).padStart(2, "0")}`, embedding: [Math.sin(i), Math.cos(i * 1.7), (i % 5) - 2, i / 10] }));
    await t.db
      .insertInto("VectorDocuments")
      .values(docs.map((d) => ({ namespaceId, indexName: "ranking", indexNamespace: "", docId: d.docId, chunk: 0, text: d.docId, embedding: d.embedding, embeddingModel: "m", metadata: JSON.stringify({ even: Number(d.docId.slice(1)) % 2 === 0 }) })))
      .execute();
    const query = [0.3, -0.8, 1.5, 2];
    const cosine = (a: number[], b: number[]) => {
      const f = (x: number) => Math.fround(x);
      const dot = a.reduce((s, x, i) => s + f(x) * f(b[i]!), 0);
      const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + f(x) * f(x), 0));
      return dot / (norm(a) * norm(b));
    };
    const expected = docs.map((d) => ({ docId: d.docId, score: cosine(d.embedding, query) })).sort((a, b) => b.score - a.score || a.docId.localeCompare(b.docId));
    const hits = await searchChunks(t.db, address, { embedding: query, embeddingModel: "m", limit: 10, engine: "sql" });
    expect(hits.map((h) => h.docId)).toEqual(expected.slice(0, 10).map((e) => e.docId));
    for (const [i, h] of hits.entries()) expect(h.score).toBeCloseTo(expected[i]!.score, 6);
    const even = await searchChunks(t.db, address, { embedding: query, embeddingModel: "m", limit: 5, metadataFilter: { even: true }, engine: "sql" });
    expect(even.map((h) => h.docId)).toEqual(expected.filter((e) => Number(e.docId.slice(1)) % 2 === 0).slice(0, 5).map((e) => e.docId));
    // Another model's chunks, or another length, are never compared.
    expect(await searchChunks(t.db, address, { embedding: query, embeddingModel: "other", limit: 5, engine: "sql" })).toEqual([]);
    expect(await searchChunks(t.db, address, { embedding: [1, 2, 3], embeddingModel: "m", limit: 5, engine: "sql" })).toEqual([]);
  });

  // pgvector cannot be installed on this machine (no package, no network): the half comparing it runs only where it is.
  it.skipIf(process.env.NODE_FLOW_TEST_PGVECTOR !== "true")("ranks the same with pgvector as with the SQL function", async () => {
    expect(await hasPgvector(t.db)).toBe(true);
    const address = { namespaceId, indexName: "ranking", indexNamespace: "" };
    const query = { embedding: [0.3, -0.8, 1.5, 2], embeddingModel: "m", limit: 40 };
    const viaSql = await searchChunks(t.db, address, { ...query, engine: "sql" });
    const viaPgvector = await searchChunks(t.db, address, { ...query, engine: "pgvector" });
    expect(viaPgvector.map((h) => h.docId)).toEqual(viaSql.map((h) => h.docId));
  });
});
