import { describe, expect, it } from "vitest";
import { describeExit, lineSplitter, spawnSupervised } from "./supervised-process";

describe("lineSplitter", () => {
  it("emits whole lines only, holding a partial one until its newline or flush", () => {
    const lines: string[] = [];
    const splitter = lineSplitter((line) => lines.push(line));
    splitter.push("one\ntw");
    expect(lines).toEqual(["one"]);
    splitter.push("o\r\nthree");
    expect(lines).toEqual(["one", "two"]);
    splitter.flush();
    expect(lines).toEqual(["one", "two", "three"]);
    splitter.flush();
    expect(lines).toHaveLength(3);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `node -e script`, supervised, with its lines collected. */
function spawnScript(name: string, script: string, options: { keepLines?: number; ipc?: boolean; onLine?: (line: string) => void } = {}) {
  const lines: string[] = [];
  const child = spawnSupervised({
    name,
    command: process.execPath,
    args: ["-e", script],
    cwd: process.cwd(),
    env: process.env,
    onLine: (line) => {
      lines.push(line);
      options.onLine?.(line);
    },
    ...(options.keepLines !== undefined ? { keepLines: options.keepLines } : {}),
    ...(options.ipc !== undefined ? { ipc: options.ipc } : {}),
  });
  return { child, lines };
}

describe("spawnSupervised", () => {
  it("keeps the last lines and reports the exit", async () => {
    const { child, lines } = spawnScript("echo", "for (let i = 1; i <= 5; i++) console.log('line ' + i); console.error('oops'); process.exit(3)", { keepLines: 3 });
    const status = await child.exited;
    expect(describeExit(status)).toBe("exited with code 3");
    expect(lines).toHaveLength(6);
    expect(child.lastLines()).toHaveLength(3);
    expect(child.lastLines()).toContain("oops");
    expect(child.hasExited()).toBe(true);
  });

  it("opens an IPC channel only when asked (what lets the web process and the sidecar stop with their supervisor)", async () => {
    const connected = async (ipc: boolean) => {
      const { child, lines } = spawnScript("probe", "console.log(String(process.connected === true)); process.exit(0)", { ipc });
      await child.exited;
      return lines;
    };
    expect(await connected(true)).toEqual(["true"]);
    expect(await connected(false)).toEqual(["false"]);
  });

  it("stops the whole process group, grandchildren included", async () => {
    // The child forks a grandchild that ignores nothing and prints its pid: the
    // shape of `next start` and its next-server.
    const script = `
      const { spawn } = require("node:child_process");
      const g = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
      console.log("grandchild " + g.pid);
      setInterval(() => {}, 1000);
    `;
    let grandchild = 0;
    const { child } = spawnScript("tree", script, {
      onLine: (line) => {
        const match = /grandchild (\d+)/.exec(line);
        if (match) grandchild = Number(match[1]);
      },
    });
    while (grandchild === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(isAlive(grandchild)).toBe(true);
    await child.stop(5_000);
    expect(isAlive(child.pid)).toBe(false);
    expect(isAlive(grandchild)).toBe(false);
  });

  it("SIGKILLs a group that ignores SIGTERM after the timeout", async () => {
    const { child } = spawnScript("stubborn", "process.on('SIGTERM', () => console.log('ignored')); console.log('up'); setInterval(() => {}, 1000)");
    while (!child.lastLines().includes("up")) await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    await child.stop(500);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect((await child.exited).signal).toBe("SIGKILL");
    expect(child.lastLines()).toContain("ignored");
  });
});
