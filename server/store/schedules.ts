import { sql } from "kysely";
import type { Kysely, Selectable } from "kysely";
import { json } from "../../db/json";
import type { Database, ScheduleCatchUp, ScheduleOverlap, ScheduleRunOutcome } from "../../db/schema";

/**
 * Schedules and ScheduleRuns: a schedule's settings per (namespace, name),
 * and one row per fire (server/schedules). Every statement filters by
 * namespace, apart from the poller's claim, which serves every namespace.
 */

type Executor = Kysely<Database>;
export type ScheduleRow = Selectable<Database["Schedules"]>;
export type ScheduleRunRow = Selectable<Database["ScheduleRuns"]>;

export interface ScheduleSettings {
  description?: string | null;
  workflowName: string;
  workflowVersion?: number | null;
  input: unknown;
  correlationIdTemplate?: string | null;
  priority: number;
  cronExpression: string;
  zoneId: string;
  startAt?: Date | null;
  endAt?: Date | null;
  catchUp: ScheduleCatchUp;
  catchUpLimit: number;
  overlap: ScheduleOverlap;
  paused: boolean;
}

function columns(settings: ScheduleSettings) {
  return {
    description: settings.description ?? null,
    workflowName: settings.workflowName,
    workflowVersion: settings.workflowVersion ?? null,
    input: json(settings.input),
    correlationIdTemplate: settings.correlationIdTemplate ?? null,
    priority: settings.priority,
    cronExpression: settings.cronExpression,
    zoneId: settings.zoneId,
    startAt: settings.startAt ?? null,
    endAt: settings.endAt ?? null,
    catchUp: settings.catchUp,
    catchUpLimit: settings.catchUpLimit,
    overlap: settings.overlap,
    paused: settings.paused,
  };
}

export async function getSchedule(db: Executor, namespaceId: string, name: string): Promise<ScheduleRow | undefined> {
  return db.selectFrom("Schedules").selectAll().where("namespaceId", "=", namespaceId).where("name", "=", name).executeTakeFirst();
}

/** The schedule, locked until the transaction ends: saves serialise with each other and with a fire in progress. */
export async function lockSchedule(trx: Executor, namespaceId: string, name: string): Promise<ScheduleRow | undefined> {
  return trx.selectFrom("Schedules").selectAll().where("namespaceId", "=", namespaceId).where("name", "=", name).forUpdate().executeTakeFirst();
}

