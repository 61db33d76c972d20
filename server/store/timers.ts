import { sql } from "kysely";
import type { Kysely, RawBuilder } from "kysely";
import { json } from "../../db/json";
import type { Database, TaskStatus, TimerKind, TimerRow, WorkflowStatus } from "../../db/schema";

/**
 * Durable timers: deadlines (scheduleToStart, startToClose, taskTimeout,
 * workflowTimeout), WAIT, retry backoff and start delay. "Timers" is
 * range-partitioned hourly on "fireAt" with a partial index on ("fireAt") WHERE
 * "claimedAt" IS NULL, so the poller's working set is the leading hour or two
 * however many timers are pending further out.
 *
 * A timer is a hint that something *may* be due, never the decision: the
 * poller re-checks the workflow's state before acting, because a deadline armed
 * at schedule time usually outlives its use (the task finished first) and
 * firing it against completed work would invent a failure. That is also what
 * makes cancellation an optimisation rather than a correctness requirement.
 *
 * Life cycle: armTimer → claimDueTimers (marks "claimedAt"/"claimedBy") → the
 * poller acts → deleteTimer(s). A poller that dies between claim and delete leaves
 * claimed rows; releaseStaleClaims hands them back.
 *
 * One clock: "fireAt", the claim's `now` and "claimedAt" all come from the
 * application's clock (the caller's `now`), so due-ness and staleness are
 * compared on one time line rather than across the app's and the database's.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/** What identifies one timer. "fireAt" is part of the primary key: with it a delete prunes to one partition. */
export interface TimerKey {
  id: string;
  fireAt: Date;
}

export interface ArmTimerInput {
  kind: TimerKind;
  /**
   * A Date, so the stored value has millisecond precision and a row read back
   * (pg parses timestamptz into a millisecond Date) names its own key exactly.
   */
  fireAt: Date;
  namespaceId: string;
  workflowId: string;
  /** The attempt a task deadline belongs to; omit for workflow-level timers. */
  taskId?: string | null;
  payload?: unknown;
}

/**
 * Arms a timer; call it in the transaction that makes it necessary (the
 * evaluation that schedules the task), so a rollback disarms it. Returns its key.
 *
 * A timer beyond the partitions created so far (more than ~24 h ahead) lands in
 * DEFAULT. It is still claimed on time: the claim scans DEFAULT too, and the
 * partition manager moves such rows into their hour when it creates it.
 */
export async function armTimer(db: Executor, input: ArmTimerInput): Promise<TimerKey> {
  if (!(input.fireAt instanceof Date) || Number.isNaN(input.fireAt.getTime())) {
    throw new TypeError(`fireAt must be a valid Date, got ${String(input.fireAt)}`);
  }
  return db
    .insertInto("Timers")
    .values({
      kind: input.kind,
      // ISO text, not the Date: node-postgres renders a Date in the process's
      // local zone, which is right for timestamptz but one config change from wrong.
      fireAt: input.fireAt.toISOString(),
      namespaceId: input.namespaceId,
      workflowId: input.workflowId,
      taskId: input.taskId ?? null,
      payload: json(input.payload ?? {}),
    })
    .returning(["id", "fireAt"])
    .executeTakeFirstOrThrow();
}

export interface CancelTimersInput {
  workflowId: string;
  /** Only this attempt's timers; omit for every timer of the workflow. */
  taskId?: string;
  /** Only these kinds; omit for all. */
  kinds?: readonly TimerKind[];
  /**
   * Bounds on "fireAt" that the caller knows its timers fall within (e.g. from
   * the task's "scheduledAt" to that plus its longest timeout). Optional, but
   * they are what lets Postgres prune partitions; see below.
   */
  fireAtFrom?: Date;
  fireAtTo?: Date;
}

/**
 * Deletes matching timers, claimed or not, and returns how many went.
 *
 * Cost, decided rather than hidden: "Timers" has no index on "workflowId" or
 * "taskId" — each would be write cost on every arm for a lookup that is only an
 * optimisation (the poller re-checks state anyway). Without fireAt bounds this
 * therefore scans every partition (48 h behind, 24 ahead, DEFAULT): fine for
 * the rare whole-workflow cancel (terminate, completion), too much for every
 * task completion at volume. So the bounds are accepted and pruned on, and the
 * hot path should either pass them or simply let the deadline fire and be
 * discarded. Measured (timers.int.test.ts, NODE_FLOW_MEASURE=1) with 101,000
 * timers pending over 24 hourly partitions: by task without bounds 16–30 ms (a
 * seq scan of every partition, so linear in pending timers), with ±1 minute
 * bounds 1.6–2 ms (one partition). "fireAt" is not made a required argument: a
 * wrong guess silently leaves the timer armed — the harmless failure, since it
 * fires into a state re-check — but a required argument would invite guessing.
 */
