/**
 * What the browser benchmarks (`bench:canvas`, `bench:live`) share: building
 * the web app when its sources changed, a throwaway stack (Postgres 18 in a
 * temporary directory, migrated, an owner; the web process on a free port; the
 * worker sidecar when asked), Chromium launched from Debian's package, the
 * sign-in form, and an ordered teardown on Ctrl-C. Everything here is real:
 * the benchmarks measure the product as a person uses it.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium } from "@playwright/test";
import type { Browser, BrowserContext, Page } from "@playwright/test";
import type { Db } from "../db/pool";
import { migrate } from "../db/migrator";
import { createDb } from "../db/pool";
import { setupOwner } from "../server/auth/setup-owner";
import { findNamespaceByName } from "../server/store/namespaces";
import { embeddedPaths, prepareEmbeddedState, startEmbeddedProcess } from "../cli/embedded-database";
import { PROJECT_ROOT } from "../cli/start";
import { describeExit, spawnSupervised } from "../cli/supervised-process";
import type { SupervisedProcess } from "../cli/supervised-process";
import { isBuildNeeded } from "../cli/web-build";

export type Say = (line: string) => void;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The 1/5/15-minute load averages, for the report: these machines are shared and a busy one reads slow. */
export function loadText(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
}

/** "2 cores (CPU model), 8 GiB" */
export function machineText(): string {
  const cpus = os.cpus();
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? "unknown CPU"}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`;
}

/** A bad command line: the benchmark prints the message and its usage, and exits 2. */
export class UsageProblem extends Error {
  override name = "UsageProblem";
}

/** `--name`'s text as an integer from `min` to `max`, or a UsageProblem saying so. */
export function integerOption(name: string, text: string | undefined, min: number, max: number): number {
  const value = Number(text);
  if (!(Number.isInteger(value) && value >= min && value <= max)) throw new UsageProblem(`--${name} must be an integer from ${min} to ${max}, got "${text}"`);
  return value;
}

export class Interrupted extends Error {
  override name = "Interrupted";
}

/** Cleanups run in reverse order of registration, once, on success, failure or Ctrl-C. */
export class Stopper {
  private readonly cleanups: (() => unknown)[] = [];
  private running: Promise<void> | undefined;

  constructor(private readonly say: Say) {}

  get stopping(): boolean {
    return this.running !== undefined;
  }

  /** Adds a cleanup; the returned function removes it again (the thing already stopped). */
  add(cleanup: () => unknown): () => void {
    this.cleanups.push(cleanup);
    return () => {
      const at = this.cleanups.indexOf(cleanup);
      if (at >= 0) this.cleanups.splice(at, 1);
    };
  }

  throwIfStopping(): void {
    if (this.stopping) throw new Interrupted();
  }

  stopAll(): Promise<void> {
    return (this.running ??= (async () => {
      for (const cleanup of this.cleanups.reverse()) {
        try {
          await cleanup();
        } catch (error) {
          this.say(`cleanup: ${(error as Error).message}`);
        }
      }
    })());
  }

  /** SIGINT/SIGTERM/SIGHUP stop everything in order and exit 130. */
  onSignals(what: string): void {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      process.on(signal, () => {
        if (this.stopping) return;
        this.say(`${signal}: stopping ${what}…`);
        void this.stopAll().then(() => process.exit(130));
      });
    }
  }
}

/** Processes in this checkout running `next build` (another bench, `npm start`, the e2e's serve.ts). */
function runningNextBuilds(root: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const nextAt = argv.findIndex((arg) => /next(\/dist\/bin\/next)?$/.test(arg));
      // Its worker retitles itself "next-build (v16…)", overwriting argv.
      if (!argv[0]?.startsWith("next-build") && (nextAt < 0 || argv[nextAt + 1] !== "build")) continue;
      if (path.resolve(readlinkSync(`/proc/${entry}/cwd`)) === path.resolve(root)) pids.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

/**
 * Builds the app if its sources are newer than .next, the way `nf start`
 * decides it. `.next` is shared with whoever else works in this checkout
 * (the e2e builds into it too), and next refuses a second concurrent build,
 * so a running build is waited for and the decision taken again after it.
 */
export async function buildIfNeeded(skipBuild: boolean, stop: Stopper, say: Say): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let waited = false;
    for (let others = runningNextBuilds(PROJECT_ROOT); others.length > 0; others = runningNextBuilds(PROJECT_ROOT)) {
      if (!waited) say(`Another next build is running in this checkout (pid ${others.join(", ")}); waiting for it…`);
      waited = true;
      await sleep(2_000);
      stop.throwIfStopping();
    }
    if (skipBuild) {
      // Even so, a half-written .next (one being rebuilt) is waited for above: next start refuses it.
      say("--skip-build: using the existing .next build.");
      return;
    }
    const decision = isBuildNeeded(PROJECT_ROOT);
    if (!decision.needed) {
      say(waited ? "The build that ran meanwhile is up to date." : "The web app build is up to date.");
      return;
    }
    say(`Building the web app (a minute or two on two cores)… [${decision.reason}]`);
    const lines: string[] = [];
    // Built without database or secret, exactly as `nf start` and the Dockerfile build it.
    const { DATABASE_URL: _url, NODE_FLOW_SECRET: _secret, ...env } = process.env;
    const build = spawnSupervised({
      name: "build",
      command: process.execPath,
      args: ["node_modules/next/dist/bin/next", "build"],
      cwd: PROJECT_ROOT,
      env: { ...env, NEXT_TELEMETRY_DISABLED: "1" },
      onLine: (line) => lines.push(line),
      keepLines: 60,
    });
    const stopBuild = stop.add(() => build.stop(10_000));
    const status = await build.exited;
    stopBuild();
    stop.throwIfStopping();
    if (status.code === 0) return;
    if (attempt < 5 && lines.some((line) => line.includes("Another next build process is already running"))) continue;
    throw new Error(`next build ${describeExit(status)}:\n${build.lastLines().slice(-30).join("\n")}`);
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface LocalStackOptions {
  /** Names the scratch directory, the owner's email and the database connections. */
  label: string;
  namespace: string;
  /** Also start the worker sidecar (decider and pollers), so runs move on by themselves. */
  sidecar: boolean;
  /** Runs once the database is migrated and has its owner: register what the benchmark needs. */
  prepare(db: Db, namespaceId: string): Promise<void>;
}

export interface LocalStack {
  baseUrl: string;
  email: string;
  password: string;
  /** The throwaway database, for a benchmark that also acts on it directly. */
  databaseUrl: string;
}

/** Waits until `url` answers 200, or throws with the process's last lines. */
async function waitReady(url: string, process: SupervisedProcess, stop: Stopper, what: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    stop.throwIfStopping();
    if (process.hasExited()) throw new Error(`${what} exited before it was ready:\n${process.lastLines().join("\n")}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${what} did not answer ${url} within 90 s:\n${process.lastLines().join("\n")}`);
    await sleep(300);
  }
}

/** Postgres in a temp dir, migrated, an owner, what `prepare` registers, the web process on a free port (and the sidecar). */
export async function startLocalStack(options: LocalStackOptions, stop: Stopper, say: Say): Promise<LocalStack> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), `nf-${options.label}-`));
  // As root the embedded Postgres runs as "postgres", which must be able to enter the directory.
  chmodSync(scratch, 0o755);
  stop.add(() => rmSync(scratch, { recursive: true, force: true }));
  say(`Starting a throwaway Postgres 18 in ${scratch}…`);
  const paths = embeddedPaths(path.join(scratch, "data"));
  const { state } = prepareEmbeddedState(paths);
  const postgresLog: string[] = [];
  // Its own process group, so a Ctrl-C reaches only this process, which stops next before Postgres.
  const postgres = await startEmbeddedProcess(paths, state, (line) => {
    postgresLog.push(line);
    if (postgresLog.length > 20) postgresLog.shift();
  });
  stop.add(() => postgres.stop());
  stop.throwIfStopping();

  const email = `bench.owner@${options.label}.example`;
  const password = `${options.label} ${randomBytes(9).toString("hex")}`;
  const db = createDb(postgres.url, { max: 2, applicationName: `node-flow-${options.label}` });
  try {
    const applied = await migrate(db);
    say(`Postgres on port ${postgres.port}: ${applied.length} migrations applied.`);
    // What `nf bootstrap` does: the owner, in the namespace the migrations create.
    await setupOwner(db, { email, password, displayName: "Bench Owner", via: options.label });
    const namespace = await findNamespaceByName(db, options.namespace);
    if (!namespace) throw new Error(`There is no namespace "${options.namespace}" after migrating.`);
    await options.prepare(db, namespace.id);
  } finally {
    await db.destroy();
  }
  stop.throwIfStopping();

  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  // Web and sidecar share the secret and the data directory (the blob store), as `nf start` runs them.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    DATABASE_URL: postgres.url,
    NODE_FLOW_SECRET: randomBytes(32).toString("hex"),
    LOG_LEVEL: "warn",
    NODE_FLOW_DATA_DIR: path.join(scratch, "app-data"),
  };
  const keep = (lines: string[]) => (line: string) => {
    lines.push(line);
    if (lines.length > 40) lines.shift();
  };
  const server = spawnSupervised({
    name: "web",
    command: process.execPath,
    // The production web process, as `nf start` runs it.
    args: ["--import", "tsx", "server/web/main.ts"],
    cwd: PROJECT_ROOT,
    env: { ...env, NODE_FLOW_ROLES: "api", PORT: String(port), HOST: "127.0.0.1" },
    onLine: keep([]),
  });
  stop.add(() => server.stop(10_000));
  if (options.sidecar) {
    const sidecar = spawnSupervised({
      name: "sidecar",
      command: process.execPath,
      args: ["--import", "tsx", "server/sidecar/main.ts"],
      cwd: PROJECT_ROOT,
      env: { ...env, NODE_FLOW_ROLES: "decider,poller", NODE_FLOW_METRICS_PORT: "0" },
      onLine: keep([]),
    });
    stop.add(() => sidecar.stop(10_000));
    say(`Worker sidecar (decider, poller) pid ${sidecar.pid}.`);
  }
  say(`The web process on ${baseUrl} (pid ${server.pid})…`);
  await waitReady(`${baseUrl}/api/health/ready`, server, stop, "the web process");
  return { baseUrl, email, password, databaseUrl: postgres.url };
}

const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking", "--disable-component-update", "--no-first-run"];

/** Debian's Chromium (nothing is downloaded), closed by `stop`; a 1280×800 context ready for serialised page functions. */
export async function launchChromium(headed: boolean, stop: Stopper): Promise<{ browser: Browser; context: BrowserContext }> {
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
    headless: !headed,
    // The benchmark stops the browser itself, in order, on Ctrl-C.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  stop.add(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // tsx compiles with esbuild's keepNames, which wraps named functions in a `__name`
  // helper; the functions handed to the page are serialised, and the page has no such helper.
  await context.addInitScript({ content: "globalThis.__name ??= (fn) => fn;" });
  return { browser, context };
}

/** Signs in through the sign-in form, as a person does. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/sign-in`);
  await page.getByRole("textbox", { name: "Email" }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Workflows" }).waitFor({ timeout: 30_000 });
}

/** Runs `main` with a Stopper wired to the signals; exit 0 on success, 1 with the error otherwise. */
export function runBench(say: Say, what: string, main: (stop: Stopper) => Promise<void>): void {
  const stop = new Stopper(say);
  stop.onSignals(what);
  const run = async () => {
    try {
      await main(stop);
    } catch (error) {
      // Ctrl-C mid-step: the signal handler is stopping everything and exits.
      if (stop.stopping) return new Promise<void>(() => undefined);
      await stop.stopAll();
      throw error;
    }
    await stop.stopAll();
  };
  run().then(
    () => process.exit(0),
    (error: unknown) => {
      say(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exit(1);
    },
  );
}
