import { fork } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { embeddedConnectionUrl, embeddedSocketDir, foldersBlockingPostgresUser, postgresUserBlockedMessage } from "../db/embedded-postgres";
import { entryCommand, PROJECT_ROOT } from "../server/lib/runtime-entry";

/**
 * Bookkeeping for `npm start` without DATABASE_URL: one Postgres 18 cluster
 * under the data directory, whose password and last port live in
 * `embedded.json`, and the signing secret in `secret`. Both files are 0600 and
 * written before the thing they describe exists, so a crash half-way never
 * leaves a cluster whose password nobody knows.
 */
export const EMBEDDED_DATABASE_NAME = "node_flow";
const STATE_VERSION = 1;
const MIN_SECRET_LENGTH = 32;

export class EmbeddedDatabaseError extends Error {
  override name = "EmbeddedDatabaseError";
}

export interface EmbeddedPaths {
  dataDir: string;
  postgresDir: string;
  stateFile: string;
  secretFile: string;
}

export interface EmbeddedState {
  version: typeof STATE_VERSION;
  password: string;
  /** The port the cluster last listened on; preferred again on the next start. Null before the first start. */
  port: number | null;
}

export function embeddedPaths(dataDir: string): EmbeddedPaths {
  const root = path.resolve(dataDir);
  return {
    dataDir: root,
    postgresDir: path.join(root, "postgres"),
    stateFile: path.join(root, "embedded.json"),
    secretFile: path.join(root, "secret"),
  };
}

export function clusterExists(paths: EmbeddedPaths): boolean {
  return existsSync(path.join(paths.postgresDir, "PG_VERSION"));
}

/** Shown paths are relative to where the user stands: `.data/secret`, not `/home/…/.data/secret`. */
export function displayPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith("..") ? relative : file;
}

/**
 * Writes via a temporary file and rename, so a crash mid-write leaves the old
 * file or the new one, never half of one. `mode` on writeFileSync only applies
 * to new files, hence the chmod for a file that already existed with looser bits.
 */
function writePrivateFile(file: string, content: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

export function readEmbeddedState(paths: EmbeddedPaths): EmbeddedState | undefined {
  if (!existsSync(paths.stateFile)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(paths.stateFile, "utf8"));
  } catch (error) {
    throw new EmbeddedDatabaseError(
      `${displayPath(paths.stateFile)} is not valid JSON (${(error as Error).message}): restore it, or delete ${displayPath(paths.dataDir)} to start with an empty database.`,
    );
  }
  const candidate = parsed as Partial<EmbeddedState> | null;
  if (
    !candidate ||
    candidate.version !== STATE_VERSION ||
    typeof candidate.password !== "string" ||
    candidate.password.length === 0 ||
    !(candidate.port === null || (Number.isInteger(candidate.port) && (candidate.port ?? 0) > 0 && (candidate.port ?? 0) < 65536))
  ) {
    throw new EmbeddedDatabaseError(
      `${displayPath(paths.stateFile)} is not a node-flow embedded database file (version ${STATE_VERSION} with password and port): restore it, or delete ${displayPath(paths.dataDir)} to start with an empty database.`,
    );
  }
  return { version: STATE_VERSION, password: candidate.password, port: candidate.port ?? null };
}

export function writeEmbeddedState(paths: EmbeddedPaths, state: EmbeddedState): void {
  writePrivateFile(paths.stateFile, `${JSON.stringify(state, null, 2)}\n`);
}

/**
 * Returns the saved state, or creates it (with a fresh password) when there is
 * no cluster yet. A cluster without its state file cannot be opened, because
 * its superuser password was only ever written there: say so instead of
 * failing later with "password authentication failed".
 */
export function prepareEmbeddedState(paths: EmbeddedPaths): { state: EmbeddedState; created: boolean } {
  // Before anything is written, so a data directory Postgres cannot reach leaves nothing behind.
  assertReachableByPostgresUser(paths);
  const existing = readEmbeddedState(paths);
  if (existing) return { state: existing, created: false };
  if (clusterExists(paths)) {
    throw new EmbeddedDatabaseError(
      `${displayPath(paths.postgresDir)} holds a Postgres cluster but ${displayPath(paths.stateFile)} (its password) is missing: restore that file, or delete ${displayPath(paths.dataDir)} to start with an empty database.`,
    );
  }
  const state: EmbeddedState = { version: STATE_VERSION, password: randomBytes(24).toString("hex"), port: null };
  writeEmbeddedState(paths, state);
  return { state, created: true };
}

/** The signing secret: generated once, then reused so sessions and sealed secrets survive restarts. */
export function readOrCreateSecret(paths: EmbeddedPaths): { secret: string; created: boolean } {
  if (existsSync(paths.secretFile)) {
    const secret = readFileSync(paths.secretFile, "utf8").trim();
    if (secret.length < MIN_SECRET_LENGTH) {
      throw new EmbeddedDatabaseError(
        `${displayPath(paths.secretFile)} holds fewer than ${MIN_SECRET_LENGTH} characters: delete it to generate a new secret (existing sessions and sealed secrets stop working), or put the old one back.`,
      );
    }
    return { secret, created: false };
  }
  const secret = randomBytes(32).toString("hex");
  writePrivateFile(paths.secretFile, `${secret}\n`);
  return { secret, created: true };
}

export function embeddedAdminUrl(paths: EmbeddedPaths, password: string, port: number): string {
  return embeddedConnectionUrl({ password, port, database: "postgres", socketDir: embeddedSocketDir(paths.postgresDir, port) });
}

