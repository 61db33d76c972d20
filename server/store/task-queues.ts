import { sql } from "kysely";
import type { Kysely, RawBuilder, Transaction } from "kysely";
import type { Database, TaskExecutionRow, TaskQueueRow } from "../../db/schema";
import { assertCount, assertPositive, at, seconds } from "./sql-helpers";
import { LLM_NODE_TYPES } from "../../engine/definition/llm-schema";

/**
 * The task queue: "TaskQueues", hash-partitioned 8 ways on "queueName", leased
 * with FOR UPDATE SKIP LOCKED.
 *
 * Every function that finds a row by task takes `queueName` as well as `taskId`:
 * the only unique index by task is ("queueName","taskId") (a unique index on a
 * partitioned table must contain the partition key), so a lookup without the
 * queue name probes all eight partitions. They take `namespaceId` too, because
 * repositories filter by namespace themselves rather than trusting a route to.
 *
 * Lock order: the lease locks the queue row and *then* the TaskExecutions row.
 * Anything that changes both in one transaction (cancel, complete, time out)
 * must touch the queue row first as well, or a lease waiting on the task row and
 * a canceller waiting on the queue row deadlock (Postgres breaks it after
 * deadlock_timeout, 1 s, by aborting one of them).
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/** The one LISTEN channel for every worker queue in the cluster; the payload says which queue. */
export const TASKS_CHANNEL = "node_flow_tasks";

/** The task types the sidecar runs itself (server/system-tasks/); each is also its queue name (the decider's executorOf). */
export const SYSTEM_TASK_TYPES = ["HTTP", "HTTP_POLL", "JDBC", "LIST_MCP_TOOLS", "CALL_MCP_TOOL", ...LLM_NODE_TYPES, "INLINE", "JSON_JQ_TRANSFORM", "EVENT"] as const;

/**
 * Where a system task's queue row announces itself, payload "wake": the
 * sidecar's system-task loop listens here, and nothing else does. Without it
 * that loop found its work only at its 250 ms interval — every INLINE, HTTP or
 * JSON_JQ_TRANSFORM step waited ~240 ms to start — while the notification went
 * to the worker channel, where no one waits for a system queue. One payload,
 * so Postgres folds a transaction's notifications (a fork of a hundred INLINE
 * tasks) into one.
 */
export const SYSTEM_TASKS_CHANNEL = "node_flow_system_tasks";
export const SYSTEM_TASKS_WAKE_KEY = "wake";

/**
 * The `node_flow_tasks` payload, and the notifier's waiter key for it. A UUID
 * holds no ':', so the queue name (which may, "<domain>:<taskDefName>") is
 * everything after the first one.
 */
export function taskAvailableKey(namespaceId: string, queueName: string): string {
  return `${namespaceId}:${queueName}`;
}

/** The notification of a queue row, over its "namespaceId", "queueName" and "taskType": the system tasks' channel or the workers'. */
function taskAvailableNotify(namespaceId: RawBuilder<unknown>, queueName: RawBuilder<unknown>, taskType: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`CASE WHEN ${taskType} = ANY(${[...SYSTEM_TASK_TYPES]}::text[]) THEN pg_notify(${SYSTEM_TASKS_CHANNEL}, ${SYSTEM_TASKS_WAKE_KEY})
    ELSE pg_notify(${TASKS_CHANNEL}, ${namespaceId}::text || ':' || ${queueName}) END`;
}

/**
 * For a statement that has just queued a row: the notification of its queue
 * (`node_flow_tasks`, or `node_flow_system_tasks` for a system task) when the
 * row is due now, over the row's "namespaceId", "queueName", "taskType" and
 * "visibleAt" columns. A row delayed by a retry
 * or start delay wakes nobody: the pollers' periodic re-check picks it up once
 * it is due. "Due now" allows a second: the evaluator stamps "visibleAt" from
 * the application's clock after its transaction began, so a task scheduled for
 * at once is a few milliseconds after now() (the transaction's start) and,
 * compared strictly, was never announced — every step then waited out a
 * poller's re-check. Notified at commit, which comes later still, a woken
 * poller finds it visible; in the rare case it does not, it parks again.
 */
export const notifyIfDue = sql<null>`CASE WHEN "visibleAt" <= now() + interval '1 second'
  THEN ${taskAvailableNotify(sql.ref("namespaceId"), sql.ref("queueName"), sql.ref("taskType"))} END`;