export async function insertSchedule(
  db: Executor,
  input: { namespaceId: string; name: string; settings: ScheduleSettings; nextFireAt: Date | null; actor: string | null },
): Promise<ScheduleRow> {
  return db
    .insertInto("Schedules")
    .values({ namespaceId: input.namespaceId, name: input.name, ...columns(input.settings), pausedReason: null, nextFireAt: input.nextFireAt, createdBy: input.actor, updatedBy: input.actor })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateSchedule(
  db: Executor,
  input: { id: string; settings: ScheduleSettings; nextFireAt: Date | null; pausedReason: string | null; actor: string | null },
): Promise<ScheduleRow> {
  return db
    .updateTable("Schedules")
    .set({ ...columns(input.settings), nextFireAt: input.nextFireAt, pausedReason: input.pausedReason, updatedBy: input.actor, updatedAt: sql`now()` })
    .where("id", "=", input.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setSchedulePaused(
  db: Executor,
  input: { id: string; paused: boolean; pausedReason: string | null; nextFireAt: Date | null; actor: string | null },
): Promise<ScheduleRow> {
  return db
    .updateTable("Schedules")
    .set({ paused: input.paused, pausedReason: input.pausedReason, nextFireAt: input.nextFireAt, updatedBy: input.actor, updatedAt: sql`now()` })
    .where("id", "=", input.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listSchedules(db: Executor, input: { namespaceId: string; workflowName?: string }): Promise<ScheduleRow[]> {
  let query = db.selectFrom("Schedules").selectAll().where("namespaceId", "=", input.namespaceId);
  if (input.workflowName !== undefined) query = query.where("workflowName", "=", input.workflowName);
  return query.orderBy("name").limit(1000).execute();
}

/** Deletes the schedule; its ScheduleRuns go with it (ON DELETE CASCADE). */
export async function deleteSchedule(db: Executor, namespaceId: string, name: string): Promise<ScheduleRow | undefined> {
  return db.deleteFrom("Schedules").where("namespaceId", "=", namespaceId).where("name", "=", name).returningAll().executeTakeFirst();
}

/**
 * The poller's claim: one due schedule, earliest fire first, locked for the
 * caller's transaction. SKIP LOCKED lets concurrent pollers take different
 * schedules instead of queueing on one; a schedule another poller has just
 * fired is re-checked against its committed "nextFireAt" when its lock is
 * released (READ COMMITTED re-evaluates the WHERE on the new row version),
 * so it is not claimed again for the same fire. `skip` holds the ids this
 * pass has already handled: a schedule whose fire failed must not stand in
 * front of the others for the rest of the pass.
 */
export async function claimDueSchedule(trx: Executor, input: { now: Date; skip: readonly string[] }): Promise<ScheduleRow | undefined> {
  let query = trx
    .selectFrom("Schedules")
    .selectAll()
    .where("paused", "=", false)
    .where("nextFireAt", "is not", null)
    .where("nextFireAt", "<=", input.now);
  if (input.skip.length > 0) query = query.where("id", "not in", input.skip);
  return query.orderBy("nextFireAt").limit(1).forUpdate().skipLocked().executeTakeFirst();
}

/** A schedule holding a queued fire (overlap policy queue), to see whether the run it waits for has ended. */
export async function claimQueuedSchedule(trx: Executor, input: { skip: readonly string[] }): Promise<ScheduleRow | undefined> {
  let query = trx.selectFrom("Schedules").selectAll().where("queuedFireAt", "is not", null).where("paused", "=", false);
  if (input.skip.length > 0) query = query.where("id", "not in", input.skip);
  return query.orderBy("queuedFireAt").limit(1).forUpdate().skipLocked().executeTakeFirst();
}

export async function advanceSchedule(
  trx: Executor,
  input: { id: string; nextFireAt: Date | null; queuedFireAt: Date | null; lastWorkflowId: string | null },
): Promise<void> {
  await trx
    .updateTable("Schedules")
    .set({ nextFireAt: input.nextFireAt, queuedFireAt: input.queuedFireAt, lastWorkflowId: input.lastWorkflowId })
    .where("id", "=", input.id)
    .execute();
}

export interface NewScheduleRun {
  scheduleId: string;
  namespaceId: string;
  fireAt: Date;
  throughFireAt?: Date | null;
  fireCount?: number | null;
  outcome: ScheduleRunOutcome;
  workflowId?: string | null;
  reason?: string | null;
  /** When the scheduler handled it: the clock its plan read, so a row's lateness is the one its outcome was decided on. */
  handledAt?: Date;
}

/**
 * Records a fire; its id, or null when the fire is already recorded — the
 * unique (scheduleId, fireAt) refusing a second handling of one fire.
 */
export async function insertScheduleRun(db: Executor, run: NewScheduleRun): Promise<string | null> {
  const row = await db
    .insertInto("ScheduleRuns")
    .values({
      scheduleId: run.scheduleId,
      namespaceId: run.namespaceId,
      fireAt: run.fireAt,
      throughFireAt: run.throughFireAt ?? null,
      fireCount: run.fireCount === undefined ? 1 : run.fireCount,
      outcome: run.outcome,
      workflowId: run.workflowId ?? null,
      reason: run.reason ?? null,
      ...(run.handledAt === undefined ? {} : { createdAt: run.handledAt }),
      startedAt: run.outcome === "started" ? sql<Date>`now()` : null,
    })
    .onConflict((oc) => oc.columns(["scheduleId", "fireAt"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return row?.id ?? null;
}

/** The outcome of a fire recorded before its start: the run, or why it failed; a queued fire when it finally starts. */
export async function finishScheduleRun(db: Executor, input: { id: string; outcome: ScheduleRunOutcome; workflowId: string | null; reason: string | null }): Promise<void> {
  await db
    .updateTable("ScheduleRuns")
    .set({ outcome: input.outcome, workflowId: input.workflowId, reason: input.reason, startedAt: input.outcome === "started" ? sql<Date>`now()` : null })
    .where("id", "=", input.id)
    .execute();
}

export async function findScheduleRun(db: Executor, scheduleId: string, fireAt: Date): Promise<ScheduleRunRow | undefined> {
  return db.selectFrom("ScheduleRuns").selectAll().where("scheduleId", "=", scheduleId).where("fireAt", "=", fireAt).executeTakeFirst();
}

/** A schedule's latest fires, newest first. */
export async function listScheduleRuns(db: Executor, input: { namespaceId: string; scheduleId: string; limit: number }): Promise<ScheduleRunRow[]> {
  return db
    .selectFrom("ScheduleRuns")
    .selectAll()
    .where("namespaceId", "=", input.namespaceId)
    .where("scheduleId", "=", input.scheduleId)
    .orderBy("fireAt", "desc")
    .limit(input.limit)
    .execute();
}

/** Deletes up to `limit` fires recorded before `before`; how many. A fire's row only guards a fire time the schedule has long passed. */
export async function pruneScheduleRuns(db: Executor, input: { before: Date; limit: number }): Promise<number> {
  const result = await sql<{ count: number }>`
    WITH "old" AS (SELECT "id" FROM "ScheduleRuns" WHERE "createdAt" < ${input.before} LIMIT ${input.limit})
    DELETE FROM "ScheduleRuns" WHERE "id" IN (SELECT "id" FROM "old")`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
