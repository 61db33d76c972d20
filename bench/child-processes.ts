/**
 * The worker processes `npm run bench` forks (its SDK workers, worker-process.ts, and its bare queue's,
 * bare-queue-worker.ts): TypeScript modules run with tsx, each telling its parent over IPC when it is ready,
 * answering requests, and stopping when asked.
 */
import { fork } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { PROJECT_ROOT } from "../cli/start";

/** Every such process's messages have a "type"; "ready" is the first. */
interface Message {
  type: string;
}

/**
 * Forks `bench/<module>` with tsx. `ready` resolves once it has said "ready" and rejects if it exits first; the child is
 * there at once, so a caller whose other children fail can still stop it.
 */
export function forkReady(module: string, options: { env: NodeJS.ProcessEnv; execArgv?: readonly string[]; name: string }): { child: ChildProcess; ready: Promise<void> } {
  const child = fork(path.join(PROJECT_ROOT, "bench", module), [], {
    execArgv: [...(options.execArgv ?? []), "--import", "tsx"],
    cwd: PROJECT_ROOT,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: options.env,
  });
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (raw: unknown) => {
      if ((raw as Message).type !== "ready") return;
      child.off("message", onMessage);
      resolve();
    };
    child.on("message", onMessage);
    child.once("exit", (code) => reject(new Error(`${options.name} exited (code ${code}) before it was ready`)));
  });
  return { child, ready };
}

/** Sends `request` and resolves with the child's next message of type `answer`. */
export function ask<M extends Message, T extends M["type"]>(child: ChildProcess, request: Message, answer: T): Promise<Extract<M, { type: T }>> {
  return new Promise((resolve) => {
    const onMessage = (raw: unknown) => {
      const message = raw as M;
      if (message.type !== answer) return;
      child.off("message", onMessage);
      resolve(message as Extract<M, { type: T }>);
    };
    child.on("message", onMessage);
    child.send(request);
  });
}

/** Asks each child still running to stop ({ type: "stop" }) and waits for them all; one that takes longer than `graceMs` is killed. */
export async function stopAll(children: readonly ChildProcess[], graceMs: number): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send({ type: "stop" });
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    }),
  );
}
