import { NodeFlowApiError, NodeFlowNetworkError } from "./api-error";
import { defaultExchange } from "./http-exchange";
import type { ExchangeResponse } from "./http-exchange";
import { abortReason, backoffDelay, isRetryableStatus, parseRetryAfter, resolveRetryOptions, sleep } from "./retry-policy";
import type { ResolvedRetryOptions, RetryOptions } from "./retry-policy";

/**
 * One HTTP exchange with the server, retried by the policy in
 * retry-policy.ts: JSON in and out, the API key as a Bearer token, errors
 * read from problem+json. On Node it speaks `node:http` with keep-alive, and
 * plain `fetch` elsewhere (Deno, Bun, browsers) or when given one
 * (http-exchange.ts says why).
 */

/** What a retry is told about: the attempt that failed and how long the client now waits. */
export interface RetryInfo {
  method: string;
  path: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  delayMs: number;
  /** The HTTP status when there was an answer; undefined after a network error. */
  status?: number;
  /** The network error, when there was no answer. */
  error?: unknown;
}

/** How a transport talks to the server. */
export interface TransportOptions {
  /** The server's origin, e.g. `http://localhost:3000`; a path prefix is kept. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** A `fetch` to send every request through (proxies, tests); by default `node:http` on Node, else the global `fetch`. */
  fetch?: typeof fetch;
  /** How failed requests are retried; `false` never retries. */
  retry?: RetryOptions | false;
  /** Per attempt: how long one request may take before it counts as a network error. Default 30,000 ms. */
  timeoutMs?: number;
  /** Told before each retry's wait (logs, metrics). */
  onRetry?: (info: RetryInfo) => void;
  /** Extra headers on every request (a tracing id, a User-Agent). */
  headers?: Record<string, string>;
  /** The wait between attempts; a test passes one that records the delay instead of sleeping. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** [0, 1): the jitter's randomness; Math.random by default. */
  random?: () => number;
}

/** One request. */
export interface TransportRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** From the API root, e.g. `/api/v1/ns/default/runs`. */
  path: string;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON when not undefined. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Aborts the request and any wait before a retry; never retried. */
  signal?: AbortSignal;
  /** Overrides the transport's per-attempt timeout. */
  timeoutMs?: number;
  /**
   * False when repeating the request could act twice (saving a definition
   * version): it is then retried only where the server certainly did not act
   * (429, 503, connection refused). Default true.
   */
  idempotent?: boolean;
  /** Error statuses answered as a success instead of thrown (readiness answers 503 with a report). */
  acceptStatuses?: readonly number[];
  /** Overrides the transport's retry options for this request. */
  retry?: RetryOptions | false;
}

/** A successful answer. */
export interface TransportResponse<T> {
  status: number;
  /** A response header, case-insensitive; null when absent. */
  header: (name: string) => string | null;
  body: T;
}

/** Sends requests to one server. */
export interface Transport {
  /** Sends `request`, retrying per the policy; resolves with the parsed body or throws NodeFlowApiError / NodeFlowNetworkError / the abort reason. */
  send<T>(request: TransportRequest): Promise<TransportResponse<T>>;
}

/** Connection errors where the request cannot have reached a server (undici puts the code on `cause`). */
const NEVER_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

function neverSent(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === "string" && NEVER_SENT_CODES.has(code)) return true;
  }
  return false;
}

function isJson(contentType: string | null): boolean {
  if (contentType === null) return false;
  const type = contentType.split(";", 1)[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

function parseBody(response: ExchangeResponse): unknown {
  const { text } = response;
  if (text === "") return null;
  if (!isJson(response.header("content-type"))) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function queryString(query: TransportRequest["query"]): string {
  if (query === undefined) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** Creates a transport for one server and key. */
export function createTransport(options: TransportOptions): Transport {
  const exchange = defaultExchange(options.fetch);
  const base = options.baseUrl.replace(/\/+$/, "");
  const defaults = resolveRetryOptions(options.retry);
  const defaultTimeoutMs = options.timeoutMs ?? 30_000;
  const wait = options.sleep ?? sleep;
  const random = options.random ?? Math.random;
  const baseHeaders: Record<string, string> = { accept: "application/json, application/problem+json", ...options.headers };
  if (options.apiKey) baseHeaders.authorization = `Bearer ${options.apiKey}`;

  async function send<T>(request: TransportRequest): Promise<TransportResponse<T>> {
    const path = `${request.path}${queryString(request.query)}`;
    const retry: ResolvedRetryOptions = request.retry === undefined ? defaults : resolveRetryOptions(request.retry, defaults);
    const idempotent = request.idempotent ?? true;
    const timeoutMs = request.timeoutMs ?? defaultTimeoutMs;
    const headers: Record<string, string> = { ...baseHeaders, ...request.headers };
    // Serialised once, before the first attempt: an output that cannot be JSON
    // (a BigInt, a cycle) is the caller's error, not a network one.
    let body: string | undefined;
    if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers["content-type"] = "application/json";
    }

    for (let attempt = 1; ; attempt++) {
      if (request.signal?.aborted) throw abortReason(request.signal);
      let response: ExchangeResponse;
      try {
        response = await exchange(`${base}${path}`, { method: request.method, headers, body, signal: request.signal, timeoutMs });
      } catch (error) {
        // No answer, or one cut off mid-body. Repeated only where that cannot
        // act twice: an idempotent request, or one that never left.
        if (request.signal?.aborted) throw abortReason(request.signal);
        const retryable = idempotent || neverSent(error);
        if (!retryable || attempt > retry.retries) throw new NodeFlowNetworkError({ method: request.method, path, attempts: attempt, cause: error });
        const delayMs = backoffDelay(attempt, retry, random);
        options.onRetry?.({ method: request.method, path, attempt, delayMs, error });
        await wait(delayMs, request.signal);
        continue;
      }

      const parsed = parseBody(response);
      if ((response.status >= 200 && response.status < 300) || request.acceptStatuses?.includes(response.status)) {
        return { status: response.status, header: response.header, body: parsed as T };
      }

      const retryAfterMs = parseRetryAfter(response.header("retry-after"));
      const failure = () => new NodeFlowApiError({ status: response.status, method: request.method, path, body: parsed, attempts: attempt, retryAfterMs });
      if (!isRetryableStatus(response.status, idempotent) || attempt > retry.retries) throw failure();
      if (retryAfterMs !== undefined && retryAfterMs > retry.maxRetryAfterMs) throw failure();
      const delayMs = retryAfterMs ?? backoffDelay(attempt, retry, random);
      options.onRetry?.({ method: request.method, path, attempt, delayMs, status: response.status });
      await wait(delayMs, request.signal);
    }
  }

  return { send };
}
