import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { createNodeFlowClient, NodeFlowApiError, startWorker, workerDefinitionProblem } from "../sdk";
import type { NodeFlowWorker, StopResult, WorkerDefinition, WorkerEvent, WorkerLogger } from "../sdk";
import { UsageError } from "./help";

/**
 * `nf worker ./my-worker.ts`: runs a worker module's handlers against a
 * node-flow server, over HTTP with an API key, like any remote worker. The
 * module's default export is a `defineWorker({ queues: { … } })` (or a plain
 * map of queue names to handlers; a named `handlers` export works too).
 * SIGINT or SIGTERM stops it gracefully: no new tasks, running ones get
 * `--shutdown-timeout` to finish, and what is still running then is given
 * back to its queue. A second signal gives it back at once.
 *
 * Only the SDK is used: this command needs no database and loads no server
 * code, so it runs on any machine that can reach the server.
 */

/** An environment; NodeJS.ProcessEnv would demand the NODE_ENV that Next's types make required. */
type Env = Record<string, string | undefined>;

export interface WorkerArgs {
  modulePath: string;
  baseUrl: string;
  apiKey: string | undefined;
  namespace: string;
  /** Overrides the module's; undefined keeps it. */
  concurrency: number | undefined;
  workerId: string | undefined;
  shutdownTimeoutMs: number;
  abandon: boolean;
  quiet: boolean;
}

export const DEFAULT_URL = "http://localhost:3000";
const DEFAULT_SHUTDOWN_TIMEOUT_SECONDS = 30;

const HOW_TO_GET_A_KEY =
  "Create one in the console under Settings → API keys (the worker scope is enough), or on the server with `npm run nf -- bootstrap --api-key-only` (`nf bootstrap --email you@example.com` on a fresh install creates the owner and a key).";

export function parseWorkerArgs(argv: string[], env: Env): WorkerArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        url: { type: "string" },
        "api-key": { type: "string" },
        namespace: { type: "string" },
        concurrency: { type: "string" },
        "worker-id": { type: "string" },
        "shutdown-timeout": { type: "string" },
        abandon: { type: "boolean", default: false },
        quiet: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "worker needs a module: nf worker ./my-worker.ts" : `worker runs one module, got ${positionals.length}: ${positionals.join(" ")}`);
  const blankToUndefined = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);

  const baseUrl = blankToUndefined(values.url ?? env.NODE_FLOW_URL) ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(`--url / NODE_FLOW_URL must be the server's address, like ${DEFAULT_URL}; got "${baseUrl}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--url / NODE_FLOW_URL must be http or https; got "${baseUrl}"`);

  const concurrencyText = values.concurrency;
  const concurrency = concurrencyText === undefined ? undefined : Number(concurrencyText);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= 1000)) {
    throw new UsageError(`--concurrency must be an integer from 1 to 1000; got "${concurrencyText}"`);
  }
  const timeoutText = values["shutdown-timeout"];
  const timeoutSeconds = timeoutText === undefined ? DEFAULT_SHUTDOWN_TIMEOUT_SECONDS : Number(timeoutText);
  if (!(Number.isFinite(timeoutSeconds) && timeoutSeconds >= 0 && timeoutSeconds <= 86_400)) {
    throw new UsageError(`--shutdown-timeout must be a number of seconds from 0 to 86400; got "${timeoutText}"`);
  }
  return {
    modulePath: positionals[0]!,
    baseUrl,
    apiKey: blankToUndefined(values["api-key"] ?? env.NODE_FLOW_API_KEY),
    namespace: blankToUndefined(values.namespace ?? env.NODE_FLOW_NAMESPACE) ?? "default",
    concurrency,
    workerId: blankToUndefined(values["worker-id"]),
    shutdownTimeoutMs: Math.round(timeoutSeconds * 1000),
    abandon: values.abandon ?? false,
    quiet: values.quiet ?? false,
  };
}

/** A worker module that cannot be run: its message says what is wrong and how to fix it. */
export class WorkerModuleError extends Error {
  override name = "WorkerModuleError";
}

const SHAPE_HINT =
  'export default defineWorker({ queues: { my_queue: async (task, ctx) => ({ … }) } }) (defineWorker is in sdk/), or export const handlers = { my_queue: async (task, ctx) => ({ … }) }';