/**
 * Tells parked pollers of `queueName` that work may be there. Issued on the
 * writing transaction's connection (the parameter type insists on a
 * transaction), so Postgres holds it until commit and a rollback announces
 * nothing. Repeats of one payload in one transaction are delivered once.
 *
 * `enqueueTask`, `releaseLease` and `requeueExpiredLeases` already notify inside
 * their own statement; this is for other paths that make queued work visible.
 */
export async function notifyTaskAvailable(
  trx: Transaction<Database>,
  namespaceId: string,
  queueName: string,
): Promise<void> {
  await sql`SELECT pg_notify(${TASKS_CHANNEL}, ${taskAvailableKey(namespaceId, queueName)})`.execute(trx);
}

export interface EnqueueTaskInput {
  queueName: string;
  taskId: string;
  workflowId: string;
  namespaceId: string;
  /** Denormalised from TaskExecutions so the system-task runner needs no join. */
  taskType: string;
  /** Higher leases first (Conductor's 0..99); ties go first in, first out. */
  priority: number;
  /** Not deliverable before this; defaults to now(). */
  visibleAt?: Date | string;
}

/**
 * Enqueues tasks, idempotently: ON CONFLICT ("queueName","taskId") DO NOTHING, so
 * a decider that re-runs (or a retry of the same attempt) never queues a task
 * twice. Returns the rows actually inserted; a task already queued is not in it.
 *
 * The NOTIFY for each inserted row visible now (see below) is part of this same
 * statement rather than a second call the caller must remember: a notification
 * every writer has to remember is the shape of bug that silently stops parked
 * workers waking on whichever path nobody exercised. Being in the statement, it
 * is also always in the writing transaction, so it fires at its commit and
 * never for a rollback.
 */
export async function enqueueTasks(db: Executor, entries: readonly EnqueueTaskInput[]): Promise<TaskQueueRow[]> {
  if (entries.length === 0) return [];
  for (const entry of entries) {
    if (!Number.isInteger(entry.priority)) throw new RangeError(`priority must be an integer, got ${entry.priority}`);
  }
  const rows = await db
    .with("inserted", (qb) =>
      qb
        .insertInto("TaskQueues")
        .values(
          entries.map((e) => ({
            queueName: e.queueName,
            taskId: e.taskId,
            workflowId: e.workflowId,
            namespaceId: e.namespaceId,
            taskType: e.taskType,
            priority: e.priority,
            visibleAt: e.visibleAt,
          })),
        )
        .onConflict((oc) => oc.columns(["queueName", "taskId"]).doNothing())
        .returningAll(),
    )
    .selectFrom("inserted")
    .selectAll()
    // A SELECT-only CTE that nothing reads is never run, so the notify must be in
    // the outer select list.
    .select(notifyIfDue.as("notified"))
    .execute();
  return rows.map(({ notified: _notified, ...row }) => row);
}

/** One task; true if it was queued now, false if it already was. See {@link enqueueTasks}. */
export async function enqueueTask(db: Executor, entry: EnqueueTaskInput): Promise<boolean> {
  return (await enqueueTasks(db, [entry])).length === 1;
}

export interface LeaseTasksInput {
  queueName: string;
  namespaceId: string;
  /** At most this many, 1 to 1000. */
  count: number;
  /**
   * The lease length for a task without a heartbeat window of its own. A task
   * whose row has a positive "responseTimeoutSeconds" is leased for that long
   * instead, whatever the poll asked for: see {@link leaseTasks}.
   */
  leaseSeconds: number;
  /** Recorded as "leaseOwner" and the task's "workerId"; renew/ack/release must present it. */
  owner: string;
  /** The task whose report this lease rides on (a report's `next`), recorded as "leaseReport" so a retried report can find what it leased. */
  report?: string;
  now?: Date | string;
}

export interface LeasedTask {
  /** The queue row as leased ("leaseExpiresAt", "leaseOwner" set). */
  queue: TaskQueueRow;
  /** The task after the lease: IN_PROGRESS, "pollCount" + 1, "workerId" = owner, "startedAt" set on first lease. */
  task: TaskExecutionRow;
}

