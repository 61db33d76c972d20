import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The CI smoke of `npm run bench`: a few seconds of it, end to end —
 * embedded Postgres, the REST handlers (--web node: no `next build` in CI),
 * the sidecar (and a second one for a second closed loop), two worker
 * processes, the graphile-worker peer interleaved with node-flow's points and
 * the bare queue it is set against — asserting only that it completes, prints
 * its tables and writes its files, with every figure there and above zero.
 * Never a timing: the figures move with whatever else the machine runs.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "nf-bench-smoke-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the system bench", () => {
  it("runs a short open-loop point, closed loops with 1 and 2 sidecars, the peer and a small large workflow, and prints the figures", async () => {
    const out = path.join(scratch, "smoke");
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of ["DATABASE_URL", "NODE_FLOW_SECRET", "NODE_FLOW_ROLES", "PORT"]) delete env[key];
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        // --smoke: --web node, 2 workers, a 10/s point and a 4-in-flight closed loop of 2 s each, 200 tasks, 2 s of floor.
        ["--import", "tsx", "bench/system-bench.ts", "--smoke", "--sidecars", "2", "--out", out],
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
    expect(run.stdout).toMatch(/\| closed, 4 in flight, 2 sidecars \|/);
    // The peer ran each point after node-flow's, and the ratios were printed.
    expect(run.stdout).toMatch(/## The peer: graphile-worker on the same Postgres, interleaved[^]*\n\| open 10\/s \| \d+\.\d \| \d+\/\d+ \|[^]*\n\| closed, 4 in flight \| \d+\.\d \|/);
    expect(run.stdout).toMatch(/node-flow ÷ graphile-worker[^]*\n\| \d+\.\d\d× \| \d+\.\d\d× \| \d+\.\d\d× \| \d+\.\d\d× \| \d+\.\d\d× \|/);
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
      points: { mode: string; sidecars: number }[];
      completions: { lost: number; duplicated: number };
      peer: {
        name: string;
        points: { mode: string; completed: number; completedPerSecond: number; walBytesPerRun: number; lost: number; duplicated: number }[];
        ratios: Record<"closedThroughput" | "walPerRun" | "cpuPerRun" | "endToEndP50" | "stepP50", number | null> & { latencyRate: number | null };
      };
      floor: { notify: boolean; workers: number; inFlight: number; jobs: number }[];
    };
    expect(results.points.map(({ mode, sidecars }) => ({ mode, sidecars }))).toEqual([
      { mode: "open", sidecars: 1 },
      { mode: "closed", sidecars: 1 },
      { mode: "closed", sidecars: 2 },
    ]);
    expect(results.peer.name).toBe("graphile-worker");
    expect(results.peer.points.map(({ mode }) => mode)).toEqual(["open", "closed"]);
    for (const p of results.peer.points) {
      expect(p).toMatchObject({ lost: 0, duplicated: 0 });
      expect(p.completed).toBeGreaterThan(0);
      expect(p.completedPerSecond).toBeGreaterThan(0);
      expect(p.walBytesPerRun).toBeGreaterThan(0);
    }
    expect(results.peer.ratios.latencyRate).toBe(10);
    for (const key of ["closedThroughput", "walPerRun", "cpuPerRun", "endToEndP50", "stepP50"] as const) {
      expect(results.peer.ratios[key], key).toBeGreaterThan(0);
    }
    expect(results.floor.map(({ notify, workers, inFlight }) => ({ notify, workers, inFlight }))).toEqual([
      { notify: true, workers: 2, inFlight: 4 },
      { notify: false, workers: 2, inFlight: 4 },
    ]);
    for (const bare of results.floor) expect(bare.jobs).toBeGreaterThan(0);
    expect(results.completions).toMatchObject({ lost: 0, duplicated: 0 });
  }, 300_000);
});
