/**
 * One HTTP request and its whole answer, with a per-attempt timeout: the part
 * of the transport that touches the network. Two implementations:
 *
 * - On Node (and runtimes that provide `node:http`), `node:http`/`node:https`
 *   with a keep-alive agent. A worker's life is a stream of small JSON
 *   exchanges with one server, and there undici's `fetch` costs several times
 *   what `http.request` does: WHATWG streams, a Request and a Response object,
 *   resource-timing entries, and `AbortSignal.timeout`/`AbortSignal.any` per
 *   call. Measured on the 2-core machine of docs/performance.md, 5,000 POSTs of
 *   a report-sized body to a local server, client and server in one process:
 *   fetch with a timeout signal 590–860 µs of CPU per request, `http.request`
 *   140–280 µs.
 * - Elsewhere, or when the caller passes a `fetch` of its own (proxies,
 *   tests), plain `fetch`.
 *
 * Either way a timeout or a network error rejects (the transport decides
 * whether to retry), and an HTTP error status resolves like any answer.
 */

import type * as NodeHttp from "node:http";
import type { Agent } from "node:http";
import type * as NodeHttps from "node:https";

/** An answer, read whole. */
export interface ExchangeResponse {
  status: number;
  /** A response header, case-insensitive; null when absent. */
  header: (name: string) => string | null;
  /** The body as text ("" when empty). */
  text: string;
}

export interface ExchangeRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** The caller's cancellation; the rejection is then the signal's reason. */
  signal?: AbortSignal;
  /** Covers the request and reading its answer. */
  timeoutMs: number;
}

export type Exchange = (url: string, request: ExchangeRequest) => Promise<ExchangeResponse>;

/** What a timed-out attempt rejects with (fetch's own name for it). */
function timeoutError(ms: number): Error {
  const error = new Error(`no answer within ${ms} ms`);
  error.name = "TimeoutError";
  return error;
}

/** An exchange over `fetch`. */
export function fetchExchange(doFetch: typeof fetch): Exchange {
  return async (url, request) => {
    // One controller and one timer per attempt, instead of AbortSignal.timeout
    // plus AbortSignal.any: cheaper, and nothing outlives the attempt.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(timeoutError(request.timeoutMs)), request.timeoutMs);
    const outer = request.signal;
    const onAbort = () => controller.abort(outer?.reason);
    outer?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await doFetch(url, { method: request.method, headers: request.headers, body: request.body, signal: controller.signal });
      const text = await response.text();
      return { status: response.status, header: (name) => response.headers.get(name), text };
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    }
  };
}


/**
 * An exchange over `node:http`/`node:https`, imported on first use so the
 * module still loads where they do not exist. Each exchange has its own
 * keep-alive agents; idle sockets do not hold the process open (Node unrefs
 * them).
 *
 * An idle socket is retired a second before the server's `Keep-Alive:
 * timeout` hint says the server will close it — but Node's agent honours that
 * hint only when it has a `timeout` of its own (Agent#keepSocketAlive takes
 * the smaller of the two, and 0 means none). Without one it kept every idle
 * socket until the server closed it (5 s on a Node server), and a request
 * written as that close was under way failed with ECONNRESET: the system bench's
 * driver lost starts to it under load, and a start without an idempotency
 * key is not retried. IDLE_SOCKET_MS bounds idle sockets where no hint comes.
 */
export function nodeHttpExchange(): Exchange {
  // On a socket in use the agent's timeout only emits 'timeout', which nothing
  // here listens to: each attempt's own timer (below) is what ends a request.
  let modules: Promise<{ http: typeof NodeHttp; https: typeof NodeHttps; agents: Map<string, Agent> }> | undefined;
  const load = () =>
    (modules ??= Promise.all([import("node:http"), import("node:https")]).then(([http, https]) => ({ http, https, agents: new Map<string, Agent>() })));

  return async (url, request) => {
    const { http, https, agents } = await load();
    const target = new URL(url);
    const secure = target.protocol === "https:";
    let agent = agents.get(target.protocol);
    if (agent === undefined) {
      const options = { keepAlive: true, timeout: IDLE_SOCKET_MS };
      agent = secure ? new https.Agent(options) : new http.Agent(options);
      agents.set(target.protocol, agent);
    }
    const headers: Record<string, string | number> = { ...request.headers };
    if (request.body !== undefined) headers["content-length"] = Buffer.byteLength(request.body);
    const outer = request.signal;
    if (outer?.aborted) throw outer.reason;

    return new Promise<ExchangeResponse>((resolve, reject) => {
      const req = (secure ? https : http).request(target, { method: request.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          if (!res.complete) return; // 'aborted'/'error' reports it
          const received = res.headers;
          resolve({
            status: res.statusCode ?? 0,
            header: (name) => {
              const value = received[name.toLowerCase()];
              return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
            },
            text: Buffer.concat(chunks).toString("utf8"),
          });
        });
        // The connection closed mid-body: as good as no answer.
        res.on("error", reject);
        res.on("close", () => {
          if (!res.complete) reject(new Error("the answer was cut off"));
        });
      });
      const timer = setTimeout(() => req.destroy(timeoutError(request.timeoutMs)), request.timeoutMs);
      const onAbort = () => req.destroy(outer?.reason instanceof Error ? outer.reason : new Error(String(outer?.reason)));
      outer?.addEventListener("abort", onAbort, { once: true });
      req.on("close", () => {
        clearTimeout(timer);
        outer?.removeEventListener("abort", onAbort);
      });
      req.on("error", reject);
      req.end(request.body);
    });
  };
}

/** How long an idle keep-alive socket is kept when the server sends no `Keep-Alive: timeout` hint (under common proxies' 60 s). */
const IDLE_SOCKET_MS = 30_000;

/** Node's `http` where the runtime has it, `fetch` otherwise or when one is given. */
export function defaultExchange(doFetch: typeof fetch | undefined): Exchange {
  if (doFetch !== undefined) return fetchExchange(doFetch);
  const versions = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions;
  return versions?.node !== undefined ? nodeHttpExchange() : fetchExchange((input, init) => fetch(input, init));
}
