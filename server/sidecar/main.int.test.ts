import { spawn } from "node:child_process";
import type { ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createEmptyDatabase, useTestDatabase } from "../../db/testing/test-database";
import { FilesystemBlobStore } from "../lib/blob-store";
import { registerWorkflowDefinition } from "../definitions/register-workflow-definition";
import { startExecution } from "../executions/start-execution";

/** The sidecar as a real process: `node --import tsx server/sidecar/main.ts`, the way `nf start` and Docker run it. */
type Worker = ChildProcessByStdio<null, Readable, Readable>;

const SECRET = "c".repeat(64);

/**
 * `ipc`: with a channel to this process, as `nf start` opens one. `exited` is then the process's exit, not its
 * streams' close: 'close' also waits for the channel, which a test that disconnects has just let go of.
 */
function startWorker(env: Record<string, string>, options: { ipc?: boolean } = {}): { child: Worker; output: () => string; exited: Promise<number | null> } {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ["DATABASE_URL", "NODE_FLOW_SECRET", "NODE_FLOW_ROLES"]) delete base[key];
  const child = spawn(process.execPath, ["--import", "tsx", "server/sidecar/main.ts"], {
    env: { ...base, ...env },
    stdio: options.ipc === true ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  }) as Worker;
  let text = "";
  child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on(options.ipc === true ? "exit" : "close", (code: number | null) => resolve(code)));
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

  it("stops on its own when the process that started it goes away (its IPC channel closes)", async () => {
    const worker = startWorker({ DATABASE_URL: database.url, NODE_FLOW_SECRET: SECRET }, { ipc: true });
    try {
      await waitFor(() => worker.output().includes("worker ready"), 20_000);
      worker.child.disconnect(); // what `nf start` dying does, however it dies
      expect(await worker.exited).toBe(0);
      // Its last lines may still be on their way when the exit is seen.
      await waitFor(() => worker.output().includes("worker stopped"), 5_000);
      expect(worker.output()).toContain("its supervisor is gone");
    } finally {
      worker.child.kill("SIGKILL");
    }
  });

  it("drives a started workflow to completion through its decide loop, with the SWITCH script in QuickJS", async () => {
    const namespace = await database.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
    const registered = await registerWorkflowDefinition(database.db, {
      namespaceId: namespace.id,
      definition: {
        schemaVersion: 1,
        name: "sidecar_e2e",
        nodes: [
          { ref: "mark", type: "SET_VARIABLE", position: { x: 0, y: 0 }, input: { stage: "${workflow.input.stage}" } },
          {
            ref: "route",
            type: "SWITCH",
            position: { x: 0, y: 100 },
            evaluatorType: "javascript",
            expression: "$.stage == 'big' ? 'big' : 'small'",
            cases: ["big", "small"],
            input: { stage: "${workflow.input.stage}" },
          },
          { ref: "big_path", type: "NOOP", position: { x: -100, y: 200 } },
          { ref: "small_path", type: "NOOP", position: { x: 100, y: 200 } },
        ],
        edges: [
          { source: "mark", target: "route" },
          { source: "route", target: "big_path", case: "big" },
          { source: "route", target: "small_path", case: "small" },
        ],
        outputParameters: { stage: "${workflow.variables.stage}", chosen: "${route.output.evaluationResult[0]}" },
      },
    });
    expect(registered.ok).toBe(true);
    const blobs = new FilesystemBlobStore({ root: ".test-data/worker-int-blobs" });
    const started = await startExecution({ db: database.db, blobs }, { namespaceId: namespace.id, name: "sidecar_e2e", input: { stage: "big" } });
    if (!started.ok) throw new Error(`start failed: ${JSON.stringify(started)}`);

    const worker = startWorker({ DATABASE_URL: database.url, NODE_FLOW_SECRET: SECRET });
    try {
      const status = async () =>
        (await database.db.selectFrom("WorkflowExecutions").select(["status", "output"]).where("id", "=", started.workflowId).executeTakeFirstOrThrow());
      let row = await status();
      const deadline = Date.now() + 20_000;
      while (row.status === "RUNNING" && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        row = await status();
      }
      expect(row.status, worker.output()).toBe("COMPLETED");
      expect(row.output).toEqual({ stage: "big", chosen: "big" });
      const tasks = await database.db
        .selectFrom("TaskExecutions")
        .select(["refName", "status"])
        .where("workflowId", "=", started.workflowId)
        .orderBy("refName")
        .execute();
      expect(tasks).toEqual([
        { refName: "big_path", status: "COMPLETED" },
        { refName: "mark", status: "COMPLETED" },
        { refName: "route", status: "COMPLETED" },
        { refName: "small_path", status: "SKIPPED" },
      ]);
    } finally {
      worker.child.kill("SIGTERM");
      await worker.exited;
    }
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
