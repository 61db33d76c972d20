import { NodeFlowApiError, NodeFlowNetworkError } from "./api-error";
import type { JsonObject, PolledTask, ReportNext, ReportResult } from "./api-types";
import { createNodeFlowClient } from "./http-client";
import type { NodeFlowClient } from "./http-client";
import type { RetryInfo, TransportOptions } from "./http-transport";
import { backoffDelay, resolveRetryOptions, sleep } from "./retry-policy";
import type { RetryOptions } from "./retry-policy";
import { SlotPool } from "./slot-pool";
import { TaskLogBuffer } from "./task-log-buffer";
import { LeaseLostError, TerminalError, WorkerShutdownError } from "./worker-errors";

/**
 * A remote worker: long-polls its queues for as many tasks as it has free
 * slots, runs the handler on each concurrently, heartbeats every task it
 * holds, and reports the handler's result. See {@link createWorker}.
 */

/** A task as the handler receives it: leased to this worker, its input resolved. */
export type WorkerTask<I = JsonObject> = PolledTask<I>;

/** What a handler can do besides returning its output. */
export interface TaskContext {
  /** This worker's id (the task's lease owner). */
  readonly workerId: string;
  /**
   * Aborted when the handler should give up: its reason is a
   * {@link LeaseLostError} (the task went to another worker, or was cancelled;
   * its result would be refused) or a {@link WorkerShutdownError} (`stop()`
   * ran out of time). Pass it to fetch and other cancellable calls.
   */
  readonly signal: AbortSignal;
  /** Appends a line to the task's log (visible in the run's view). Never waits: lines are sent in batches. */
  log(line: string): void;
  /**
   * Extends the lease now, as a sign of progress. Heartbeats also go out on
   * their own; call this after a step that took long without yielding. Rejects
   * with {@link LeaseLostError} when the worker no longer holds the task.
   */
  heartbeat(): Promise<void>;
  /** Sends the lines logged so far; resolves when they are sent. The worker also flushes before it reports. */
  flushLogs(): Promise<void>;
  /**
   * The W3C trace context of this task attempt's span in its run's trace, when
   * the server exports traces (`OTEL_TRACES_EXPORTER=otlp`); undefined
   * otherwise. Start the handler's spans under it — with `@opentelemetry/api`,
   * `propagation.extract(context.active(), { traceparent: ctx.traceparent })`
   * — and they join the run's trace; send it on as the `traceparent` header of
   * outgoing calls to carry the trace further.
   */
  readonly traceparent: string | undefined;
}

/**
 * Runs one task. Its return value (a JSON object, or nothing for `{}`) is
 * reported as the task's output, COMPLETED. A thrown {@link TerminalError}
 * fails the task for good (FAILED_WITH_TERMINAL_ERROR); anything else thrown
 * fails it retryably (FAILED), and its retry policy decides what follows.
 */
export type TaskHandler<I = JsonObject, O extends JsonObject = JsonObject> = (
  task: WorkerTask<I>,
  ctx: TaskContext,
) => O | undefined | void | Promise<O | undefined | void>;

