import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decideBuild, isBuildNeeded, newestBuildInput } from "./web-build";

describe("decideBuild", () => {
  it("builds when there is no build", () => {
    expect(decideBuild(undefined, { path: "/r/app/page.tsx", mtimeMs: 1 }, "/r")).toEqual({ needed: true, reason: "this is the first build" });
  });

  it("builds when an input is newer than BUILD_ID, naming it", () => {
    expect(decideBuild(100, { path: "/r/app/page.tsx", mtimeMs: 200 }, "/r")).toEqual({
      needed: true,
      reason: "app/page.tsx changed since the last build",
    });
  });

  it("skips the build when every input is older", () => {
    expect(decideBuild(300, { path: "/r/app/page.tsx", mtimeMs: 200 }, "/r")).toEqual({ needed: false });
    expect(decideBuild(300, undefined, "/r")).toEqual({ needed: false });
  });
});

describe("newestBuildInput / isBuildNeeded on a real tree", () => {
  let root: string;
  const at = (relative: string, seconds: number) => {
    const file = path.join(root, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, "x");
    utimesSync(file, seconds, seconds);
    return file;
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), "nf-build-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("finds the newest file across the input directories and root files", () => {
    at("app/page.tsx", 1000);
    at("server/deep/nested/file.ts", 3000);
    at("package.json", 2000);
    expect(newestBuildInput(root)).toEqual({ path: path.join(root, "server/deep/nested/file.ts"), mtimeMs: 3_000_000 });
  });

  it("ignores tests, migrations, notes, dot-directories and files outside the inputs", () => {
    at("app/page.tsx", 1000);
    at("server/sidecar/main.int.test.ts", 9000);
    at("cli/start.ts", 9000);
    at("db/migrations/0001_x.sql", 9000);
    at("engine/README.md", 9000);
    at("components/.cache/x.ts", 9000);
    at("e2e/a.spec.ts", 9000);
    expect(newestBuildInput(root)?.path).toBe(path.join(root, "app/page.tsx"));
  });

  it("needs a build without .next/BUILD_ID, and after an edit, and not otherwise", () => {
    at("app/page.tsx", 1000);
    expect(isBuildNeeded(root)).toEqual({ needed: true, reason: "this is the first build" });
    at(".next/BUILD_ID", 2000);
    expect(isBuildNeeded(root)).toEqual({ needed: false });
    at("next.config.ts", 3000);
    expect(isBuildNeeded(root)).toEqual({ needed: true, reason: "next.config.ts changed since the last build" });
  });
});