/**
 * Leases up to `count` visible, unleased tasks of one queue, highest priority
 * first and first in, first out within a priority, and starts them. Returns []
 * when none is available. One round trip: the SQL function "nf_lease_tasks"
 * (migration 0014), in the caller's transaction or, without one, in the
 * statement's own.
 *
 * What the function does, row by row:
 * - picks and locks the queue rows with one ordered scan of
 *   "TaskQueues_dequeue_idx" ("queueName", "priority" DESC, "id") WHERE
 *   "leaseExpiresAt" IS NULL, in exactly its order, so LIMIT stops after
 *   `count` rows: no sort, and leased rows are not in the index at all.
 *   "visibleAt" and "namespaceId" are checked on each heap row reached, so
 *   deferred rows at the head of a queue are stepped past on every poll (with
 *   10,000 deferred rows ahead of the first visible one, a single-task lease
 *   took 6.2 ms instead of 2.8 ms, medians of 200). FOR UPDATE SKIP LOCKED:
 *   concurrent leasers take disjoint rows, and a row another leaser committed
 *   after our snapshot is re-checked under the lock, so no row is leased twice;
 * - starts the task: IN_PROGRESS, "startedAt" on the first lease, "pollCount"
 *   + 1, "workerId" = owner. A locked row whose task has ended (cancelled while
 *   queued) is deleted instead of being handed out;
 * - stamps the lease once, with the task's "responseTimeoutSeconds" when
 *   positive (its heartbeat window, snapshotted from the policy at schedule
 *   time), else `leaseSeconds`: a worker that stops heartbeating loses the
 *   task once its window has passed and the lease sweeper requeues it
 *   (Conductor's responseTimeout). {@link renewLease} extends by the same window;
 * - on a task's first start ("startedAt" was NULL: RETURNING OLD) with
 *   "timeoutSeconds" > 0, arms a `startToClose` timer at "startedAt" +
 *   "timeoutSeconds": decide checks that deadline only when the workflow is
 *   evaluated, and nothing else would wake it. A re-lease arms nothing.
 *
 * Each of those statements names the task's workflow id and queue name as a
 * variable, so its generic plan prunes to one partition when it starts; a
 * statement that joined the queue rows to "TaskExecutions" planned and opened
 * all sixteen partitions, which is why this was two client statements until
 * it became a function. As two statements (plus BEGIN and COMMIT) a poll cost
 * four round trips; see docs/performance.md for the difference.
 */
export async function leaseTasks(db: Executor, input: LeaseTasksInput): Promise<LeasedTask[]> {
  assertCount("count", input.count, 1000);
  assertPositive("leaseSeconds", input.leaseSeconds);
  const { rows } = await sql<LeasedTaskRow>`
    SELECT ${leasedTaskColumns}
    FROM "nf_lease_tasks"(${input.namespaceId}::uuid, ${input.queueName}, ${input.count}::int,
                          ${input.leaseSeconds}::double precision, ${input.owner}, ${input.now ?? null}::timestamptz,
                          ${input.report ?? null}::uuid) AS "l"`.execute(db);
  return rows.map(toLeasedTask);
}

/** A row of "nf_lease_tasks" (or "nf_report_task") flattened: the task's columns, then the queue row's own under "queue.". */
export type LeasedTaskRow = TaskExecutionRow & {
  "queue.queueName": string;
  "queue.id": number;
  "queue.taskType": string;
  "queue.priority": number;
  "queue.enqueuedAt": Date;
  "queue.visibleAt": Date;
  "queue.leaseExpiresAt": Date | null;
  "queue.leaseOwner": string | null;
  "queue.leaseReport": string | null;
};

/** The queue row's half of a {@link LeasedTaskRow}, from a function row aliased "l" with a composite column "queue". */
export const leasedQueueColumns = sql`(("l")."queue")."queueName" AS "queue.queueName", (("l")."queue")."id" AS "queue.id",
  (("l")."queue")."taskType" AS "queue.taskType", (("l")."queue")."priority" AS "queue.priority",
  (("l")."queue")."enqueuedAt" AS "queue.enqueuedAt", (("l")."queue")."visibleAt" AS "queue.visibleAt",
  (("l")."queue")."leaseExpiresAt" AS "queue.leaseExpiresAt", (("l")."queue")."leaseOwner" AS "queue.leaseOwner",
  (("l")."queue")."leaseReport" AS "queue.leaseReport"`;

/** The select list for {@link LeasedTaskRow} from a function row aliased "l" with composite columns "queue" and "task". */
export const leasedTaskColumns = sql`(("l")."task").*, ${leasedQueueColumns}`;


