import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { RestDeps } from "../define-route";
import { dispatchRestRequest } from "../dispatch";
import { ROUTES } from "../routes";

/**
 * The REST dispatcher behind a real node:http server on a free port, for
 * integration tests: real sockets, so a long-poll really parks and a client
 * that hangs up really aborts the request (as Next does, the Request's signal
 * fires when the response's connection closes early).
 */
export interface RestTestServer {
  /** e.g. http://127.0.0.1:41234/api/v1 */
  baseUrl: string;
  close(): Promise<void>;
}

async function toRequest(req: IncomingMessage, origin: string, signal: AbortSignal): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
  return new Request(new URL(req.url ?? "/", origin), { method: req.method, headers, body, signal });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}

export async function serveRest(deps: RestDeps): Promise<RestTestServer> {
  return serveRequests((request) => dispatchRestRequest(deps, request, ROUTES), "/api/v1");
}

/** Any Request → Response handler behind a real node:http server; `baseUrl` is the origin plus `basePath`. */
export async function serveRequests(handle: (request: Request) => Promise<Response>, basePath: string): Promise<RestTestServer> {
  const server = createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const origin = `http://${req.headers.host ?? "localhost"}`;
    toRequest(req, origin, controller.signal)
      .then((request) => handle(request))
      .then((response) => send(res, response))
      .catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${basePath}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
