import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { RunnerLogger } from "./background-runner";
import { requeueExpiredLeases } from "../store/task-queues";
import type { ExpiredLease } from "../store/task-queues";

export interface SweepExpiredLeasesOptions {
  /** Leases to requeue at most per pass, 1 to 10,000. */
  limit: number;
  /** The database's clock (now()) by default, the one the leases were stamped with. */
  now?: Date;
  /** Called with the leases requeued by a pass that requeued any: the metrics' lease-expiry counter. */
  onExpired?: (tasks: readonly ExpiredLease[]) => void;
  logger?: Pick<RunnerLogger, "info">;
}

/** Log at most this many task ids per pass: after an outage a pass can requeue thousands. */
const LOGGED_TASKS = 20;

/**
 * One pass of the lease sweeper: requeues up to `limit` tasks whose lease has
 * expired — the worker died, hung, or stopped heartbeating for longer than the
 * task's responseTimeoutSeconds (task-queues.ts, leaseTasks) — visible at
 * once and announced to parked polls. Returns how many, so a full batch runs
 * again at once.
 *
 * Only the queue row changes. The task stays IN_PROGRESS under its old worker
 * until someone leases it again; the next lease records the new worker, and
 * from then on the old one's report is refused as not held. Its "startedAt"
 * is kept, so the task's run timeout still counts from its first start.
 */
export async function sweepExpiredLeases(db: Kysely<Database>, options: SweepExpiredLeasesOptions): Promise<number> {
  const { count, tasks } = await requeueExpiredLeases(db, { limit: options.limit, now: options.now });
  if (count > 0) {
    options.onExpired?.(tasks);
    options.logger?.info(
      {
        count,
        tasks: tasks.slice(0, LOGGED_TASKS).map(({ taskId, queueName, previousOwner }) => ({ taskId, queueName, previousOwner })),
      },
      "lease sweeper: requeued tasks whose lease expired",
    );
  }
  return count;
}
