import type {
  DefinitionInput,
  DefinitionValidation,
  DefinitionVersion,
  HeartbeatResult,
  JsonObject,
  Page,
  PollTasksInput,
  PolledTask,
  RegisteredDefinition,
  ReleaseResult,
  ReportNext,
  ReportResult,
  Run,
  RunActionResult,
  RunSummary,
  RunTaskActionResult,
  SearchRunsQuery,
  IdempotencyStrategy,
  StartRunInput,
  StartedRun,
  TaskDefinition,
  TaskDefinitionInput,
  TaskLogPage,
  TaskRef,
} from "./api-types";
import { createTransport } from "./http-transport";
import type { TransportOptions, TransportRequest } from "./http-transport";

/**
 * The typed HTTP client remote workers and scripts use to talk to node-flow:
 * health, the worker protocol, and the common automation calls (definitions,
 * runs). It speaks plain `fetch`, so it runs in Node 20+, Deno, Bun and
 * browsers, and it never carries a database driver (a lint rule keeps it that
 * way). Every failure is a NodeFlowApiError (an HTTP error answer, read from
 * problem+json) or a NodeFlowNetworkError (no answer), after the retries of
 * retry-policy.ts.
 */

/** Readiness as `/api/health/ready` reports it. */
export interface ReadinessReport {
  ok: boolean;
  database: { ok: boolean; serverVersionNum?: number; error?: string };
  migrations: { pending: string[]; unknown: string[]; changed: string[] };
}

/** How a client reaches its server. */
export interface NodeFlowClientOptions extends TransportOptions {
  /** The namespace every namespaced call acts in. Default "default". */
  namespace?: string;
}

/** Per-call options every method takes. */
export interface CallOptions {
  /** Aborts the call, and any wait before a retry. */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout for this call. */
  timeoutMs?: number;
  /** Overrides the client's retry options for this call; `false` never retries. */
  retry?: TransportRequest["retry"];
}

/** Options of a start. */
export interface StartRunOptions extends CallOptions {
  /**
   * Makes the start happen at most once per key in the namespace. When left
   * out, the client makes one up per call, so its own retries cannot start a
   * second run; pass your own to make *your* retries safe too.
   */
  idempotencyKey?: string;
  /** RETURN_EXISTING (the default) answers the existing run; FAIL, and FAIL_ON_RUNNING while it runs, answer 409. */
  idempotencyStrategy?: IdempotencyStrategy;
}

/** A client bound to one server, API key and namespace. */
export interface NodeFlowClient {
  /** The namespace its namespaced calls act in. */
  readonly namespace: string;
  /** A client like this one acting in `namespace`. */
  withNamespace(namespace: string): NodeFlowClient;

  /** True when the process answers at all. */
  live(): Promise<boolean>;
  /** The readiness report; resolves for both ready (200) and not ready (503). */
  ready(): Promise<ReadinessReport>;
  /** Polls readiness until ready, or rejects after `timeoutMs` with the last report's reason. */
  waitUntilReady(options?: { timeoutMs?: number; intervalMs?: number }): Promise<ReadinessReport>;

  /**
   * Leases up to `count` tasks of a queue, waiting up to `timeoutMs` for one
   * to arrive (long-poll). An aborted poll makes the server give back what it
   * was about to hand out.
   */
  pollTasks<I = JsonObject>(input: PollTasksInput, options?: CallOptions): Promise<PolledTask<I>[]>;
  /** Extends the lease of a held task. A 409 NodeFlowApiError means this worker no longer holds it: stop working on it. */
  heartbeatTask(task: TaskRef, input: { workerId: string; leaseSeconds?: number }, options?: CallOptions): Promise<HeartbeatResult>;
  /**
   * Gives a held task back to its queue, visible to the next poll at once, as
   * the same attempt (no retry is spent; its semaphore permits are freed). For
   * a worker that cannot finish it, e.g. one shutting down. 409: this worker no
   * longer holds it.
   */
  releaseTask(task: TaskRef, input: { workerId: string }, options?: CallOptions): Promise<ReleaseResult>;
  /** Reports a held task COMPLETED with its output (a JSON object). 409: it was reported already, or is no longer held. */
  completeTask<I = JsonObject>(task: TaskRef, input: { workerId: string; output?: JsonObject; next?: ReportNext }, options?: CallOptions): Promise<ReportResult<I>>;
  /** Reports a held task failed: `retryable` hands it to its retry policy, otherwise it fails for good (FAILED_WITH_TERMINAL_ERROR). */
  failTask<I = JsonObject>(
    task: TaskRef,
    input: { workerId: string; retryable: boolean; reason: string; output?: JsonObject; next?: ReportNext },
    options?: CallOptions,
  ): Promise<ReportResult<I>>;
  /** Appends lines (at most 1,000, each at most 65,536 characters) to a task's log. A retry after a lost answer can append them twice. */
  appendTaskLogs(task: TaskRef, lines: readonly string[], options?: CallOptions): Promise<{ appended: number }>;
  /** A page of a task's log, oldest line first. */
  listTaskLogs(taskId: string, query?: { after?: number; limit?: number }, options?: CallOptions): Promise<TaskLogPage>;

