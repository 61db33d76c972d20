import type { JsonObject } from "./api-types";
import { createWorker } from "./worker";
import type { NodeFlowWorker, TaskContext, WorkerOptions, WorkerTask } from "./worker";
import { TerminalError } from "./worker-errors";

/**
 * A worker as a module declares it: which queues it serves, with which
 * handler each, and how (concurrency, leases, shutdown). `nf worker
 * ./my-worker.ts` runs such a module's default export against a server named
 * by flags or the environment; {@link startWorker} does the same in code.
 */

/**
 * One queue's handler: like `TaskHandler`, for a queue of a
 * {@link WorkerDefinition}. Written inline it gets `task.input` as a
 * {@link JsonObject}; a handler may also narrow it,
 * `(task: WorkerTask<{ width: number }>) => …`, and still fit the map (the
 * type is a method's, whose parameters TypeScript checks both ways; an input
 * type must then be a type alias, not an interface, to count as a JSON object).
 */
export type QueueHandler = {
  handle(task: WorkerTask<JsonObject>, ctx: TaskContext): JsonObject | undefined | void | Promise<JsonObject | undefined | void>;
}["handle"];

/** How a defined worker runs: everything {@link createWorker} takes but the server, the key, the namespace and the handler. */
export type WorkerDefinitionOptions = Omit<WorkerOptions, "baseUrl" | "apiKey" | "namespace" | "queue" | "queues" | "handler">;

/** What {@link defineWorker} takes: the queues and their handlers, and how to run them. */
export interface WorkerDefinition extends WorkerDefinitionOptions {
  /** Queue name (a SIMPLE node's task name) → its handler. One poll loop per queue, sharing `concurrency`. */
  queues: Readonly<Record<string, QueueHandler>>;
}

/** Where a defined worker connects: the server, an API key with the `worker` scope, the namespace. */
export interface WorkerConnection {
  baseUrl: string;
  apiKey: string;
  namespace: string;
}

/** Why `definition` cannot run, or undefined when it can. */
export function workerDefinitionProblem(definition: unknown): string | undefined {
  if (typeof definition !== "object" || definition === null) return "a worker definition must be an object with `queues`";
  const queues = (definition as { queues?: unknown }).queues;
  if (typeof queues !== "object" || queues === null || Array.isArray(queues)) return "`queues` must map queue names to handler functions";
  const entries = Object.entries(queues);
  if (entries.length === 0) return "`queues` names no queue";
  const notFunctions = entries.filter(([, handler]) => typeof handler !== "function").map(([name]) => JSON.stringify(name));
  if (notFunctions.length > 0) return `the handler of ${notFunctions.join(", ")} is not a function`;
  if (entries.some(([name]) => name.trim() === "")) return "a queue name is empty";
  return undefined;
}

/**
 * Declares a worker module's queues and handlers, typed; checks the shape at
 * once and returns it unchanged. The default export of a module that
 * `nf worker` runs:
 *
 * ```ts
 * import { defineWorker, TerminalError } from "node-flow/sdk";
 *
 * export default defineWorker({
 *   concurrency: 4,
 *   queues: {
 *     resize: async (task, ctx) => {
 *       if (typeof task.input.url !== "string") throw new TerminalError("input.url must be a string");
 *       ctx.log(`resizing ${task.input.url}`);
 *       return { thumbnail: await resize(task.input.url, { signal: ctx.signal }) };
 *     },
 *   },
 * });
 * ```
 */
export function defineWorker(definition: WorkerDefinition): WorkerDefinition {
  const problem = workerDefinitionProblem(definition);
  if (problem !== undefined) throw new TypeError(`defineWorker: ${problem}`);
  return definition;
}

/**
 * Starts a defined worker against a server: one {@link createWorker} polling
 * every queue of the definition, each task handed to its queue's handler.
 * `options` overrides the definition's own (the command line's
 * `--concurrency`, say).
 */
export function startWorker(definition: WorkerDefinition, options: WorkerConnection & WorkerDefinitionOptions): NodeFlowWorker {
  const problem = workerDefinitionProblem(definition);
  if (problem !== undefined) throw new TypeError(`startWorker: ${problem}`);
  const { queues, ...definedOptions } = definition;
  const handlers = new Map(Object.entries(queues));
  return createWorker({
    ...definedOptions,
    ...definedOnly(options),
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    namespace: options.namespace,
    queues: [...handlers.keys()],
    handler: (task, ctx) => {
      const handle = handlers.get(task.queue);
      // Only if a server answered a poll with another queue's task: never retry it here.
      if (handle === undefined) throw new TerminalError(`this worker has no handler for queue "${task.queue}"`);
      return handle(task, ctx);
    },
  });
}

/** `{ concurrency: undefined }` must not override the definition's concurrency. */
function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
