import { spawn } from "node:child_process";
import type { ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";

/**
 * The sidecar as a real child process — `node --import tsx server/sidecar/main.ts`,
 * the way `nf start` and Docker run it — so a test can SIGKILL it mid-work and
 * start another, which no in-process runner could show.
 */

export interface SidecarOptions {
  databaseUrl: string;
  /** NODE_FLOW_ROLES; the worker's own default (decider,poller) when omitted. */
  roles?: string;
  /** NODE_FLOW_DATA_DIR: where its blob store lives; share it with the test's own FilesystemBlobStore. */
  dataDir: string;
  /** Anything else for its environment (PGOPTIONS, LOG_LEVEL, …). */
  env?: Record<string, string>;
}

export interface SidecarProcess {
  readonly pid: number;
  /** stdout and stderr so far (the last 256 KB): put it in assertion messages. */
  output(): string;
  /** Resolves at its "worker ready" line; rejects, with its output, if it exits first or takes longer than `timeoutMs`. */
  ready(timeoutMs?: number): Promise<void>;
  /** Its exit code, or null when a signal ended it. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL — no shutdown code runs, open transactions die with the connections — then waits for the exit. */
  kill(): Promise<void>;
}

const SECRET = "s".repeat(64);
const KEEP_OUTPUT = 256 * 1024;

export function startSidecar(options: SidecarOptions): SidecarProcess {
  const base: NodeJS.ProcessEnv = { ...process.env };
  // Whatever the developer's shell holds must not leak into the sidecar under test.
  for (const key of Object.keys(base)) if (key.startsWith("NODE_FLOW_") || key.startsWith("PG") || key === "DATABASE_URL") delete base[key];
  const env: NodeJS.ProcessEnv = {
    ...base,
    DATABASE_URL: options.databaseUrl,
    NODE_FLOW_SECRET: SECRET,
    NODE_FLOW_DATA_DIR: options.dataDir,
    ...(options.roles === undefined ? {} : { NODE_FLOW_ROLES: options.roles }),
    // No /metrics listener: test sidecars run side by side (and beside a dev's `npm start`).
    NODE_FLOW_METRICS_PORT: "0",
    ...options.env,
  };
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(process.execPath, ["--import", "tsx", "server/sidecar/main.ts"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  const append = (chunk: Buffer) => {
    text += chunk.toString();
    if (text.length > 2 * KEEP_OUTPUT) text = text.slice(-KEEP_OUTPUT);
  };
  child.stdout.on("data", append);
  child.stderr.on("data", append);
  let hasExited = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      hasExited = true;
      resolve(code);
    }),
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error("the sidecar did not spawn");

  return {
    pid,
    output: () => text,
    exited,
    async ready(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!text.includes("worker ready roles=")) {
        if (hasExited) throw new Error(`the sidecar exited before it was ready; output:\n${text}`);
        if (Date.now() > deadline) throw new Error(`the sidecar was not ready within ${timeoutMs} ms; output:\n${text}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      if (!hasExited) child.kill("SIGTERM");
      return exited;
    },
    async kill() {
      if (!hasExited) child.kill("SIGKILL");
      await exited;
    },
  };
}
