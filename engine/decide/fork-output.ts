import type { TaskStatus } from "../statuses";
import type { ForkOutputShape } from "./types";

/**
 * A dynamic fork's running bookkeeping and its final, aggregated output.
 *
 * While a FORK_JOIN_DYNAMIC row runs, its output is only `{ total, completed }`
 * (see `AggregateForkOutputCommand` for why, and why the count is exact). Its
 * final output — what `${fork.output…}` reads downstream — is built by the
 * shell from the instance rows when the fork ends: in Postgres by one SQL
 * statement, in the in-memory shells by {@link aggregateForkOutput} below,
 * which is the reference for that statement's result.
 */

/** Statuses that make an instance count as done (and its output part of the aggregate). */
export const FORK_INSTANCE_DONE_STATUSES: readonly TaskStatus[] = ["COMPLETED", "COMPLETED_WITH_ERRORS", "SKIPPED"];

/** True when an instance row in this status counts towards its fork's `completed`. */
export function isForkInstanceDone(status: TaskStatus): boolean {
  return FORK_INSTANCE_DONE_STATUSES.includes(status);
}

/** A running fork's bookkeeping output. */
export interface ForkProgress {
  /** Number of instances. */
  total: number;
  /** Instances that ended successfully and that an evaluation has reacted to. */
  completed: number;
}

/**
 * The aggregated output of a fork with `outputs.length` instances, where
 * `outputs[k]` is the output of instance k's successful attempt, or undefined
 * when it has none (only possible when the fork ends COMPLETED_WITH_ERRORS).
 * `labels` is the fork row's `input.forkedTasks` (read for the Conductor form).
 * `__proto__` and other odd labels are written as own keys, as jsonb_object_agg does.
 */
export function aggregateForkOutput(shape: ForkOutputShape, labels: readonly unknown[], outputs: readonly (Record<string, unknown> | undefined)[]): Record<string, unknown> {
  if (shape === "results") return { results: outputs.map((o) => o ?? null) };
  const out: Record<string, unknown> = {};
  outputs.forEach((o, k) => {
    if (o === undefined) return;
    const label = labels[k];
    // jsonb's `->>` of a missing element is NULL, and jsonb_object_agg rejects a NULL key: a label always exists
    // for instances decide created (it writes forkedTasks with one label per instance). Fall back to the index.
    const key = label === undefined || label === null ? String(k) : typeof label === "string" ? label : JSON.stringify(label);
    Object.defineProperty(out, key, { value: o, enumerable: true, writable: true, configurable: true });
  });
  return out;
}
