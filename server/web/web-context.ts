import path from "node:path";
import { createDb } from "@/db/pool";
import type { Db } from "@/db/pool";
import { FilesystemBlobStore } from "../lib/blob-store";
import type { BlobStore } from "../lib/blob-store";
import { loadConfig } from "../lib/config";
import { processMetrics } from "../lib/metrics";
import { configureTracing } from "../lib/tracing";
import type { Config } from "../lib/config";
import { createLogger } from "../lib/logger";
import type { Logger } from "../lib/logger";
import { apiKeyCache } from "../auth/api-key-cache";
import { CREDENTIALS_CHANNEL, INBOX_CHANNEL, Notifier, TASKS_CHANNEL, WORKFLOW_EVENTS_CHANNEL } from "../lib/notifier";

export interface WebContext {
  config: Config;
  db: Db;
  logger: Logger;
  /** Payloads over 256 KB: starts write them, reads resolve them (the sidecar uses the same directory). */
  blobs: BlobStore;
  /**
   * The process's one LISTEN connection, for long-polls and live streams;
   * connected on first use, null with NODE_FLOW_NOTIFICATIONS=off.
   */
  notifier: () => Notifier | null;
  /** Closes the notifier (if it was started) and the pool: for tests and shutdown. */
  close: () => Promise<void>;
}

// Cached on globalThis, not in a module variable: `next dev` re-evaluates
// modules on every edit, and each fresh module-level pool (or LISTEN
// connection) would stay open until Postgres ran out of slots.
const holder = globalThis as typeof globalThis & { __nodeFlowWebContext?: WebContext };

/**
 * The web process's config, pool, blob store and notifier, created on first
 * use. A config error is thrown to the caller and not cached, so fixing the
 * environment of a running dev server takes effect on the next request.
 */
export function getWebContext(): WebContext {
  if (!holder.__nodeFlowWebContext) {
    const config = loadConfig(process.env);
    const db = createDb(config.databaseUrl, { max: config.dbPoolSize, applicationName: "node-flow-web" });
    const logger = createLogger({ level: config.logLevel, base: { process: "web" } });
    const blobs = new FilesystemBlobStore({ root: path.join(config.dataDir, "blobs") });
    processMetrics().configureLabels({ workflows: config.metricsWorkflows, tasks: config.metricsTasks });
    // The web process hands workers their tasks' traceparent, and emits the span of a run an operator terminates.
    const tracer = configureTracing(config.tracing, logger);
    let notifier: Notifier | undefined;
    let detachKeyCache: (() => void) | undefined;
    holder.__nodeFlowWebContext = {
      config,
      db,
      logger,
      blobs,
      notifier: () => {
        if (!config.notifications) return null;
        if (notifier === undefined) {
          // Only what the web process waits for: task availability (long-polls)
          // workflow events (live streams), inbox changes (the inbox stream) and
          // credential changes (the API-key cache); never the deciders' wake-ups.
          notifier = new Notifier({
            connectionString: config.databaseUrl,
            applicationName: "node-flow-web-notifier",
            logger,
            channels: [TASKS_CHANNEL, WORKFLOW_EVENTS_CHANNEL, INBOX_CHANNEL, CREDENTIALS_CHANNEL],
          });
          detachKeyCache = apiKeyCache.attach(notifier);
          // Not awaited: a waiter works before the LISTEN is up (and if it
          // never comes up) on its own timeout, and start() retries by itself.
          void notifier.start();
        }
        return notifier;
      },
      close: async () => {
        detachKeyCache?.();
        await notifier?.close();
        await tracer?.shutdown();
        await db.destroy();
      },
    };
  }
  return holder.__nodeFlowWebContext;
}

/** Closes the web context if this process made one (shutdown); a no-op otherwise. */
export async function closeWebContext(): Promise<void> {
  const context = holder.__nodeFlowWebContext;
  if (context === undefined) return;
  holder.__nodeFlowWebContext = undefined;
  await context.close();
}
