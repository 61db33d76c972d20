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

describe("spawnSupervised", () => {
  it("keeps the last lines and reports the exit", async () => {
    const lines: string[] = [];
    const child = spawnSupervised({
      name: "echo",
      command: process.execPath,
      args: ["-e", "for (let i = 1; i <= 5; i++) console.log('line ' + i); console.error('oops'); process.exit(3)"],
      cwd: process.cwd(),
      env: process.env,
      onLine: (line) => lines.push(line),
      keepLines: 3,
    });
    const status = await child.exited;
    expect(describeExit(status)).toBe("exited with code 3");
    expect(lines).toHaveLength(6);
    expect(child.lastLines()).toHaveLength(3);
    expect(child.lastLines()).toContain("oops");
    expect(child.hasExited()).toBe(true);
  });

  it("opens an IPC channel only when asked (what lets the web process and the sidecar stop with their supervisor)", async () => {
    const connected = async (ipc: boolean) => {
      const lines: string[] = [];
      const child = spawnSupervised({
        name: "probe",
        command: process.execPath,
        args: ["-e", "console.log(String(process.connected === true)); process.exit(0)"],
        cwd: process.cwd(),
        env: process.env,
        onLine: (line) => lines.push(line),
        ipc,
      });
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
    const child = spawnSupervised({
      name: "tree",
      command: process.execPath,
      args: ["-e", script],
      cwd: process.cwd(),
      env: process.env,
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
    const child = spawnSupervised({
      name: "stubborn",
      command: process.execPath,
      args: ["-e", "process.on('SIGTERM', () => console.log('ignored')); console.log('up'); setInterval(() => {}, 1000)"],
      cwd: process.cwd(),
      env: process.env,
      onLine: () => undefined,
    });
    while (!child.lastLines().includes("up")) await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    await child.stop(500);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect((await child.exited).signal).toBe("SIGKILL");
    expect(child.lastLines()).toContain("ignored");
  });
});
