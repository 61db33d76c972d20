import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";
import { NodeFlowApiError, NodeFlowNetworkError, createNodeFlowClient } from "../sdk";
import type { NodeFlowClient } from "../sdk";
import { UsageError } from "./help";

/**
 * What every `nf` command that talks to a running server shares: the
 * connection flags (--url, --api-key, --namespace and their NODE_FLOW_*
 * variables), --json, the SDK client, and the exit codes scripts can rely on.
 * These commands load no server code and need no database: they run on any
 * machine that reaches the server, as `nf worker` does.
 */

/** An environment; NodeJS.ProcessEnv would demand the NODE_ENV that Next's types make required. */
export type Env = Record<string, string | undefined>;

/** Exit codes of every nf command (docs/cli.md lists them). */
export const EXIT = {
  /** Done; a waited-for run COMPLETED; tests passed; a replay matched. */
  ok: 0,
  /** The outcome is a failure: the run FAILED, TIMED_OUT or was TERMINATED; a test case failed; a replay diverged. */
  failed: 1,
  /** The command line (or a file it names) is wrong: nothing was sent. */
  usage: 2,
  /** The server refused or could not be reached: bad key (401), missing scope (403), conflict (409), 5xx, no answer. */
  server: 3,
  /** The run, definition or namespace does not exist (404). */
  notFound: 4,
} as const;

/** A failure whose message is the whole story, with its exit code. */
export class CliFailure extends Error {
  override name = "CliFailure";
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export const DEFAULT_URL = "http://localhost:3000";

/** Where and as whom a command talks to the server. */
export interface Remote {
  baseUrl: string;
  apiKey: string | undefined;
  namespace: string;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

const REMOTE_OPTIONS = {
  url: { type: "string" },
  "api-key": { type: "string" },
  namespace: { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const satisfies Options;

const blankToUndefined = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);

/** Parses `argv` with the connection flags plus `options`; every problem is a UsageError. */
export function parseRemoteArgs<O extends Options>(argv: string[], env: Env, options: O) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...REMOTE_OPTIONS, ...options }, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const baseUrl = blankToUndefined(values.url as string | undefined) ?? blankToUndefined(env.NODE_FLOW_URL) ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(`--url / NODE_FLOW_URL must be the server's address, like ${DEFAULT_URL}; got "${baseUrl}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--url / NODE_FLOW_URL must be http or https; got "${baseUrl}"`);
  const remote: Remote = {
    baseUrl: baseUrl.replace(/\/+$/, ""),
    apiKey: blankToUndefined(values["api-key"] as string | undefined) ?? blankToUndefined(env.NODE_FLOW_API_KEY),
    namespace: blankToUndefined(values.namespace as string | undefined) ?? blankToUndefined(env.NODE_FLOW_NAMESPACE) ?? "default",
  };
  return { values, positionals: parsed.positionals, remote, json: values.json === true, help: values.help === true };
}

const HOW_TO_GET_A_KEY = "Set NODE_FLOW_API_KEY (or --api-key): create one in the console under Settings → API keys, or with `nf bootstrap --api-key-only` on the server.";

/** The SDK client for `remote`; a missing key is a usage error, before anything is sent. */
export function clientFor(remote: Remote): NodeFlowClient {
  if (remote.apiKey === undefined) throw new UsageError(`no API key. ${HOW_TO_GET_A_KEY}`);
  return createNodeFlowClient({ baseUrl: remote.baseUrl, apiKey: remote.apiKey, namespace: remote.namespace, retry: { retries: 2 } });
}

/** An SDK error as one line and its exit code; anything else is not ours to explain. */
export function failureOf(error: unknown, remote: Remote): CliFailure | undefined {
  if (error instanceof CliFailure) return error;
  if (error instanceof NodeFlowNetworkError) return new CliFailure(`no answer from ${remote.baseUrl} (${error.message}): is node-flow running there? Check --url / NODE_FLOW_URL.`, EXIT.server);
  if (!(error instanceof NodeFlowApiError)) return undefined;
  const detail = error.detail ?? error.title;
  const fields = error.errors.map((e) => `${e.pointer}: ${e.message}`).join("; ");
  switch (error.status) {
    case 400:
      return new CliFailure(`the server refused the request (400: ${detail}${fields ? ` — ${fields}` : ""})`, EXIT.usage);
    case 401:
      return new CliFailure(`the server at ${remote.baseUrl} refused the API key (401: ${detail}). ${HOW_TO_GET_A_KEY}`, EXIT.server);
    case 403:
      return new CliFailure(`the API key may not do this in namespace "${remote.namespace}" (403: ${detail})`, EXIT.server);
    case 404:
      return new CliFailure(`${detail} (404)`, EXIT.notFound);
    default:
      return new CliFailure(`the server answered ${error.status}: ${detail}${fields ? ` — ${fields}` : ""}`, EXIT.server);
  }
}

/** Where a command writes: stdout for results, stderr for progress and problems. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
  /** Whether stdout and stderr are terminals: a view may redraw lines there, and progress shows only there. */
  outTty: boolean;
  errTty: boolean;
}

export const PROCESS_OUTPUT: Output = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  outTty: process.stdout.isTTY,
  errTty: process.stderr.isTTY,
};

/** A JSON document on stdout, stable for scripts: two-space indent and a newline. */
export function printJson(output: Output, value: unknown): void {
  output.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** A fixed-width table: one header row, one row per item. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return `${[line(headers), ...rows.map(line)].join("\n")}\n`;
}

/** Reads a JSON object given inline (`{"a":1}`) or as a file path; `what` names it in errors. */
export async function readJsonObjectArg(text: string, what: string): Promise<Record<string, unknown>> {
  const trimmed = text.trim();
  let source = trimmed;
  if (!trimmed.startsWith("{")) {
    const { readFile } = await import("node:fs/promises");
    try {
      source = await readFile(trimmed, "utf8");
    } catch (error) {
      throw new UsageError(`${what}: cannot read "${trimmed}" (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a JSON object or a file holding one`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** A positive integer flag, or undefined when absent. */
export function intFlag(value: string | boolean | undefined, flag: string, min = 1, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== "string" || !Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max}; got "${String(value)}"`);
  return n;
}
