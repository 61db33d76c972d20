/**
 * node-flow's processes run in one of two forms:
 *
 * - source: the TypeScript files through tsx (`npm run dev`, `npm run nf`, the
 *   tests);
 * - compiled: the JavaScript that scripts/build-runtime.ts bundles into dist/
 *   (`npm start`, the Docker image), each entry at `dist/<its source path>.js`.
 *
 * A process that starts another of ours by path (`nf start` its web process,
 * worker and embedded Postgres host) asks here how, so the child runs in the
 * same form as its parent; and code that finds files of the checkout (Next's
 * build, migrations) takes PROJECT_ROOT from here, which is right from both.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The processes started by path, by source file. Each is bundled on its own; scripts/build-runtime.ts builds exactly these. */
export const RUNTIME_ENTRIES = ["cli/nf.ts", "server/web/main.ts", "server/sidecar/main.ts", "cli/embedded-postgres-process.ts"] as const;
export type RuntimeEntry = (typeof RUNTIME_ENTRIES)[number];

/** Where the compiled form lives, relative to PROJECT_ROOT. */
export const COMPILED_DIR = "dist";

const thisFile = fileURLToPath(import.meta.url);

/** Whether this process runs the compiled bundle: this module is then part of a .js file in dist/, not runtime-entry.ts. */
export const RUNS_COMPILED = !thisFile.endsWith(".ts");

/**
 * The directory holding node-flow's package.json, found upwards from this
 * module: from server/lib/ in the source, from dist/chunks/ in the bundle (so
 * dist/ must never hold a package.json of its own).
 */
export const PROJECT_ROOT = findProjectRoot(path.dirname(thisFile));

function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`No package.json above ${start}: node-flow's code must run from inside its checkout.`);
  }
}

/** `entry`'s compiled file, relative to PROJECT_ROOT (or to `outDir`'s parent when given): server/web/main.ts → dist/server/web/main.js. */
export function compiledPath(entry: RuntimeEntry, outDir: string = COMPILED_DIR): string {
  return path.join(outDir, entry.replace(/\.ts$/, ".js"));
}

export interface EntryCommand {
  /** Node's own flags: tsx's loader for the source; for the bundle, source maps, so stack traces name the .ts lines as under tsx. */
  execArgv: string[];
  /** The file to run, relative to PROJECT_ROOT. */
  script: string;
}

/** How to run `entry` as a process of its own, in this process's form unless `compiled` says otherwise. */
export function entryCommand(entry: RuntimeEntry, compiled: boolean = RUNS_COMPILED): EntryCommand {
  return compiled ? { execArgv: ["--enable-source-maps"], script: compiledPath(entry) } : { execArgv: ["--import", "tsx"], script: entry };
}

/** {@link entryCommand} as the arguments after `node`, for a child whose cwd is PROJECT_ROOT. */
export function entryArgs(entry: RuntimeEntry, compiled: boolean = RUNS_COMPILED): string[] {
  const { execArgv, script } = entryCommand(entry, compiled);
  return [...execArgv, script];
}
