import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { HttpRequestError, sendGuardedRequest } from "../system-tasks/guarded-http";
import type { GuardedHttpOptions } from "../system-tasks/guarded-http";
import { HTTP_TASK_DEFAULTS } from "../system-tasks/http-task";
import type { HttpTaskOptions } from "../system-tasks/http-task";
import { completed, failed, failedTerminally } from "../system-tasks/system-task-outcome";
import type { SystemTaskOutcome } from "../system-tasks/system-task-outcome";

/**
 * LIST_MCP_TOOLS and CALL_MCP_TOOL: Conductor's MCP tasks, over the
 * streamable-HTTP transport of the MCP SDK's client. The decider puts the
 * node's fields into the input as Conductor has them: `mcpServer` (the
 * endpoint URL), `headers` (already resolved, so they may carry a secret),
 * and for a call `method` (the tool) and `arguments`.
 *
 * Every request goes through the HTTP tasks' network guard (guarded-http.ts):
 * a private address is refused unless NODE_FLOW_HTTP_ALLOW_PRIVATE is set.
 * One session per task: initialize, the one request, close. The client never
 * opens the server's notification stream (a GET is answered 405 locally), as
 * a single call has nothing to hear on it.
 *
 * Output: LIST `{ tools: [{ name, description, inputSchema }] }`; CALL
 * `{ content, structuredContent?, isError, text }`, `text` being the text
 * parts joined. A tool answering `isError` fails the task (retried per its
 * policy) with that text as the reason. Refused or malformed requests and a
 * 4xx other than 429 fail terminally; the rest may pass on a retry.
 */
export type McpNodeType = "LIST_MCP_TOOLS" | "CALL_MCP_TOOL";

export function isMcpNodeType(type: string): type is McpNodeType {
  return type === "LIST_MCP_TOOLS" || type === "CALL_MCP_TOOL";
}

const CLIENT_INFO = { name: "node-flow", version: "1" } as const;

export async function runMcpTask(taskType: McpNodeType, input: Record<string, unknown>, http: HttpTaskOptions): Promise<SystemTaskOutcome> {
  const prefix = `${taskType} task`;
  const server = input.mcpServer;
  if (typeof server !== "string" || server === "") return failedTerminally(`${prefix}: mcpServer must be the server's URL`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return failedTerminally(`${prefix}: mcpServer is not an absolute URL`);
  }
  const headers = stringHeaders(input.headers);
  if (typeof headers === "string") return failedTerminally(`${prefix}: ${headers}`);
  let tool: string | undefined;
  let args: Record<string, unknown> | undefined;
  if (taskType === "CALL_MCP_TOOL") {
    if (typeof input.method !== "string" || input.method === "") return failedTerminally(`${prefix}: method must name the tool to call`);
    tool = input.method;
    const raw = input.arguments ?? {};
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return failedTerminally(`${prefix}: arguments must be an object`);
    args = raw as Record<string, unknown>;
  }

  const maxDurationMs = http.maxDurationMs ?? HTTP_TASK_DEFAULTS.maxDurationMs;
  const guard: GuardedHttpOptions = {
    allowPrivateNetworks: http.allowPrivateNetworks,
    connectTimeoutMs: http.defaultConnectTimeoutMs ?? HTTP_TASK_DEFAULTS.connectTimeoutMs,
    readTimeoutMs: http.defaultReadTimeoutMs ?? HTTP_TASK_DEFAULTS.readTimeoutMs,
    totalTimeoutMs: maxDurationMs,
    maxResponseBytes: http.maxResponseBytes ?? HTTP_TASK_DEFAULTS.maxResponseBytes,
    ...(http.lookup ? { lookup: http.lookup } : {}),
  };
  const transport = new StreamableHTTPClientTransport(url, { fetch: guardedFetch(guard), requestInit: { headers } });
  const client = new Client(CLIENT_INFO);
  const started = performance.now();
  try {
    await client.connect(transport, { timeout: maxDurationMs });
    if (taskType === "LIST_MCP_TOOLS") {
      const listed = await client.listTools(undefined, { timeout: maxDurationMs });
      const tools = listed.tools.map((t) => ({ name: t.name, description: t.description ?? null, inputSchema: t.inputSchema }));
      return completed({ tools, latencyMs: Math.round(performance.now() - started) });
    }
    const result = await client.callTool({ name: tool!, arguments: args }, undefined, { timeout: maxDurationMs });
    const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
    const text = content
      .filter((part): part is { type: "text"; text: string } => typeof part === "object" && part !== null && (part as { type?: unknown }).type === "text")
      .map((part) => part.text)
      .join("\n");
    const output: Record<string, unknown> = { content, isError: result.isError === true, text, latencyMs: Math.round(performance.now() - started) };
    if (result.structuredContent !== undefined) output.structuredContent = result.structuredContent;
    if (result.isError === true) return failed(`${prefix}: tool "${tool}" answered an error: ${text.slice(0, 500) || "(no text)"}`, output);
    return completed(output);
  } catch (error) {
    return outcomeOfError(prefix, url, error);
  } finally {
    await client.close().catch(() => undefined);
  }
}

function outcomeOfError(prefix: string, url: URL, error: unknown): SystemTaskOutcome {
  const where = `${url.protocol}//${url.host}${url.pathname}`;
  const cause = error instanceof Error && error.cause instanceof HttpRequestError ? error.cause : error;
  if (cause instanceof HttpRequestError) {
    const reason = `${prefix}: ${where}: ${cause.message}`;
    return cause.permanent ? failedTerminally(reason) : failed(reason);
  }
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400 && error.code < 500 && error.code !== 429) {
    return failedTerminally(`${prefix}: ${where} answered ${error.code}: ${error.message.slice(0, 500)}`);
  }
  const message = error instanceof Error ? error.message : String(error);
  return failed(`${prefix}: ${where}: ${message.slice(0, 500)}`);
}

/** Header values as strings; a reason when they are not a map of scalars. */
function stringHeaders(value: unknown): Record<string, string> | string {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) return "headers must be an object of header names to values";
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") return `header "${name}" must be a string`;
    out[name] = String(v);
  }
  return out;
}

/** The SDK's fetch, sent through the network guard; the notification stream (GET) is declined locally. */
function guardedFetch(options: GuardedHttpOptions): FetchLike {
  return async (target, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method === "GET") return new Response(null, { status: 405, statusText: "Method Not Allowed" });
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const body = typeof init?.body === "string" ? init.body : undefined;
    const response = await sendGuardedRequest({ url: String(target), method, headers, ...(body === undefined ? {} : { body }) }, options);
    const responseHeaders = new Headers();
    for (const [name, values] of Object.entries(response.headers)) for (const v of values) responseHeaders.append(name, v);
    const empty = [204, 205, 304].includes(response.statusCode);
    return new Response(empty ? null : new Uint8Array(response.body), { status: response.statusCode, statusText: response.statusMessage, headers: responseHeaders });
  };
}
