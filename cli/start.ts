import net from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import { assertDatabaseCapabilities, DatabaseCapabilityError } from "../db/capabilities";
import { migrate, MigrationError } from "../db/migrator";
import { createDb } from "../db/pool";
import { ConfigError, loadConfig } from "../server/lib/config";
import type { Config, Role } from "../server/lib/config";
import { checkDatabaseConnection, databaseLocation, DatabaseConnectionError } from "../server/lib/database-connection";
import { entryArgs, PROJECT_ROOT } from "../server/lib/runtime-entry";
import { anyUserExists } from "../server/store/users";
import { resolveWorkerRoles } from "../server/sidecar/worker-roles";
import {
  clusterExists,
  displayPath,
  embeddedPaths,
  EmbeddedDatabaseError,
  prepareEmbeddedState,
  readOrCreateSecret,
  startEmbeddedProcess,
} from "./embedded-database";
import type { EmbeddedPostgresHandle } from "./embedded-database";
import { UsageError } from "./help";
import { RestartPolicy } from "./restart-policy";
import { describeExit, spawnSupervised } from "./supervised-process";
import type { SupervisedProcess } from "./supervised-process";
import { isBuildNeeded } from "./web-build";

/** An environment; NodeJS.ProcessEnv would demand the NODE_ENV that Next's types make required. */
type Env = Record<string, string | undefined>;

export { PROJECT_ROOT };

export interface StartArgs {
  dev: boolean;
  port: number | undefined;
}

export function parseStartArgs(argv: string[]): StartArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { dev: { type: "boolean", default: false }, port: { type: "string", short: "p" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port < 1 || port > 65535) throw new UsageError(`--port must be a port number (1-65535), not "${values.port}"`);
  }
  return { dev: values.dev ?? false, port };
}

export type StartPlan =
  | { mode: "external"; config: Config; workerRoles: Role[] }
  /** Embedded: databaseUrl and secret are placeholders until the data directory provides them. */
  | { mode: "embedded"; config: Config; workerRoles: Role[]; secretFromEnv: string | undefined };

// Stand-ins that pass validation so every *other* problem is reported before anything is created.
const PLACEHOLDER_URL = "postgres://embedded.invalid/node_flow";
const PLACEHOLDER_SECRET = "embedded-placeholder-secret-0000000000000000";

/**
 * Validates the whole environment up front. DATABASE_URL decides the mode; with
 * it, NODE_FLOW_SECRET is required (a default secret would sign sessions with a
 * value anyone can read in this file). An empty variable counts as unset, as in
 * `DATABASE_URL= npm start`.
 */