/** The worker definition a module's exports declare: its default export, else its `handlers`. */
export function workerDefinitionOf(exports: Record<string, unknown>, shown: string): WorkerDefinition {
  for (const name of ["default", "handlers"]) {
    const candidate = exports[name];
    if (candidate === undefined || candidate === null) continue;
    // A bare map of queue names to functions is a definition with nothing but queues.
    const isBareMap = typeof candidate === "object" && !("queues" in candidate) && Object.values(candidate).length > 0 && Object.values(candidate).every((v) => typeof v === "function");
    const definition = isBareMap ? { queues: candidate } : candidate;
    const problem = workerDefinitionProblem(definition);
    if (problem !== undefined) throw new WorkerModuleError(`${shown}: its ${name === "default" ? "default export" : "`handlers` export"} is not a worker: ${problem}. Expected: ${SHAPE_HINT}.`);
    return definition as WorkerDefinition;
  }
  throw new WorkerModuleError(`${shown} exports no handlers. Expected: ${SHAPE_HINT}.`);
}

/** Imports the module at `modulePath` (TypeScript works: nf runs under tsx) and returns its worker definition. */
export async function loadWorkerDefinition(modulePath: string, cwd: string = process.cwd()): Promise<WorkerDefinition> {
  const file = path.resolve(cwd, modulePath);
  if (!existsSync(file) || !statSync(file).isFile()) throw new WorkerModuleError(`There is no file ${modulePath} (looked for ${file}).`);
  let exports: Record<string, unknown>;
  try {
    exports = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    // The module's own failure (a syntax error, a throw at load): its stack is what the user needs.
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    throw new WorkerModuleError(`Could not load ${modulePath}:\n${detail}`);
  }
  return workerDefinitionOf(exports, modulePath);
}

/** What a poll's refusal means for the operator; undefined when it is worth polling on (a 5xx, a network error). */
export function fatalPollProblem(error: unknown, args: Pick<WorkerArgs, "namespace" | "baseUrl">, queue: string | undefined): string | undefined {
  if (!(error instanceof NodeFlowApiError) || error.status >= 500 || error.status === 408 || error.status === 429) return undefined;
  const detail = error.detail ?? error.title ?? error.message;
  switch (error.status) {
    case 401:
      return `The server at ${args.baseUrl} refused the API key (401: ${detail}): it is mistyped, revoked or expired. ${HOW_TO_GET_A_KEY}`;
    case 403:
      return `The API key may not poll tasks in namespace "${args.namespace}" (403: ${detail}): it needs the worker or admin scope. ${HOW_TO_GET_A_KEY}`;
    case 404:
      return `Namespace "${args.namespace}" was not found at ${args.baseUrl}, or the API key belongs to another one (404: ${detail}). Set NODE_FLOW_NAMESPACE or --namespace, or check NODE_FLOW_URL.`;
    default: {
      const fields = error.errors.map((e) => `${e.pointer}: ${e.message}`).join("; ");
      return `The server refused to poll${queue === undefined ? "" : ` queue "${queue}"`} (${error.status}: ${detail}${fields ? ` — ${fields}` : ""}).`;
    }
  }
}

/** Where the command writes; a test passes its own. */
export interface WorkerIo {
  /** Activity: started, each finished task, stopped. */
  out: (line: string) => void;
  /** Problems. */
  err: (line: string) => void;
  /** Where SIGINT and SIGTERM come from. */
  signals: Pick<NodeJS.EventEmitter, "on" | "off">;
}

const processIo: WorkerIo = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
  signals: process,
};

function fieldsText(fields: Record<string, unknown>): string {
  const shown = Object.entries(fields).filter(([, v]) => v !== undefined);
  return shown.length === 0 ? "" : ` ${shown.map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" ")}`;
}

/**
 * `nf worker <module>`: resolves with the exit code once the worker has
 * stopped — 0 after a signal, 1 when it could not start or the server refused
 * it for good (a revoked key, an unknown namespace).
 */
