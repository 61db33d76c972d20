/**
 * `npm run bench -- --web node`: the REST API (the same route table and dispatcher
 * the web process serves) alone on a bare node:http server, in a process of
 * its own, instead of server/web/main.ts. For the CI smoke run, which must
 * not spend minutes on a `next build`. The default (`--web next`) is the real
 * web process.
 *
 * Prints `listening on <port>` once it answers; the parent reads the port from it.
 */
import path from "node:path";
import { createDb } from "../db/pool";
import { FilesystemBlobStore } from "../server/lib/blob-store";
import { apiKeyCache } from "../server/auth/api-key-cache";
import { CREDENTIALS_CHANNEL, Notifier, TASKS_CHANNEL } from "../server/lib/notifier";
import type { RestDeps } from "../server/rest/define-route";
import { serverAuth } from "../server/rest/rest-deps";
import { sealingKeysOf } from "../server/secrets/secrets";
import { serveRest } from "../server/rest/testing/serve-rest";

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const dataDir = process.env.NODE_FLOW_DATA_DIR;
  if (!url || !dataDir) {
    console.error("rest-server.ts is started by `npm run bench -- --web node`.");
    process.exit(2);
  }
  const db = createDb(url, { max: Number(process.env.NODE_FLOW_DB_POOL_SIZE ?? "10"), applicationName: "node-flow-web" });
  const notifier = new Notifier({
    connectionString: url,
    applicationName: "node-flow-web-notifier",
    channels: [TASKS_CHANNEL, CREDENTIALS_CHANNEL],
  });
  apiKeyCache.attach(notifier);
  void notifier.start();
  const deps: RestDeps = {
    db,
    blobs: new FilesystemBlobStore({ root: path.join(dataDir, "blobs") }),
    notifier: () => notifier,
    auth: serverAuth,
    sealingKeys: sealingKeysOf({ secret: "s".repeat(64), previousSecrets: [] }),
    logger: { info: () => undefined, warn: (fields, message) => console.warn(message, JSON.stringify(fields)), error: (fields, message) => console.error(message, JSON.stringify(fields)) },
  };
  const server = await serveRest(deps);
  const stop = async () => {
    await server.close().catch(() => undefined);
    await notifier.close();
    await db.destroy();
    process.exit(0);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => void stop());
  console.log(`listening on ${new URL(server.baseUrl).port}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