  /**
   * Saves a definition as its next version. Not retried where the first
   * attempt may have landed (a lost answer would save a second version).
   */
  registerDefinition(definition: DefinitionInput, options?: CallOptions): Promise<RegisteredDefinition>;
  /** Checks a definition without saving it; every problem at once. */
  validateDefinition(definition: DefinitionInput, options?: CallOptions): Promise<DefinitionValidation>;
  /** A definition's latest unarchived version, or `version`. */
  getDefinition(name: string, query?: { version?: number }, options?: CallOptions): Promise<DefinitionVersion>;
  /** Creates or replaces a task definition (retry, timeout and rate-limit policy of a queue). */
  putTaskDefinition(name: string, definition: TaskDefinitionInput, options?: CallOptions): Promise<TaskDefinition>;

  /** Starts a run, at most once per idempotency key (one is made up per call when none is given). */
  startRun(input: StartRunInput, options?: StartRunOptions): Promise<StartedRun>;
  /** A run with its payloads and a page of its tasks. */
  getRun(runId: string, query?: { taskLimit?: number; taskCursor?: string }, options?: CallOptions): Promise<Run>;
  /** Runs, newest first. */
  searchRuns(query?: SearchRunsQuery, options?: CallOptions): Promise<Page<RunSummary>>;
  /** Terminates a running or paused run and everything under it. */
  terminateRun(runId: string, input?: { reason?: string }, options?: CallOptions): Promise<RunActionResult>;
  /** Completes (or fails) a WAIT or HUMAN task of a run: a signal. */
  signalRunTask(
    runId: string,
    ref: string,
    input?: { output?: JsonObject; status?: "COMPLETED" | "FAILED"; reason?: string },
    options?: CallOptions,
  ): Promise<RunTaskActionResult>;

  /** Any other call of the API, with the same authentication, retries and errors. `path` is relative to `/api/v1`. */
  request<T>(request: TransportRequest): Promise<T>;
}

function describeNotReady(report: ReadinessReport | undefined, error: unknown): string {
  if (report && !report.database.ok) return `database: ${report.database.error ?? "unavailable"}`;
  if (report && report.migrations.pending.length > 0) return `pending migrations: ${report.migrations.pending.join(", ")}`;
  if (report && report.migrations.unknown.length > 0) return `database is ahead of this build: ${report.migrations.unknown.join(", ")}`;
  return error instanceof Error ? error.message : "no answer";
}

const seg = encodeURIComponent;

