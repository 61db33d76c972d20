import { spawn } from "node:child_process";

/**
 * A child of `nf start` (build, web, worker) in its own process group, with its
 * output prefixed line by line and its last lines kept for the error report.
 *
 * Own group (`detached: true`) because `next start` and `tsx watch` fork
 * children of their own: signalling the direct child alone leaves `next-server`
 * running and the port taken. Stopping signals the whole group (`kill(-pid)`).
 * It also keeps a terminal Ctrl-C from reaching the children directly, so
 * `nf start` decides the order things stop in.
 */
/** An environment; NodeJS.ProcessEnv would demand the NODE_ENV that Next's types make required. */
type Env = Record<string, string | undefined>;

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SupervisedProcess {
  name: string;
  pid: number;
  /** Resolves when the direct child has exited. */
  exited: Promise<ExitStatus>;
  hasExited(): boolean;
  /** The last lines of output, oldest first. */
  lastLines(): string[];
  /** SIGTERM to the group, SIGKILL to whatever is left after `timeoutMs`. Resolves when the group is empty. */
  stop(timeoutMs: number): Promise<void>;
}

export interface SpawnSupervisedOptions {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: Env;
  /** Each complete output line (stdout and stderr), without the newline. */
  onLine: (line: string) => void;
  /** How many lines lastLines() keeps. Default 40. */
  keepLines?: number;
  /**
   * Open an IPC channel to the child, which closes when this process ends
   * however it ends: the web process and the sidecar stop when it does
   * (server/lib/supervisor-watch.ts), rather than live on in their own process
   * group. Never sent on.
   */
  ipc?: boolean;
}

/**
 * Splits a stream of chunks into lines, holding back a partial last line until
 * its newline (or `flush()`), so prefixes never land mid-line.
 */
export function lineSplitter(onLine: (line: string) => void): { push(chunk: string): void; flush(): void } {
  let pending = "";
  return {
    push(chunk) {
      const parts = (pending + chunk).split(/\r?\n/);
      pending = parts.pop() ?? "";
      for (const part of parts) onLine(part);
    },
    flush() {
      if (pending) onLine(pending);
      pending = "";
    },
  };
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    // EPERM means it exists but is not ours to signal; treat as alive so we do not claim it stopped.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function spawnSupervised(options: SpawnSupervisedOptions): SupervisedProcess {
  const keep = options.keepLines ?? 40;
  const recent: string[] = [];
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    // Next's types make NODE_ENV required on ProcessEnv; next sets it itself, so an env without it is right.
    env: options.env as NodeJS.ProcessEnv,
    detached: true,
    stdio: options.ipc === true ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) {
    // spawn() reports ENOENT asynchronously but leaves pid undefined synchronously.
    throw new Error(`Could not start ${options.name}: ${options.command} ${options.args.join(" ")}`);
  }
  const pid = child.pid;
  const record = (line: string) => {
    recent.push(line);
    if (recent.length > keep) recent.shift();
    options.onLine(line);
  };
  // Both piped above, with or without the channel.
  const splitters = [child.stdout!, child.stderr!].map((stream) => {
    const splitter = lineSplitter(record);
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => splitter.push(chunk));
    return splitter;
  });
  let exitStatus: ExitStatus | undefined;
  const exited = new Promise<ExitStatus>((resolve) => {
    let closed = false;
    // 'close' fires once the output pipes are drained, so the last lines are
    // complete; but a grandchild that inherited the pipes (next-server) can hold
    // them open after the child died, so 'exit' plus a short grace also counts.
    const finish = () => {
      if (closed) return;
      closed = true;
      for (const splitter of splitters) splitter.flush();
      resolve(exitStatus ?? { code: null, signal: null });
    };
    child.once("exit", (code, signal) => {
      exitStatus = { code, signal };
      setTimeout(finish, 500).unref();
    });
    child.once("close", (code, signal) => {
      exitStatus ??= { code, signal };
      finish();
    });
    child.once("error", (error) => {
      record(`${options.name} could not start: ${error.message}`);
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (timeoutMs: number) => {
    stopping ??= (async () => {
      signalGroup(pid, "SIGTERM");
      const deadline = Date.now() + timeoutMs;
      // The group outlives the direct child when grandchildren (next-server) linger; wait for all of it.
      while ((!exitStatus || groupAlive(pid)) && Date.now() < deadline) await sleep(100);
      if (groupAlive(pid)) {
        options.onLine(`did not stop within ${Math.round(timeoutMs / 1000)} s; killing it`);
        signalGroup(pid, "SIGKILL");
      }
      await exited;
    })();
    return stopping;
  };

  return {
    name: options.name,
    pid,
    exited,
    hasExited: () => exitStatus !== undefined,
    lastLines: () => [...recent],
    stop,
  };
}

export function describeExit(status: ExitStatus): string {
  return status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
}
