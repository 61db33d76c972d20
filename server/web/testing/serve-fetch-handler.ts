import type { IncomingMessage, ServerResponse } from "node:http";
import { answerHandlerFailure } from "../node-api-exchange";

/**
 * A `Request → Response` handler (an App Router route's shape) served from a
 * plain node:http request, for integration tests that call the app's route
 * modules over real sockets — what Next does for them in production. The
 * request's signal fires when the client goes away before the answer is
 * sent, as Next does, so a parked long-poll ends at once. Answers are
 * buffered whole. (The web process serves the worker APIs without WHATWG
 * objects: server/web/node-api-exchange.ts.)
 */
export async function serveFetchHandler(
  req: IncomingMessage,
  res: ServerResponse,
  handle: (request: Request) => Promise<Response>,
): Promise<void> {
  const controller = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  try {
    const request = await toRequest(req, controller.signal);
    const response = await handle(request);
    await send(res, response);
  } catch (error) {
    answerHandlerFailure(res, error);
  }
}

async function toRequest(req: IncomingMessage, signal: AbortSignal): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? "GET";
  // A GET or HEAD carries no body in a Request (the constructor throws on one).
  const body = method === "GET" || method === "HEAD" || chunks.length === 0 ? undefined : Buffer.concat(chunks);
  const origin = `http://${req.headers.host ?? "localhost"}`;
  return new Request(new URL(req.url ?? "/", origin), { method, headers, body, signal });
}

/** One write for headers and body: on loopback every socket write is a syscall that wakes the peer. */
async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const setCookies = response.headers.getSetCookie();
  if (setCookies.length > 0) headers["set-cookie"] = setCookies;
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, headers);
  // end() with the whole body: Node sets Content-Length itself (and none on a 204).
  res.end(body);
}