/** Structured logging, pino-compatible: fields first, then the message. */
export interface WorkerLogger {
  debug?(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * How a task held by this worker ended:
 * - `completed`, `failed`, `failed-terminal`: reported and accepted;
 * - `lease-lost`: a heartbeat found the task no longer held; not reported;
 * - `refused`: the server refused the report (409/404) on its first attempt;
 * - `unconfirmed`: the report was retried after an attempt whose answer was
 *   lost, and the retry was refused. A server that applied the first attempt
 *   answers its retry as it answered the first, so the task ended some other
 *   way in between (cancelled, timed out), or the server predates that;
 * - `released`: `stop()` ran out of time while the handler ran, and gave the
 *   task back (see {@link ShutdownPolicy});
 * - `abandoned`: `stop()` ran out of time while the handler ran, and left the
 *   task to its lease (the `abandon` policy, or a release that failed);
 * - `report-error`: the report failed after its retries; the lease will lapse
 *   and the task go to another worker.
 */
export type TaskOutcome =
  | "completed"
  | "failed"
  | "failed-terminal"
  | "lease-lost"
  | "refused"
  | "unconfirmed"
  | "released"
  | "abandoned"
  | "report-error";

/** What the worker tells `onEvent` (metrics, tracing). */
export type WorkerEvent =
  | { type: "poll"; queue: string; requested: number; received: number }
  | { type: "task-started"; task: WorkerTask<unknown> }
  | { type: "task-finished"; task: WorkerTask<unknown>; outcome: TaskOutcome; durationMs: number; error?: unknown }
  | { type: "heartbeat"; task: WorkerTask<unknown>; leaseSeconds: number }
  | { type: "error"; stage: "poll" | "heartbeat" | "report" | "logs"; error: unknown; task?: WorkerTask<unknown> }
  | { type: "retry"; info: RetryInfo }
  | { type: "stopping" }
  | { type: "stopped"; drained: boolean; released: number; abandoned: number };

/** Counters since the worker started. */
export interface WorkerStats {
  /** Tasks whose handler or report is under way. */
  inFlight: number;
  /** Polls answered (empty ones included). */
  polls: number;
  /** From polls and reports together. */
  tasksReceived: number;
  /** Of those, leased with a report (its `next`): a poll saved each. */
  tasksWithReports: number;
  completed: number;
  /** Reported FAILED (retryable). */
  failed: number;
  failedTerminal: number;
  leaseLost: number;
  /** Reports refused on their first attempt: the task was no longer this worker's. A correct run has none. */
  refused: number;
  /** Reports refused only after a retry (see {@link TaskOutcome} `unconfirmed`). */
  unconfirmed: number;
  /** Tasks still running when `stop()` timed out, given back to their queue. */
  released: number;
  /** Tasks still running when `stop()` timed out, left to their lease (the abandon policy, or a release that failed). */
  abandoned: number;
  /** Reports given up: they kept failing (network, 5xx) until the task's lease could no longer be valid, or the worker stopped. */
  reportErrors: number;
  /** Report attempts made again after the client's own retries were spent, while the lease could still be valid. */
  reportRetries: number;
  pollErrors: number;
  heartbeatErrors: number;
  /** Log lines not sent: the server was unreachable, the buffer overflowed, or they came after the report. */
  logLinesDropped: number;
}

/**
 * What `stop()` does with a task whose handler is still running when its
 * timeout passes (the handler's `ctx.signal` is aborted either way):
 * - `"release"` (default): gives it back to its queue. It is visible to the
 *   next poll at once, as the same attempt: no retry is spent, nothing is
 *   reported, and its semaphore permits are freed. The next worker runs it
 *   from the start, so a handler whose side effects must not happen twice
 *   should make them idempotent (the task id is a good key).
 * - `"abandon"`: does nothing; the task stays leased to this worker until its
 *   lease lapses — the task's responseTimeoutSeconds (3,600 s by default), or
 *   `leaseSeconds` — and then goes to another worker as the same attempt. For
 *   a handler whose work may still be going on elsewhere (a job it started on
 *   another system) and must not be started a second time meanwhile.
 */
export type ShutdownPolicy = "release" | "abandon";

/** Options of {@link createWorker}. */
export interface WorkerOptions<I = JsonObject, O extends JsonObject = JsonObject> {
  /** The server's origin, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** An API key with the `worker` scope. */
  apiKey: string;
  /** The namespace whose tasks this worker runs. */
  namespace: string;
  /** The queue to poll (a SIMPLE node's task name). Give this or `queues`. */
  queue?: string;
  /**
   * Several queues, one poll loop each, sharing the concurrency budget. Every
   * queue keeps a poll going while slots allow; with fewer slots than queues,
   * a queue may wait up to `pollTimeoutMs` for its turn.
   */
  queues?: readonly string[];
  /** Runs each task. */
  handler: TaskHandler<I, O>;
  /** Tasks held at once. Each poll asks for as many as are free (at most 100). Default 1. */
  concurrency?: number;
  /** How long a poll waits on the server for a task, 0 to 30,000 ms. Default 20,000. */
  pollTimeoutMs?: number;
  /** Names this process; it must be unique among the workers of a namespace. Default: made up at random. */
  workerId?: string;
  /**
   * The lease asked for, for tasks whose definition sets no
   * responseTimeoutSeconds (that wins when set). Heartbeats renew it, so it
   * only bounds how long a crashed worker's tasks wait. Default 60.
   */
  leaseSeconds?: number;
  /**
   * How often a held task is heartbeated. Default: a third of its lease
   * window (responseTimeoutSeconds, else `leaseSeconds`), at most 30 s, so two
   * heartbeats can fail before the lease runs out.
   */
  heartbeatIntervalMs?: number;
  /** See {@link ShutdownPolicy}. Default "release". */
  onShutdownTimeout?: ShutdownPolicy;
  /** Where the worker logs. Default: warnings and errors to the console. */
  logger?: WorkerLogger;
  /** Told of polls, tasks, heartbeats, retries and errors. Must not throw (what it throws is dropped). */
  onEvent?: (event: WorkerEvent) => void;
  /** How failed requests are retried (see retry-policy.ts). */
  retry?: RetryOptions;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
  /** Per request: how long one attempt may take (a poll adds `pollTimeoutMs`). Default 30,000 ms. */
  requestTimeoutMs?: number;
  /** Transport seams for tests: the wait between retries and the jitter's randomness. */
  transport?: Pick<TransportOptions, "sleep" | "random">;
}

/** Options of `stop()`. */
export interface StopOptions {
  /** How long to wait for running handlers, from this call. Default 30,000 ms. */
  timeoutMs?: number;
}

/** What `stop()` resolves with. */
export interface StopResult {
  /** True when every handler finished in time. */
  drained: boolean;
  /** Tasks still running at the timeout that were given back to their queue. */
  released: number;
  /** Tasks still running at the timeout that were left to their lease ({@link ShutdownPolicy}, or a release that failed). */
  abandoned: number;
}

/** A running worker. */
export interface NodeFlowWorker {
  /** Its lease-owner id. */
  readonly workerId: string;
  /** The queues it polls. */
  readonly queues: readonly string[];
  /** A snapshot of its counters. */
  stats(): WorkerStats;
  /**
   * Graceful shutdown: stops polling (the parked poll is aborted, and the
   * server gives back what it was about to hand out), waits up to `timeoutMs`
   * for running handlers to finish and report, then deals with the rest per
   * {@link ShutdownPolicy} and resolves. Calling it again returns the same
   * promise; a shorter `timeoutMs` then brings the deadline forward (a second
   * Ctrl-C: `stop({ timeoutMs: 0 })` gives back what still runs at once).
   */
  stop(options?: StopOptions): Promise<StopResult>;
}

/** The server's limits (server/rest/routes/worker-tasks.ts, server/tasks/task-poller.ts). */
const MAX_POLL_COUNT = 100;
const MAX_POLL_TIMEOUT_MS = 30_000;
const MAX_REASON_LENGTH = 10_000;
/** Reports in flight at the shutdown deadline get this long more before they are cut off. */
const REPORT_GRACE_MS = 5_000;

type Outcome = { kind: "completed"; output: unknown } | { kind: "failed"; retryable: boolean; reason: string; output?: JsonObject };

interface Execution<I> {
  task: WorkerTask<I>;
  /** running → reporting → done; or running → lost → done; or running → stopped (stop() took it over) → done. */
  state: "running" | "reporting" | "lost" | "stopped" | "done";
  controller: AbortController;
  logs: TaskLogBuffer;
  timer: ReturnType<typeof setTimeout> | undefined;
  startedAt: number;
  done: Promise<void>;
  /** Whether it holds a concurrency slot (always, unless a server answered more tasks than asked). */
  holdsSlot: boolean;
  /** performance.now() by which the server's lease may end: from the lease asked for, renewed by each heartbeat. */
  leaseUntil: number;
}

const consoleLogger: WorkerLogger = {
  info: () => undefined,
  warn: (fields, message) => console.warn(`[node-flow worker] ${message}`, fields),
  error: (fields, message) => console.error(`[node-flow worker] ${message}`, fields),
};

function defaultWorkerId(): string {
  const pid = (globalThis as { process?: { pid?: number } }).process?.pid;
  return `worker-${pid === undefined ? "" : `${pid}-`}${crypto.randomUUID().slice(0, 8)}`;
}

function reasonOf(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : typeof error === "string" ? error : safeJson(error);
  const reason = text.trim() === "" ? "the handler failed without a message" : text;
  return reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason;
}

/** An error as one line for a log field. */
function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : typeof error === "string" ? error : safeJson(error);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** Why `output` cannot be reported as a task output, or undefined when it can. */
function outputProblem(output: unknown): string | undefined {
  if (output === undefined || output === null) return undefined;
  if (Object.prototype.toString.call(output) !== "[object Object]") {
    return `the handler returned ${Array.isArray(output) ? "an array" : typeof output}; a task's output must be a JSON object`;
  }
  try {
    JSON.stringify(output);
  } catch (error) {
    return `the handler's output is not JSON: ${error instanceof Error ? error.message : errorText(error)}`;
  }
  return undefined;
}

/** No answer, or an answer that says "not now" (5xx, 429): the same report may land later. A 4xx is final. */
function isTransient(error: unknown): boolean {
  if (error instanceof NodeFlowNetworkError) return true;
  return error instanceof NodeFlowApiError && ((error.status >= 500 && error.status !== 501) || error.status === 429);
}

function isRefusal(error: unknown): error is NodeFlowApiError {
  return error instanceof NodeFlowApiError && (error.status === 409 || error.status === 404);
}

/**
 * Creates a worker and starts it polling at once.
 *
 * ```ts
 * const worker = createWorker({
 *   baseUrl: "http://localhost:3000", apiKey: process.env.NODE_FLOW_API_KEY!, namespace: "default",
 *   queue: "send_email", concurrency: 8,
 *   handler: async (task, ctx) => {
 *     ctx.log(`sending to ${task.input.to}`);
 *     return { messageId: await send(task.input, { signal: ctx.signal }) };
 *   },
 * });
 * process.once("SIGTERM", () => void worker.stop({ timeoutMs: 30_000 }));
 * ```
 */
export function createWorker<I = JsonObject, O extends JsonObject = JsonObject>(options: WorkerOptions<I, O>): NodeFlowWorker {
  const queues = options.queues !== undefined ? [...options.queues] : options.queue !== undefined ? [options.queue] : [];
  if (options.queues !== undefined && options.queue !== undefined) throw new TypeError("createWorker: give `queue` or `queues`, not both");
  if (queues.length === 0 || queues.some((q) => typeof q !== "string" || q === "")) throw new TypeError("createWorker: name at least one queue");
  if (new Set(queues).size !== queues.length) throw new TypeError("createWorker: a queue is named twice");
  const concurrency = options.concurrency ?? 1;
  const slots = new SlotPool(concurrency);
  const pollTimeoutMs = options.pollTimeoutMs ?? 20_000;
  if (!(Number.isInteger(pollTimeoutMs) && pollTimeoutMs >= 0 && pollTimeoutMs <= MAX_POLL_TIMEOUT_MS)) {
    throw new RangeError(`createWorker: pollTimeoutMs must be an integer from 0 to ${MAX_POLL_TIMEOUT_MS}, got ${pollTimeoutMs}`);
  }
  const reportWaitMs = Math.min(pollTimeoutMs, 1000);
  const leaseSeconds = options.leaseSeconds ?? 60;
  if (!(Number.isInteger(leaseSeconds) && leaseSeconds >= 1 && leaseSeconds <= 86_400)) {
    throw new RangeError(`createWorker: leaseSeconds must be an integer from 1 to 86400, got ${leaseSeconds}`);
  }
  if (options.heartbeatIntervalMs !== undefined && !(options.heartbeatIntervalMs > 0)) {
    throw new RangeError(`createWorker: heartbeatIntervalMs must be positive, got ${options.heartbeatIntervalMs}`);
  }
  const workerId = options.workerId ?? defaultWorkerId();
  const logger = options.logger ?? consoleLogger;
  const shutdownPolicy = options.onShutdownTimeout ?? "release";
  if (shutdownPolicy !== "release" && shutdownPolicy !== "abandon") {
    throw new TypeError(`createWorker: onShutdownTimeout must be "release" or "abandon", got ${JSON.stringify(shutdownPolicy)}`);
  }
  const handler = options.handler;

  const emit = (event: WorkerEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A metrics hook must not take the worker down.
    }
  };

  const client: NodeFlowClient = createNodeFlowClient({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    namespace: options.namespace,
    fetch: options.fetch,
    retry: options.retry,
    timeoutMs: options.requestTimeoutMs,
    onRetry: (info) => {
      logger.debug?.({ ...info, error: info.error === undefined ? undefined : errorText(info.error) }, "retrying a request");
      emit({ type: "retry", info });
    },
    ...options.transport,
  });
  // A poll loop's own backoff after its retries are spent (the server is down, or the key was revoked).
  const pollBackoff = resolveRetryOptions({ minDelayMs: 1000, maxDelayMs: 30_000 });
  // A report's, after the client's: its result is finished work, worth waiting for the server as long as the lease lasts.
  const reportBackoff = resolveRetryOptions({ minDelayMs: 500, maxDelayMs: 10_000 });
  const lastReportError = new WeakMap<Execution<I>, unknown>();

  const stats: Omit<WorkerStats, "inFlight"> = {
    polls: 0,
    tasksReceived: 0,
    tasksWithReports: 0,
    completed: 0,
    failed: 0,
    failedTerminal: 0,
    leaseLost: 0,
    refused: 0,
    unconfirmed: 0,
    released: 0,
    abandoned: 0,
    reportErrors: 0,
    reportRetries: 0,
    pollErrors: 0,
    heartbeatErrors: 0,
    logLinesDropped: 0,
  };
  const executions = new Set<Execution<I>>();
  /** Aborted by stop(): ends the poll loops, their waits, and the parked polls. */
  const stopping = new AbortController();
  /** Aborted REPORT_GRACE_MS after stop()'s deadline: cuts off reports and heartbeats still retrying. */
  const hardStop = new AbortController();
  let stopPromise: Promise<StopResult> | undefined;
  /** stop()'s deadline (performance.now()), and the timeout that set it; a later stop() may bring it forward. */
  let deadlineAt = Number.POSITIVE_INFINITY;
  let deadlineTimeoutMs = 0;
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  let deadlinePassed!: () => void;
  const deadlineReached = new Promise<false>((resolve) => {
    deadlinePassed = () => resolve(false);
  });
  function bringDeadlineForward(timeoutMs: number): void {
    const at = performance.now() + timeoutMs;
    if (at >= deadlineAt) return;
    deadlineAt = at;
    deadlineTimeoutMs = timeoutMs;
    if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
    deadlineTimer = setTimeout(deadlinePassed, timeoutMs);
  }

  /** The lease a task is held under: its definition's heartbeat window, else the lease the worker asks for. */
  const leaseWindowSeconds = (task: WorkerTask<I>): number =>
    task.responseTimeoutSeconds !== null && task.responseTimeoutSeconds > 0 ? task.responseTimeoutSeconds : leaseSeconds;
  const heartbeatEvery = (task: WorkerTask<I>): number => {
    if (options.heartbeatIntervalMs !== undefined) return options.heartbeatIntervalMs;
    return Math.min(30_000, Math.max(100, (leaseWindowSeconds(task) * 1000) / 3));
  };

  function markLost(exec: Execution<I>, detail: string): void {
    if (exec.state !== "running") return;
    exec.state = "lost";
    stopHeartbeats(exec);
    exec.controller.abort(new LeaseLostError(exec.task.taskId, detail));
    logger.warn({ taskId: exec.task.taskId, workflowId: exec.task.workflowId, detail }, "lost the lease of a task; its result will not be reported");
  }

  /** One heartbeat. `explicit`: called by the handler, which wants failures thrown. */
  async function beat(exec: Execution<I>, explicit: boolean): Promise<void> {
    if (exec.state === "lost") throw exec.controller.signal.reason;
    if (exec.state !== "running" && exec.state !== "reporting") return;
    const every = heartbeatEvery(exec.task);
    const sentAt = performance.now();
    try {
      const result = await client.heartbeatTask(
        exec.task,
        { workerId, leaseSeconds },
        // A heartbeat that takes longer than its interval is late anyway; the next one tries afresh.
        { signal: hardStop.signal, timeoutMs: Math.max(1000, every), retry: { retries: 2, maxDelayMs: Math.max(200, every / 2) } },
      );
      exec.leaseUntil = Math.max(exec.leaseUntil, sentAt + result.leaseSeconds * 1000);
      emit({ type: "heartbeat", task: exec.task, leaseSeconds: result.leaseSeconds });
    } catch (error) {
      // Once the report is under way it deletes the lease, and a heartbeat racing it is refused: nothing is lost.
      // That holds after the report too: a heartbeat sent before it can be answered (or retried) after it, and
      // since the report may wait up to a second for the next task, "after" is no longer a rare moment.
      if (exec.state !== "running") return;
      if (isRefusal(error)) {
        stats.leaseLost += 1;
        markLost(exec, error.detail ?? error.message);
        if (explicit) throw exec.controller.signal.reason;
        return;
      }
      stats.heartbeatErrors += 1;
      emit({ type: "error", stage: "heartbeat", error, task: exec.task });
      logger.warn({ taskId: exec.task.taskId, error: errorText(error) }, "heartbeat failed; trying again at the next interval");
      if (explicit) throw error;
    }
  }

  function scheduleHeartbeat(exec: Execution<I>, delayMs: number = heartbeatEvery(exec.task)): void {
    exec.timer = setTimeout(() => {
      exec.timer = undefined;
      const sentAt = performance.now();
      void beat(exec, false).finally(() => {
        // Chained rather than an interval, so heartbeats never overlap however slow
        // the server; the next is due an interval after this one was *sent*, so a
        // slow answer does not stretch the gap between renewals.
        const next = Math.max(0, heartbeatEvery(exec.task) - (performance.now() - sentAt));
        if ((exec.state === "running" || exec.state === "reporting") && !hardStop.signal.aborted) scheduleHeartbeat(exec, next);
      });
    }, delayMs);
  }

  function stopHeartbeats(exec: Execution<I>): void {
    if (exec.timer !== undefined) clearTimeout(exec.timer);
    exec.timer = undefined;
  }

  /**
   * A report asks for the worker's next task when the task's slot can pass
   * straight to it: one request and one server transaction instead of a
   * report and a poll. Only with one queue — with several, a slot that always
   * passed to the same queue's next task would starve the others' polls —
   * and not once stopping.
   *
   * When the queue is empty, the report waits up to a second for its next
   * task, as the poll it stands for would: in a chain of tasks the next one
   * is usually being scheduled as the report lands, and a second poll request
   * per task is what the wait saves. Capped at a second (and at the poll
   * timeout) because a stop waits for reports in flight.
   */
  function nextAsk(exec: Execution<I>): { next?: ReportNext } {
    return queues.length === 1 && exec.holdsSlot && !stopping.signal.aborted ? { next: { count: 1, leaseSeconds, timeoutMs: reportWaitMs } } : {};
  }

  /** Runs what a report leased in the reporting task's slot; given back at once if the worker began stopping meanwhile. */
  function handOn(exec: Execution<I>, next: readonly WorkerTask<I>[] | undefined): void {
    if (next === undefined || next.length === 0) return;
    stats.tasksReceived += next.length;
    stats.tasksWithReports += next.length;
    emit({ type: "poll", queue: exec.task.queue, requested: 1, received: next.length });
    if (stopping.signal.aborted) {
      // stop() waits only for the tasks it saw; a task leased as it began goes straight back to the queue.
      for (const task of next) void client.releaseTask(task, { workerId }, { signal: hardStop.signal }).catch(() => undefined);
      return;
    }
    next.forEach((task, i) => {
      const takesSlot = i === 0 && exec.holdsSlot;
      if (takesSlot) exec.holdsSlot = false;
      startTask(task, takesSlot);
    });
  }

  /**
   * Reports `outcome`; resolves with how the task ended, never rejects.
   *
   * A finished result is never dropped while the server could still take it:
   * a report that fails without an answer, or with a 5xx or 429 (the client's
   * own retries spent — the server restarting, the database down), is sent
   * again with backoff for as long as the task's lease may still be valid
   * (heartbeats keep renewing it meanwhile, when they get through). Reports
   * are idempotent: one that landed and lost its answer is answered the same
   * on its retry. Only then, or when the worker is stopped hard, is it given
   * up (`report-error`), and the lease lapses so the task is handed on.
   */
  async function report(exec: Execution<I>, outcome: Outcome): Promise<TaskOutcome> {
    for (let retry = 1; ; retry++) {
      const attempt = await reportOnce(exec, outcome, retry > 1);
      if (attempt !== "transient") return attempt;
      const wait = backoffDelay(retry, reportBackoff);
      if (hardStop.signal.aborted || performance.now() + wait >= exec.leaseUntil) return giveUpReport(exec);
      stats.reportRetries += 1;
      await sleep(wait, hardStop.signal).catch(() => undefined);
    }
  }

  function giveUpReport(exec: Execution<I>): TaskOutcome {
    stats.reportErrors += 1;
    const error = lastReportError.get(exec);
    lastReportError.delete(exec);
    emit({ type: "error", stage: "report", error, task: exec.task });
    logger.error(
      { taskId: exec.task.taskId, workflowId: exec.task.workflowId, error: errorText(error) },
      hardStop.signal.aborted ? "stopped before a task's report got through; its lease will lapse and it will be handed on" : "could not report a task before its lease ran out; it will be handed on",
    );
    return "report-error";
  }

  /** One report, with the client's own retries; "transient" when it may be sent again. */
  async function reportOnce(exec: Execution<I>, outcome: Outcome, isRetry: boolean): Promise<TaskOutcome | "transient"> {
    const ref = exec.task;
    const signal = hardStop.signal;
    try {
      if (outcome.kind === "completed") {
        const problem = outputProblem(outcome.output);
        if (problem !== undefined) return reportOnce(exec, { kind: "failed", retryable: false, reason: problem }, isRetry);
        let result: ReportResult<I>;
        try {
          result = await client.completeTask<I>(ref, { workerId, output: (outcome.output ?? {}) as JsonObject, ...nextAsk(exec) }, { signal });
        } catch (error) {
          // The server checks what the SDK cannot (the output's size, its schema): fail the task with its words, or it would hang until its lease lapsed.
          if (error instanceof NodeFlowApiError && error.status === 400) {
            return reportOnce(exec, { kind: "failed", retryable: false, reason: `the server refused the output: ${error.detail ?? error.message}` }, isRetry);
          }
          throw error;
        }
        stats.completed += 1;
        handOn(exec, result.next);
        return "completed";
      }
      const result = await client.failTask<I>(
        ref,
        { workerId, retryable: outcome.retryable, reason: outcome.reason, ...(outcome.output ? { output: outcome.output } : {}), ...nextAsk(exec) },
        { signal },
      );
      handOn(exec, result.next);
      if (outcome.retryable) stats.failed += 1;
      else stats.failedTerminal += 1;
      return outcome.retryable ? "failed" : "failed-terminal";
    } catch (error) {
      if (isRefusal(error)) {
        // The server answers a retry of a report it applied as it answered
        // the first attempt; a retry refused all the same is told apart from
        // a first-attempt refusal, since its first attempt may have landed.
        if (error.attempts > 1 || isRetry) {
          stats.unconfirmed += 1;
          logger.warn({ taskId: ref.taskId, detail: error.detail }, "a retried report was refused: the task ended otherwise between its attempts");
          return "unconfirmed";
        }
        stats.refused += 1;
        logger.warn({ taskId: ref.taskId, detail: error.detail }, "the server refused the report: the task is no longer held by this worker");
        return "refused";
      }
      lastReportError.set(exec, error);
      if (isTransient(error)) {
        if (!isRetry) logger.warn({ taskId: ref.taskId, error: errorText(error) }, "a report did not get through; sending it again while the lease lasts");
        return "transient";
      }
      return giveUpReport(exec);
    }
  }

  async function runTask(exec: Execution<I>): Promise<void> {
    const { task } = exec;
    emit({ type: "task-started", task });
    let outcome: Outcome;
    try {
      const ctx: TaskContext = {
        workerId,
        signal: exec.controller.signal,
        // The server refuses text no row can hold (a NUL, a lone surrogate) with a 400 for the whole batch: clean each line here.
        log: (line) => exec.logs.push(storableLine(String(line))),
        heartbeat: () => beat(exec, true),
        flushLogs: () => exec.logs.flush(),
        traceparent: task.traceparent,
      };
      const output: unknown = await handler(task, ctx);
      outcome = { kind: "completed", output };
    } catch (error) {
      if (error instanceof TerminalError) {
        outcome = { kind: "failed", retryable: false, reason: reasonOf(error), ...(error.output ? { output: error.output } : {}) };
      } else {
        outcome = { kind: "failed", retryable: true, reason: reasonOf(error) };
        logger.info({ taskId: task.taskId, error: error instanceof Error ? error.stack : errorText(error) }, "handler failed; reporting a retryable failure");
      }
    }
    let ended: TaskOutcome;
    if (exec.state === "running") {
      exec.state = "reporting";
      await exec.logs.close();
      ended = await report(exec, outcome);
    } else {
      // Stopped: stop() gave it back or left it, and reports how it ended itself.
      if (exec.state !== "lost") return;
      // Lost: its result would be refused.
      ended = "lease-lost";
      await exec.logs.close();
    }
    finishExecution(exec, ended, outcome.kind === "failed" ? outcome.reason : undefined);
  }

  function finishExecution(exec: Execution<I>, outcome: TaskOutcome, error?: unknown): void {
    if (exec.state === "done") return;
    exec.state = "done";
    stopHeartbeats(exec);
    executions.delete(exec);
    if (exec.holdsSlot) slots.release(1);
    exec.holdsSlot = false;
    stats.logLinesDropped += exec.logs.dropped;
    exec.logs.dropped = 0;
    emit({ type: "task-finished", task: exec.task, outcome, durationMs: performance.now() - exec.startedAt, ...(error === undefined ? {} : { error }) });
  }

  function startTask(task: WorkerTask<I>, holdsSlot: boolean): void {
    const exec: Execution<I> = {
      task,
      state: "running",
      controller: new AbortController(),
      logs: undefined as unknown as TaskLogBuffer,
      timer: undefined,
      startedAt: performance.now(),
      done: Promise.resolve(),
      holdsSlot,
      leaseUntil: performance.now() + leaseWindowSeconds(task) * 1000,
    };
    exec.logs = new TaskLogBuffer(
      async (lines) => {
        await client.appendTaskLogs(task, lines, { signal: hardStop.signal });
      },
      (error) => {
        emit({ type: "error", stage: "logs", error, task });
        logger.warn({ taskId: task.taskId, error: errorText(error) }, "could not send log lines; they are dropped");
      },
    );
    executions.add(exec);
    scheduleHeartbeat(exec);
    exec.done = runTask(exec).catch((error: unknown) => {
      // runTask handles everything it can; this is a bug guard, so a slot is never leaked.
      logger.error({ taskId: task.taskId, error: errorText(error) }, "worker bug: a task's bookkeeping failed");
      finishExecution(exec, "report-error", error);
    });
  }

  const loopPolling = new Map<string, boolean>(queues.map((q) => [q, false]));

  async function pollLoop(queue: string): Promise<void> {
    let failures = 0;
    const signal = stopping.signal;
    while (!signal.aborted) {
      let reserved: number;
      try {
        // With several queues, leave a slot for each other queue that has no poll going, so none starves behind a parked poll.
        const leave = () => [...loopPolling].filter(([q, polling]) => q !== queue && !polling).length;
        reserved = await slots.acquire(MAX_POLL_COUNT, leave, signal);
      } catch {
        return;
      }
      loopPolling.set(queue, true);
      let tasks: WorkerTask<I>[];
      const started = performance.now();
      try {
        tasks = await client.pollTasks<I>({ queue, count: reserved, timeoutMs: pollTimeoutMs, workerId, leaseSeconds }, { signal });
      } catch (error) {
        loopPolling.set(queue, false);
        slots.release(reserved);
        if (signal.aborted) return;
        failures += 1;
        stats.pollErrors += 1;
        emit({ type: "error", stage: "poll", error, task: undefined });
        const delay = backoffDelay(failures, pollBackoff);
        logger.error({ queue, error: errorText(error), retryInMs: delay }, "poll failed");
        try {
          await sleep(delay, signal);
        } catch {
          return;
        }
        continue;
      }
      loopPolling.set(queue, false);
      failures = 0;
      stats.polls += 1;
      stats.tasksReceived += tasks.length;
      emit({ type: "poll", queue, requested: reserved, received: tasks.length });
      // Tasks leased as the stop came in are this worker's all the same: they run, and stop() waits for them.
      tasks.forEach((task, i) => startTask(task, i < reserved));
      slots.release(reserved - Math.min(reserved, tasks.length));
      // A short poll (pollTimeoutMs under a second) that found nothing must not turn into a busy loop.
      const idle = tasks.length === 0 ? 1000 - (performance.now() - started) : 0;
      if (idle > 0) {
        try {
          await sleep(idle, signal);
        } catch {
          return;
        }
      }
    }
  }

  const loops = queues.map((queue) => pollLoop(queue));
  logger.info({ workerId, queues, concurrency }, "worker started");

  /** Gives a stopped task back to its queue; resolves with how it ended, never rejects. */
  async function release(exec: Execution<I>): Promise<TaskOutcome> {
    try {
      await client.releaseTask(exec.task, { workerId }, { signal: hardStop.signal });
      return "released";
    } catch (error) {
      if (isRefusal(error)) {
        // Retried after a lost answer: the earlier attempt most likely gave it back.
        if (error.attempts > 1) return "released";
        // The lease was lost meanwhile (handed on after it lapsed, or the task was cancelled): nothing to give back.
        stats.leaseLost += 1;
        return "lease-lost";
      }
      logger.error({ taskId: exec.task.taskId, error: errorText(error) }, "could not give a task back; it goes to another worker when its lease lapses");
      return "abandoned";
    }
  }

  async function shutdown(): Promise<StopResult> {
    emit({ type: "stopping" });
    logger.info({ workerId, inFlight: executions.size, timeoutMs: deadlineTimeoutMs }, "worker stopping");
    stopping.abort(new Error("the worker is stopping"));
    await Promise.all(loops);

    const drained = await Promise.race([Promise.all([...executions].map((e) => e.done)).then(() => true as const), deadlineReached]);
    clearTimeout(deadlineTimer);

    let released = 0;
    let abandoned = 0;
    if (!drained) {
      const grace = setTimeout(() => hardStop.abort(new WorkerShutdownError(deadlineTimeoutMs)), REPORT_GRACE_MS);
      const waits: Promise<unknown>[] = [];
      for (const exec of [...executions]) {
        if (exec.state === "reporting") {
          waits.push(exec.done);
          continue;
        }
        if (exec.state !== "running") continue;
        exec.state = "stopped";
        stopHeartbeats(exec);
        exec.controller.abort(new WorkerShutdownError(deadlineTimeoutMs));
        logger.warn({ taskId: exec.task.taskId, policy: shutdownPolicy }, "a handler did not finish before the shutdown timeout");
        // What it logged so far is sent (while the task is still this worker's); what it logs from now on is dropped.
        const logsSent = exec.logs.close();
        waits.push(
          logsSent
            .then(() => (shutdownPolicy === "release" ? release(exec) : ("abandoned" as const)))
            .then((outcome) => {
              if (outcome === "released") {
                released += 1;
                stats.released += 1;
              } else if (outcome === "abandoned") {
                abandoned += 1;
                stats.abandoned += 1;
              }
              finishExecution(exec, outcome);
            }),
        );
      }
      await Promise.all(waits);
      clearTimeout(grace);
    }
    hardStop.abort(new Error("the worker has stopped"));
    for (const exec of executions) stopHeartbeats(exec);
    emit({ type: "stopped", drained, released, abandoned });
    logger.info({ workerId, drained, released, abandoned }, "worker stopped");
    return { drained, released, abandoned };
  }

  return {
    workerId,
    queues,
    stats: () => ({ ...stats, inFlight: executions.size }),
    stop: ({ timeoutMs = 30_000 } = {}) => {
      if (!(Number.isFinite(timeoutMs) && timeoutMs >= 0)) return Promise.reject(new RangeError(`stop: timeoutMs must be a non-negative number, got ${timeoutMs}`));
      bringDeadlineForward(timeoutMs);
      return (stopPromise ??= shutdown());
    },
  };
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A log line as the server stores it: NULs dropped, lone surrogates as U+FFFD. */
function storableLine(line: string): string {
  return line.replaceAll("\u0000", "").replace(LONE_SURROGATE, "\ufffd");
}
