import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { createDb } from "../db/pool";
import type { Db } from "../db/pool";
import { findFreePort } from "../db/embedded-postgres";
import { buildRuntime, runtimeBuildDecision } from "../scripts/build-runtime";
import { createApiKey } from "../server/auth/api-keys";
import { entryArgs } from "../server/lib/runtime-entry";
import { findNamespaceByName } from "../server/store/namespaces";
import { childOf, postmasterPid } from "./processes";

/**
 * node-flow the way a user runs it: `nf start` on its embedded Postgres 18, in
 * a data directory of its own under .test-data/, on a free port — the real
 * supervisor, web process, sidecar and Postgres, as separate processes the
 * fault suite can kill one by one. Compiled, as `npm start` runs it: dist/ is
 * built first when stale, and nf runs dist/cli/nf.js (its children then run
 * dist/server/web/main.js and dist/server/sidecar/main.js).
 */
export interface NodeFlowUnderTest {
  baseUrl: string;
  port: number;
  apiKey: string;
  /** The node_flow database, over TCP on loopback, for the checks. */
  db: Db;
  postgresDir: string;
  /** Everything `nf start` printed so far, children's lines included. */
  output(): string[];
  /** Resolves when `nf start` has printed a line matching `pattern` after `from` (a line index), with that line's index. */
  waitForLine(pattern: RegExp, options?: { from?: number; timeoutMs?: number }): Promise<number>;
  webPid(): number | undefined;
  sidecarPid(): number | undefined;
  postmasterPid(): number | undefined;
  /** Ctrl-C, then waits for `nf start` to exit; returns its exit code. */
  stop(): Promise<number | null>;
}

const ROOT = path.resolve(import.meta.dirname, "..");

export async function startNodeFlow(): Promise<NodeFlowUnderTest> {
  const dataDir = path.join(ROOT, ".test-data", `faults-${process.pid}-${randomBytes(3).toString("hex")}`);
  mkdirSync(dataDir, { recursive: true });
  const port = await findFreePort();
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  if (runtimeBuildDecision(ROOT).needed) await buildRuntime({ root: ROOT });
  const child: ChildProcess = spawn(process.execPath, [...entryArgs("cli/nf.ts", true), "start", "--port", String(port)], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_FLOW_DATA_DIR: dataDir,
      // Two of these at once on one machine (or a developer's own npm start) must not fight over the port.
      NODE_FLOW_METRICS_PORT: "0",
      HOST: "127.0.0.1",
    } as Record<string, string | undefined> as NodeJS.ProcessEnv,
  });
  for (const stream of [child.stdout, child.stderr]) {
    let pending = "";
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      const parts = (pending + chunk).split("\n");
      pending = parts.pop() ?? "";
      lines.push(...parts);
      for (const listener of listeners) listener();
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

  const waitForLine = (pattern: RegExp, { from = 0, timeoutMs = 60_000 } = {}) =>
    new Promise<number>((resolve, reject) => {
      const check = () => {
        const index = lines.findIndex((line, i) => i >= from && pattern.test(line));
        if (index < 0) return;
        done();
        resolve(index);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`nf start printed no line matching ${pattern} within ${timeoutMs / 1000} s. Its last lines:\n${lines.slice(-40).join("\n")}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      void exited.then((code) => {
        if (!listeners.has(check)) return;
        done();
        reject(new Error(`nf start exited (code ${code}) before printing ${pattern}. Its last lines:\n${lines.slice(-40).join("\n")}`));
      });
      check();
    });

  const nfPid = child.pid!;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill("SIGINT");
    const forced = setTimeout(() => {
      try {
        process.kill(-nfPid, "SIGKILL");
      } catch {
        // gone
      }
    }, 45_000);
    const code = await exited;
    clearTimeout(forced);
    return code;
  };

  try {
    // The first start may build the web app.
    await waitForLine(/node-flow is running/, { timeoutMs: 600_000 });
  } catch (error) {
    await stop();
    throw error;
  }
  const state = JSON.parse(readFileSync(path.join(dataDir, "embedded.json"), "utf8")) as { password: string; port: number };
  const db = createDb(`postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/node_flow`, { max: 4, applicationName: "node-flow-fault-suite" });
  const namespace = await findNamespaceByName(db, "default");
  if (!namespace) throw new Error("the default namespace is missing");
  const { key } = await createApiKey(db, { namespaceId: namespace.id, name: "fault suite", scopes: ["worker", "admin"], createdBy: "fault suite" });
  const postgresDir = path.join(dataDir, "postgres");

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    apiKey: key,
    db,
    postgresDir,
    output: () => [...lines],
    waitForLine,
    webPid: () => childOf(nfPid, "web/main")?.pid,
    sidecarPid: () => childOf(nfPid, "sidecar/main")?.pid,
    postmasterPid: () => postmasterPid(postgresDir),
    stop: async () => {
      await db.destroy().catch(() => undefined);
      const code = await stop();
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
