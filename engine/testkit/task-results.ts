/**
 * What a simulated worker receives and may return. Workers are plain
 * functions, sync or async; the shapes mirror what a real worker reports
 * through the task-update API (status, output, reason, callback).
 */

/** The task a simulated worker (or signal / human handler) is handed. */
export interface SimulatedTask {
  workflowId: string;
  taskId: string;
  ref: string;
  /** 0 outside loops; 1, 2, 3… inside a DO_WHILE body. */
  iteration: number;
  /** 0 for the first attempt, +1 per retry (Conductor's retryCount). */
  attempt: number;
  taskType: string;
  taskDefName: string;
  /** The resolved input. A copy: changing it changes nothing. */
  input: Record<string, unknown>;
  /** The output reported so far (non-empty after an IN_PROGRESS report). */
  output: Record<string, unknown>;
  /** How many times this attempt has been handed out (1 on the first call). */
  pollCount: number;
  /** Dynamic-fork instance index. */
  forkIndex?: number;
  /** The DO_WHILE or dynamic fork the task belongs to. */
  parentRef?: string;
  /** The virtual clock, epoch milliseconds. */
  now: number;
}

/**
 * An explicit outcome. `afterSeconds` makes the report arrive that many
 * virtual seconds after the task was handed out (default 0), so timeouts can
 * overtake it: a report for a task that has meanwhile timed out is rejected.
 */
export type TaskOutcome =
  | { status: "COMPLETED"; output?: Record<string, unknown>; afterSeconds?: number }
  /** Retried per the task's policy; `reason` becomes reasonForIncompletion. */
  | { status: "FAILED"; reason?: string; output?: Record<string, unknown>; afterSeconds?: number }
  /** Never retried. */
  | { status: "FAILED_WITH_TERMINAL_ERROR"; reason?: string; output?: Record<string, unknown>; afterSeconds?: number }
  /** Not done: the task is handed out again after `callbackAfterSeconds` (the worker is called again). */
  | { status: "IN_PROGRESS"; callbackAfterSeconds: number; output?: Record<string, unknown>; afterSeconds?: number };

/**
 * What a handler may return: a {@link TaskOutcome} (recognised by a `status`
 * of exactly COMPLETED, FAILED, FAILED_WITH_TERMINAL_ERROR or IN_PROGRESS),
 * or anything else as the output of a COMPLETED task — an object as is,
 * `undefined` as `{}`, any other value as `{ result: value }`. To complete
 * with an output that itself has such a `status` key, return
 * `completed({ status: "FAILED", … })`. Throwing fails the attempt (FAILED,
 * retryable) with the error's message, as the worker SDK does.
 */
export type TaskResultLike = TaskOutcome | Record<string, unknown> | readonly unknown[] | string | number | boolean | null | undefined | void;

/** A simulated worker, signal or human: receives the task, returns its result (or a promise of it). */
export type TaskHandler = (task: SimulatedTask) => TaskResultLike | Promise<TaskResultLike>;

/** `{ status: "COMPLETED", output }`. */
export function completed(output: Record<string, unknown> = {}, afterSeconds?: number): TaskOutcome {
  return afterSeconds === undefined ? { status: "COMPLETED", output } : { status: "COMPLETED", output, afterSeconds };
}

/** `{ status: "FAILED", reason }`: retried per policy. */
export function failed(reason: string, afterSeconds?: number): TaskOutcome {
  return afterSeconds === undefined ? { status: "FAILED", reason } : { status: "FAILED", reason, afterSeconds };
}

/** `{ status: "FAILED_WITH_TERMINAL_ERROR", reason }`: never retried. */
export function terminalError(reason: string): TaskOutcome {
  return { status: "FAILED_WITH_TERMINAL_ERROR", reason };
}

/** `{ status: "IN_PROGRESS", callbackAfterSeconds }`: ask again later. */
export function inProgress(callbackAfterSeconds: number, output?: Record<string, unknown>): TaskOutcome {
  return output === undefined ? { status: "IN_PROGRESS", callbackAfterSeconds } : { status: "IN_PROGRESS", callbackAfterSeconds, output };
}

const OUTCOME_STATUSES: ReadonlySet<unknown> = new Set(["COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "IN_PROGRESS"]);

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A handler's return value as an outcome with every field settled. */
export interface NormalizedOutcome {
  status: "COMPLETED" | "FAILED" | "FAILED_WITH_TERMINAL_ERROR" | "IN_PROGRESS";
  output: Record<string, unknown>;
  reason?: string;
  callbackAfterSeconds?: number;
  afterSeconds: number;
}

const seconds = (v: unknown, what: string): number => {
  if (v === undefined) return 0;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw new TypeError(`${what} must be a finite number ≥ 0, got ${JSON.stringify(v)}`);
  return v;
};

/** Reads a handler's return value (see {@link TaskResultLike}). Output is deep-copied through JSON, as the API would store it. */
export function normalizeOutcome(value: unknown): NormalizedOutcome {
  const json = (v: unknown): Record<string, unknown> => {
    if (v === undefined) return {};
    const copy: unknown = JSON.parse(JSON.stringify(v) ?? "null");
    return isPlainObject(copy) ? copy : { result: copy };
  };
  if (isPlainObject(value) && OUTCOME_STATUSES.has(value.status)) {
    const status = value.status as NormalizedOutcome["status"];
    const out: NormalizedOutcome = { status, output: json(value.output), afterSeconds: seconds(value.afterSeconds, "afterSeconds") };
    if (status === "IN_PROGRESS") out.callbackAfterSeconds = seconds(value.callbackAfterSeconds, "callbackAfterSeconds");
    if ((status === "FAILED" || status === "FAILED_WITH_TERMINAL_ERROR") && value.reason !== undefined) out.reason = typeof value.reason === "string" ? value.reason : JSON.stringify(value.reason);
    if (status === "FAILED" || status === "FAILED_WITH_TERMINAL_ERROR") out.reason ??= `worker reported ${status}`;
    return out;
  }
  return { status: "COMPLETED", output: json(value), afterSeconds: 0 };
}