/** Creates a client bound to one server. */
export function createNodeFlowClient(options: NodeFlowClientOptions): NodeFlowClient {
  const transport = createTransport(options);
  const namespace = options.namespace ?? "default";
  const ns = `/api/v1/ns/${seg(namespace)}`;

  async function call<T>(request: TransportRequest): Promise<T> {
    return (await transport.send<T>(request)).body;
  }
  const task = (ref: TaskRef, action: string) => `${ns}/tasks/${seg(ref.taskId)}/${action}`;
  /** A report's attempt outlives the wait its `next` may ask the server for. */
  const reportAttemptMs = (input: { next?: ReportNext }, opts: CallOptions) => (input.next?.timeoutMs ?? 0) + (opts.timeoutMs ?? options.timeoutMs ?? 30_000);

  const client: NodeFlowClient = {
    namespace,
    withNamespace: (other) => createNodeFlowClient({ ...options, namespace: other }),

    async live() {
      try {
        await call({ method: "GET", path: "/api/health/live", retry: false });
        return true;
      } catch {
        return false;
      }
    },
    async ready() {
      return call<ReadinessReport>({ method: "GET", path: "/api/health/ready", acceptStatuses: [503], retry: false });
    },
    async waitUntilReady({ timeoutMs = 60_000, intervalMs = 250 } = {}) {
      const deadline = performance.now() + timeoutMs;
      let last: ReadinessReport | undefined;
      let lastError: unknown;
      for (;;) {
        try {
          last = await client.ready();
          if (last.ok) return last;
        } catch (error) {
          lastError = error;
        }
        if (performance.now() >= deadline) {
          throw new Error(`node-flow at ${options.baseUrl} was not ready after ${timeoutMs} ms (${describeNotReady(last, lastError)})`);
        }
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    },

    async pollTasks<I>(input: PollTasksInput, opts: CallOptions = {}) {
      const result = await call<{ tasks: PolledTask<I>[] }>({
        method: "POST",
        path: `${ns}/tasks/poll`,
        body: input,
        ...opts,
        // The server holds a long-poll up to timeoutMs; the attempt must outlive it.
        timeoutMs: (input.timeoutMs ?? 0) + (opts.timeoutMs ?? options.timeoutMs ?? 30_000),
      });
      return result.tasks;
    },
    heartbeatTask: (ref, input, opts = {}) =>
      call({ method: "POST", path: task(ref, "heartbeat"), body: { workflowId: ref.workflowId, ...input }, ...opts }),
    releaseTask: (ref, input, opts = {}) =>
      call({ method: "POST", path: task(ref, "release"), body: { workflowId: ref.workflowId, ...input }, ...opts }),
    // A report whose `next` may wait holds its answer up to next.timeoutMs, as a poll does.
    completeTask: (ref, input, opts = {}) =>
      call({ method: "POST", path: task(ref, "complete"), body: { workflowId: ref.workflowId, ...input }, ...opts, timeoutMs: reportAttemptMs(input, opts) }),
    failTask: (ref, input, opts = {}) =>
      call({ method: "POST", path: task(ref, "fail"), body: { workflowId: ref.workflowId, ...input }, ...opts, timeoutMs: reportAttemptMs(input, opts) }),
    appendTaskLogs: (ref, lines, opts = {}) =>
      call({ method: "POST", path: task(ref, "logs"), body: { workflowId: ref.workflowId, lines }, ...opts }),
    listTaskLogs: (taskId, query = {}, opts = {}) => call({ method: "GET", path: `${ns}/tasks/${seg(taskId)}/logs`, query, ...opts }),

    registerDefinition: (definition, opts = {}) =>
      call({ method: "POST", path: `${ns}/definitions`, body: definition, idempotent: false, ...opts }),
    validateDefinition: (definition, opts = {}) => call({ method: "POST", path: `${ns}/definitions/validate`, body: definition, ...opts }),
    getDefinition: (name, query = {}, opts = {}) => call({ method: "GET", path: `${ns}/definitions/${seg(name)}`, query, ...opts }),
    putTaskDefinition: (name, definition, opts = {}) =>
      call({ method: "PUT", path: `${ns}/task-definitions/${seg(name)}`, body: definition, ...opts }),

    startRun: (input, { idempotencyKey, idempotencyStrategy, ...opts } = {}) => {
      const headers: Record<string, string> = { "idempotency-key": idempotencyKey ?? `sdk-${crypto.randomUUID()}` };
      if (idempotencyStrategy !== undefined) headers["idempotency-strategy"] = idempotencyStrategy;
      return call({ method: "POST", path: `${ns}/runs`, body: input, headers, ...opts });
    },
    getRun: (runId, query = {}, opts = {}) => call({ method: "GET", path: `${ns}/runs/${seg(runId)}`, query, ...opts }),
    searchRuns: (query = {}, opts = {}) => call({ method: "GET", path: `${ns}/runs`, query: { ...query }, ...opts }),
    // Operator actions are state transitions the server refuses (409) when repeated, so a retry is safe.
    terminateRun: (runId, input = {}, opts = {}) => call({ method: "POST", path: `${ns}/runs/${seg(runId)}/terminate`, body: input, ...opts }),
    signalRunTask: (runId, ref, input = {}, opts = {}) =>
      call({ method: "POST", path: `${ns}/runs/${seg(runId)}/tasks/${seg(ref)}/complete`, body: input, ...opts }),

    request: (request) => call({ ...request, path: `/api/v1${request.path.startsWith("/") ? "" : "/"}${request.path}` }),
  };
  return client;
}