export function toLeasedTask(row: LeasedTaskRow): LeasedTask {
  const {
    "queue.queueName": queueName,
    "queue.id": id,
    "queue.taskType": taskType,
    "queue.priority": priority,
    "queue.enqueuedAt": enqueuedAt,
    "queue.visibleAt": visibleAt,
    "queue.leaseExpiresAt": leaseExpiresAt,
    "queue.leaseOwner": leaseOwner,
    "queue.leaseReport": leaseReport,
    ...task
  } = row;
  const queue: TaskQueueRow = {
    queueName,
    id,
    taskId: task.id,
    workflowId: task.workflowId,
    namespaceId: task.namespaceId,
    taskType,
    priority,
    enqueuedAt,
    visibleAt,
    leaseExpiresAt,
    leaseOwner,
    leaseReport,
  };
  return { queue, task };
}

/**
 * The tasks a report leased (its `next`, "leaseReport" = `report`) that are
 * still leased to `owner` and in progress, in lease order: what a retried
 * report hands over again when its first answer was lost. No index serves
 * "leaseReport"; the scan is of one queue partition's rows, on a path taken
 * only by a retry.
 */
export async function leasedByReport(
  db: Executor,
  input: { namespaceId: string; queueName: string; report: string; owner: string },
): Promise<LeasedTask[]> {
  // Whole rows under the names "nf_lease_tasks" returns them by, so the one select list and toLeasedTask apply.
  const { rows } = await sql<LeasedTaskRow>`
    SELECT ${leasedTaskColumns}
    FROM (
      SELECT "q" AS "queue", "t" AS "task", "q"."priority", "q"."id"
      FROM "TaskQueues" AS "q"
      JOIN "TaskExecutions" AS "t" ON "t"."workflowId" = "q"."workflowId" AND "t"."id" = "q"."taskId"
      WHERE "q"."queueName" = ${input.queueName} AND "q"."namespaceId" = ${input.namespaceId}::uuid
        AND "q"."leaseReport" = ${input.report}::uuid AND "q"."leaseOwner" = ${input.owner} AND "q"."leaseExpiresAt" IS NOT NULL
        AND "t"."status" = 'IN_PROGRESS' AND "t"."workerId" = ${input.owner}
    ) AS "l"
    ORDER BY "l"."priority" DESC, "l"."id"`.execute(db);
  return rows.map(toLeasedTask);
}

/**
 * Whether a lease would find anything right now: a read-only probe of the
 * dequeue index, no locks, no transaction. For parked polls' periodic
 * re-checks, which nearly always find nothing: ~150–200 µs an empty check
 * against ~500–700 µs for BEGIN, an empty lease and COMMIT (sequential empty
 * polls, 4 × 3,000, same machine as leaseTasks' figures). Not worth it before a
 * lease that is likely to succeed: under load it is one more round trip per
 * lease (probe + lease drained the 10,000-task benchmark at 2,750–3,050 tasks/s
 * against 3,050–3,600 without).
 */
