import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/**
 * Whether `nf start` must run `next build` first. A stale `.next` serves
 * yesterday's UI against today's server code, which fails in ways that look
 * like bugs, so any source newer than the last build triggers a rebuild.
 */
export const BUILD_INPUT_DIRS = ["app", "components", "engine", "db", "server", "sdk"] as const;
export const BUILD_INPUT_FILES = [
  "next.config.ts",
  "next.config.mjs",
  "next.config.js",
  "package.json",
  "package-lock.json",
  "postcss.config.mjs",
  "tsconfig.json",
] as const;

// Tests, migrations and notes never reach the bundle; editing one should not cost a one-minute build.
const IGNORED_FILE = /(\.(test|spec)\.tsx?|\.sql|\.md)$/;
const IGNORED_DIR = new Set(["node_modules", "testing", "__snapshots__"]);

export interface NewestFile {
  path: string;
  mtimeMs: number;
}

function newer(a: NewestFile | undefined, b: NewestFile | undefined): NewestFile | undefined {
  if (!a) return b;
  if (!b) return a;
  return b.mtimeMs > a.mtimeMs ? b : a;
}

function newestUnder(dir: string): NewestFile | undefined {
  let newest: NewestFile | undefined;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!IGNORED_DIR.has(entry.name) && !entry.name.startsWith(".")) newest = newer(newest, newestUnder(full));
    } else if (entry.isFile() && !IGNORED_FILE.test(entry.name)) {
      newest = newer(newest, { path: full, mtimeMs: statSync(full).mtimeMs });
    }
  }
  return newest;
}

/** The most recently modified build input under `root`, or undefined when there is none. */
export function newestBuildInput(root: string): NewestFile | undefined {
  let newest: NewestFile | undefined;
  for (const dir of BUILD_INPUT_DIRS) newest = newer(newest, newestUnder(path.join(root, dir)));
  for (const file of BUILD_INPUT_FILES) {
    try {
      newest = newer(newest, { path: path.join(root, file), mtimeMs: statSync(path.join(root, file)).mtimeMs });
    } catch {
      // Optional file (only one next.config.* exists).
    }
  }
  return newest;
}

export type BuildDecision = { needed: false } | { needed: true; reason: string };

/** Pure: the decision from the build's mtime (undefined when never built) and the newest input. */
export function decideBuild(buildIdMtimeMs: number | undefined, newestInput: NewestFile | undefined, root = ""): BuildDecision {
  if (buildIdMtimeMs === undefined) return { needed: true, reason: "this is the first build" };
  if (newestInput && newestInput.mtimeMs > buildIdMtimeMs) {
    return { needed: true, reason: `${path.relative(root, newestInput.path) || newestInput.path} changed since the last build` };
  }
  return { needed: false };
}

export function buildIdMtime(root: string): number | undefined {
  try {
    return statSync(path.join(root, ".next", "BUILD_ID")).mtimeMs;
  } catch {
    return undefined;
  }
}

export function isBuildNeeded(root: string): BuildDecision {
  return decideBuild(buildIdMtime(root), newestBuildInput(root), root);
}
