import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { RestDeps } from "../define-route";
import type { ApiAnswer, ApiRequest } from "../../web/api-exchange";
import { serveApi } from "../../web/node-api-exchange";
import { answerRestRequest } from "../dispatch";
import { ROUTES } from "../routes";

/**
 * The REST dispatcher behind a real node:http server on a free port, as the
 * web process serves it (server/web/node-api-exchange.ts), for integration
 * tests: real sockets, so a long-poll really parks and a client that hangs up
 * really aborts the request (the request's signal fires when the response's
 * connection closes early).
 */
export interface RestTestServer {
  /** e.g. http://127.0.0.1:41234/api/v1 */
  baseUrl: string;
  close(): Promise<void>;
}

export async function serveRest(deps: RestDeps): Promise<RestTestServer> {
  return serveRequests((request) => answerRestRequest(deps, request, ROUTES), "/api/v1");
}

/** A dispatcher behind a real node:http server, as the web process serves it; `baseUrl` is the origin plus `basePath`. */
export async function serveRequests(handle: (request: ApiRequest) => Promise<ApiAnswer>, basePath: string): Promise<RestTestServer> {
  const server = createServer((req, res) => void serveApi(req, res, handle));
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