export async function hasVisibleTask(
  db: Executor,
  input: { namespaceId: string; queueName: string; now?: Date | string },
): Promise<boolean> {
  const row = await db
    .selectFrom("TaskQueues")
    .select(sql<number>`1`.as("found"))
    .where("queueName", "=", input.queueName)
    .where("leaseExpiresAt", "is", null)
    .where("namespaceId", "=", input.namespaceId)
    .where("visibleAt", "<=", at(input.now))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Identifies one queued task and who claims to hold it. */
export interface HeldTask {
  namespaceId: string;
  /** The partition key: without it the lookup probes all eight partitions. */
  queueName: string;
  taskId: string;
  /** The lease owner (the worker id it leased under). */
  owner: string;
}

/**
 * Extends a held lease (a heartbeat) by the same window the lease was given
 * (see leaseTasks): the task's "responseTimeoutSeconds" when positive,
 * else `leaseSeconds`, from now. False, and nothing changes, when `owner` does
 * not hold the task: never leased, leased by someone else, acknowledged, or
 * already requeued by the sweeper. A lease that has expired but not yet been
 * swept is still held (nobody else can have it), so it can be renewed.
 *
 * The window is read from "TaskExecutions" inside the update, by the task's
 * workflow id as a constant so Postgres prunes to its one partition at plan
 * time. Correlated to the queue row's own "workflowId" instead, the subquery
 * is planned over all sixteen partitions on every call. Medians of 300
 * heartbeats, 100,000 rows of history, four rounds on a machine at load ~10:
 * the bare queue update (no window lookup) 0.24–0.71 ms; with the workflow id
 * as a constant 0.47–0.65 ms; correlated 1.4–2.8 ms. A worker's task update
 * carries the workflow id; without one it is first read from the queue row
 * (one more index probe, 0.79–1.3 ms in all; it never changes).
 */
export async function renewLease(
  db: Executor,
  input: HeldTask & { leaseSeconds: number; workflowId?: string; now?: Date | string },
): Promise<boolean> {
  assertPositive("leaseSeconds", input.leaseSeconds);
  const held = () =>
    db
      .selectFrom("TaskQueues")
      .select("workflowId")
      .where("queueName", "=", input.queueName)
      .where("taskId", "=", input.taskId)
      .where("namespaceId", "=", input.namespaceId)
      .where("leaseOwner", "=", input.owner)
      .executeTakeFirst();
  const workflowId = input.workflowId ?? (await held())?.workflowId;
  if (workflowId === undefined) return false;
  const now = at(input.now);
  const result = await sql`
    UPDATE "TaskQueues"
    SET "leaseExpiresAt" = ${now} + make_interval(secs => COALESCE(
      (SELECT "t"."responseTimeoutSeconds"::double precision FROM "TaskExecutions" AS "t"
       WHERE "t"."workflowId" = ${workflowId}::uuid AND "t"."id" = ${input.taskId}::uuid AND "t"."responseTimeoutSeconds" > 0),
      ${input.leaseSeconds}::double precision))
    WHERE "queueName" = ${input.queueName}
      AND "taskId" = ${input.taskId}
      AND "namespaceId" = ${input.namespaceId}
      AND "leaseOwner" = ${input.owner}
      AND "workflowId" = ${workflowId}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** Removes a finished task from the queue. False, and nothing is deleted, unless `owner` holds it. */
export async function acknowledge(db: Executor, input: HeldTask): Promise<boolean> {
  const result = await db
    .deleteFrom("TaskQueues")
    .where("queueName", "=", input.queueName)
    .where("taskId", "=", input.taskId)
    .where("namespaceId", "=", input.namespaceId)
    .where("leaseOwner", "=", input.owner)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Gives a held task back, visible again at now + `delaySeconds`. The row keeps
 * its "id", so it keeps its place in first-in-first-out order once visible.
 * Notifies in the same statement when it is visible at once.
 */
async function returnToQueue(
  db: Executor,
  input: HeldTask & { delaySeconds: number; now?: Date | string },
): Promise<boolean> {
  if (!(Number.isFinite(input.delaySeconds) && input.delaySeconds >= 0)) {
    throw new RangeError(`delaySeconds must be a non-negative number, got ${input.delaySeconds}`);
  }
  const now = at(input.now);
  const visibleNow = input.delaySeconds === 0;
  const result = await db
    .updateTable("TaskQueues")
    .set({
      leaseExpiresAt: null,
      leaseOwner: null,
      visibleAt: visibleNow ? now : sql<Date>`${now} + ${seconds(input.delaySeconds)}`,
    })
    .where("queueName", "=", input.queueName)
    .where("taskId", "=", input.taskId)
    .where("namespaceId", "=", input.namespaceId)
    .where("leaseOwner", "=", input.owner)
    .returning(
      visibleNow
        ? sql<null>`${taskAvailableNotify(sql.ref("namespaceId"), sql.ref("queueName"), sql.ref("taskType"))}`.as("notified")
        : sql<null>`NULL`.as("notified"),
    )
    .executeTakeFirst();
  return result !== undefined;
}

/** Makes a held task visible again now (a worker giving it back). False, changing nothing, unless `owner` holds it. */
export async function releaseLease(db: Executor, input: HeldTask & { now?: Date | string }): Promise<boolean> {
  return returnToQueue(db, { ...input, delaySeconds: 0 });
}

/**
 * Releases a held task to become visible after `delaySeconds`: an IN_PROGRESS
 * update's callbackAfterSeconds, or a retry delay. False, changing nothing,
 * unless `owner` holds it. No notification when delayed: nothing is visible
 * yet, and pollers' periodic re-check finds the row once it is due.
 */
export async function defer(
  db: Executor,
  input: HeldTask & { delaySeconds: number; now?: Date | string },
): Promise<boolean> {
  return returnToQueue(db, input);
}

/**
 * Deletes a task's queue row whoever holds it: for the decider and timers when a
 * task is cancelled, skipped or timed out. Touch the queue row before the
 * TaskExecutions row (see the lock-order note at the top).
 */
export async function removeQueuedTask(
  db: Executor,
  input: { namespaceId: string; queueName: string; taskId: string },
): Promise<boolean> {
  const result = await db
    .deleteFrom("TaskQueues")
    .where("queueName", "=", input.queueName)
    .where("taskId", "=", input.taskId)
    .where("namespaceId", "=", input.namespaceId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export interface ExpiredLease {
  namespaceId: string;
  queueName: string;
  taskId: string;
  workflowId: string;
  /** Who held it when it expired. */
  previousOwner: string | null;
  leaseExpiredAt: Date;
}

export interface RequeueExpiredResult {
  /** Rows requeued; equal to `limit` means run again at once (BackgroundRunner's full batch). */
  count: number;
  tasks: ExpiredLease[];
}

/**
 * Requeues up to `limit` tasks whose lease has expired (the worker died or hung):
 * clears the lease so the row re-enters the dequeue index, visible at once, and
 * notifies its queue in the same statement. Returns the tasks so the caller can
 * do the task bookkeeping (attempt, poll count, a timeout) in the same
 * transaction if it wants one.
 *
 * The scan is the lease index ("leaseExpiresAt") WHERE "leaseExpiresAt" IS NOT
 * NULL, oldest first, a merge across the eight partitions. SKIP LOCKED: a row a
 * worker is renewing or acknowledging right now is skipped, not waited on, and
 * a renewal that commits after our snapshot fails the re-check under the lock
 * ("leaseExpiresAt" <= now), so a live heartbeat is never swept. Two sweeper
 * replicas take disjoint batches. RETURNING OLD (new in Postgres 18) reports the
 * lease being cleared without a second read.
 */
export async function requeueExpiredLeases(
  db: Executor,
  input: { limit: number; now?: Date | string },
): Promise<RequeueExpiredResult> {
  assertCount("limit", input.limit, 10_000);
  const now = at(input.now);
  const { rows } = await sql<ExpiredLease>`
    WITH "expired" AS (
      SELECT "queueName", "id"
      FROM "TaskQueues"
      WHERE "leaseExpiresAt" IS NOT NULL
        AND "leaseExpiresAt" <= ${now}
      ORDER BY "leaseExpiresAt"
      LIMIT ${input.limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE "TaskQueues" AS "q"
    SET "leaseExpiresAt" = NULL, "leaseOwner" = NULL
    FROM "expired" AS "e"
    WHERE "q"."queueName" = "e"."queueName"
      AND "q"."id" = "e"."id"
    RETURNING "q"."namespaceId", "q"."queueName", "q"."taskId", "q"."workflowId",
      OLD."leaseOwner" AS "previousOwner", OLD."leaseExpiresAt" AS "leaseExpiredAt",
      ${taskAvailableNotify(sql`"q"."namespaceId"`, sql`"q"."queueName"`, sql`"q"."taskType"`)} AS "notified"`.execute(db);
  const tasks = rows.map(({ namespaceId, queueName, taskId, workflowId, previousOwner, leaseExpiredAt }) => ({
    namespaceId,
    queueName,
    taskId,
    workflowId,
    previousOwner,
    leaseExpiredAt,
  }));
  return { count: tasks.length, tasks };
}

export interface QueueDepth {
  namespaceId: string;
  queueName: string;
  /** Unleased and visible: what a poll would get now. */
  ready: number;
  /** Unleased but not visible yet (callbackAfterSeconds, delays). */
  deferred: number;
  leased: number;
  /** "enqueuedAt" of the oldest ready row: how far behind the workers are. */
  oldestReadyAt: Date | null;
}

/**
 * Per-queue depth for /metrics. A full read of the queue table, which is fine
 * because it holds in-flight work only (acknowledged rows are deleted) and is
 * narrow; a scrape every 15 s costs one scan of it.
 */
export async function queueDepths(db: Executor, namespaceId?: string): Promise<QueueDepth[]> {
  const { rows } = await sql<QueueDepth>`
    SELECT "namespaceId", "queueName",
      count(*) FILTER (WHERE "leaseExpiresAt" IS NULL AND "visibleAt" <= now())::int AS "ready",
      count(*) FILTER (WHERE "leaseExpiresAt" IS NULL AND "visibleAt" > now())::int AS "deferred",
      count(*) FILTER (WHERE "leaseExpiresAt" IS NOT NULL)::int AS "leased",
      min("enqueuedAt") FILTER (WHERE "leaseExpiresAt" IS NULL AND "visibleAt" <= now()) AS "oldestReadyAt"
    FROM "TaskQueues"
    ${namespaceId === undefined ? sql`` : sql`WHERE "namespaceId" = ${namespaceId}`}
    GROUP BY "namespaceId", "queueName"
    ORDER BY "namespaceId", "queueName"`.execute(db);
  return rows;
}
