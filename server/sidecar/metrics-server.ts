import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Db } from "../../db/pool";
import type { RunnerLogger } from "./background-runner";
import { isScrapeAuthorized, processMetrics } from "../lib/metrics";
import type { Metrics } from "../lib/metrics";

/**
 * The sidecar's /metrics endpoint. The sidecar has no HTTP server of its own,
 * and its counters (runner passes, decide latency, lease expiries) exist only
 * in its memory, so it serves them itself; the web process serves its own at
 * app/metrics/route.ts. A bare node:http server: one route, no framework.
 */

export interface MetricsServerOptions {
  /** 0 picks a free port (tests); the bound port is in the result. */
  port: number;
  /** Listen address; default 0.0.0.0, since the scraper is another host or container. */
  host?: string;
  /** When set, a scrape must send `Authorization: Bearer <token>` (401 otherwise). */
  token?: string;
  /** The registry served; the process's own by default. */
  metrics?: Metrics;
  /** Where the scrape-time gauges (queue depths, outbox) are read; left out without it. */
  db?: Db;
  /** Bound on that database read; see {@link Metrics.scrape}. */
  scrapeTimeoutMs?: number;
  logger?: Pick<RunnerLogger, "warn" | "error">;
}

export interface MetricsServer {
  /** The bound port (the real one when `port` was 0). */
  port: number;
  /** Stops listening and drops open connections (Prometheus keeps its connection alive between scrapes). */
  close(): Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const metrics = options.metrics ?? processMetrics();
  const server = http.createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      options.logger?.error({ err: error }, "metrics: scrape failed");
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      response.end("metrics scrape failed\n");
    });
  });

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (path !== "/metrics" || request.method !== "GET") {
      response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
      return;
    }
    if (!isScrapeAuthorized(request.headers.authorization, options.token)) {
      response
        .writeHead(401, { "content-type": "text/plain; charset=utf-8", "www-authenticate": 'Bearer realm="metrics"' })
        .end("unauthorized\n");
      return;
    }
    const scrape = await metrics.scrape({ db: options.db, timeoutMs: options.scrapeTimeoutMs, logger: options.logger });
    response.writeHead(200, { "content-type": scrape.contentType, "cache-control": "no-store" }).end(scrape.body);
  }

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen(options.port, options.host ?? "0.0.0.0", () => {
      server.off("error", onError);
      resolve();
    });
  });
  // Past startup an error (an accept failure) must not crash the sidecar over its metrics.
  server.on("error", (error) => options.logger?.error({ err: error }, "metrics: server error"));

  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
