import { mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { exportConductorWorkflow, importConductorWorkflow } from "../engine/conductor";
import { validateDefinition } from "../engine/definition";
import type { WorkflowDefinition } from "../engine/definition";
import { NodeFlowApiError } from "../sdk";
import type { NodeFlowClient } from "../sdk";
import { UsageError } from "./help";
import { EXIT, PROCESS_OUTPUT, clientFor, parseRemoteArgs, printJson } from "./remote";
import type { Env, Output } from "./remote";

/**
 * `nf export` and `nf import`: workflow definitions as files, for git. One
 * file per workflow, `<name>.json`, written with sorted keys, two-space
 * indent and a final newline, and without the stored `version` — so an
 * export after an unchanged save is byte-identical, and a diff shows only
 * what someone changed. Import reads either format (a Conductor WorkflowDef
 * is recognised by its `tasks` list) and saves a new version only when the
 * definition differs from the latest one stored.
 */

export const EXPORT_HELP = `nf export [NAME…] [--format nodeflow|conductor] [--out DIR] [--url URL] [--namespace NS] [--api-key KEY]

Writes workflow definitions (the latest version of each; all of the
namespace's when no NAME is given). With --out DIR, one file per workflow,
DIR/<name>.json, keys sorted and without the version number, so the folder
diffs cleanly in git; without it, the JSON on stdout (one document for one
name, an array otherwise). --format conductor writes Conductor WorkflowDef
JSON; a graph Conductor cannot express is reported by name and node and
skipped (exit 1).

Exit codes: 0 ok, 1 some definition could not be exported, 2 usage, 3 server or key, 4 a NAME was not found.
`;

export const IMPORT_HELP = `nf import <FILE|DIR>… [--format auto|nodeflow|conductor] [--dry-run] [--json] [--url URL] [--namespace NS] [--api-key KEY]

Saves workflow definitions from files (every *.json in a DIR, in name order):
node-flow JSON, or Conductor WorkflowDef JSON (auto-detected by its "tasks"
list, or forced with --format). Each file is reported on its own line as it
goes: created (version 1), updated (a new version), unchanged (the latest
stored version is the same definition; nothing saved) or failed, with every
problem of that file. --dry-run checks each file against the server without
saving anything: changed files report valid or failed. --json prints the report as one JSON document at the end.

Exit codes: 0 every file imported, 1 some file failed, 2 usage or unreadable path, 3 server or key.
`;

type Format = "nodeflow" | "conductor";

/** `value` with every object's keys in sorted order, for files that diff cleanly. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}

/** The stable text of a definition file. */
export function definitionFileText(document: Record<string, unknown>): string {
  const { version: _version, ...rest } = document;
  return `${JSON.stringify(sortKeys(rest), null, 2)}\n`;
}

function formatFlag(value: unknown, allowAuto: boolean): Format | "auto" {
  const v = (value ?? (allowAuto ? "auto" : "nodeflow")) as string;
  if (v === "nodeflow" || v === "conductor" || (allowAuto && v === "auto")) return v;
  throw new UsageError(`--format must be ${allowAuto ? "auto, " : ""}nodeflow or conductor; got "${v}"`);
}

async function listNames(client: NodeFlowClient): Promise<string[]> {
  const answer = await client.request<{ items: { name: string }[] }>({ method: "GET", path: `/ns/${encodeURIComponent(client.namespace)}/definitions` });
  return answer.items.map((i) => i.name).sort();
}

export async function runExport(argv: string[], env: Env, output: Output = PROCESS_OUTPUT): Promise<number> {
  const args = parseRemoteArgs(argv, env, { format: { type: "string" }, out: { type: "string" } });
  if (args.help) {
    output.out(EXPORT_HELP);
    return EXIT.ok;
  }
  const format = formatFlag(args.values.format, false) as Format;
  const outDir = args.values.out as string | undefined;
  const client = clientFor(args.remote);
  const names = args.positionals.length > 0 ? args.positionals : await listNames(client);
  const documents: Record<string, unknown>[] = [];
  let failures = 0;
  if (outDir !== undefined) await mkdir(outDir, { recursive: true });
  for (const [i, name] of names.entries()) {
    const stored = await client.getDefinition(name);
    let document: Record<string, unknown>;
    if (format === "conductor") {
      const exported = exportConductorWorkflow(stored.definition);
      if (!exported.ok) {
        failures++;
        output.err(`${name}: cannot be written as Conductor JSON: ${exported.problems.map((p) => `${p.ref === undefined ? "" : `${p.ref}: `}${p.message}`).join("; ")}\n`);
        continue;
      }
      document = exported.workflowDef as unknown as Record<string, unknown>;
    } else {
      document = stored.definition;
    }
    if (outDir === undefined) {
      documents.push(document);
      continue;
    }
    const file = path.join(outDir, `${name}.json`);
    await writeFile(file, definitionFileText(document));
    output.err(`[${i + 1}/${names.length}] ${name} v${stored.version} → ${file}\n`);
  }
  if (outDir === undefined) {
    if (documents.length === 1 && args.positionals.length === 1) output.out(definitionFileText(documents[0]!));
    else output.out(`${JSON.stringify(documents.map((d) => JSON.parse(definitionFileText(d)) as unknown), null, 2)}\n`);
  }
  return failures > 0 ? EXIT.failed : EXIT.ok;
}

/** One file's outcome. */
export interface ImportReport {
  file: string;
  name?: string;
  outcome: "created" | "updated" | "unchanged" | "failed" | "valid";
  version?: number;
  problems?: string[];
  warnings?: string[];
}

async function filesOf(targets: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const target of targets) {
    let info;
    try {
      info = await stat(target);
    } catch (error) {
      throw new UsageError(`cannot read "${target}" (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    if (info.isDirectory()) {
      const entries = (await readdir(target)).filter((f) => f.endsWith(".json")).sort();
      if (entries.length === 0) throw new UsageError(`"${target}" holds no .json files`);
      files.push(...entries.map((f) => path.join(target, f)));
    } else {
      files.push(target);
    }
  }
  return files;
}

/** The definition a file holds, or the problems that stop it. */
export function definitionOf(text: string, format: Format | "auto"): { ok: true; definition: WorkflowDefinition; warnings: string[] } | { ok: false; name?: string; problems: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`not JSON: ${(error as Error).message}`] };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, problems: ["a definition file holds one JSON object"] };
  const name = typeof (value as { name?: unknown }).name === "string" ? { name: (value as { name: string }).name } : {};
  const isConductor = format === "conductor" || (format === "auto" && Array.isArray((value as { tasks?: unknown }).tasks) && !("nodes" in value));
  if (isConductor) {
    const imported = importConductorWorkflow(value);
    if (!imported.ok) return { ok: false, ...name, problems: imported.problems.map((p) => `${p.path.length > 0 ? `${p.path.join(".")}: ` : ""}${p.message}`) };
    return { ok: true, definition: imported.definition, warnings: imported.warnings.map((w) => w.message) };
  }
  const validation = validateDefinition(value);
  if (!validation.ok) return { ok: false, ...name, problems: validation.problems.map((p) => `${p.path.length > 0 ? `${p.path.join(".")}: ` : ""}${p.message}${p.ref === undefined ? "" : ` (node ${p.ref})`}`) };
  return { ok: true, definition: validation.definition, warnings: [] };
}

const comparable = (d: unknown) => definitionFileText(d as Record<string, unknown>);

export async function runImport(argv: string[], env: Env, output: Output = PROCESS_OUTPUT): Promise<number> {
  const args = parseRemoteArgs(argv, env, { format: { type: "string" }, "dry-run": { type: "boolean", default: false } });
  if (args.help) {
    output.out(IMPORT_HELP);
    return EXIT.ok;
  }
  if (args.positionals.length === 0) throw new UsageError("import needs files or folders: nf import workflows/");
  const format = formatFlag(args.values.format, true);
  const dryRun = args.values["dry-run"] === true;
  const files = await filesOf(args.positionals);
  const client = clientFor(args.remote);
  const reports: ImportReport[] = [];
  const say = (r: ImportReport) => {
    reports.push(r);
    if (args.json) return;
    const what = r.outcome === "failed" ? `failed: ${r.problems!.join("; ")}` : `${r.outcome}${r.version === undefined ? "" : ` v${r.version}`}`;
    output.out(`${r.file}: ${r.name ?? "?"} ${what}\n`);
    for (const w of r.warnings ?? []) output.err(`${r.file}: warning: ${w}\n`);
  };
  for (const file of files) {
    const parsed = definitionOf(await readFile(file, "utf8"), format);
    if (!parsed.ok) {
      say({ file, ...(parsed.name === undefined ? {} : { name: parsed.name }), outcome: "failed", problems: parsed.problems });
      continue;
    }
    const { definition, warnings } = parsed;
    let latest: Awaited<ReturnType<NodeFlowClient["getDefinition"]>> | undefined;
    try {
      latest = await client.getDefinition(definition.name);
    } catch (error) {
      if (!(error instanceof NodeFlowApiError && error.status === 404)) throw error;
    }
    const base: ImportReport = { file, name: definition.name, outcome: "failed", ...(warnings.length > 0 ? { warnings } : {}) };
    if (latest !== undefined && comparable(latest.definition) === comparable(definition)) {
      say({ ...base, outcome: "unchanged", version: latest.version });
      continue;
    }
    if (dryRun) {
      const check = await client.validateDefinition(definition);
      say(check.valid ? { ...base, outcome: "valid" } : { ...base, problems: check.problems.map((p) => `${p.pointer}: ${p.message}`) });
      continue;
    }
    try {
      const saved = await client.registerDefinition(definition);
      say({ ...base, outcome: latest === undefined ? "created" : "updated", version: saved.version });
    } catch (error) {
      if (!(error instanceof NodeFlowApiError && error.status === 400)) throw error;
      say({ ...base, problems: error.errors.length > 0 ? error.errors.map((e) => `${e.pointer}: ${e.message}`) : [error.detail ?? error.title] });
    }
  }
  if (args.json) printJson(output, { files: reports });
  const failed = reports.filter((r) => r.outcome === "failed").length;
  if (!args.json) output.err(`${files.length} file(s): ${files.length - failed} ok, ${failed} failed${dryRun ? " (dry run: nothing saved)" : ""}\n`);
  return failed > 0 ? EXIT.failed : EXIT.ok;
}
