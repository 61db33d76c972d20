import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compiledPath, entryArgs, entryCommand, PROJECT_ROOT, RUNS_COMPILED, RUNTIME_ENTRIES } from "./runtime-entry";

describe("runtime entries", () => {
  it("finds the checkout from the source, and knows it is not the bundle", () => {
    expect(RUNS_COMPILED).toBe(false);
    expect((JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { name: string }).name).toBe("node-flow");
  });

  it("lists source files that exist", () => {
    for (const entry of RUNTIME_ENTRIES) expect(existsSync(path.join(PROJECT_ROOT, entry)), entry).toBe(true);
  });

  it("puts each compiled entry at dist/<its source path>.js, so a process list still reads web/main and sidecar/main", () => {
    expect(compiledPath("server/web/main.ts")).toBe(path.join("dist", "server", "web", "main.js"));
    expect(compiledPath("cli/nf.ts", ".test-data/out")).toBe(path.join(".test-data", "out", "cli", "nf.js"));
  });

  it("runs a child the way its parent runs: the source through tsx, the bundle with source maps", () => {
    expect(entryArgs("server/sidecar/main.ts", false)).toEqual(["--import", "tsx", "server/sidecar/main.ts"]);
    expect(entryArgs("server/sidecar/main.ts", true)).toEqual(["--enable-source-maps", path.join("dist", "server", "sidecar", "main.js")]);
    expect(entryCommand("cli/embedded-postgres-process.ts")).toEqual({ execArgv: ["--import", "tsx"], script: "cli/embedded-postgres-process.ts" });
  });
});
