import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(path.join(tmpdir(), "nf-supervisor-watch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts server/testing/supervised-child.ts; resolves once it has written its first line. */
async function startChild(name: string, ipc: boolean) {
  const report = path.join(dir, name);
  const child = spawn(process.execPath, ["--import", "tsx", "server/testing/supervised-child.ts"], {
    env: { ...process.env, SUPERVISED_CHILD_REPORT: report },
    stdio: ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const [stdout, stderr] = [child.stdout!, child.stderr!];
  await new Promise<void>((resolve, reject) => {
    stderr.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`the child exited with ${code} before writing anything`)));
  });
  return { child, stdout, stderr, exited, reason: () => readFileSync(report, "utf8") };
}

/** The child's exit code, or "still running" after `ms`: a child spinning on its broken pipe never exits. */
const within = (exited: Promise<number | null>, ms: number) =>
  Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve("still running"), ms))]);

describe("stopWhenSupervisorGone", () => {
  it("stops the process when its IPC channel to whoever started it closes", async () => {
    const { child, exited, reason } = await startChild("ipc", true);
    try {
      child.disconnect();
      expect(await within(exited, 5_000)).toBe(0);
      expect(reason()).toBe("the process that started it has gone away");
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("stops the process when nobody reads its output, instead of spinning on the failed writes", async () => {
    const { child, stdout, stderr, exited, reason } = await startChild("pipe", false);
    try {
      stdout.destroy();
      stderr.destroy();
      expect(await within(exited, 5_000)).toBe(0);
      expect(reason()).toBe("nobody reads its output any more");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
