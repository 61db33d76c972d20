import { sql } from "kysely";
import type { Kysely, RawBuilder } from "kysely";
import type { Database, TaskExecutionRow, TaskQueueRow } from "../../db/schema";
import type { LeasedTask } from "./task-queues";
import { at } from "./sql-helpers";

/**
 * Leasing for the in-process system-task runner: the same queue, lease and
 * guarantees as `leaseTasks` (task-queues.ts) — FOR UPDATE SKIP LOCKED in a
 * CTE, "visibleAt" respected, highest priority first and first in, first out
 * within a priority, the task rows started in the same transaction — but over
 * every namespace and several queues at once. The decider queues a system
 * task on the queue named after its type ("HTTP", "INLINE", …), in its
 * workflow's namespace; one runner serves them all.
 *
 * Only rows whose denormalised "taskType" equals the queue name are taken: a
 * worker task whose definition happens to be named "HTTP" is queued on the
 * same queue name (a SIMPLE task's queue is its definition name), and it is a
 * remote worker's, not ours. The column is on the queue row precisely so this
 * needs no join.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

export interface LeaseSystemTasksInput {
  /** The task types this runner executes; each is its own queue name. */
  queueNames: readonly string[];
  /** At most this many in all, 1 to 1000. */
  count: number;
  leaseSeconds: number;
  /** Recorded as "leaseOwner" and the task's "workerId"; the report must present it. */
  owner: string;
  now?: Date | string;
}

/**
 * The queue half of the lease, one statement; exported for the plan test.
 *
 * Each queue is read by its own LATERAL probe of "TaskQueues_dequeue_idx"
 * ("queueName", "priority" DESC, "id") WHERE "leaseExpiresAt" IS NULL, in the
 * index's order with a LIMIT, so a probe stops after `count` rows and never
 * sorts. A single `"queueName" = ANY(…)` scan cannot do that: the index is
 * ordered by queue first, so a priority order across queues would sort every
 * unleased row of every queue — all of them, during a backlog. The probes'
 * rows (at most `count` per queue) are then merged by priority and id (one
 * BIGSERIAL sequence across partitions, so ids order enqueues across queues)
 * and cut to `count`.
 *
 * FOR UPDATE SKIP LOCKED sits in each probe: concurrent runners take disjoint
 * rows. A probe row that loses the merge stays locked, unleased, until this
 * transaction commits (milliseconds): another runner skips it meanwhile and
 * finds it on its next pass.
 *
 * The update matches `"id" = ANY (ARRAY(…))`, not a join to the CTE, for the
 * reason leaseTasksStatement gives (a join planned a sequential scan and a
 * hash join once the queue held ~1,000 rows). The id alone identifies a row:
 * "TaskQueues"."id" is one BIGSERIAL shared by every partition. The queue
 * names are repeated so the update is pruned to their partitions.
 */
export function leaseSystemTasksStatement(input: LeaseSystemTasksInput): RawBuilder<TaskQueueRow> {
  const now = at(input.now);
  return sql<TaskQueueRow>`
    WITH "candidates" AS (
      SELECT "c"."queueName", "c"."id", "c"."priority"
      FROM unnest(${[...input.queueNames]}::text[]) AS "n"("queueName")
      CROSS JOIN LATERAL (
        SELECT "queueName", "id", "priority"
        FROM "TaskQueues"
        WHERE "queueName" = "n"."queueName"
          AND "leaseExpiresAt" IS NULL
          AND "taskType" = "n"."queueName"
          AND "visibleAt" <= ${now}
        ORDER BY "priority" DESC, "id"
        LIMIT ${input.count}
        FOR UPDATE SKIP LOCKED
      ) AS "c"
      ORDER BY "c"."priority" DESC, "c"."id"
      LIMIT ${input.count}
    )
    UPDATE "TaskQueues" AS "q"
    SET "leaseExpiresAt" = ${now} + make_interval(secs => ${input.leaseSeconds}::double precision),
        "leaseOwner" = ${input.owner}, "leaseReport" = NULL
    WHERE "q"."queueName" = ANY (${[...input.queueNames]}::text[])
      AND "q"."id" = ANY (ARRAY(SELECT "id" FROM "candidates"))
    RETURNING "q".*`;
}

/**
 * Leases up to `count` visible, unleased system tasks across `queueNames` and
 * every namespace, and starts them (IN_PROGRESS, "startedAt" on the first
 * lease, "pollCount" + 1, "workerId" = owner). Returns [] when none is due.
 * Runs in the caller's transaction, or opens one.
 */
export async function leaseSystemTasks(db: Executor, input: LeaseSystemTasksInput): Promise<LeasedTask[]> {
  if (!Number.isInteger(input.count) || input.count < 1 || input.count > 1000) {
    throw new RangeError(`count must be an integer from 1 to 1000, got ${input.count}`);
  }
  if (!(Number.isFinite(input.leaseSeconds) && input.leaseSeconds > 0)) throw new RangeError(`leaseSeconds must be positive, got ${input.leaseSeconds}`);
  if (input.queueNames.length === 0) return [];
  if (!db.isTransaction) return db.transaction().execute((trx) => leaseSystemTasks(trx, input));

  const { rows: queueRows } = await leaseSystemTasksStatement(input).execute(db);
  if (queueRows.length === 0) return [];
  const now = at(input.now);
  // As in leaseTasks: a second statement with the ids as constants, so
  // "TaskExecutions" is pruned to the leased workflows' partitions at plan time.
  const started = await db
    .updateTable("TaskExecutions")
    .set((eb) => ({
      status: "IN_PROGRESS",
      startedAt: sql<Date>`COALESCE("startedAt", ${now})`,
      pollCount: eb("pollCount", "+", 1),
      workerId: input.owner,
      updatedAt: now,
    }))
    .where("workflowId", "in", [...new Set(queueRows.map((row) => row.workflowId))])
    .where("id", "in", queueRows.map((row) => row.taskId))
    .where("status", "in", ["SCHEDULED", "IN_PROGRESS"])
    .returningAll()
    .execute();
  const tasks = new Map<string, TaskExecutionRow>(started.map((task) => [task.id, task]));

  const leased: LeasedTask[] = [];
  const dead: TaskQueueRow[] = [];
  queueRows.sort((a, b) => b.priority - a.priority || a.id - b.id);
  for (const queue of queueRows) {
    const task = tasks.get(queue.taskId);
    if (task && task.workflowId === queue.workflowId && task.namespaceId === queue.namespaceId) leased.push({ queue, task });
    else dead.push(queue);
  }
  if (dead.length > 0) {
    // A task that ended while queued (cancelled, timed out) whose queue row was
    // left behind: deleted by this lease, which holds the rows, rather than
    // left to expire, be requeued and be found dead again.
    for (const queueName of new Set(dead.map((row) => row.queueName))) {
      await db
        .deleteFrom("TaskQueues")
        .where("queueName", "=", queueName)
        .where("id", "in", dead.filter((row) => row.queueName === queueName).map((row) => row.id))
        .where("leaseOwner", "=", input.owner)
        .execute();
    }
  }
  return leased;
}
