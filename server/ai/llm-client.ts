import { HttpRequestError, sendGuardedRequest } from "../system-tasks/guarded-http";
import type { GuardedHttpOptions, GuardedResponse } from "../system-tasks/guarded-http";
import type { AiProvider } from "./ai-providers";

/**
 * One call to a model provider, in either wire shape: OpenAI's
 * (`/chat/completions`, `/embeddings` — OpenAI and every server compatible
 * with it: Ollama, vLLM, LM Studio, gateways) or Anthropic's Messages API
 * (`/v1/messages`). The URL is always the provider's configured base URL, so
 * a task cannot steer the request elsewhere; the exchange goes through the
 * HTTP tasks' network guard (guarded-http.ts). The key travels in a header
 * only, and no error text quotes the request.
 */

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** On an assistant message: the tool calls the model made (an agent's earlier turn). */
  toolCalls?: ToolCall[];
  /** On a tool message: the call it answers. */
  toolCallId?: string;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface ChatRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: string[];
  json: boolean;
  tools?: ToolDefinition[];
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

export interface ChatAnswer {
  text: string;
  finishReason: string | null;
  toolCalls: ToolCall[];
  usage: TokenUsage;
}

export interface EmbeddingsAnswer {
  vectors: number[][];
  usage: TokenUsage;
}

/**
 * Why a call failed. `retryable` (429, 5xx, timeouts, dropped connections)
 * may pass later, after `retryAfterSeconds` when the provider said so; the
 * rest (4xx, a refused address, an answer we cannot read) will not.
 */
export class LlmCallError extends Error {
  override name = "LlmCallError";
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface LlmCallOptions {
  /** The key from the provider's secret; none for a server that needs none. */
  apiKey: string | null;
  http: Omit<GuardedHttpOptions, "maxResponseBytes"> & { maxResponseBytes?: number };
}

/** Anthropic refuses a request without max_tokens. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 1024;
const ANTHROPIC_VERSION = "2023-06-01";

export async function chatComplete(provider: AiProvider, request: ChatRequest, options: LlmCallOptions): Promise<ChatAnswer> {
  if (provider.kind === "anthropic") {
    const body = {
      model: request.model,
      max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      ...(request.system === undefined ? {} : { system: request.system }),
      messages: mergeTurns(request.messages),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(request.topP === undefined ? {} : { top_p: request.topP }),
      ...(request.stop === undefined ? {} : { stop_sequences: request.stop }),
      ...(request.tools === undefined ? {} : { tools: request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })) }),
    };
    const answer = object(await post(provider, "/v1/messages", body, options));
    const content = Array.isArray(answer.content) ? answer.content.map(object) : [];
    const usage = object(answer.usage);
    const promptTokens = count(usage.input_tokens);
    const completionTokens = count(usage.output_tokens);
    return {
      text: content
        .filter((c) => c.type === "text")
        .map((c) => (typeof c.text === "string" ? c.text : ""))
        .join(""),
      finishReason: typeof answer.stop_reason === "string" ? answer.stop_reason : null,
      toolCalls: content.filter((c) => c.type === "tool_use").map((c) => ({ id: text(c.id), name: text(c.name), arguments: c.input ?? {} })),
      usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens },
    };
  }
  const messages = [...(request.system === undefined ? [] : [{ role: "system", content: request.system }]), ...request.messages.map(openAiMessage)];
  const body = {
    model: request.model,
    messages,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.topP === undefined ? {} : { top_p: request.topP }),
    ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
    ...(request.stop === undefined ? {} : { stop: request.stop }),
    ...(request.json ? { response_format: { type: "json_object" } } : {}),
    ...(request.tools === undefined
      ? {}
      : { tools: request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.inputSchema } })) }),
  };
  const answer = object(await post(provider, "/chat/completions", body, options));
  const choice = object(Array.isArray(answer.choices) ? answer.choices[0] : undefined);
  const message = object(choice.message);
  const usage = object(answer.usage);
  const promptTokens = count(usage.prompt_tokens);
  const completionTokens = count(usage.completion_tokens);
  return {
    text: typeof message.content === "string" ? message.content : "",
    finishReason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
    toolCalls: (Array.isArray(message.tool_calls) ? message.tool_calls.map(object) : []).map((call) => {
      const fn = object(call.function);
      return { id: text(call.id), name: text(fn.name), arguments: parseArguments(fn.arguments) };
    }),
    usage: { promptTokens, completionTokens, totalTokens: count(usage.total_tokens) || promptTokens + completionTokens },
  };
}

export async function generateEmbeddings(provider: AiProvider, request: { model: string; texts: string[]; dimensions?: number }, options: LlmCallOptions): Promise<EmbeddingsAnswer> {
  if (provider.kind === "anthropic") throw new LlmCallError(`the provider "${provider.name}" is an Anthropic one, and Anthropic's API computes no embeddings: use an OpenAI-compatible provider`, false);
  const answer = object(await post(provider, "/embeddings", { model: request.model, input: request.texts, ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }) }, options));
  const data = (Array.isArray(answer.data) ? answer.data.map(object) : []).sort((a, b) => count(a.index) - count(b.index));
  const vectors = data.map((d) => d.embedding);
  if (vectors.length !== request.texts.length || !vectors.every((v) => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number" && Number.isFinite(x)))) {
    throw new LlmCallError(`the provider "${provider.name}" answered without ${request.texts.length} embedding vector${request.texts.length === 1 ? "" : "s"} of numbers`, false);
  }
  const usage = object(answer.usage);
  const promptTokens = count(usage.prompt_tokens);
  return { vectors: vectors as number[][], usage: { promptTokens, completionTokens: 0, totalTokens: count(usage.total_tokens) || promptTokens } };
}

/** OpenAI's shape of a message: tool calls as `tool_calls` (arguments as JSON text), tool results as `tool` messages. */
function openAiMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === "tool") return { role: "tool", tool_call_id: m.toolCallId ?? "", content: m.content };
  if (m.role === "assistant" && m.toolCalls !== undefined && m.toolCalls.length > 0) {
    return {
      role: "assistant",
      content: m.content === "" ? null : m.content,
      tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } })),
    };
  }
  return { role: m.role, content: m.content };
}

