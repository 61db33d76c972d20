import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { ApiAnswer, ApiRequest, ApiRequestHeaders } from "./api-exchange";
import { overLimit, refuseDeclaredLength } from "./api-exchange";

/**
 * Serves an ApiRequest → ApiAnswer handler (the REST and Conductor
 * dispatchers) from a plain node:http request, with no WHATWG objects in
 * between: headers are read from Node's own object, the body from the request
 * stream when the dispatcher asks for it, and the answer is written in one
 * socket write (on loopback every write is a syscall that wakes the peer).
 */
export async function serveApi(req: IncomingMessage, res: ServerResponse, handle: (request: ApiRequest) => Promise<ApiAnswer>): Promise<void> {
  try {
    const answer = await handle(new NodeApiRequest(req, res));
    const headers: Record<string, string | number> = answer.headers;
    // Set here rather than left to end(): writeHead has already fixed the framing by then.
    if (answer.body !== null) headers["content-length"] = Buffer.byteLength(answer.body);
    res.writeHead(answer.status, headers);
    res.end(answer.body ?? undefined);
  } catch (error) {
    answerHandlerFailure(res, error);
  }
}

/** A handler that threw (the dispatchers answer their own errors, so this is a bug): a plain 500, or a cut connection once the answer has begun. */
export function answerHandlerFailure(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
  res.end(`Internal error: ${error instanceof Error ? error.message : String(error)}`);
}

class NodeHeaders implements ApiRequestHeaders {
  constructor(private readonly headers: IncomingHttpHeaders) {}

  get(name: string): string | null {
    const value = this.headers[name.toLowerCase()];
    if (value === undefined) return null;
    // Node joins most repeated headers itself; Set-Cookie stays a list, which fetch's Headers joins too.
    return Array.isArray(value) ? value.join(", ") : value;
  }

  *entries(): Iterable<[string, string]> {
    for (const name of Object.keys(this.headers)) yield [name, this.get(name)!];
  }
}

class NodeApiRequest implements ApiRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: NodeHeaders;
  readonly signal: AbortSignal;

  constructor(
    private readonly req: IncomingMessage,
    res: ServerResponse,
  ) {
    this.method = req.method ?? "GET";
    const target = req.url ?? "/";
    const origin = `http://${req.headers.host ?? "localhost"}`;
    // An origin-form target (the usual "/path?query") is appended; an absolute-form one stands alone.
    this.url = target.startsWith("/") ? origin + target : new URL(target, origin).href;
    this.headers = new NodeHeaders(req.headers);
    const controller = new AbortController();
    this.signal = controller.signal;
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
  }

  async readBody(limit: number): Promise<Uint8Array | null> {
    refuseDeclaredLength(this.headers, limit);
    const chunks: Buffer[] = [];
    let size = 0;
    // Read to the end even past the limit (keeping nothing more): leaving the loop early would destroy the
    // request's socket, and the client would get a reset instead of its 413.
    for await (const chunk of this.req) {
      const bytes = chunk as Buffer;
      size += bytes.byteLength;
      if (size <= limit) chunks.push(bytes);
    }
    if (size > limit) throw overLimit(limit);
    if (size === 0) return null;
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }
}
