import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { keyPair, startConductorHarness } from "../conductor/testing/conductor-harness";
import type { ConductorHarness } from "../conductor/testing/conductor-harness";
import { createTestKey, createTestNamespace } from "../rest/testing/rest-fixtures";
import { startSidecar } from "../testing/sidecar-process";
import type { SidecarProcess } from "../testing/sidecar-process";
import { waitUntil } from "../testing/wait-until";
import { saveAiProvider } from "./ai-providers";

/**
 * Conductor's AI task JSON, as its documentation writes it, registered
 * through /conductor/api/metadata and started through /workflow, run by a
 * real sidecar process against an OpenAI-compatible server on loopback: a
 * RAG pipeline of LLM_INDEX_TEXT → LLM_SEARCH_INDEX → LLM_CHAT_COMPLETE.
 * The sidecar's network policy stays closed; the provider's configuration
 * lets it reach loopback.
 */

const t = useTestDatabase();
let h: ConductorHarness;
let sidecar: SidecarProcess;
let server: http.Server;
let base: string;
const chats: { messages: { role: string; content: string }[] }[] = [];

function embed(text: string): number[] {
  const words = text.toLowerCase().split(/\W+/);
  return ["refund", "shipping", "warranty"].map((w) => words.filter((x) => x.startsWith(w)).length + 0.01);
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const body = JSON.parse(text) as { input?: string[]; messages?: { role: string; content: string }[] };
      res.writeHead(200, { "content-type": "application/json" });
      if (req.url === "/v1/embeddings") {
        const input = body.input ?? [];
        res.end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: embed(t) })), usage: { prompt_tokens: input.length, total_tokens: input.length } }));
      } else {
        chats.push({ messages: body.messages ?? [] });
        res.end(JSON.stringify({ choices: [{ message: { content: "Refunds take 5 days." }, finish_reason: "stop" }], usage: { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h = await startConductorHarness(t.db, t.url);
  sidecar = startSidecar({ databaseUrl: t.url, dataDir: h.dataDir });
  await sidecar.ready();
});

afterAll(async () => {
  const code = await sidecar?.stop();
  await h?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  expect(code, sidecar?.output()).toBe(0);
});

const rag = {
  name: "support_rag",
  version: 1,
  schemaVersion: 2,
  tasks: [
    {
      name: "index_policy",
      taskReferenceName: "index_policy",
      type: "LLM_INDEX_TEXT",
      inputParameters: {
        vectorDB: "pgvectordb",
        namespace: "support",
        index: "policies",
        embeddingModelProvider: "openai",
        embeddingModel: "text-embedding-3-small",
        docId: "refunds",
        text: "${workflow.input.policy}",
        metadata: { team: "billing" },
        chunkSize: 500,
      },
    },
    {
      name: "search_policy",
      taskReferenceName: "search_policy",
      type: "LLM_SEARCH_INDEX",
      inputParameters: {
        vectorDB: "pgvectordb",
        namespace: "support",
        index: "policies",
        embeddingModelProvider: "openai",
        embeddingModel: "text-embedding-3-small",
        query: "${workflow.input.question}",
        maxResults: 1,
      },
    },
    {
      name: "answer",
      taskReferenceName: "answer",
      type: "LLM_CHAT_COMPLETE",
      inputParameters: {
        llmProvider: "openai",
        model: "gpt-4o-mini",
        instructions: "Answer from the policy only.",
        messages: [
          { role: "user", message: "Policy: ${search_policy.output.result[0].text}" },
          { role: "user", message: "${workflow.input.question}" },
        ],
        temperature: 0,
        maxTokens: 100,
      },
    },
  ],
  outputParameters: { answer: "${answer.output.result}", usage: "${answer.output.tokenUsage}" },
};

describe("Conductor's AI task JSON through /conductor/api", () => {
  it("registers unchanged and runs index → search → chat against the namespace's provider", async () => {
    const ns = await createTestNamespace(t.db, "ai-conductor");
    const saved = await saveAiProvider(t.db, {
      namespaceId: ns.id,
      name: "openai",
      config: { kind: "openai", baseUrl: `${base}/v1`, apiKeySecret: null, models: ["gpt-4o-mini", "text-embedding-3-small"], allowPrivateNetwork: true },
      actor: { type: "system", id: "test" },
      updatedBy: "test",
    });
    expect(saved.ok).toBe(true);
    const token = (await h.call<{ token: string }>("POST", "/token", { body: keyPair(await createTestKey(t.db, ns, ["admin"])) })).body.token;

    const registered = await h.call<{ warnings?: unknown[] }>("POST", "/metadata/workflow", { token, body: rag });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    expect(registered.body.warnings ?? []).toEqual([]);
    const stored = await h.call<{ tasks: { type: string; inputParameters: unknown }[] }>("GET", "/metadata/workflow/support_rag?version=1", { token });
    expect(stored.body.tasks.map((task) => ({ type: task.type, inputParameters: task.inputParameters }))).toEqual(rag.tasks.map((task) => ({ type: task.type, inputParameters: task.inputParameters })));

    const started = await h.call<string>("POST", "/workflow/support_rag", {
      token,
      body: { policy: "Refunds are paid within 5 days of the return.", question: "How long does a refund take?" },
    });
    expect(started.status).toBe(200);
    const id = started.body;
    type Wf = { status: string; output: Record<string, unknown>; reasonForIncompletion?: string; tasks: { referenceTaskName: string; status: string; outputData: Record<string, unknown> }[] };
    let wf: Wf | undefined;
    await waitUntil(
      async () => {
        wf = (await h.call<Wf>("GET", `/workflow/${id}?includeTasks=true`, { token })).body;
        return wf.status !== "RUNNING";
      },
      { what: "the RAG workflow to end", timeoutMs: 30_000, describe: () => JSON.stringify(wf) },
    );
    if (wf === undefined) throw new Error("no workflow");
    expect(wf.status, wf.reasonForIncompletion).toBe("COMPLETED");
    expect(wf.output).toEqual({ answer: "Refunds take 5 days.", usage: { promptTokens: 40, completionTokens: 6, totalTokens: 46 } });
    const search = wf.tasks.find((task) => task.referenceTaskName === "search_policy")!;
    expect(search.outputData.result).toMatchObject([{ docId: "refunds", text: "Refunds are paid within 5 days of the return.", metadata: { team: "billing" } }]);
    expect(chats.at(-1)!.messages).toEqual([
      { role: "system", content: "Answer from the policy only." },
      { role: "user", content: "Policy: Refunds are paid within 5 days of the return." },
      { role: "user", content: "How long does a refund take?" },
    ]);
  });
});