export function embeddedDatabaseUrl(paths: EmbeddedPaths, password: string, port: number): string {
  return embeddedConnectionUrl({ password, port, database: EMBEDDED_DATABASE_NAME, socketDir: embeddedSocketDir(paths.postgresDir, port) });
}

/**
 * node-flow gets its own database rather than the cluster's `postgres`
 * maintenance database, so tools that assume `postgres` is empty stay right.
 */
export async function ensureEmbeddedDatabase(adminUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [EMBEDDED_DATABASE_NAME]);
    if (found.rowCount) return false;
    await client.query(`CREATE DATABASE "${EMBEDDED_DATABASE_NAME}"`);
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Fails early, naming the folders, when the postgres user cannot reach the
 * cluster (see foldersBlockingPostgresUser); with the data-directory way out,
 * which only `nf` has.
 */
export function assertReachableByPostgresUser(paths: EmbeddedPaths): void {
  const blocked = foldersBlockingPostgresUser(paths.postgresDir);
  if (blocked.length > 0) {
    throw new EmbeddedDatabaseError(`${postgresUserBlockedMessage(blocked)}, or set NODE_FLOW_DATA_DIR to a directory it can reach.`);
  }
}

/** The first line of an embedded-postgres failure, which otherwise arrives with a stack and initdb's whole output. */
function embeddedStartFailure(error: unknown): EmbeddedDatabaseError {
  const message = (error instanceof Error ? error.message : String(error)).split("\n").find((line) => line.trim()) ?? "unknown error";
  return new EmbeddedDatabaseError(`The embedded Postgres did not start: ${message.trim()}`);
}

export interface EmbeddedPostgresHandle {
  port: number;
  url: string;
  /**
   * Resolves when Postgres is gone: `stopped` when stop() asked for it, else it
   * died (killed, crashed) and `nf start` restarts it.
   */
  exited: Promise<{ code: number | null; stopped: boolean }>;
  stop(): Promise<void>;
}

/**
 * Starts the cluster inside this process: for short jobs like `nf migrate`.
 * embedded-postgres is imported lazily because importing it installs
 * process-wide SIGINT/SIGTERM handlers that exit the process, which `nf start`
 * must not have (it stops its children first).
 */
export async function startEmbeddedInProcess(paths: EmbeddedPaths, state: EmbeddedState, onLog?: (line: string) => void): Promise<EmbeddedPostgresHandle> {
  assertReachableByPostgresUser(paths);
  const { startEmbeddedPostgres } = await import("../db/embedded-postgres");
  const running = await startEmbeddedPostgres({
    dataDir: paths.postgresDir,
    persistent: true,
    port: state.port ?? undefined,
    password: state.password,
    onLog,
  }).catch((error: unknown) => {
    throw embeddedStartFailure(error);
  });
  if (running.port !== state.port) writeEmbeddedState(paths, { ...state, port: running.port });
  await ensureEmbeddedDatabase(running.url);
  return {
    port: running.port,
    url: embeddedDatabaseUrl(paths, state.password, running.port),
    exited: running.exited.then(({ code, stopped }) => ({ code, stopped })),
    stop: () => running.stop(),
  };
}

/** Messages the Postgres host process sends over IPC. */
export type EmbeddedProcessMessage = { type: "ready"; port: number } | { type: "failed"; message: string };

/** embedded-postgres-process.ts, in this process's form (dist/cli/embedded-postgres-process.js when compiled). */
const HOST = entryCommand("cli/embedded-postgres-process.ts");
const STOP_TIMEOUT_MS = 15_000;

/**
 * Starts the cluster in its own process group (see embedded-postgres-process.ts
 * for why), waits until it accepts connections, and returns a handle whose
 * stop() shuts Postgres down and waits for it. `onLog` receives Postgres's own
 * output, which `nf start` keeps for when something fails.
 */
export async function startEmbeddedProcess(
  paths: EmbeddedPaths,
  state: EmbeddedState,
  onLog: (line: string) => void,
  /** Extra server settings (`npm run bench -- --pg-stat-statements` preloads the extension). */
  settings?: Record<string, string>,
): Promise<EmbeddedPostgresHandle> {
  assertReachableByPostgresUser(paths);
  const child: ChildProcess = fork(path.join(PROJECT_ROOT, HOST.script), [], {
    execArgv: HOST.execArgv,
    detached: true,
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    env: {
      ...process.env,
      NF_EMBEDDED_POSTGRES_DIR: paths.postgresDir,
      NF_EMBEDDED_POSTGRES_PORT: state.port === null ? "" : String(state.port),
      // Passed in the environment, not argv: argv is world-readable in `ps`.
      NF_EMBEDDED_POSTGRES_PASSWORD: state.password,
      ...(settings ? { NF_EMBEDDED_POSTGRES_SETTINGS: JSON.stringify(settings) } : {}),
    },
  });
  for (const stream of [child.stdout, child.stderr]) {
    let pending = "";
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) onLog(line);
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (raw) => {
      const message = raw as EmbeddedProcessMessage;
      if (message.type === "ready") resolve(message.port);
      else reject(new EmbeddedDatabaseError(message.message));
    });
    void exited.then((code) => reject(new EmbeddedDatabaseError(`The embedded Postgres process exited (code ${code}) before it was ready.`)));
  });

  if (port !== state.port) writeEmbeddedState(paths, { ...state, port });
  let stopping = false;
  const stop = async () => {
    stopping = true;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => {
      // Kill the group: Postgres's backends are the host's grandchildren.
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {
        // Already gone.
      }
    }, STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  try {
    await ensureEmbeddedDatabase(embeddedAdminUrl(paths, state.password, port));
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, url: embeddedDatabaseUrl(paths, state.password, port), exited: exited.then((code) => ({ code, stopped: stopping })), stop };
}
