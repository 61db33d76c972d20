import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { RunnerLogger } from "./background-runner";
import { enqueueDecide } from "../store/decide-queues";
import { findStuckWorkflows } from "../store/stuck-workflows";
import type { RunningWorkflowCursor } from "../store/stuck-workflows";

/** The DecideQueues reason the sweeper writes, so an operator can tell its decides from the engine's own. */
export const STUCK_WORKFLOW_REASON = "stuck-workflow sweeper";

/**
 * Where the sweeper's walk over the RUNNING workflows has got to, kept by the
 * caller between passes (one per loop). Empty: start from the oldest.
 */
export interface StuckSweepCursor {
  after?: RunningWorkflowCursor;
}

export interface SweepStuckWorkflowsOptions {
  /** RUNNING workflows to look at per pass, 1 to 10,000 (stuck or not). */
  limit: number;
  /** Leave alone a workflow updated (evaluated, or started) less than this long ago. Default 60 s. */
  olderThanMs?: number;
  /** The application's clock by default. */
  now?: Date;
  /**
   * The walk's position, advanced by each pass and reset when it reaches the
   * end. Without one every pass looks at the same oldest `limit` RUNNING
   * workflows, so a large install would never see the rest.
   */
  cursor?: StuckSweepCursor;
  logger?: Pick<RunnerLogger, "warn">;
}

/**
 * One pass of the stuck-workflow sweeper: a RUNNING workflow with nothing in
 * flight and no decide queued (see findStuckWorkflows for exactly what that
 * means) gets a decide, reason {@link STUCK_WORKFLOW_REASON}. Returns how
 * many it enqueued.
 *
 * Each pass looks at the next `limit` RUNNING workflows after the cursor, so
 * its cost is bounded whatever the table holds; the whole RUNNING set is
 * covered once every (running ÷ limit) passes. The count returned is of
 * decides, not of workflows looked at, so the background runner re-runs at
 * once only when a whole page was stuck, and otherwise walks one page per
 * interval instead of scanning continuously.
 *
 * Racing the engine is harmless: a decide enqueued for a workflow that a
 * completion has just moved on (or ended) is one evaluation that finds nothing
 * to do. Each enqueue commits on its own; a stuck workflow is a bug worth a
 * log line, so each is logged.
 */
export async function sweepStuckWorkflows(db: Kysely<Database>, options: SweepStuckWorkflowsOptions): Promise<number> {
  const olderThanMs = options.olderThanMs ?? 60_000;
  if (!(Number.isFinite(olderThanMs) && olderThanMs >= 0)) throw new RangeError(`olderThanMs must be non-negative, got ${olderThanMs}`);
  const now = options.now ?? new Date();
  const { stuck, next } = await findStuckWorkflows(db, {
    limit: options.limit,
    updatedBefore: new Date(now.getTime() - olderThanMs),
    after: options.cursor?.after,
  });
  // Advanced before the enqueues: a pass that fails part-way must not pin the
  // walk on the same page forever. The next cycle finds what it missed.
  if (options.cursor) options.cursor.after = next;
  for (const workflow of stuck) {
    await enqueueDecide(db, { ...workflow, reason: STUCK_WORKFLOW_REASON });
    options.logger?.warn(workflow, "stuck-workflow sweeper: a RUNNING workflow had nothing in flight and no decide queued; enqueued one");
  }
  return stuck.length;
}
