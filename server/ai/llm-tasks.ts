import type { Db } from "@/db/pool";
import type { LlmNodeType } from "../../engine/definition/llm-schema";
import { validateFormData } from "../human-tasks/validate-form-data";
import type { SecretLookup } from "../lib/secret-lookup";
import { redactSecrets, redactText } from "../secrets/redact";
import { HTTP_TASK_DEFAULTS } from "../system-tasks/http-task";
import type { HttpTaskOptions } from "../system-tasks/http-task";
import { completed, failed, failedTerminally, inProgress } from "../system-tasks/system-task-outcome";
import type { SystemTaskOutcome } from "../system-tasks/system-task-outcome";
import { getAiProvider } from "./ai-providers";
import type { AiProvider } from "./ai-providers";
import { chatComplete, generateEmbeddings, LlmCallError } from "./llm-client";
import type { ChatMessage, ChatRequest, LlmCallOptions, TokenUsage, ToolCall, ToolDefinition } from "./llm-client";
import { chunkText, replaceDocumentChunks, searchChunks } from "./vector-documents";

/**
 * The sidecar's executors for Conductor's AI tasks: LLM_CHAT_COMPLETE,
 * LLM_TEXT_COMPLETE, LLM_GENERATE_EMBEDDINGS, LLM_INDEX_TEXT and
 * LLM_SEARCH_INDEX (docs/ai.md). The decider has put the node's fields —
 * Conductor's inputParameters — into the task input, expressions resolved.
 *
 * - The provider is looked up by name in the task's namespace and must allow
 *   the model; its key is read from the namespace secret it names, here and
 *   nowhere else, and redacted out of every output and reason.
 * - Every output carries tokenUsage and latencyMs (the provider calls' time).
 * - A provider's 4xx fails the task terminally with the provider's message.
 *   A 429, a 5xx, a timeout or a dropped connection puts the task back on
 *   its queue (IN_PROGRESS) after the provider's Retry-After, or a backoff
 *   of 2, 4, 8… seconds when it gives none, up to RATE_LIMIT_WAITS times;
 *   after that the task FAILS and its retry policy takes over.
 */

export interface LlmTaskDeps {
  db: Db;
  secrets?: SecretLookup;
  http: HttpTaskOptions;
}

export interface LlmTaskRef {
  namespaceId: string;
  taskType: LlmNodeType;
  /** Which lease of the task this is (1 the first time): counts the waits after a 429 or 5xx. */
  pollCount: number;
}

/** Waits on the queue, after a 429 or 5xx, before the attempt fails. */
export const RATE_LIMIT_WAITS = 4;
/** The longest wait honoured from a Retry-After; a longer one fails the attempt instead. */
export const MAX_RETRY_AFTER_SECONDS = 600;

const DEFAULT_CHUNK_SIZE = 1000;
const DEFAULT_CHUNK_OVERLAP = 100;
const MAX_CHUNKS = 2000;
const EMBEDDING_BATCH = 64;
const DEFAULT_MAX_RESULTS = 5;
const MAX_RESULTS = 100;

/** A bad input: the task fails terminally, naming the field. */
class InputError extends Error {}

interface Opened {
  provider: AiProvider;
  model: string;
  call: LlmCallOptions;
  secretValues: string[];
}