export function planStart(env: Env, args: StartArgs): StartPlan {
  const blankToUndefined = (value: string | undefined) => (value === undefined || value.trim() === "" ? undefined : value);
  const databaseUrl = blankToUndefined(env.DATABASE_URL);
  const secret = blankToUndefined(env.NODE_FLOW_SECRET);
  const effective: Env = {
    ...env,
    DATABASE_URL: databaseUrl ?? PLACEHOLDER_URL,
    NODE_FLOW_SECRET: databaseUrl ? secret : (secret ?? PLACEHOLDER_SECRET),
    ...(args.port !== undefined ? { PORT: String(args.port) } : {}),
  };
  const problems: string[] = [];
  let config: Config | undefined;
  let workerRoles: Role[] = [];
  try {
    config = loadConfig(effective);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  try {
    workerRoles = resolveWorkerRoles(blankToUndefined(env.NODE_FLOW_ROLES));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Unknown roles are already reported by loadConfig in the same words.
    for (const problem of error.problems) if (!problems.includes(problem)) problems.push(problem);
  }
  if (problems.length > 0 || !config) throw new ConfigError(problems);
  return databaseUrl ? { mode: "external", config, workerRoles } : { mode: "embedded", config, workerRoles, secretFromEnv: secret };
}

/** Where to probe and what URL to print: a wildcard bind is reached through loopback. */
export function localAddress(host: string): { probeHost: string; displayHost: string } {
  const wildcard = host === "0.0.0.0" || host === "::" || host === "[::]";
  const loopback = wildcard || host === "127.0.0.1" || host === "localhost" || host === "::1";
  return { probeHost: wildcard ? "127.0.0.1" : host, displayHost: loopback ? "localhost" : host };
}

/** Undefined when the web process could bind host:port, else why not (EADDRINUSE, EADDRNOTAVAIL…). */
async function cannotListen(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

const say = (message: string) => process.stdout.write(`[nf] ${message}\n`);

// Cursor and colour codes (next prints "\x1b[?25h" on exit) turn into stray
// prefixed lines once piped; lines that are empty without them are dropped.
// eslint-disable-next-line no-control-regex -- matching the escape character is the point
const ANSI_ESCAPE = /\x1b\[[0-9;?]*[A-Za-z]/g;
function prefixed(prefix: string): (line: string) => void {
  return (line) => {
    if (line.replace(ANSI_ESCAPE, "").trim() === "") return;
    process.stdout.write(`${prefix} ${line}\n`);
  };
}

const CHILD_STOP_TIMEOUT_MS = 15_000;
const READY_TIMEOUT_MS = { production: 90_000, dev: 240_000 };
// The worker logs this once its loops run (server/sidecar/main.ts); matched as text
// because its output may be pretty or JSON.
const WORKER_READY_MARKER = "worker ready";
/** Postgres's lines about a crash and its recovery (redo from the WAL), printed when the embedded one restarts. */
const CRASH_RECOVERY_LINE = /not properly shut down|automatic recovery|redo (starts|done)|database system is ready|interrupted/;

/** One `nf start` run: owns the children, restarts the ones that die, and the order they stop in. */
class StartSession {
  /** Each part's current process, by name: a restart replaces it. */
  private readonly children = new Map<string, SupervisedProcess>();
  private embedded: EmbeddedPostgresHandle | undefined;
  private stopping: Promise<void> | undefined;
  private exitCode = 0;

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  setEmbedded(handle: EmbeddedPostgresHandle): void {
    this.embedded = handle;
  }

  spawn(options: Parameters<typeof spawnSupervised>[0]): SupervisedProcess {
    const child = spawnSupervised(options);
    this.children.set(options.name, child);
    return child;
  }

  /** Stops everything (once, whoever asks first) and exits with the first caller's code. */
  async shutdown(code: number, lines: string[] = []): Promise<never> {
    if (!this.stopping) {
      this.exitCode = code;
      for (const line of lines) process.stderr.write(`${line}\n`);
      this.stopping = this.stopAll();
    }
    await this.stopping;
    process.exit(this.exitCode);
  }

  private async stopAll(): Promise<void> {
    const running = [...this.children.values()].filter((child) => !child.hasExited());
    if (running.length > 0) {
      say(`Stopping ${running.map((child) => child.name).join(" and ")}…`);
      // Web and worker stop together: the worker finishes its batch in hand, and
      // the database must outlive both, so it stops after.
      await Promise.all(running.map((child) => child.stop(CHILD_STOP_TIMEOUT_MS)));
    }
    if (this.embedded) {
      say("Stopping the embedded Postgres…");
      await this.embedded.stop();
    }
    if (running.length > 0 || this.embedded) say("Stopped.");
  }

  /** Set once node-flow answered ready; before that a death is a start-up failure, not something to restart. */
  ready = false;

  /**
   * Keeps a child running. Before node-flow is ready, its exit stops
   * everything (a start-up problem that a restart would only repeat). After,
   * it is logged with its last lines and the child restarted with backoff
   * (restart-policy.ts), while the others keep serving; a crash loop stops
   * everything and exits 1 with the reason.
   */
  supervise(options: Parameters<typeof spawnSupervised>[0]): void {
    const policy = new RestartPolicy();
    const watch = (child: SupervisedProcess) => {
      void child.exited.then(async (status) => {
        if (this.isStopping) return;
        const lastLines = child.lastLines().slice(-20).map((line) => `  ${line}`);
        if (!this.ready) {
          await this.shutdown(1, [`The ${child.name} process ${describeExit(status)} before node-flow was ready. Its last lines:`, ...lastLines]);
        }
        const decision = policy.exited();
        if (!decision.restart) {
          await this.shutdown(1, [`The ${child.name} process ${describeExit(status)}, and ${decision.reason}; stopping node-flow. Its last lines:`, ...lastLines]);
          return;
        }
        process.stderr.write([`The ${child.name} process ${describeExit(status)} unexpectedly; restarting it in ${formatDelay(decision.delayMs)}. Its last lines:`, ...lastLines, ""].join("\n"));
        await new Promise((resolve) => setTimeout(resolve, decision.delayMs));
        if (this.isStopping) return;
        policy.started();
        say(`Restarting the ${child.name} process…`);
        watch(this.spawn(options));
      });
    };
    watch(this.spawn(options));
  }

  /**
   * Keeps the embedded Postgres running: when it dies it is started again on
   * the same data directory (Postgres runs crash recovery, and a stale
   * postmaster.pid of a dead postmaster is its own to clear), on the same
   * port, so the web process's and the worker's pools simply reconnect.
   */
  superviseEmbedded(handle: EmbeddedPostgresHandle, restart: () => Promise<EmbeddedPostgresHandle>, recentLog: () => string[]): void {
    const policy = new RestartPolicy();
    const watch = (current: EmbeddedPostgresHandle) => {
      this.setEmbedded(current);
      void current.exited.then(async ({ code, stopped }) => {
        if (stopped || this.isStopping) return;
        const lastLines = recentLog().slice(-10).map((line) => `  [postgres] ${line}`);
        const decision = policy.exited();
        if (!decision.restart) {
          await this.shutdown(1, [`The embedded Postgres stopped (code ${code}), and ${decision.reason}; stopping node-flow. Its last lines:`, ...lastLines]);
          return;
        }
        process.stderr.write([`The embedded Postgres stopped unexpectedly (code ${code}); restarting it in ${formatDelay(decision.delayMs)}. Its last lines:`, ...lastLines, ""].join("\n"));
        for (;;) {
          await new Promise((resolve) => setTimeout(resolve, decision.delayMs));
          if (this.isStopping) return;
          try {
            const next = await restart();
            if (next.port !== current.port) {
              await next.stop();
              await this.shutdown(1, [`The embedded Postgres came back on port ${next.port}, not ${current.port} (the port was taken meanwhile); stopping node-flow. Start it again.`]);
            }
            policy.started();
            say(`The embedded Postgres is back on port ${next.port}; the web process and the worker reconnect on their own.`);
            watch(next);
            return;
          } catch (error) {
            const again = policy.exited();
            if (!again.restart) {
              await this.shutdown(1, [`The embedded Postgres would not start again (${(error as Error).message}), and ${again.reason}; stopping node-flow.`, ...recentLog().slice(-10).map((line) => `  [postgres] ${line}`)]);
              return;
            }
            say(`The embedded Postgres did not start (${(error as Error).message}); trying again in ${formatDelay(again.delayMs)}.`);
            decision.delayMs = again.delayMs;
          }
        }
      });
    };
    watch(handle);
  }
}

function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}

async function runStep<T>(session: StartSession, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (
      error instanceof DatabaseConnectionError ||
      error instanceof DatabaseCapabilityError ||
      error instanceof MigrationError ||
      error instanceof EmbeddedDatabaseError
    ) {
      return session.shutdown(1, [error.message]);
    }
    throw error;
  }
}

async function waitForBuild(session: StartSession, env: Env): Promise<void> {
  const decision = isBuildNeeded(PROJECT_ROOT);
  if (!decision.needed) {
    say("The web app build is up to date.");
    return;
  }
  // The reason reads as a state, not a bracketed tag: "[no build yet]" looked like an error to a new user.
  say(`Building the web app — ${decision.reason}; this takes a minute…`);
  const build = session.spawn({
    name: "build",
    command: process.execPath,
    args: ["node_modules/next/dist/bin/next", "build"],
    cwd: PROJECT_ROOT,
    env,
    onLine: prefixed("[build]"),
  });
  const status = await build.exited;
  if (session.isStopping) return;
  if (status.code !== 0) await session.shutdown(1, [`The web app build ${describeExit(status)}; see the [build] output above.`]);
}

/** Polls until the web app answers ready and the worker has logged ready; an early child exit is superviseExit's to report. */
async function waitUntilReady(session: StartSession, options: { url: string; timeoutMs: number; workerReady: Promise<void> }): Promise<void> {
  let workerIsReady = false;
  void options.workerReady.then(() => (workerIsReady = true));
  let webIsReady = false;
  let lastAnswer = "no answer yet";
  const deadline = Date.now() + options.timeoutMs;
  while (!session.isStopping) {
    if (!webIsReady) {
      try {
        const response = await fetch(options.url, { signal: AbortSignal.timeout(5_000) });
        lastAnswer = `HTTP ${response.status}`;
        await response.body?.cancel();
        webIsReady = response.status === 200;
      } catch (error) {
        // fetch wraps the socket error ("ECONNREFUSED") in a generic "fetch failed".
        const cause = (error as Error).cause;
        lastAnswer = cause instanceof Error ? cause.message : (error as Error).message;
      }
    }
    if (webIsReady && workerIsReady) {
      session.ready = true;
      return;
    }
    if (Date.now() > deadline) {
      const waitingFor = [!webIsReady && `the web app (${options.url}: ${lastAnswer})`, !workerIsReady && "the worker"].filter(Boolean);
      await session.shutdown(1, [`node-flow did not become ready within ${options.timeoutMs / 1000} s; still waiting for ${waitingFor.join(" and ")}.`]);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export async function runStart(argv: string[], env: Env): Promise<void> {
  const args = parseStartArgs(argv);
  let plan: StartPlan;
  try {
    plan = planStart(env, args);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
  const { config, workerRoles } = plan;
  const session = new StartSession();
  let firstSignalAt = 0;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (session.isStopping) {
        // One Ctrl-C arrives more than once: the terminal signals the whole
        // group, and npm and tsx each forward it again a few ms later.
        if (Date.now() - firstSignalAt > 2_000) say(`Still stopping (children are killed ${CHILD_STOP_TIMEOUT_MS / 1000} s after the first signal)…`);
        return;
      }
      firstSignalAt = Date.now();
      process.stdout.write("\n");
      void session.shutdown(0);
    });
  }

  // Checked before anything starts: finding out after a one-minute build is worse.
  const listenProblem = await cannotListen(config.port, config.host);
  if (listenProblem === "EADDRINUSE") {
    process.stderr.write(`Port ${config.port} is already in use on ${config.host}: stop whatever uses it, or pick another with \`npm start -- --port ${config.port + 1}\`.\n`);
    process.exit(1);
  } else if (listenProblem) {
    process.stderr.write(`Cannot listen on ${config.host}:${config.port} (${listenProblem}): check HOST and PORT.\n`);
    process.exit(1);
  }

  let databaseUrl: string;
  let secret: string;
  let connectionFix: string;
  if (plan.mode === "embedded") {
    const paths = embeddedPaths(config.dataDir);
    say(`DATABASE_URL is not set: using the embedded Postgres 18 in ${displayPath(paths.dataDir)}/.`);
    const prepared = await runStep(session, () => prepareEmbeddedState(paths));
    if (plan.secretFromEnv) {
      secret = plan.secretFromEnv;
      say("Using NODE_FLOW_SECRET from the environment.");
    } else {
      const stored = await runStep(session, () => readOrCreateSecret(paths));
      secret = stored.secret;
      say(stored.created ? `Generated a signing secret in ${displayPath(paths.secretFile)} (kept for later starts).` : `Using the signing secret in ${displayPath(paths.secretFile)}.`);
    }
    say(
      clusterExists(paths)
        ? `Starting the embedded Postgres 18 (${displayPath(paths.postgresDir)})…`
        : `Initialising a new Postgres 18 cluster in ${displayPath(paths.postgresDir)} (first start only)…`,
    );
    const postgresLog: string[] = [];
    const onPostgresLog = (line: string) => {
      postgresLog.push(line);
      if (postgresLog.length > 30) postgresLog.shift();
      // After a crash, what recovery did is worth seeing; the start-up chatter of a normal start is not.
      if (session.ready && CRASH_RECOVERY_LINE.test(line)) process.stdout.write(`[postgres] ${line}\n`);
    };
    const handle = await startEmbeddedProcess(paths, prepared.state, onPostgresLog).catch((error: unknown) =>
      session.shutdown(1, [(error as Error).message, ...postgresLog.map((line) => `  [postgres] ${line}`)]),
    );
    session.superviseEmbedded(handle, () => startEmbeddedProcess(paths, { ...prepared.state, port: handle.port }, onPostgresLog), () => [...postgresLog]);
    if (session.isStopping) await session.shutdown(0);
    say(`The embedded Postgres is listening on 127.0.0.1:${handle.port}${prepared.state.port && prepared.state.port !== handle.port ? ` (port ${prepared.state.port} was taken)` : ""}.`);
    databaseUrl = handle.url;
    connectionFix = `the embedded Postgres is not answering; see ${displayPath(path.join(paths.postgresDir, "log"))} or delete ${displayPath(paths.dataDir)} to start over`;
  } else {
    databaseUrl = config.databaseUrl;
    secret = config.secret;
    const where = databaseLocation(databaseUrl);
    say(`Using the database "${where.database}" at ${where.host}:${where.port} (DATABASE_URL).`);
    connectionFix = "check DATABASE_URL";
  }

  say("Checking the database…");
  await runStep(session, () => checkDatabaseConnection(databaseUrl, { fix: connectionFix }));
  const db = createDb(databaseUrl, { max: 2, applicationName: "node-flow-nf" });
  let ownerExists = true;
  try {
    const { serverVersionNum } = await runStep(session, () => assertDatabaseCapabilities(db));
    say(`PostgreSQL ${Math.floor(serverVersionNum / 10000)}.${serverVersionNum % 100} is fine. Applying migrations…`);
    const applied = await runStep(session, () => migrate(db, { onApply: (name) => say(`  applied ${name}`) }));
    say(applied.length === 0 ? "The database schema is up to date." : `Applied ${applied.length} migration${applied.length === 1 ? "" : "s"}.`);
    // The owner is the first user (server/auth/setup-owner.ts): while there is none, the banner points to /setup.
    ownerExists = await runStep(session, () => anyUserExists(db));
  } finally {
    await db.destroy();
  }
  if (session.isStopping) await session.shutdown(0);

  const childEnv: Env = { ...env, NEXT_TELEMETRY_DISABLED: "1" };
  // Built without database or secret, exactly as the Dockerfile builds it, so a
  // page that reads them at build time fails here and not only in CI.
  const { DATABASE_URL: _url, NODE_FLOW_SECRET: _secret, ...buildEnv } = childEnv;
  if (args.dev) say("Development mode: skipping the build; next dev compiles on demand.");
  else await waitForBuild(session, buildEnv);
  if (session.isStopping) await session.shutdown(0);

  say(`Starting the web process on port ${config.port} and the worker (roles ${workerRoles.join(",")})…`);
  session.supervise({
    name: "web",
    command: process.execPath,
    // Production: server/web/main.ts (Next for the console, the worker APIs on node:http; it says why), in
    // this process's form: dist/server/web/main.js under `npm start`, the source through tsx under `npm run nf`.
    // Development: next dev, whose App Router routes serve the worker APIs too.
    args: args.dev ? ["node_modules/next/dist/bin/next", "dev", "-p", String(config.port), "-H", config.host] : entryArgs("server/web/main.ts"),
    cwd: PROJECT_ROOT,
    env: { ...childEnv, DATABASE_URL: databaseUrl, NODE_FLOW_SECRET: secret, NODE_FLOW_ROLES: "api", PORT: String(config.port), HOST: config.host },
    onLine: prefixed("[web]"),
    // Our own entry point stops with this process (server/lib/supervisor-watch.ts); next dev would not listen.
    ipc: !args.dev,
  });
  let markWorkerReady: () => void = () => {};
  const printWorkerLine = prefixed("[worker]");
  const workerReady = new Promise<void>((resolve) => (markWorkerReady = resolve));
  session.supervise({
    name: "worker",
    command: process.execPath,
    args: args.dev ? ["node_modules/tsx/dist/cli.mjs", "watch", "--clear-screen=false", "server/sidecar/main.ts"] : entryArgs("server/sidecar/main.ts"),
    cwd: PROJECT_ROOT,
    env: { ...childEnv, DATABASE_URL: databaseUrl, NODE_FLOW_SECRET: secret, NODE_FLOW_ROLES: workerRoles.join(",") },
    ipc: !args.dev,
    onLine: (line) => {
      if (line.includes(WORKER_READY_MARKER)) markWorkerReady();
      printWorkerLine(line);
    },
  });

  const { probeHost, displayHost } = localAddress(config.host);
  await waitUntilReady(session, {
    url: `http://${probeHost.includes(":") ? `[${probeHost}]` : probeHost}:${config.port}/api/health/ready`,
    timeoutMs: args.dev ? READY_TIMEOUT_MS.dev : READY_TIMEOUT_MS.production,
    workerReady,
  });
  if (session.isStopping) return;
  say(readyBanner(`http://${displayHost}:${config.port}`, ownerExists));
}

/** The last line of a start: where to go — the owner's setup page on a fresh installation. */
export function readyBanner(baseUrl: string, ownerExists: boolean): string {
  if (ownerExists) return `node-flow is running at ${baseUrl}  (Ctrl-C stops it)`;
  return `node-flow is running: open ${baseUrl}/setup to create the owner account  (Ctrl-C stops it)`;
}
