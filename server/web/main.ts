/**
 * The web process (role `api`): one node:http server on HOST:PORT in front of
 * two handlers.
 *
 * - The worker-facing APIs — `/api/v1/…` (REST) and `/conductor/api/…`
 *   (Conductor's wire protocol) — go straight to their dispatchers
 *   (server/rest, server/conductor), the same functions the App Router's
 *   catch-all routes call; and senders' webhook calls, `/api/hooks/…`
 *   (server/webhooks/receive-webhook.ts).
 * - Everything else — the console's pages, tRPC, the SSE streams, health and
 *   metrics — goes to Next's request handler, as under `next start`.
 *
 * Why not everything through Next: a worker's report is a small JSON request,
 * and the engine's throughput is those requests. Next's route pipeline
 * (routing, tracing spans, WHATWG streams, a response written in several
 * socket writes, async hooks on every promise) cost several times the handler
 * itself. `npm run bench` closed loop, 16 workers, back to back on this 2-core
 * machine: web CPU 35–37 ms per run under `next start` against 12–14 ms for
 * the same dispatchers on node:http (figures in docs/performance.md).
 *
 * The App Router routes stay, and serve these paths under `next dev`. The
 * process-wide web context (server/web/web-context.ts) is kept on globalThis, so
 * this file and Next's bundled routes share one pool and one LISTEN
 * connection.
 *
 * Run by `nf start` as `node dist/server/web/main.js` (compiled by
 * scripts/build-runtime.ts; `npm run nf -- start` runs it as
 * `node --import tsx server/web/main.ts`), and so by the Docker image.
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { conductorDepsOf } from "../conductor/conductor-deps";
import { CONDUCTOR_ROUTES } from "../conductor/conductor-routes";
import { answerConductorRequest } from "../conductor/dispatch-conductor-request";
import { serveApi } from "./node-api-exchange";
import { answerRestRequest } from "../rest/dispatch";
import { restDepsOf } from "../rest/rest-deps";
import { ROUTES } from "../rest/routes";
import { PROJECT_ROOT } from "../lib/runtime-entry";
import { stopWhenSupervisorGone } from "../lib/supervisor-watch";
import { answerWebhookCall, WEBHOOK_PATH_PREFIX } from "../webhooks/receive-webhook";
import { webhookDepsOf } from "../webhooks/webhook-deps";
import { closeWebContext, getWebContext } from "./web-context";

/** How long a stop waits for requests in flight (a parked long-poll ends at once when its connection closes). */
const SHUTDOWN_GRACE_MS = 10_000;

/** Whether `url` (a request target: path and query) belongs to the worker-facing APIs. */
function isWorkerApiPath(url: string): boolean {
  const pathname = url.split("?", 1)[0]!;
  return pathname.startsWith("/api/v1/") || pathname === "/api/v1" || pathname.startsWith("/conductor/api/") || pathname.startsWith(WEBHOOK_PATH_PREFIX);
}

function serveWorkerApi(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? "";
  return serveApi(req, res, (request) =>
    url.startsWith("/conductor/api/")
      ? answerConductorRequest(() => conductorDepsOf(getWebContext()), request, CONDUCTOR_ROUTES)
      : url.startsWith(WEBHOOK_PATH_PREFIX)
        ? answerWebhookCall(() => webhookDepsOf(getWebContext()), request)
        : answerRestRequest(() => restDepsOf(getWebContext()), request, ROUTES),
  );
}

async function main(): Promise<void> {
  // Until the server is up, a supervisor gone means nothing to finish: exit. Then the ordinary stop (below).
  let onSupervisorGone = (): void => process.exit(0);
  stopWhenSupervisorGone(() => onSupervisorGone());
  const port = Number(process.env.PORT ?? "3000");
  const hostname = process.env.HOST ?? "0.0.0.0";
  // As `next start` does, before Next and React load: they pick their production builds by it.
  Object.assign(process.env, { NODE_ENV: "production" });
  const { default: next } = await import("next");
  const app = next({ dev: false, dir: PROJECT_ROOT, hostname, port });
  await app.prepare();
  const handleWithNext = app.getRequestHandler();

  const server = createServer((req, res) => {
    if (isWorkerApiPath(req.url ?? "/")) void serveWorkerApi(req, res);
    else void handleWithNext(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => resolve());
  });
  // Listen from the start rather than at the first long poll: the API-key cache is used only while it hears changes.
  getWebContext().notifier();
  console.log(`web ready on http://${hostname}:${port}`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const forced = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(forced);
    await app.close().catch(() => undefined);
    await closeWebContext().catch(() => undefined);
    process.exit(0);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => void stop());
  onSupervisorGone = () => void stop();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
