import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

// The package's async-exit-hook once turned every natural exit into exit 0 — a
// failing test run passed CI. A process that used the launcher must keep its own
// exit code, and must not crash on the way out.
it("a process that started and stopped an embedded Postgres keeps its exit code", () => {
  const dir = mkdtempSync(path.join(process.cwd(), ".test-data", "exit-code-"));
  // mkdtemp makes it 0700; as root, Postgres runs as the postgres user and must enter it.
  chmodSync(dir, 0o755);
  try {
    const script = `
      import { startEmbeddedPostgres } from "./db/embedded-postgres.ts";
      const pg = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(path.join(dir, "pg"))}, persistent: false });
      await pg.stop();
      process.exitCode = 3;
    `;
    const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 60_000 });
    expect(result.stderr).not.toMatch(/TypeError/);
    expect(result.status).toBe(3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