export async function runWorker(argv: string[], env: Env, io: WorkerIo = processIo): Promise<number> {
  const args = parseWorkerArgs(argv, env);
  if (args.apiKey === undefined) {
    io.err(`nf worker needs an API key: set NODE_FLOW_API_KEY (or pass --api-key, which other users can see in ps). ${HOW_TO_GET_A_KEY}`);
    return 1;
  }
  let definition: WorkerDefinition;
  try {
    definition = await loadWorkerDefinition(args.modulePath);
  } catch (error) {
    if (error instanceof WorkerModuleError) {
      io.err(error.message);
      return 1;
    }
    throw error;
  }

  // Before polling: an unreachable server would otherwise only show as poll errors retried forever.
  const probe = createNodeFlowClient({ baseUrl: args.baseUrl, apiKey: args.apiKey, namespace: args.namespace, timeoutMs: 10_000 });
  if (!(await probe.live())) {
    io.err(`Cannot reach node-flow at ${args.baseUrl}: is it running (\`npm start\`)? Set NODE_FLOW_URL or --url to its address.`);
    return 1;
  }

  const logger: WorkerLogger = {
    info: () => undefined,
    warn: (fields, message) => io.err(`warn: ${message}${fieldsText(fields)}`),
    error: (fields, message) => io.err(`error: ${message}${fieldsText(fields)}`),
  };
  let fatal: string | undefined;
  let requestStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
  const onEvent = (event: WorkerEvent) => {
    definition.onEvent?.(event);
    if (event.type === "error" && event.stage === "poll" && fatal === undefined) {
      // A refusal that polling again cannot change (a revoked key, an unknown namespace) ends the
      // command with the reason, instead of a worker that retries forever and never gets a task.
      fatal = fatalPollProblem(event.error, args, undefined);
      if (fatal !== undefined) requestStop();
    }
    if (event.type === "task-finished" && !args.quiet) {
      const { task } = event;
      io.out(`${task.queue} ${task.refName} ${task.taskId} (run ${task.workflowId}, attempt ${task.attempt}): ${event.outcome} in ${Math.round(event.durationMs)} ms`);
    }
  };
  const running: NodeFlowWorker = startWorker(definition, {
    baseUrl: args.baseUrl,
    apiKey: args.apiKey,
    namespace: args.namespace,
    concurrency: args.concurrency ?? definition.concurrency ?? Object.keys(definition.queues).length,
    workerId: args.workerId,
    onShutdownTimeout: args.abandon ? "abandon" : definition.onShutdownTimeout,
    logger: definition.logger ?? logger,
    onEvent,
  });
  io.out(
    `nf worker: ${running.workerId} polling ${running.queues.map((q) => `"${q}"`).join(", ")} in namespace "${args.namespace}" at ${args.baseUrl} (concurrency ${args.concurrency ?? definition.concurrency ?? running.queues.length}). Ctrl-C stops it.`,
  );

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals === 1) {
      const inFlight = running.stats().inFlight;
      io.out(
        `nf worker: ${signal}: stopping. ${inFlight === 0 ? "No task is running." : `Waiting up to ${args.shutdownTimeoutMs / 1000} s for ${inFlight} running task${inFlight === 1 ? "" : "s"}; a second signal gives ${inFlight === 1 ? "it" : "them"} back at once.`}`,
      );
      void running.stop({ timeoutMs: args.shutdownTimeoutMs });
      requestStop();
    } else {
      io.out(`nf worker: ${signal} again: giving back what still runs.`);
      void running.stop({ timeoutMs: 0 });
    }
  };
  io.signals.on("SIGINT", onSignal);
  io.signals.on("SIGTERM", onSignal);
  let result: StopResult;
  try {
    await stopRequested;
    // The same promise as the signal's stop(); a second signal still brings its deadline forward.
    result = await running.stop({ timeoutMs: args.shutdownTimeoutMs });
  } finally {
    io.signals.off("SIGINT", onSignal);
    io.signals.off("SIGTERM", onSignal);
  }
  const stats = running.stats();
  io.out(
    `nf worker: stopped: ${stats.completed} completed, ${stats.failed + stats.failedTerminal} failed${result.released > 0 ? `, ${result.released} given back to the queue` : ""}${result.abandoned > 0 ? `, ${result.abandoned} left to their lease` : ""}${stats.reportRetries > 0 ? `, ${stats.reportRetries} report${stats.reportRetries === 1 ? "" : "s"} sent again after an outage` : ""}${stats.reportErrors > 0 ? `, ${stats.reportErrors} report${stats.reportErrors === 1 ? "" : "s"} given up (their tasks are handed on when the lease lapses)` : ""}.`,
  );
  if (fatal !== undefined) {
    io.err(fatal);
    return 1;
  }
  return 0;
}
