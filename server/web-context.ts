import { createDb } from "@/db/pool";
import type { Db } from "@/db/pool";
import { loadConfig } from "./config";
import type { Config } from "./config";

export interface WebContext {
  config: Config;
  db: Db;
}

// Cached on globalThis, not in a module variable: `next dev` re-evaluates
// modules on every edit, and each fresh module-level pool would keep its
// connections open until Postgres ran out of slots.
const holder = globalThis as typeof globalThis & { __nodeFlowWebContext?: WebContext };

/**
 * The web process's config and pool, created on first use. A config error is
 * thrown to the caller and not cached, so fixing the environment of a running
 * dev server takes effect on the next request.
 */
export function getWebContext(): WebContext {
  if (!holder.__nodeFlowWebContext) {
    const config = loadConfig(process.env);
    const db = createDb(config.databaseUrl, { max: config.dbPoolSize, applicationName: "node-flow-web" });
    holder.__nodeFlowWebContext = { config, db };
  }
  return holder.__nodeFlowWebContext;
}
