import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RUNTIME_ENTRIES } from "../server/lib/runtime-entry";
import { runtimeBuildDecision } from "./build-runtime";

let root: string;
const BUILT_AT = 1_700_000_000_000;

function file(relative: string, mtimeMs: number): void {
  const full = path.join(root, relative);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, "");
  utimesSync(full, mtimeMs / 1000, mtimeMs / 1000);
}

function manifest(overrides: Record<string, unknown> = {}): void {
  const content = { version: 1, startedAtMs: BUILT_AT, entries: [...RUNTIME_ENTRIES], inputs: ["cli/nf.ts", "server/lib/config.ts"], outputs: ["dist/cli/nf.js", "dist/chunks/chunk-A.js"], ...overrides };
  mkdirSync(path.join(root, "dist"), { recursive: true });
  writeFileSync(path.join(root, "dist", "runtime-build.json"), JSON.stringify(content));
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), "nf-runtime-build-"));
  for (const source of ["cli/nf.ts", "server/lib/config.ts", "package.json", "tsconfig.json"]) file(source, BUILT_AT - 60_000);
  for (const output of ["dist/cli/nf.js", "dist/chunks/chunk-A.js"]) file(output, BUILT_AT + 1_000);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("whether npm start compiles the server again", () => {
  it("builds when there is no build", () => {
    expect(runtimeBuildDecision(root)).toEqual({ needed: true, reason: "this is the first build" });
  });

  it("builds nothing when every input is older than the last build", () => {
    manifest();
    expect(runtimeBuildDecision(root)).toEqual({ needed: false });
  });

  it("builds when a source the bundle was made from changed, naming it", () => {
    manifest();
    file("server/lib/config.ts", BUILT_AT + 5_000);
    expect(runtimeBuildDecision(root)).toEqual({ needed: true, reason: "server/lib/config.ts changed since the last build" });
  });

  it("counts a file saved while the build ran as changed: the build began before it", () => {
    manifest();
    file("cli/nf.ts", BUILT_AT + 500);
    expect(runtimeBuildDecision(root).needed).toBe(true);
  });

  it("builds when a source is gone, an output is missing, or tsconfig.json changed", () => {
    manifest();
    rmSync(path.join(root, "cli/nf.ts"));
    expect(runtimeBuildDecision(root)).toEqual({ needed: true, reason: "cli/nf.ts is gone" });
    file("cli/nf.ts", BUILT_AT - 60_000);
    rmSync(path.join(root, "dist/chunks/chunk-A.js"));
    expect(runtimeBuildDecision(root)).toEqual({ needed: true, reason: "dist/chunks/chunk-A.js is missing" });
    file("dist/chunks/chunk-A.js", BUILT_AT + 1_000);
    file("tsconfig.json", BUILT_AT + 5_000);
    expect(runtimeBuildDecision(root)).toEqual({ needed: true, reason: "tsconfig.json changed since the last build" });
  });

  it("builds when the entry points or the manifest's format changed", () => {
    manifest({ entries: ["cli/nf.ts"] });
    expect(runtimeBuildDecision(root)).toEqual({ needed: true, reason: "the entry points changed" });
    manifest({ version: 0 });
    expect(runtimeBuildDecision(root)).toEqual({ needed: true, reason: "this is the first build" });
  });
});
