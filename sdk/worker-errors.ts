import type { JsonObject } from "./api-types";

/**
 * Errors that steer a worker. A handler throws {@link TerminalError} to fail a
 * task for good; any other thrown value fails it retryably. The worker aborts
 * a handler's `ctx.signal` with {@link LeaseLostError} or
 * {@link WorkerShutdownError}, so the handler can tell why it should stop.
 */

/**
 * Thrown by a handler: the task fails as FAILED_WITH_TERMINAL_ERROR and is
 * never retried, whatever its retry policy (bad input, a permanent refusal
 * downstream). Anything else a handler throws is a retryable failure.
 */
export class TerminalError extends Error {
  override name = "TerminalError";
  /** Reported as the task's output alongside the failure, when given. */
  readonly output: JsonObject | undefined;

  constructor(message: string, options: { output?: JsonObject; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.output = options.output;
  }
}

/**
 * The reason of `ctx.signal` when the worker lost the task's lease: a
 * heartbeat was refused because the lease expired and the task went to another
 * worker, or the task was cancelled or timed out. Its result would be refused,
 * so the worker does not report it.
 */
export class LeaseLostError extends Error {
  override name = "LeaseLostError";
  /** The task whose lease was lost. */
  readonly taskId: string;

  constructor(taskId: string, detail: string) {
    super(`lost the lease of task ${taskId}: ${detail}`);
    this.taskId = taskId;
  }
}

/** The reason of `ctx.signal` when `stop()` ran out of time before the handler finished. */
export class WorkerShutdownError extends Error {
  override name = "WorkerShutdownError";

  constructor(timeoutMs: number) {
    super(`the worker shut down and the handler did not finish within ${timeoutMs} ms`);
  }
}