/** Runs one AI task to an outcome. Never throws for a bad input or a provider failure. */
export async function runLlmTask(task: LlmTaskRef, input: Record<string, unknown>, deps: LlmTaskDeps): Promise<SystemTaskOutcome> {
  const prefix = `${task.taskType} task`;
  const usage: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  let latencyMs = 0;
  let secretValues: string[] = [];
  const timed = async <T>(call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await call();
    } finally {
      latencyMs += Math.round(performance.now() - started);
    }
  };
  const add = (u: TokenUsage) => {
    usage.promptTokens += u.promptTokens;
    usage.completionTokens += u.completionTokens;
    usage.totalTokens += u.totalTokens;
  };
  const open = async (providerField: string, modelField: string): Promise<Opened> => {
    const opened = await openProvider(task.namespaceId, input, providerField, modelField, deps);
    secretValues = opened.secretValues;
    return opened;
  };
  const metrics = () => ({ tokenUsage: { ...usage }, latencyMs });

  let outcome: SystemTaskOutcome;
  try {
    switch (task.taskType) {
      case "LLM_CHAT_COMPLETE":
      case "LLM_TEXT_COMPLETE": {
        const opened = await open("llmProvider", "model");
        const request = chatRequest(task.taskType, input, opened.model);
        const answer = await timed(() => chatComplete(opened.provider, request, opened.call));
        add(answer.usage);
        const base = { finishReason: answer.finishReason, ...(answer.toolCalls.length === 0 ? {} : { toolCalls: answer.toolCalls }), llmProvider: opened.provider.name, model: opened.model };
        if (!request.json) {
          outcome = completed({ result: answer.text, ...base, ...metrics() });
          break;
        }
        const parsed = parseJsonAnswer(answer.text);
        if (!parsed.ok) {
          outcome = failed(`${prefix}: the model's answer is not JSON: ${parsed.reason}`, { text: answer.text, ...base, ...metrics() });
          break;
        }
        const schema = jsonSchemaOf(input);
        const errors = schema === undefined ? [] : validateFormData(schema, parsed.value);
        outcome =
          errors.length === 0
            ? completed({ result: parsed.value, ...base, ...metrics() })
            : failed(`${prefix}: the model's JSON answer does not match jsonSchema: ${errors.map((e) => `${e.path === "" ? "(root)" : e.path} ${e.message}`).join("; ")}`, {
                result: parsed.value,
                ...base,
                ...metrics(),
              });
        break;
      }
      case "LLM_GENERATE_EMBEDDINGS": {
        const opened = await open("llmProvider", "model");
        const text = input.text;
        const texts = typeof text === "string" ? [text] : Array.isArray(text) && text.length > 0 && text.every((x) => typeof x === "string") ? (text) : undefined;
        if (texts === undefined) throw new InputError("text must be a string or a non-empty list of strings");
        const dimensions = optionalNumber(input, "dimensions", 1, 16000);
        const answer = await timed(() => generateEmbeddings(opened.provider, { model: opened.model, texts, dimensions }, opened.call));
        add(answer.usage);
        outcome = completed({
          result: typeof text === "string" ? answer.vectors[0] : answer.vectors,
          dimensions: answer.vectors[0]!.length,
          llmProvider: opened.provider.name,
          model: opened.model,
          ...metrics(),
        });
        break;
      }
      case "LLM_INDEX_TEXT": {
        const address = indexAddress(task.namespaceId, input);
        const docId = requiredText(input, "docId");
        if (docId.length > 400) throw new InputError("docId is longer than 400 characters");
        if (typeof input.text !== "string") throw new InputError("text must be a string");
        const metadata = jsonObject(input, "metadata") ?? {};
        const size = optionalNumber(input, "chunkSize", 50, 20000) ?? DEFAULT_CHUNK_SIZE;
        const overlap = optionalNumber(input, "chunkOverlap", 0, size - 1) ?? Math.min(DEFAULT_CHUNK_OVERLAP, Math.floor(size / 4));
        const pieces = chunkText(input.text, size, overlap);
        if (pieces.length > MAX_CHUNKS) throw new InputError(`text makes ${pieces.length} chunks of ${size} characters, more than the ${MAX_CHUNKS} one task indexes: split the document or raise chunkSize`);
        const opened = await open("embeddingModelProvider", "embeddingModel");
        const dimensions = optionalNumber(input, "dimensions", 1, 16000);
        const vectors: number[][] = [];
        for (let i = 0; i < pieces.length; i += EMBEDDING_BATCH) {
          const answer = await timed(() => generateEmbeddings(opened.provider, { model: opened.model, texts: pieces.slice(i, i + EMBEDDING_BATCH), dimensions }, opened.call));
          add(answer.usage);
          vectors.push(...answer.vectors);
        }
        await replaceDocumentChunks(deps.db, address, { docId, metadata, embeddingModel: opened.model, chunks: pieces.map((text, i) => ({ text, embedding: vectors[i]! })) });
        outcome = completed({ index: address.indexName, namespace: address.indexNamespace, docId, chunks: pieces.length, dimensions: vectors[0]?.length ?? 0, ...metrics() });
        break;
      }
      case "LLM_SEARCH_INDEX": {
        const address = indexAddress(task.namespaceId, input);
        const query = requiredText(input, "query");
        const limit = optionalNumber(input, "maxResults", 1, MAX_RESULTS) ?? DEFAULT_MAX_RESULTS;
        const metadataFilter = jsonObject(input, "metadataFilter");
        const opened = await open("embeddingModelProvider", "embeddingModel");
        const dimensions = optionalNumber(input, "dimensions", 1, 16000);
        const answer = await timed(() => generateEmbeddings(opened.provider, { model: opened.model, texts: [query], dimensions }, opened.call));
        add(answer.usage);
        const hits = await searchChunks(deps.db, address, { embedding: answer.vectors[0]!, embeddingModel: opened.model, limit, metadataFilter });
        outcome = completed({ result: hits, ...metrics() });
        break;
      }
    }
  } catch (error) {
    if (error instanceof InputError) outcome = failedTerminally(`${prefix}: ${error.message}`, metrics());
    else if (error instanceof LlmCallError) outcome = callFailure(task, `${prefix}: ${error.message}`, error, metrics());
    else throw error;
  }
  if (secretValues.length === 0) return outcome;
  return { ...outcome, output: redactSecrets(outcome.output, secretValues), ...(outcome.reason === undefined ? {} : { reason: redactText(outcome.reason, secretValues) }) };
}

