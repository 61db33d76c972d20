import { lookup as dnsLookup } from "node:dns";
import type { LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { LookupFunction, Socket } from "node:net";
import { blockedAddressReason } from "./network-policy";

/**
 * One outbound HTTP exchange for an HTTP task or a webhook delivery, with the
 * network policy (network-policy.ts) enforced on the address actually
 * connected to:
 *
 * - The hostname is resolved by our own `lookup`, which refuses the request if
 *   any resolved address is private, and hands Node exactly the addresses it
 *   checked: the socket connects to a checked address (pinned), so a DNS answer
 *   that changes between a check and the connect (rebinding) cannot slip
 *   through. Every address must pass, not just one: with Node 20's
 *   autoSelectFamily the socket may try any of them.
 * - An IP-literal host is checked before connecting (Node does not call
 *   `lookup` for one), and the connected socket's remote address is checked
 *   again before any request byte is written.
 * - Redirects are not followed (node:http never follows them): a 3xx comes
 *   back as a response, so a public URL cannot bounce the request to an
 *   internal one.
 * - `agent: false`: a fresh connection per exchange, so no pooled socket
 *   opened for one host is ever reused for another.
 * - The response body is capped; a larger one is cut off and fails.
 */

export interface GuardedHttpOptions {
  /** Reach loopback, private and link-local addresses too (NODE_FLOW_HTTP_ALLOW_PRIVATE). */
  allowPrivateNetworks: boolean;
  /** From the start of the exchange until the TCP connection is up (DNS included). */
  connectTimeoutMs: number;
  /** Longest silence on the socket once connected (TLS handshake, waiting for the response, between body chunks). */
  readTimeoutMs: number;
  /** The whole exchange, however the time is spent: a server trickling a byte at a time stays under the read timeout forever. */
  totalTimeoutMs: number;
  maxResponseBytes: number;
  /**
   * What a body over maxResponseBytes does: "fail" (default) rejects with
   * "too_large"; "truncate" resolves with the first maxResponseBytes and hangs
   * up — for a caller that needs only the status (a webhook delivery).
   */
  oversizedBody?: "fail" | "truncate";
  /** Injectable resolver for tests; defaults to dns.lookup. */
  lookup?: typeof dnsLookup;
}

export interface GuardedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface GuardedResponse {
  statusCode: number;
  statusMessage: string;
  /** Header name as the server sent it → every value it sent. */
  headers: Record<string, string[]>;
  body: Buffer;
  /** The address the request went to. */
  remoteAddress: string;
}

/**
 * Why an exchange did not produce a response. `invalid` and `refused` are the
 * request's own fault (a bad URL or header, a private address): repeating it
 * cannot help. The others may pass on a later attempt.
 */
export type HttpFailureKind = "invalid" | "refused" | "timeout" | "network" | "too_large";

export class HttpRequestError extends Error {
  override name = "HttpRequestError";
  constructor(
    readonly kind: HttpFailureKind,
    message: string,
  ) {
    super(message);
  }

  /** True when retrying the same request cannot succeed. */
  get permanent(): boolean {
    return this.kind === "invalid" || this.kind === "refused";
  }
}

/** Parses an absolute http(s) URL; throws HttpRequestError("invalid") otherwise. */
export function parseHttpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HttpRequestError("invalid", `not an absolute URL: ${JSON.stringify(truncate(text, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new HttpRequestError("invalid", `unsupported URL scheme "${url.protocol.slice(0, -1)}": only http and https are allowed`);
  }
  return url;
}

/** The URL without credentials, query or fragment: safe to put in a reason or a log line. */
export function describeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

const PRIVATE_HINT = "set NODE_FLOW_HTTP_ALLOW_PRIVATE=true to allow private networks";

/** Refuses an IP-literal host that the policy forbids; a hostname is checked later, on its resolved addresses. */
export function assertHostAllowed(url: URL, allowPrivateNetworks: boolean): void {
  if (allowPrivateNetworks) return;
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) === 0) return;
  const why = blockedAddressReason(host);
  if (why !== undefined) throw new HttpRequestError("refused", `refused to connect to ${host}: ${why} address (${PRIVATE_HINT})`);
}

/** Sends one request under the network policy; rejects with HttpRequestError. */
export async function sendGuardedRequest(request: GuardedRequest, options: GuardedHttpOptions): Promise<GuardedResponse> {
  const url = parseHttpUrl(request.url);
  assertHostAllowed(url, options.allowPrivateNetworks);
  const resolve = options.lookup ?? dnsLookup;
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      if (addresses.length === 0) return callback(new HttpRequestError("network", `${hostname} has no address`), "", 0);
      if (!options.allowPrivateNetworks) {
        for (const { address } of addresses) {
          const why = blockedAddressReason(address);
          if (why !== undefined) {
            return callback(new HttpRequestError("refused", `refused to connect to ${hostname}: it resolves to ${address}, a ${why} address (${PRIVATE_HINT})`), "", 0);
          }
        }
      }
      // Node's callback type has no overload for the `all` form it calls us with.
      if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };

  return new Promise<GuardedResponse>((resolvePromise, reject) => {
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (error: Error | undefined, response?: GuardedResponse) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      if (error) reject(error instanceof HttpRequestError ? error : toRequestError(error, url));
      else resolvePromise(response!);
    };

    let req: http.ClientRequest;
    try {
      const transport = url.protocol === "https:" ? https : http;
      req = transport.request(url, { method: request.method, headers: request.headers, agent: false, lookup });
    } catch (error) {
      // Node validates the method and header names/values synchronously.
      finish(new HttpRequestError("invalid", `invalid request: ${(error as Error).message}`));
      return;
    }
    const abort = (error: HttpRequestError) => {
      req.destroy(error);
      finish(error);
    };
    timers.push(setTimeout(() => abort(new HttpRequestError("timeout", `timed out after ${options.totalTimeoutMs} ms`)), options.totalTimeoutMs));
    const connectTimer = setTimeout(
      () => abort(new HttpRequestError("timeout", `could not connect to ${url.host} within ${options.connectTimeoutMs} ms`)),
      options.connectTimeoutMs,
    );
    timers.push(connectTimer);

    req.on("socket", (socket: Socket) => {
      // Prepended: net.Socket writes the buffered request from its own
      // "connect" listener, and this check must run before it.
      socket.prependOnceListener("connect", () => {
        clearTimeout(connectTimer);
        const address = socket.remoteAddress ?? "";
        // Belt and braces: lookup already checked what we connect to; this also
        // covers any path that skipped it. Nothing has been written yet.
        const why = options.allowPrivateNetworks ? undefined : blockedAddressReason(address);
        if (why !== undefined) abort(new HttpRequestError("refused", `refused to talk to ${address}: a ${why} address (${PRIVATE_HINT})`));
      });
    });
    req.setTimeout(options.readTimeoutMs, () => abort(new HttpRequestError("timeout", `read timed out: no data from ${url.host} for ${options.readTimeoutMs} ms`)));
    req.on("error", (error) => finish(error));
    req.on("response", (res) => {
      const remoteAddress = res.socket?.remoteAddress ?? "";
      const chunks: Buffer[] = [];
      let size = 0;
      const respond = () =>
        finish(undefined, {
          statusCode: res.statusCode ?? 0,
          statusMessage: res.statusMessage ?? "",
          headers: groupHeaders(res.rawHeaders),
          body: Buffer.concat(chunks),
          remoteAddress,
        });
      const oversized = () => {
        if (options.oversizedBody === "truncate") {
          respond();
          req.destroy();
        } else {
          abort(new HttpRequestError("too_large", `response body larger than ${options.maxResponseBytes} bytes`));
        }
      };
      const declared = Number(res.headers["content-length"]);
      if (Number.isFinite(declared) && declared > options.maxResponseBytes && options.oversizedBody !== "truncate") {
        oversized();
        return;
      }
      res.on("data", (chunk: Buffer) => {
        if (settled) return;
        const room = options.maxResponseBytes - size;
        size += chunk.length;
        if (size <= options.maxResponseBytes) {
          chunks.push(chunk);
          return;
        }
        if (room > 0) chunks.push(chunk.subarray(0, room));
        oversized();
      });
      res.on("error", (error) => finish(error));
      res.on("aborted", () => finish(new HttpRequestError("network", "the server closed the connection mid-response")));
      res.on("end", respond);
    });
    req.end(request.body);
  });
}

function groupHeaders(raw: readonly string[]): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) (headers[raw[i]!] ??= []).push(raw[i + 1]!);
  return headers;
}

function toRequestError(error: Error, url: URL): HttpRequestError {
  const code = (error as { code?: unknown }).code;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return new HttpRequestError("network", `cannot resolve ${url.hostname} (${code})`);
  if (code === "ECONNREFUSED") return new HttpRequestError("network", `connection refused by ${url.host}`);
  if (code === "ECONNRESET") return new HttpRequestError("network", `connection reset by ${url.host}`);
  if (typeof code === "string" && (code.startsWith("ERR_TLS") || code.includes("CERT") || code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE")) {
    return new HttpRequestError("network", `TLS error talking to ${url.host}: ${error.message}`);
  }
  return new HttpRequestError("network", `${typeof code === "string" ? `${code}: ` : ""}${error.message}`);
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
