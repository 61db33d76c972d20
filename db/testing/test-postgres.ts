import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../embedded-postgres";
import { createDb } from "../pool";
import { migrate } from "../migrator";

export const TEMPLATE_DATABASE = "nf_template";

export interface TestPostgres {
  adminUrl: string;
  templateDatabase: string;
  stop(): Promise<void>;
}

export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const dir = path.join(process.cwd(), ".test-data", `pg-${process.pid}-${randomBytes(3).toString("hex")}`);
  mkdirSync(path.dirname(dir), { recursive: true });
  // A throwaway cluster: durability buys nothing here, and most of the suite's
  // time is CREATE/DROP DATABASE, which fsyncs every file without these.
  const server = await startEmbeddedPostgres({
    dataDir: dir,
    persistent: false,
    settings: { fsync: "off", synchronous_commit: "off", full_page_writes: "off" },
  });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${TEMPLATE_DATABASE}"`);
  await admin.end();
  const template = createDb(databaseUrl(server.url, TEMPLATE_DATABASE), { max: 1 });
  try {
    await migrate(template);
  } finally {
    // CREATE DATABASE … TEMPLATE refuses while anyone is connected to the template.
    await template.destroy();
  }
  return {
    adminUrl: server.url,
    templateDatabase: TEMPLATE_DATABASE,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