/** A provider failure: terminal, or back on the queue after Retry-After / a backoff, or FAILED once the waits are spent. */
function callFailure(task: LlmTaskRef, reason: string, error: LlmCallError, output: Record<string, unknown>): SystemTaskOutcome {
  if (!error.retryable) return failedTerminally(reason, output);
  const attempt = Math.max(1, task.pollCount);
  const wait = error.retryAfterSeconds ?? 2 ** attempt;
  if (attempt > RATE_LIMIT_WAITS || wait > MAX_RETRY_AFTER_SECONDS) return failed(`${reason} (after ${attempt} tr${attempt === 1 ? "y" : "ies"})`, output);
  return inProgress({ ...output, waiting: { reason, attempt, retryAfterSeconds: wait } }, wait);
}

async function openProvider(namespaceId: string, input: Record<string, unknown>, providerField: string, modelField: string, deps: LlmTaskDeps): Promise<Opened> {
  const name = requiredText(input, providerField);
  const model = requiredText(input, modelField);
  const provider = await getAiProvider(deps.db, namespaceId, name);
  if (provider === undefined) throw new InputError(`${providerField}: there is no AI provider ${JSON.stringify(name)} in this namespace (Settings → AI providers)`);
  if (!provider.models.includes(model)) {
    throw new InputError(`${modelField}: the provider ${JSON.stringify(name)} does not allow the model ${JSON.stringify(model)} (it allows ${provider.models.map((m) => JSON.stringify(m)).join(", ")})`);
  }
  let apiKey: string | null = null;
  if (provider.apiKeySecret !== null) {
    if (deps.secrets === undefined) throw new InputError(`this runner has no access to secrets, so it cannot read the key of the provider ${JSON.stringify(name)}`);
    apiKey = await deps.secrets(namespaceId, provider.apiKeySecret);
    if (apiKey === null) throw new InputError(`the provider ${JSON.stringify(name)} takes its key from the secret ${provider.apiKeySecret}, which does not exist (Settings → Secrets)`);
  }
  const maxDurationMs = deps.http.maxDurationMs ?? HTTP_TASK_DEFAULTS.maxDurationMs;
  return {
    provider,
    model,
    secretValues: apiKey === null ? [] : [apiKey],
    call: {
      apiKey,
      http: {
        allowPrivateNetworks: deps.http.allowPrivateNetworks || provider.allowPrivateNetwork,
        connectTimeoutMs: deps.http.defaultConnectTimeoutMs ?? HTTP_TASK_DEFAULTS.connectTimeoutMs,
        // A model may think for a while before its first byte.
        readTimeoutMs: maxDurationMs,
        totalTimeoutMs: maxDurationMs,
        lookup: deps.http.lookup,
      },
    },
  };
}

