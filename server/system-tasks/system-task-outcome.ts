import type { Transaction } from "kysely";
import type { Database, TaskExecutionRow } from "../../db/schema";

/**
 * What running a system task came to, before it is reported. FAILED may be
 * retried by the task's policy; FAILED_WITH_TERMINAL_ERROR is for failures a
 * retry cannot fix (a bad config, a refused address), so the workflow does not
 * burn its retries and backoff on them.
 */
export interface SystemTaskOutcome {
  /** IN_PROGRESS: not done yet — the output is recorded and the task comes back after `callbackAfterSeconds` (HTTP_POLL). */
  status: "COMPLETED" | "FAILED" | "FAILED_WITH_TERMINAL_ERROR" | "IN_PROGRESS";
  output: Record<string, unknown>;
  reason?: string;
  /** With IN_PROGRESS: when the runner should see the task again. */
  callbackAfterSeconds?: number;
  /**
   * Writes that must commit with the completion and roll back with it (an
   * EVENT's outbox row). Runs in the report's transaction after the task
   * ended; a refused report rolls it back too.
   */
  inTransaction?: (trx: Transaction<Database>, task: TaskExecutionRow) => Promise<void>;
}

export function completed(output: Record<string, unknown>): SystemTaskOutcome {
  return { status: "COMPLETED", output };
}

export function failed(reason: string, output: Record<string, unknown> = {}): SystemTaskOutcome {
  return { status: "FAILED", output, reason };
}

export function failedTerminally(reason: string, output: Record<string, unknown> = {}): SystemTaskOutcome {
  return { status: "FAILED_WITH_TERMINAL_ERROR", output, reason };
}

export function inProgress(output: Record<string, unknown>, callbackAfterSeconds: number): SystemTaskOutcome {
  return { status: "IN_PROGRESS", output, callbackAfterSeconds };
}
