import { spawn } from "node:child_process";
import type { ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createEmptyDatabase, useTestDatabase } from "../db/testing/test-database";

/** The sidecar as a real process: `node --import tsx server/worker.ts`, the way `nf start` and Docker run it. */
type Worker = ChildProcessByStdio<null, Readable, Readable>;

const SECRET = "c".repeat(64);

function startWorker(env: Record<string, string>): { child: Worker; output: () => string; exited: Promise<number | null> } {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ["DATABASE_URL", "NODE_FLOW_SECRET", "NODE_FLOW_ROLES"]) delete base[key];
  const child = spawn(process.execPath, ["--import", "tsx", "server/worker.ts"], { env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, output: () => text, exited };
}

async function waitFor(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("the worker sidecar", () => {
  const database = useTestDatabase();

  it("logs ready on a migrated database and exits 0 within a few seconds of SIGTERM", async () => {
    const worker = startWorker({ DATABASE_URL: database.url, NODE_FLOW_SECRET: SECRET });
    try {
      await waitFor(() => worker.output().includes("worker ready roles=decider,poller"), 20_000);
    } catch {
      throw new Error(`no ready line; output:\n${worker.output()}`);
    }
    const signalledAt = Date.now();
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(5_000);
    expect(worker.output()).toContain("worker stopped");
  });

  it("refuses api alone, naming NODE_FLOW_ROLES", async () => {
    const worker = startWorker({ DATABASE_URL: database.url, NODE_FLOW_SECRET: SECRET, NODE_FLOW_ROLES: "api" });
    expect(await worker.exited).toBe(1);
    expect(worker.output().trim().split("\n")).toEqual([expect.stringMatching(/^NODE_FLOW_ROLES=api leaves the worker nothing to run/)]);
  });

  it("refuses an unknown role", async () => {
    const worker = startWorker({ DATABASE_URL: database.url, NODE_FLOW_SECRET: SECRET, NODE_FLOW_ROLES: "decider,bogus" });
    expect(await worker.exited).toBe(1);
    expect(worker.output().trim()).toMatch(/^NODE_FLOW_ROLES has unknown role "bogus"/);
  });

  it("refuses a database with pending migrations, pointing at npm run migrate", async () => {
    const empty = await createEmptyDatabase();
    try {
      const worker = startWorker({ DATABASE_URL: empty.url, NODE_FLOW_SECRET: SECRET });
      expect(await worker.exited).toBe(1);
      expect(worker.output().trim()).toMatch(/^The database is missing \d+ migrations? \(0001_.*\): run `npm run migrate` first\.$/);
    } finally {
      await empty.drop();
    }
  });
});