function chatRequest(type: "LLM_CHAT_COMPLETE" | "LLM_TEXT_COMPLETE", input: Record<string, unknown>, model: string): ChatRequest {
  const variables = jsonObject(input, "promptVariables") ?? {};
  const fill = (text: string) => text.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (whole, name: string) => (name in variables ? display(variables[name]) : whole));
  const system: string[] = [];
  const messages: ChatMessage[] = [];
  if (type === "LLM_TEXT_COMPLETE") {
    if (typeof input.prompt !== "string" || input.prompt.trim() === "") {
      throw new InputError(
        typeof input.promptName === "string" ? `promptName ${JSON.stringify(input.promptName)}: node-flow keeps no prompt templates; write the prompt's text in prompt` : "prompt is required",
      );
    }
    messages.push({ role: "user", content: fill(input.prompt) });
  } else {
    if (typeof input.instructions === "string" && input.instructions.trim() !== "") system.push(fill(input.instructions));
    for (const [i, m] of messageList(input.messages).entries()) {
      const content = typeof m.message === "string" ? m.message : typeof m.content === "string" ? m.content : undefined;
      if (content === undefined) throw new InputError(`messages[${i}].message must be a string`);
      const role = typeof m.role === "string" ? m.role : "user";
      const toolCalls = Array.isArray(m.toolCalls) ? m.toolCalls.map((c, k) => toolCallOf(c, `messages[${i}].toolCalls[${k}]`)) : undefined;
      if (role === "system") system.push(fill(content));
      // An agent's earlier turns: the model's tool calls, and each call's result, kept as the provider's tool messages.
      else if (toolCalls !== undefined && toolCalls.length > 0 && (role === "assistant" || role === "tool_call")) messages.push({ role: "assistant", content, toolCalls });
      else if (role === "tool" && typeof m.toolCallId === "string") messages.push({ role: "tool", content, toolCallId: m.toolCallId });
      else messages.push({ role: role === "assistant" || role === "tool_call" ? "assistant" : "user", content: fill(content) });
    }
    if (messages.length === 0) throw new InputError("messages must hold at least one user or assistant message");
  }
  const json = bool(input, "jsonOutput");
  const schema = jsonSchemaOf(input);
  if (json) system.push(`Answer with one JSON value and nothing else.${schema === undefined ? "" : ` It must match this JSON Schema: ${JSON.stringify(schema)}`}`);
  const stop = input.stopWords;
  const stopWords = typeof stop === "string" ? (stop === "" ? [] : [stop]) : Array.isArray(stop) && stop.every((s) => typeof s === "string") ? (stop) : stop == null ? [] : undefined;
  if (stopWords === undefined) throw new InputError("stopWords must be a list of strings");
  return {
    model,
    ...(system.length === 0 ? {} : { system: system.join("\n\n") }),
    messages,
    temperature: optionalNumber(input, "temperature", 0, 2),
    topP: optionalNumber(input, "topP", 0, 1),
    maxTokens: optionalNumber(input, "maxTokens", 1, 1_000_000),
    ...(stopWords.length === 0 ? {} : { stop: stopWords }),
    json,
    ...(type === "LLM_CHAT_COMPLETE" && input.tools != null ? { tools: toolList(input.tools) } : {}),
  };
}

