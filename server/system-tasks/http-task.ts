import { HTTP_METHODS } from "../../engine/definition/schema";
import { HttpRequestError, describeUrl, parseHttpUrl, sendGuardedRequest } from "./guarded-http";
import type { GuardedHttpOptions, GuardedResponse } from "./guarded-http";
import { completed, failed, failedTerminally } from "./system-task-outcome";
import type { SystemTaskOutcome } from "./system-task-outcome";

/**
 * HTTP: Conductor's HTTP task. The decider puts the resolved
 * `httpRequest` config into the input as `http_request` ({uri, method,
 * headers, body, accept, contentType, connectionTimeOut, readTimeOut}), and
 * the output is shaped as Conductor's HttpTask writes it:
 * `{ response: { statusCode, headers, body, reasonPhrase } }` with each header
 * a list of values. A non-2xx status fails the task (the response is still in
 * the output, for the failure branch to read); 3xx included, as redirects are
 * not followed (guarded-http.ts).
 */

export interface HttpTaskOptions {
  allowPrivateNetworks: boolean;
  /**
   * Used when the request names no connectionTimeOut / readTimeOut.
   * Conductor's own defaults are 100 ms and 150 ms (the node schema documents
   * them); those fail most calls over a real network, and a longer default
   * breaks nothing that works on Conductor, so ours are 5 s and 30 s.
   */
  defaultConnectTimeoutMs?: number;
  defaultReadTimeoutMs?: number;
  /**
   * Caps any timeout a request asks for, and the whole exchange: the runner's
   * lease must outlive the call, or the sweeper hands the task to another
   * runner while this one is still waiting. Default 120 s.
   */
  maxDurationMs?: number;
  /** Default 10 MiB: the output lands in a row (or the blob store), and the whole body is held in memory. */
  maxResponseBytes?: number;
  /** Injectable resolver for tests. */
  lookup?: GuardedHttpOptions["lookup"];
}

export const HTTP_TASK_DEFAULTS = {
  connectTimeoutMs: 5_000,
  readTimeoutMs: 30_000,
  maxDurationMs: 120_000,
  maxResponseBytes: 10 * 1024 * 1024,
} as const;

interface ParsedRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  connectTimeoutMs: number;
  readTimeoutMs: number;
}

/** Runs an HTTP task whose resolved input is `input`. Never throws. */
export async function runHttpTask(input: Record<string, unknown>, options: HttpTaskOptions): Promise<SystemTaskOutcome> {
  const maxDurationMs = options.maxDurationMs ?? HTTP_TASK_DEFAULTS.maxDurationMs;
  let request: ParsedRequest;
  try {
    request = parseRequest(input, options, maxDurationMs);
  } catch (error) {
    if (error instanceof HttpRequestError) return failedTerminally(`HTTP task: ${error.message}`);
    throw error;
  }
  let response: GuardedResponse;
  try {
    response = await sendGuardedRequest(
      { url: request.url.href, method: request.method, headers: request.headers, body: request.body },
      {
        allowPrivateNetworks: options.allowPrivateNetworks,
        connectTimeoutMs: request.connectTimeoutMs,
        readTimeoutMs: request.readTimeoutMs,
        totalTimeoutMs: maxDurationMs,
        maxResponseBytes: options.maxResponseBytes ?? HTTP_TASK_DEFAULTS.maxResponseBytes,
        lookup: options.lookup,
      },
    );
  } catch (error) {
    const where = `${request.method} ${describeUrl(request.url)}`;
    if (error instanceof HttpRequestError) {
      const reason = `HTTP ${where} failed: ${error.message}`;
      return error.permanent ? failedTerminally(reason) : failed(reason);
    }
    return failed(`HTTP ${where} failed: ${(error as Error).message}`);
  }

  const output = {
    response: {
      statusCode: response.statusCode,
      headers: response.headers,
      body: decodeBody(response),
      reasonPhrase: response.statusMessage,
    },
  };
  if (response.statusCode >= 200 && response.statusCode < 300) return completed(output);
  return failed(`HTTP ${request.method} ${describeUrl(request.url)} returned ${response.statusCode}${response.statusMessage ? ` ${response.statusMessage}` : ""}`, output);
}

function parseRequest(input: Record<string, unknown>, options: HttpTaskOptions, maxDurationMs: number): ParsedRequest {
  const raw = input.http_request;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new HttpRequestError("invalid", "the input has no http_request object");
  }
  const spec = raw as Record<string, unknown>;
  if (typeof spec.uri !== "string" || spec.uri === "") throw new HttpRequestError("invalid", "http_request.uri is missing");
  const url = parseHttpUrl(spec.uri);

  if (spec.method !== undefined && spec.method !== null && typeof spec.method !== "string") {
    throw new HttpRequestError("invalid", `http_request.method must be a string, got ${JSON.stringify(spec.method)}`);
  }
  const method = (spec.method ?? "GET").toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(method)) {
    throw new HttpRequestError("invalid", `http_request.method ${JSON.stringify(spec.method)} is not one of ${HTTP_METHODS.join(", ")}`);
  }

  const headers: Record<string, string> = {};
  if (spec.headers !== undefined && spec.headers !== null) {
    if (typeof spec.headers !== "object" || Array.isArray(spec.headers)) throw new HttpRequestError("invalid", "http_request.headers must be an object");
    for (const [name, value] of Object.entries(spec.headers as Record<string, unknown>)) {
      if (value === undefined || value === null) continue;
      headers[name] = typeof value === "string" ? value : JSON.stringify(value);
    }
  }
  const has = (name: string) => Object.keys(headers).some((key) => key.toLowerCase() === name);
  const accept = typeof spec.accept === "string" && spec.accept !== "" ? spec.accept : "application/json";
  const contentType = typeof spec.contentType === "string" && spec.contentType !== "" ? spec.contentType : "application/json";
  if (!has("accept")) headers.Accept = accept;

  let body: string | undefined;
  if (spec.body !== undefined && spec.body !== null) {
    // A string goes as it is (a form body, XML, pre-encoded JSON), as Spring's
    // StringHttpMessageConverter sends it in Conductor; anything else as JSON.
    body = typeof spec.body === "string" ? spec.body : JSON.stringify(spec.body);
    if (!has("content-type")) headers["Content-Type"] = contentType;
  }

  const timeout = (value: unknown, name: string, fallback: number): number => {
    if (value === undefined || value === null) return Math.min(fallback, maxDurationMs);
    const ms = Number(value);
    if (!Number.isFinite(ms) || ms <= 0) throw new HttpRequestError("invalid", `http_request.${name} must be a positive number of milliseconds`);
    return Math.min(ms, maxDurationMs);
  };
  return {
    url,
    method,
    headers,
    body,
    connectTimeoutMs: timeout(spec.connectionTimeOut, "connectionTimeOut", options.defaultConnectTimeoutMs ?? HTTP_TASK_DEFAULTS.connectTimeoutMs),
    readTimeoutMs: timeout(spec.readTimeOut, "readTimeOut", options.defaultReadTimeoutMs ?? HTTP_TASK_DEFAULTS.readTimeoutMs),
  };
}

/** JSON when the content type says so (falling back to text when it is not valid JSON), text otherwise, null when empty. */
function decodeBody(response: GuardedResponse): unknown {
  if (response.body.length === 0) return null;
  const text = response.body.toString("utf8");
  const type = Object.entries(response.headers).find(([name]) => name.toLowerCase() === "content-type")?.[1][0] ?? "";
  if (/[/+]json\b/i.test(type)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