type AnthropicBlock = Record<string, unknown>;

/**
 * Anthropic wants user and assistant turns alternating: neighbours of one role
 * are joined. Tool calls are `tool_use` blocks of the assistant's turn, their
 * results `tool_result` blocks of the user's; a turn holding either is sent
 * as blocks, plain text otherwise.
 */
function mergeTurns(messages: readonly ChatMessage[]): { role: "user" | "assistant"; content: string | AnthropicBlock[] }[] {
  const out: { role: "user" | "assistant"; content: string | AnthropicBlock[] }[] = [];
  for (const m of messages) {
    const role = m.role === "assistant" ? "assistant" : "user";
    const blocks: AnthropicBlock[] | undefined =
      m.role === "tool"
        ? [{ type: "tool_result", tool_use_id: m.toolCallId ?? "", content: m.content }]
        : m.toolCalls !== undefined && m.toolCalls.length > 0
          ? [...(m.content === "" ? [] : [{ type: "text", text: m.content }]), ...m.toolCalls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.arguments ?? {} }))]
          : undefined;
    const last = out.at(-1);
    if (last === undefined || last.role !== role) {
      out.push({ role, content: blocks ?? m.content });
    } else if (blocks === undefined && typeof last.content === "string") {
      last.content += `\n\n${m.content}`;
    } else {
      const before: AnthropicBlock[] = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
      last.content = [...before, ...(blocks ?? [{ type: "text", text: m.content }])];
    }
  }
  return out;
}

async function post(provider: AiProvider, path: string, body: unknown, options: LlmCallOptions): Promise<unknown> {
  const base = provider.baseUrl.replace(/\/+$/, "");
  // An Anthropic base URL may be given with or without its /v1.
  const url = provider.kind === "anthropic" && base.endsWith("/v1") ? `${base}${path.slice(3)}` : `${base}${path}`;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (provider.kind === "anthropic") {
    headers["anthropic-version"] = ANTHROPIC_VERSION;
    if (options.apiKey !== null) headers["x-api-key"] = options.apiKey;
  } else if (options.apiKey !== null) {
    headers.authorization = `Bearer ${options.apiKey}`;
  }
  let response: GuardedResponse;
  try {
    response = await sendGuardedRequest({ url, method: "POST", headers, body: JSON.stringify(body) }, { maxResponseBytes: 20 * 1024 * 1024, ...options.http });
  } catch (error) {
    if (error instanceof HttpRequestError) throw new LlmCallError(`calling the provider "${provider.name}" failed: ${error.message}`, !error.permanent);
    throw error;
  }
  const text = response.body.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (response.statusCode >= 200 && response.statusCode < 300) {
    if (parsed === undefined) throw new LlmCallError(`the provider "${provider.name}" answered ${response.statusCode} with a body that is not JSON`, false);
    return parsed;
  }
  const detail = providerMessage(parsed) ?? (text.trim().slice(0, 300) || response.statusMessage);
  const retryable = response.statusCode === 429 || response.statusCode === 408 || response.statusCode >= 500;
  throw new LlmCallError(`the provider "${provider.name}" answered ${response.statusCode}: ${detail}`, retryable, retryAfterSeconds(response.headers));
}

/** The message in OpenAI's `{error: {message}}` and Anthropic's `{type: "error", error: {message}}`. */
function providerMessage(body: unknown): string | undefined {
  const error = object(object(body).error);
  if (typeof error.message === "string" && error.message !== "") return error.message.slice(0, 1000);
  const message = object(body).message;
  return typeof message === "string" && message !== "" ? message.slice(0, 1000) : undefined;
}

/** Retry-After as seconds, from delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterSeconds(headers: Record<string, string[]>, now = Date.now()): number | undefined {
  const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === "retry-after");
  const value = entry?.[1][0]?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

function parseArguments(value: unknown): unknown {
  if (typeof value !== "string") return value ?? {};
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function object(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}