function messageList(value: unknown): Record<string, unknown>[] {
  let list = value;
  if (typeof list === "string") {
    try {
      list = JSON.parse(list) as unknown;
    } catch {
      return [{ role: "user", message: value }];
    }
  }
  if (!Array.isArray(list)) throw new InputError("messages must be a list of {role, message}");
  return list.map((m, i) => {
    if (typeof m !== "object" || m === null || Array.isArray(m)) throw new InputError(`messages[${i}] must be an object with role and message`);
    return m as Record<string, unknown>;
  });
}

function toolCallOf(value: unknown, at: string): ToolCall {
  const c = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  if (typeof c.id !== "string" || typeof c.name !== "string") throw new InputError(`${at} must have an id and a name`);
  return { id: c.id, name: c.name, arguments: c.arguments ?? {} };
}

/** Conductor's tool specs ({name, description, inputSchema}); OpenAI's and Anthropic's spellings accepted too. */
function toolList(value: unknown): ToolDefinition[] {
  if (!Array.isArray(value)) throw new InputError("tools must be a list of {name, description, inputSchema}");
  return value.map((raw, i) => {
    const t = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
    const fn = typeof t.function === "object" && t.function !== null ? (t.function as Record<string, unknown>) : t;
    if (typeof fn.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(fn.name)) throw new InputError(`tools[${i}].name must be 1–64 letters, digits, _ or -`);
    const schema = fn.inputSchema ?? fn.parameters ?? fn.input_schema ?? { type: "object", properties: {} };
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) throw new InputError(`tools[${i}].inputSchema must be a JSON Schema object`);
    return { name: fn.name, ...(typeof fn.description === "string" ? { description: fn.description } : {}), inputSchema: schema as Record<string, unknown> };
  });
}

function parseJsonAnswer(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(text);
  try {
    return { ok: true, value: JSON.parse(fenced?.[1] ?? text) as unknown };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

function jsonSchemaOf(input: Record<string, unknown>): Record<string, unknown> | undefined {
  return jsonObject(input, "jsonSchema");
}

function indexAddress(namespaceId: string, input: Record<string, unknown>) {
  const indexName = requiredText(input, "index");
  if (indexName.length > 200) throw new InputError("index is longer than 200 characters");
  const ns = input.namespace ?? "";
  if (typeof ns !== "string" || ns.length > 200) throw new InputError("namespace must be text of at most 200 characters");
  return { namespaceId, indexName, indexNamespace: ns };
}

function requiredText(input: Record<string, unknown>, field: string): string {
  const value = input[field];
  if (typeof value !== "string" || value.trim() === "") throw new InputError(`${field} is required`);
  return value;
}

function optionalNumber(input: Record<string, unknown>, field: string, min: number, max: number): number | undefined {
  const raw = input[field];
  if (raw === undefined || raw === null || raw === "") return undefined;
  const value = typeof raw === "string" ? Number(raw) : raw;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) throw new InputError(`${field} must be a number from ${min} to ${max}`);
  return value;
}

function bool(input: Record<string, unknown>, field: string): boolean {
  const raw = input[field];
  if (raw === undefined || raw === null || raw === "" || raw === false || raw === "false") return false;
  if (raw === true || raw === "true") return true;
  throw new InputError(`${field} must be true or false`);
}

function jsonObject(input: Record<string, unknown>, field: string): Record<string, unknown> | undefined {
  let raw = input[field];
  if (raw === undefined || raw === null || raw === "") return undefined;
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw) as unknown;
    } catch {
      throw new InputError(`${field} must be a JSON object`);
    }
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new InputError(`${field} must be a JSON object`);
  return raw as Record<string, unknown>;
}

function display(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? "";
}