export async function cancelTimers(db: Executor, input: CancelTimersInput): Promise<number> {
  let query = db.deleteFrom("Timers").where("workflowId", "=", input.workflowId);
  if (input.taskId !== undefined) query = query.where("taskId", "=", input.taskId);
  if (input.kinds !== undefined) {
    if (input.kinds.length === 0) return 0;
    query = query.where("kind", "in", [...input.kinds]);
  }
  if (input.fireAtFrom !== undefined) query = query.where("fireAt", ">=", input.fireAtFrom);
  if (input.fireAtTo !== undefined) query = query.where("fireAt", "<=", input.fireAtTo);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface ClaimDueTimersInput {
  /** Timers with "fireAt" at or before this are due; also stamped as "claimedAt". */
  now: Date;
  /** Batch size, 1 to 1000. */
  limit: number;
  /** Who claims (process id or hostname:pid), stored in "claimedBy" for operators and the release sweep. */
  owner: string;
}

/**
 * Claims up to `limit` due, unclaimed timers, earliest first, and returns them.
 * One statement, in autocommit or the caller's transaction: the claim is the
 * "claimedAt" stamp, not a held lock, so a poller can take its time acting on
 * a batch without holding row locks (and blocking cancels) meanwhile.
 *
 * The inner SELECT runs on the partial index "Timers_due_idx" (unclaimed only,
 * so claimed rows leave it and are never scanned past) with FOR UPDATE SKIP
 * LOCKED: concurrent pollers take disjoint batches and never wait on each
 * other. A row a concurrent poller claimed and committed between our snapshot
 * and our lock is re-checked by Postgres (EvalPlanQual) against "claimedAt" IS
 * NULL and dropped, so a timer is never claimed twice. "fireAt" <= now prunes
 * every future hourly partition.
 */
export async function claimDueTimers(db: Executor, input: ClaimDueTimersInput): Promise<TimerRow[]> {
  const { now, limit, owner } = input;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${limit}`);
  }
  const at = now.toISOString();
  const { rows } = await sql<TimerRow>`
    WITH "due" AS (
      SELECT "id", "fireAt" FROM "Timers"
      WHERE "claimedAt" IS NULL AND "fireAt" <= ${at}::timestamptz
      ORDER BY "fireAt"
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE "Timers" AS "t"
    SET "claimedAt" = ${at}::timestamptz, "claimedBy" = ${owner}
    -- The first two conditions are redundant for the result and essential for
    -- the plan. Joined on ("id", "fireAt") alone, the update side can neither
    -- prune nor probe an index: it hash-joined a seq scan of every partition
    -- (100 claimed among 101,000 pending: 38 ms of a 40 ms statement). "fireAt"
    -- <= now prunes the future hours; "id" = ANY(the batch's ids) becomes an
    -- index condition on each remaining partition's primary key (~2 ms).
    WHERE "t"."id" = ANY ((SELECT array_agg("id") FROM "due")::uuid[])
      AND "t"."fireAt" <= ${at}::timestamptz
      AND ("t"."id", "t"."fireAt") IN (SELECT "id", "fireAt" FROM "due")
    RETURNING "t".*`.execute(db);
  return rows.sort((a, b) => a.fireAt.getTime() - b.fireAt.getTime());
}

/**
 * Deletes one timer once its poller has acted on it; false when it was already
 * gone (cancelled meanwhile). Pass `owner` to delete only while the claim is
 * still this poller's: a claim released as stale and re-claimed elsewhere then
 * stays with its new owner.
 *
 * "fireAt" is matched as the millisecond it names, not by equality, so a key
 * read back through a JS Date (which drops microseconds) still finds a row
 * armed with a more precise string elsewhere; the range prunes to one partition.
 */
export async function deleteTimer(db: Executor, key: TimerKey & { owner?: string }): Promise<boolean> {
  const at = key.fireAt.toISOString();
  let query = db
    .deleteFrom("Timers")
    .where("id", "=", key.id)
    .where("fireAt", ">=", sql<Date>`${at}::timestamptz`)
    .where("fireAt", "<", sql<Date>`${at}::timestamptz + interval '1 millisecond'`);
  if (key.owner !== undefined) query = query.where("claimedBy", "=", key.owner);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Hands back timers claimed before `olderThan` and never deleted — their poller
 * crashed or stalled — so the next claim picks them up. Returns how many.
 * Acting on a timer is idempotent by the re-check-state rule, so the rare
 * double action of a poller that was merely slow is harmless.
 *
 * A claimed timer was due when claimed ("fireAt" <= "claimedAt"), so
 * "fireAt" < olderThan is implied and added to prune the future partitions,
 * where nearly all pending timers live. What is left is a scan of the past
 * partitions and DEFAULT, which hold little but in-flight claims and backlog.
 */
export async function releaseStaleClaims(db: Executor, input: { olderThan: Date }): Promise<number> {
  const result = await db
    .updateTable("Timers")
    .set({ claimedAt: null, claimedBy: null })
    .where("claimedAt", "is not", null)
    .where("claimedAt", "<", input.olderThan)
    .where("fireAt", "<", input.olderThan)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The "fireAt" range a batch of keys spans, widened to the whole last millisecond (see deleteTimer). */
function keyRange(keys: readonly TimerKey[]): { from: string; to: RawBuilder<Date> } {
  const times = keys.map((key) => key.fireAt.getTime());
  const from = new Date(Math.min(...times)).toISOString();
  const last = new Date(Math.max(...times)).toISOString();
  return { from, to: sql<Date>`${last}::timestamptz + interval '1 millisecond'` };
}

/**
 * Deletes a batch of timers in one statement, as {@link deleteTimer} does one:
 * with `owner`, only those still claimed by it. Returns how many went. The
 * batch's "fireAt" range bounds the statement, so it is pruned to the hours the
 * batch spans (a claimed batch is due, so usually the current hour or two).
 */
export async function deleteTimers(db: Executor, keys: readonly TimerKey[], options: { owner?: string } = {}): Promise<number> {
  if (keys.length === 0) return 0;
  const { from, to } = keyRange(keys);
  let query = db
    .deleteFrom("Timers")
    .where("id", "in", keys.map((key) => key.id))
    .where("fireAt", ">=", sql<Date>`${from}::timestamptz`)
    .where("fireAt", "<", to);
  if (options.owner !== undefined) query = query.where("claimedBy", "=", options.owner);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Hands back this poller's own claims at once (a pass that failed after
 * claiming), so they are claimed again by the next pass rather than waiting
 * out releaseStaleClaims' cutoff. Only rows still claimed by `owner`. Returns
 * how many.
 */
export async function releaseTimerClaims(db: Executor, keys: readonly TimerKey[], owner: string): Promise<number> {
  if (keys.length === 0) return 0;
  const { from, to } = keyRange(keys);
  const result = await db
    .updateTable("Timers")
    .set({ claimedAt: null, claimedBy: null })
    .where("id", "in", keys.map((key) => key.id))
    .where("fireAt", ">=", sql<Date>`${from}::timestamptz`)
    .where("fireAt", "<", to)
    .where("claimedBy", "=", owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** What a fired timer points at, as the poller re-checks it before acting. */
export interface TimerTargets {
  /** By workflow id; a workflow that no longer exists (its partition dropped) is absent. */
  workflows: Map<string, { namespaceId: string; status: WorkflowStatus }>;
  /** By task id, for the timers that name a task; a missing task is absent. */
  tasks: Map<string, TaskStatus>;
}

/**
 * Reads the workflows and tasks a batch of timers was armed for, plain reads
 * (no locks): the poller only decides whether a decide is worth enqueueing,
 * and the decider re-checks everything under the workflow's lock anyway.
 *
 * Two statements with the ids as constants. "TaskExecutions" is then pruned at
 * plan time to the partitions of the workflows named (hash on "workflowId");
 * "WorkflowExecutions" cannot be pruned by "id" (its key leads with "id" but
 * partitions on "startedAt", which timers do not carry), so that lookup probes
 * each monthly partition's primary key for every id: one statement per batch,
 * planned once, rather than one per timer.
 */
export async function loadTimerTargets(
  db: Executor,
  timers: readonly { workflowId: string; taskId: string | null }[],
): Promise<TimerTargets> {
  const workflowIds = [...new Set(timers.map((timer) => timer.workflowId))];
  const targets: TimerTargets = { workflows: new Map(), tasks: new Map() };
  if (workflowIds.length === 0) return targets;
  const workflows = await db
    .selectFrom("WorkflowExecutions")
    .select(["id", "namespaceId", "status"])
    .where("id", "in", workflowIds)
    .execute();
  for (const row of workflows) targets.workflows.set(row.id, { namespaceId: row.namespaceId, status: row.status });

  const taskBound = timers.filter((timer): timer is { workflowId: string; taskId: string } => timer.taskId !== null);
  if (taskBound.length > 0) {
    const tasks = await db
      .selectFrom("TaskExecutions")
      .select(["id", "status"])
      .where("workflowId", "in", [...new Set(taskBound.map((timer) => timer.workflowId))])
      .where("id", "in", [...new Set(taskBound.map((timer) => timer.taskId))])
      .execute();
    for (const row of tasks) targets.tasks.set(row.id, row.status);
  }
  return targets;
}
