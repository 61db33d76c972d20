import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../db/migrator";
import { createDb } from "../db/pool";
import { createEmptyDatabase } from "../db/testing/test-database";
import { registerWorkflowDefinition } from "../server/definitions/register-workflow-definition";
import { startExecution } from "../server/executions/start-execution";
import { FilesystemBlobStore } from "../server/lib/blob-store";
import { compiledPath, PROJECT_ROOT } from "../server/lib/runtime-entry";
import type { RuntimeEntry } from "../server/lib/runtime-entry";
import { buildRuntime, runtimeBuildDecision } from "./build-runtime";

/**
 * The compiled processes run: the bundle, built into a scratch folder of the
 * checkout (inside it, so its imports find node_modules and its code finds the
 * project root as dist/'s does), migrates an empty database as `nf migrate`
 * and drives a workflow as the sidecar — with nothing of tsx loaded.
 */
const SECRET = "d".repeat(64);
const outDir = path.join(".test-data", `runtime-build-${process.pid}-${randomBytes(3).toString("hex")}`);

interface Running {
  output: () => string;
  exited: Promise<number | null>;
  stop: () => void;
}

function runCompiled(entry: RuntimeEntry, args: string[], env: Record<string, string> = {}): Running {
  const base: NodeJS.ProcessEnv = { ...process.env };
  // Nothing of the caller's own settings, and no loader vitest or tsx may have put in NODE_OPTIONS.
  for (const key of Object.keys(base)) if (key.startsWith("NODE_FLOW_") || key.startsWith("PG") || key === "DATABASE_URL" || key === "NODE_OPTIONS") delete base[key];
  const child = spawn(process.execPath, ["--enable-source-maps", compiledPath(entry, outDir), ...args], {
    cwd: PROJECT_ROOT,
    env: { ...base, NODE_FLOW_DATA_DIR: path.join(outDir, "data"), NODE_FLOW_METRICS_PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { output: () => text, exited, stop: () => child.kill("SIGTERM") };
}

beforeAll(async () => {
  await buildRuntime({ outDir });
}, 60_000);
afterAll(() => rmSync(path.join(PROJECT_ROOT, outDir), { recursive: true, force: true }));

describe("the compiled runtime (scripts/build-runtime.ts)", () => {
  it("is up to date right after the build", () => {
    expect(runtimeBuildDecision(PROJECT_ROOT, outDir)).toEqual({ needed: false });
  });

  it("runs nf: its help, from a bundle whose subcommands load only when chosen", async () => {
    const run = runCompiled("cli/nf.ts", ["help"]);
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain("nf — run and operate node-flow");
  });

  it("migrates an empty database as nf migrate, then the compiled sidecar runs a workflow with a QuickJS SWITCH", async () => {
    const empty = await createEmptyDatabase();
    const db = createDb(empty.url, { max: 2 });
    let worker: Running | undefined;
    try {
      const migrate = runCompiled("cli/nf.ts", ["migrate"], { DATABASE_URL: empty.url, NODE_FLOW_SECRET: SECRET });
      expect(await migrate.exited, migrate.output()).toBe(0);
      expect(migrate.output()).toContain(`Applied ${loadMigrations().length} migrations.`);

      const namespace = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
      const registered = await registerWorkflowDefinition(db, {
        namespaceId: namespace.id,
        definition: {
          schemaVersion: 1,
          name: "compiled_runtime",
          nodes: [
            {
              ref: "route",
              type: "SWITCH",
              position: { x: 0, y: 0 },
              evaluatorType: "javascript",
              expression: "$.size > 10 ? 'big' : 'small'",
              cases: ["big", "small"],
              input: { size: "${workflow.input.size}" },
            },
            { ref: "big_path", type: "NOOP", position: { x: -100, y: 100 } },
            { ref: "small_path", type: "NOOP", position: { x: 100, y: 100 } },
          ],
          edges: [
            { source: "route", target: "big_path", case: "big" },
            { source: "route", target: "small_path", case: "small" },
          ],
          outputParameters: { chosen: "${route.output.evaluationResult[0]}" },
        },
      });
      expect(registered.ok).toBe(true);
      const blobs = new FilesystemBlobStore({ root: path.join(outDir, "blobs") });
      const started = await startExecution({ db, blobs }, { namespaceId: namespace.id, name: "compiled_runtime", input: { size: 42 } });
      if (!started.ok) throw new Error(`start failed: ${JSON.stringify(started)}`);

      worker = runCompiled("server/sidecar/main.ts", [], { DATABASE_URL: empty.url, NODE_FLOW_SECRET: SECRET });
      const status = () => db.selectFrom("WorkflowExecutions").select(["status", "output"]).where("id", "=", started.workflowId).executeTakeFirstOrThrow();
      let row = await status();
      const deadline = Date.now() + 20_000;
      while (row.status === "RUNNING" && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        row = await status();
      }
      expect(row.status, worker.output()).toBe("COMPLETED");
      expect(row.output).toEqual({ chosen: "big" });
      expect(worker.output()).toContain("worker ready");

      worker.stop();
      expect(await worker.exited, worker.output()).toBe(0);
      expect(worker.output()).toContain("worker stopped");
    } finally {
      worker?.stop();
      await db.destroy();
      await empty.drop();
    }
  });
});
