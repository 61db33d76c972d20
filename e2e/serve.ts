/**
 * Boots the real app for Playwright: an embedded Postgres 18 in a throwaway
 * data directory, migrated, then the production web process (server/web/main.ts) and the
 * worker sidecar against it. Playwright's webServer runs this and sends SIGTERM when the run ends.
 *
 *   npx tsx e2e/serve.ts            # builds first (what `npx playwright test` does)
 *   E2E_SKIP_BUILD=1 npx tsx e2e/serve.ts   # reuse the existing .next build
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../db/embedded-postgres";
import type { RunningEmbeddedPostgres } from "../db/embedded-postgres";
import { migrate } from "../db/migrator";
import { createDb } from "../db/pool";
import { E2E_PORT, e2eStatePath, ownerStatePath } from "./e2e-state";

const NEXT_BIN = path.join(process.cwd(), "node_modules", "next", "dist", "bin", "next");
const DATABASE = "nodeflow_e2e";

function log(message: string): void {
  process.stderr.write(`[e2e/serve] ${message}\n`);
}

function build(): void {
  // Another process in this checkout (`npm start`, an editor task) may be building
  // .next right now; next refuses a second build rather than waiting for it.
  for (let attempt = 1; ; attempt++) {
    log(attempt === 1 ? "next build …" : `next build, attempt ${attempt} …`);
    // Run next's own entry with node, not through npx: npx leaves next's child alive when it is killed.
    const result = spawnSync(process.execPath, [NEXT_BIN, "build"], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
    process.stderr.write(result.stderr);
    if (result.status === 0) return;
    if (attempt < 6 && result.stderr.includes("Another next build process is already running")) {
      spawnSync("sleep", ["10"]);
      continue;
    }
    throw new Error(`next build failed (exit ${result.status ?? result.signal ?? "?"})`);
  }
}

async function createDatabase(adminUrl: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${DATABASE}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

/** Stops a child and everything it forked (next may fork workers of its own), forcing it after 5 s. */
async function stopGroup(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  process.kill(-pid, "SIGTERM");
  const forced = setTimeout(() => process.kill(-pid, "SIGKILL"), 5000);
  await exited;
  clearTimeout(forced);
}

async function main(): Promise<void> {
  if (process.env.E2E_SKIP_BUILD !== "1") build();

  const dataDir = path.join(process.cwd(), ".test-data", `e2e-pg-${process.pid}-${randomBytes(3).toString("hex")}`);
  // Beside Postgres's directory, not inside it: initdb wants its own to itself.
  const appDataDir = `${dataDir}-app`;
  const statePath = e2eStatePath(E2E_PORT);
  mkdirSync(path.dirname(dataDir), { recursive: true });

  let postgres: RunningEmbeddedPostgres | undefined;
  let server: ChildProcess | undefined;
  let sidecar: ChildProcess | undefined;
  let stopping = false;

  const stop = async (code: number): Promise<never> => {
    if (stopping) return new Promise<never>(() => undefined);
    stopping = true;
    await Promise.all([server, sidecar].map((child) => stopGroup(child)));
    try {
      await postgres?.stop();
    } catch (error) {
      log(`stopping Postgres failed: ${(error as Error).message}`);
    }
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(appDataDir, { recursive: true, force: true });
    rmSync(statePath, { force: true });
    // The owner's session belongs to this run's database, which is gone now.
    rmSync(ownerStatePath(E2E_PORT), { force: true });
    process.exit(code);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    // embedded-postgres installs async-exit-hook, whose own SIGTERM/SIGINT
    // handler stops Postgres and then calls process.exit, cutting this
    // shutdown off half-way (next left running, state file left behind).
    // This script owns the order: next first, then Postgres, then the files.
    process.removeAllListeners(signal);
    // `on`, not `once`: npx and tsx relay the signal Playwright sends to the
    // whole group, and a second SIGTERM must not kill the shutdown in progress.
    process.on(signal, () => void stop(0));
  }

  try {
    postgres = await startEmbeddedPostgres({ dataDir, persistent: false });
    const databaseUrl = await createDatabase(postgres.url);
    const db = createDb(databaseUrl, { max: 1, applicationName: "node-flow-e2e-migrate" });
    try {
      const applied = await migrate(db);
      log(`Postgres on port ${postgres.port}, ${applied.length} migrations applied`);
    } finally {
      await db.destroy();
    }

    const baseUrl = `http://127.0.0.1:${E2E_PORT}`;
    writeFileSync(statePath, JSON.stringify({ baseUrl, databaseUrl }, null, 2));

    // Web and sidecar share the secret and the data directory (the blob store of offloaded payloads).
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: "production",
      DATABASE_URL: databaseUrl,
      NODE_FLOW_SECRET: randomBytes(32).toString("hex"),
      NODE_FLOW_DATA_DIR: appDataDir,
      NODE_FLOW_METRICS_PORT: "0",
      PORT: String(E2E_PORT),
      HOST: "127.0.0.1",
    };
    // The production web process, as `nf start` runs it.
    server = spawn(process.execPath, ["--import", "tsx", "server/web/main.ts"], {
      detached: true,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...env, NODE_FLOW_ROLES: "api" },
    });
    // The sidecar runs the decider and the pollers, so runs started in the UI move on as they would in production.
    sidecar = spawn(process.execPath, ["--import", "tsx", "server/sidecar/main.ts"], {
      detached: true,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...env, NODE_FLOW_ROLES: "decider,poller", LOG_LEVEL: "warn" },
    });
    sidecar.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
      if (stopping) return;
      log(`the sidecar exited on its own (${signal ?? `code ${code}`})`);
      void stop(1);
    });
    server.once("exit", (code, signal) => {
      if (stopping) return;
      log(`the web process exited on its own (${signal ?? `code ${code}`})`);
      void stop(1);
    });
    log(`the web process on ${baseUrl}`);
  } catch (error) {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    await stop(1);
  }
}

void main();
