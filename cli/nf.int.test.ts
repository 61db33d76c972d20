import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, useTestDatabase } from "../db/testing/test-database";

/**
 * The bad-input paths of `nf`, run for real as the operator would meet them:
 * each must end in exit 1 with one line that names the fix, before anything is
 * created, and never echo a password.
 */
interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const SECRET = "b".repeat(64);
const scratch = mkdtempSync(path.join(tmpdir(), "nf-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The environment without the caller's own database settings, plus `extra`. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_FLOW_DATA_DIR: path.join(scratch, "data"), LOG_LEVEL: "info" };
  for (const key of ["DATABASE_URL", "NODE_FLOW_SECRET", "NODE_FLOW_ROLES", "PORT"]) delete env[key];
  return { ...env, ...extra };
}

function nf(args: string[], extra: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "cli/nf.ts", ...args], { env: cleanEnv(extra), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "");

describe("nf start refuses bad configuration before it creates anything", () => {
  it("an unknown role: exit 1, one line naming NODE_FLOW_ROLES, no data directory", async () => {
    const run = await nf(["start"], { NODE_FLOW_ROLES: "decider,decidr" });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^NODE_FLOW_ROLES has unknown role "decidr"/)]);
    expect(existsSync(path.join(scratch, "data"))).toBe(false);
  });

  it("DATABASE_URL without NODE_FLOW_SECRET: exit 1, naming NODE_FLOW_SECRET", async () => {
    const run = await nf(["start"], { DATABASE_URL: "postgres://u:pw@127.0.0.1:5432/db" });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^NODE_FLOW_SECRET is not set/)]);
  });

  it("DATABASE_URL at a closed port: exit 1, one clear line, no password anywhere", async () => {
    const port = await closedPort();
    const run = await nf(["start", "--port", String(await closedPort())], {
      DATABASE_URL: `postgres://nf:s3cr3t-pw@127.0.0.1:${port}/nf`,
      NODE_FLOW_SECRET: SECRET,
    });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([`Cannot connect to the database at 127.0.0.1:${port} (ECONNREFUSED: nothing is listening there): check DATABASE_URL.`]);
    expect(run.stdout + run.stderr).not.toContain("s3cr3t-pw");
  });

  it("an unknown command prints usage and exits 2 (usage); help exits 0", async () => {
    const unknown = await nf(["strat"], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "strat"');
    expect(unknown.stderr).toContain("nf start [--dev] [--port N]");
    const help = await nf(["help"], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("nf migrate [--status]");
  });
});

describe("nf migrate against DATABASE_URL", () => {
  const migrated = useTestDatabase();

  it("--status lists every migration as applied on a migrated database", async () => {
    const run = await nf(["migrate", "--status"], { DATABASE_URL: migrated.url });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/applied {2}0001_/);
    expect(run.stdout).toMatch(/\d+ applied, 0 pending, 0 unknown\./);
  });

  it("applies every migration to an empty database, printing each, then has nothing to do", async () => {
    const empty = await createEmptyDatabase();
    try {
      const first = await nf(["migrate"], { DATABASE_URL: empty.url });
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/ {2}applied 0001_\w+\n/);
      expect(first.stdout).toMatch(/Applied \d+ migrations?\./);
      const pending = await nf(["migrate", "--status"], { DATABASE_URL: empty.url });
      expect(pending.stdout).toMatch(/, 0 pending,/);
      const second = await nf(["migrate"], { DATABASE_URL: empty.url });
      expect(second.stdout).toContain("Nothing to apply");
    } finally {
      await empty.drop();
    }
  });
});
