/**
 * The request and the answer of the worker-facing dispatchers (REST at
 * /api/v1, Conductor's wire protocol at /conductor/api): only what they read
 * and write, so that two transports can serve them.
 *
 * - The App Router's catch-all routes hold a fetch `Request` and must return a
 *   `Response`: `fromFetchRequest` and `toFetchResponse` below.
 * - The web process's node:http server (server/web/node-api-exchange.ts)
 *   builds neither. A worker's report is a small JSON request, and adapting it
 *   to WHATWG objects — undici's Request and Headers, a body stream, a
 *   Response read back through another stream — cost the web
 *   process a fifth to a quarter of its CPU per run (docs/performance.md).
 */

export interface ApiRequestHeaders {
  /** A header's value by name, in any case; null when absent. */
  get(name: string): string | null;
  /** Every header as [lower-case name, value]. */
  entries(): Iterable<[string, string]>;
}

export interface ApiRequest {
  readonly method: string;
  /** Absolute: scheme, host and the request target. */
  readonly url: string;
  readonly headers: ApiRequestHeaders;
  /** Fires when the client goes away before the answer is sent, so a parked long poll ends at once. */
  readonly signal: AbortSignal;
  /**
   * The whole body, or null when there is none. Rejects with BodyTooLargeError
   * over `limit` bytes: from Content-Length when it is sent, else while
   * reading, so a chunked upload is cut off at the limit rather than buffered.
   */
  readBody(limit: number): Promise<Uint8Array | null>;
}

/** A whole answer: the APIs served this way stream nothing (the SSE streams are Next's). */
export interface ApiAnswer {
  status: number;
  headers: Record<string, string>;
  /** Null for none (a 204, a HEAD). */
  body: string | null;
}

export class BodyTooLargeError extends Error {
  override name = "BodyTooLargeError";
}

/** The refusal for a Content-Length over `limit`, before any of the body is read. */
export function refuseDeclaredLength(headers: ApiRequestHeaders, limit: number): void {
  const declared = headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new BodyTooLargeError(`The body is ${declared} bytes; the limit is ${limit}`);
}

export function overLimit(limit: number): BodyTooLargeError {
  return new BodyTooLargeError(`The body is over the limit of ${limit} bytes`);
}

/** A fetch Request as an ApiRequest (the App Router's routes). */
export function fromFetchRequest(request: Request): ApiRequest {
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    signal: request.signal,
    readBody: async (limit) => {
      refuseDeclaredLength(request.headers, limit);
      if (request.body === null) return null;
      const reader = request.body.getReader();
      const chunks: Uint8Array[] = [];
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) {
          await reader.cancel().catch(() => undefined);
          throw overLimit(limit);
        }
        chunks.push(value);
      }
      return size === 0 ? null : Buffer.concat(chunks);
    },
  };
}

export function toFetchResponse(answer: ApiAnswer): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/** The same answer without its body, as HEAD has it. */
export function withoutBody(answer: ApiAnswer): ApiAnswer {
  return { status: answer.status, headers: answer.headers, body: null };
}
