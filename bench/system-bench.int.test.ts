import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The CI smoke of `npm run bench`: a few seconds of it, end to end —
 * embedded Postgres, the REST handlers (--web node: no `next build` in CI),
 * the sidecar, two worker processes, and the bare queue it is set against —
 * asserting only that it completes, prints its tables and writes its files.
 * Never a timing: the figures move with whatever else the machine runs.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "nf-bench-smoke-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the system bench", () => {
  it("runs a short open-loop point, a closed loop and a small large workflow, and prints the figures", async () => {
    const out = path.join(scratch, "smoke");
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of ["DATABASE_URL", "NODE_FLOW_SECRET", "NODE_FLOW_ROLES", "PORT"]) delete env[key];
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "bench/system-bench.ts", "--web", "node", "--workers", "2", "--rates", "10", "--duration", "2", "--closed", "2", "--in-flight", "4", "--large", "200", "--bare-queue", "2", "--out", out],
        { env, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    expect(run.stdout).toMatch(/\| open 10\/s \|/);
    expect(run.stdout).toMatch(/\| closed, 4 in flight \|/);
    expect(run.stdout).toMatch(/0 lost, 0 duplicated/);
    // The migrator reads "SchemaMigrations" whole, so the section is never empty.
    expect(run.stdout).toMatch(/## Tables read by sequential scans[^]*\n\| \w+ \| \d+ \| \d+ \|/);
    expect(run.stdout).toMatch(/## Large workflow: \d+ task rows/);
    // The floor ran, and the closed loop is set against it (same workers, same in-flight count).
    for (const completion of ["with NOTIFY", "without NOTIFY"]) {
      expect(run.stdout).toMatch(new RegExp(`## The floor: a bare queue on the same Postgres[^]*\\n\\| ${completion} \\| \\d+\\.\\d \\| \\d+\\.\\d \\| \\d+\\.\\d\\d \\/ \\d+\\.\\d\\d \\| \\d+\\.\\d \\(\\d+%\\) \\|`));
    }
    expect(existsSync(`${out}.md`)).toBe(true);
    const results = JSON.parse(readFileSync(`${out}.json`, "utf8")) as {
      points: unknown[];
      completions: { lost: number; duplicated: number };
      floor: { notify: boolean; workers: number; inFlight: number; jobs: number }[];
    };
    expect(results.points).toHaveLength(2);
    expect(results.floor.map(({ notify, workers, inFlight }) => ({ notify, workers, inFlight }))).toEqual([
      { notify: true, workers: 2, inFlight: 4 },
      { notify: false, workers: 2, inFlight: 4 },
    ]);
    for (const bare of results.floor) expect(bare.jobs).toBeGreaterThan(0);
    expect(results.completions).toMatchObject({ lost: 0, duplicated: 0 });
  }, 300_000);
});
