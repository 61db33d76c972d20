import { sql } from "kysely";
import type { Kysely, RawBuilder, Transaction } from "kysely";
import type { Database, SemaphoreRow } from "../../db/schema";
import { TASKS_CHANNEL } from "./task-queues";
import { assertPositive, at, seconds } from "./sql-helpers";

/**
 * Named semaphores: "Semaphores" holds how many permits a name has,
 * "SemaphoreHolders" one row per permit in use, keyed by the task holding it.
 * A task definition names the semaphore its queue's leases take a permit of
 * (TaskDefinitions."semaphoreName"); several queues may share one.
 *
 * An unconfigured semaphore (no "Semaphores" row) deliberately does not gate:
 * naming one is not an error, and work runs as if it named none.
 *
 * Permits are leased, not held: each carries "leaseExpiresAt", the lease of the
 * task's queue row, and a permit past it no longer counts. A worker that
 * crashes therefore gives its permit back when its task lease runs out, rather
 * than draining one permit per crash for good. The flip side: a worker that
 * heartbeats its task must renew the permit with it
 * ({@link renewSemaphorePermits}), or the permit lapses while the task runs.
 *
 * Lock discipline: acquiring locks the "Semaphores" row, in a statement of its
 * own, and only then counts live holders — two acquirers of one semaphore
 * serialise there. Releasing and expiring only delete holder rows and never
 * take the semaphore row: a release racing an acquire can make that acquire see
 * a permit still in use (it admits less, never more).
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * NOTIFYs every queue whose definition names a semaphore in `freed` (a CTE of
 * "namespaceId", "name"), so its parked pollers re-check at once instead of at
 * their interval. Evaluates to the number of notifications. Through
 * "TaskDefinitions_semaphore_idx": the IS NOT NULL repeats its predicate.
 */
function notifySemaphoreUsers(freed: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`(
    SELECT count(pg_notify(${TASKS_CHANNEL}, "u"."namespaceId"::text || ':' || "u"."name"))::int
    FROM (
      SELECT DISTINCT "d"."namespaceId", "d"."name"
      FROM "TaskDefinitions" AS "d"
      JOIN (SELECT DISTINCT "namespaceId", "name" FROM ${freed}) AS "f"
        ON "d"."namespaceId" = "f"."namespaceId" AND "d"."semaphoreName" = "f"."name"
      WHERE "d"."semaphoreName" IS NOT NULL
    ) AS "u")`;
}

/**
 * Creates the semaphore or sets its permit count. Lowering it below the permits
 * in use revokes nothing: holders keep theirs and new acquires wait until the
 * count drops. Raising it wakes the queues that use it.
 */
export async function configureSemaphore(
  db: Executor,
  input: { namespaceId: string; name: string; permits: number },
): Promise<SemaphoreRow> {
  if (!Number.isInteger(input.permits) || input.permits < 1) {
    throw new RangeError(`permits must be an integer ≥ 1, got ${input.permits}`);
  }
  const { rows } = await sql<SemaphoreRow & { woken: number }>`
    WITH "upserted" AS (
      INSERT INTO "Semaphores" ("namespaceId", "name", "permits")
      VALUES (${input.namespaceId}, ${input.name}, ${input.permits})
      ON CONFLICT ("namespaceId", "name") DO UPDATE
        SET "permits" = EXCLUDED."permits", "updatedAt" = now()
      RETURNING *
    )
    SELECT *, ${notifySemaphoreUsers(sql`"upserted"`)} AS "woken" FROM "upserted"`.execute(db);
  const { woken: _woken, ...row } = rows[0]!;
  return row;
}

/**
 * Removes a semaphore: the queues naming it are no longer gated by it. Its
 * holder rows stay until they expire (nothing counts them meanwhile).
 */
export async function deleteSemaphore(db: Executor, input: { namespaceId: string; name: string }): Promise<boolean> {
  const result = await db
    .deleteFrom("Semaphores")
    .where("namespaceId", "=", input.namespaceId)
    .where("name", "=", input.name)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export interface SemaphoreUsage {
  permits: number;
  /** Live permits ("leaseExpiresAt" > now). */
  inUse: number;
  /** permits − inUse, never below 0 (permits may have been lowered under holders). */
  free: number;
}

/**
 * Locks the semaphore's row until the transaction ends and counts its live
 * permits. Undefined when the semaphore is not configured (it does not gate).
 *
 * Two statements on purpose. In one statement (a FOR UPDATE CTE beside a count)
 * the count would read the snapshot taken when the statement began — before it
 * waited for the lock — and so miss the permits the transaction it waited for
 * had just committed: two acquirers would each see the same free permit.
 * Under READ COMMITTED each statement takes a new snapshot, so the count, run
 * after the lock is granted, sees every acquire that held it before.
 *
 * The count is an index-only range scan of "SemaphoreHolders_count_idx"
 * ("namespaceId","name","leaseExpiresAt").
 */
export async function lockSemaphore(
  trx: Transaction<Database>,
  input: { namespaceId: string; name: string; now?: Date | string },
): Promise<SemaphoreUsage | undefined> {
  const semaphore = await trx
    .selectFrom("Semaphores")
    .select("permits")
    .where("namespaceId", "=", input.namespaceId)
    .where("name", "=", input.name)
    .forUpdate()
    .executeTakeFirst();
  if (!semaphore) return undefined;
  const inUse = await countLivePermits(trx, input);
  return { permits: semaphore.permits, inUse, free: Math.max(0, semaphore.permits - inUse) };
}

/**
 * The same numbers as {@link lockSemaphore}, read without a lock or a
 * transaction: a hint that may be stale by the time it is used. For parked
 * pollers deciding whether a gated lease is worth trying.
 */
export async function semaphoreUsage(
  db: Executor,
  input: { namespaceId: string; name: string; now?: Date | string },
): Promise<SemaphoreUsage | undefined> {
  const { rows } = await sql<{ permits: number; inUse: number }>`
    SELECT "s"."permits",
      (SELECT count(*) FROM "SemaphoreHolders" AS "h"
       WHERE "h"."namespaceId" = "s"."namespaceId" AND "h"."name" = "s"."name"
         AND "h"."leaseExpiresAt" > ${at(input.now)})::int AS "inUse"
    FROM "Semaphores" AS "s"
    WHERE "s"."namespaceId" = ${input.namespaceId} AND "s"."name" = ${input.name}`.execute(db);
  const row = rows[0];
  return row && { permits: row.permits, inUse: row.inUse, free: Math.max(0, row.permits - row.inUse) };
}

async function countLivePermits(
  db: Executor,
  input: { namespaceId: string; name: string; now?: Date | string },
): Promise<number> {
  const { rows } = await sql<{ inUse: number }>`
    SELECT count(*)::int AS "inUse"
    FROM "SemaphoreHolders"
    WHERE "namespaceId" = ${input.namespaceId}
      AND "name" = ${input.name}
      AND "leaseExpiresAt" > ${at(input.now)}`.execute(db);
  return rows[0]?.inUse ?? 0;
}

export interface AcquireSemaphorePermitsInput {
  namespaceId: string;
  name: string;
  /** The tasks asking, in order of preference: when fewer permits are free, the first ones get them. */
  tasks: ReadonlyArray<{ taskId: string; workflowId: string }>;
  /** The permits' lease: the task's lease, so both run out together. */
  leaseSeconds: number;
  now?: Date | string;
}

export interface AcquireSemaphorePermitsResult {
  /** False: no such semaphore, which does not gate; `granted` is then every task and nothing was written. */
  configured: boolean;
  /** The task ids that hold a permit now. */
  granted: string[];
}

/**
 * Grants permits to as many of `tasks` as there are free, under the
 * semaphore's row lock ({@link lockSemaphore}). A task that already holds a
 * live permit keeps it (its lease is extended) without taking another. Holder
 * rows are upserted: a task re-leased after its permit expired but before the
 * sweep reuses its row.
 */
export async function acquireSemaphorePermits(
  trx: Transaction<Database>,
  input: AcquireSemaphorePermitsInput,
): Promise<AcquireSemaphorePermitsResult> {
  assertPositive("leaseSeconds", input.leaseSeconds);
  const usage = await lockSemaphore(trx, input);
  if (!usage) return { configured: false, granted: input.tasks.map((t) => t.taskId) };
  if (input.tasks.length === 0) return { configured: true, granted: [] };
  const asking = input.tasks.map((t) => t.taskId);
  const { rows: holding } = await sql<{ taskId: string }>`
    SELECT "taskId"
    FROM "SemaphoreHolders"
    WHERE "namespaceId" = ${input.namespaceId}
      AND "name" = ${input.name}
      AND "taskId" = ANY (${asking}::uuid[])
      AND "leaseExpiresAt" > ${at(input.now)}`.execute(trx);
  const alreadyHeld = new Set(holding.map((r) => r.taskId));
  let free = usage.free;
  const chosen = input.tasks.filter((t) => {
    if (alreadyHeld.has(t.taskId)) return true;
    if (free <= 0) return false;
    free--;
    return true;
  });
  if (chosen.length === 0) return { configured: true, granted: [] };
  const rows = await trx
    .insertInto("SemaphoreHolders")
    .values(
      chosen.map((t) => ({
        namespaceId: input.namespaceId,
        name: input.name,
        taskId: t.taskId,
        workflowId: t.workflowId,
        acquiredAt: at(input.now),
        leaseExpiresAt: sql<Date>`${at(input.now)} + ${seconds(input.leaseSeconds)}`,
      })),
    )
    .onConflict((oc) =>
      oc.columns(["namespaceId", "name", "taskId"]).doUpdateSet((eb) => ({
        workflowId: eb.ref("excluded.workflowId"),
        leaseExpiresAt: eb.ref("excluded.leaseExpiresAt"),
      })),
    )
    .returning("taskId")
    .execute();
  const granted = new Set(rows.map((r) => r.taskId));
  return { configured: true, granted: asking.filter((id) => granted.has(id)) };
}

/**
 * Extends the live permits a task holds to now + `leaseSeconds`: call it where
 * the task's queue lease is renewed (a heartbeat), in the same transaction.
 * A permit already past its lease is not revived: it stopped counting when it
 * expired and its place may have been granted since. Returns how many were
 * extended.
 */
export async function renewSemaphorePermits(
  db: Executor,
  input: { namespaceId: string; taskId: string; leaseSeconds: number; now?: Date | string },
): Promise<number> {
  assertPositive("leaseSeconds", input.leaseSeconds);
  const result = await db
    .updateTable("SemaphoreHolders")
    .set({ leaseExpiresAt: sql<Date>`${at(input.now)} + ${seconds(input.leaseSeconds)}` })
    .where("taskId", "=", input.taskId)
    .where("namespaceId", "=", input.namespaceId)
    .where("leaseExpiresAt", ">", at(input.now))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * What a task's end gives back, in one statement: deletes the task's permits
 * (by "SemaphoreHolders_task_idx") and wakes the parked pollers of every queue
 * that may now lease — the queues using a released semaphore, and `queueName`
 * itself when its definition has a concurrentExecLimit (its slot is free once
 * the caller's transaction deletes the task's queue row). Call it in the
 * transaction that ends the task (a cancel, a timeout; a worker's completion
 * carries the same CTEs in its own statement, see {@link taskGateRelease});
 * the notifications go out at its commit, and a rollback keeps the permits.
 *
 * An ungated task pays one index probe that finds nothing and one primary-key
 * probe of TaskDefinitions. Returns the semaphores released.
 */
export async function releaseTaskGates(
  db: Executor,
  input: { namespaceId: string; taskId: string; queueName?: string | null },
): Promise<{ released: string[] }> {
  const release = taskGateRelease(input);
  const { rows } = await sql<{ released: string[]; woken: number }>`
    WITH ${release.ctes}
    SELECT ARRAY(SELECT "name" FROM "released" ORDER BY "name") AS "released", ${release.woken} AS "woken"`.execute(db);
  return { released: rows[0]?.released ?? [] };
}

/**
 * {@link releaseTaskGates} as parts of a larger statement: `ctes` defines
 * "released" (the permits deleted) and "limited" (the queue, when it has a
 * concurrentExecLimit), to follow a WITH; `woken` is the expression that
 * notifies their pollers, to select once. `onlyIf`, a boolean SQL condition,
 * makes both do nothing when false — a completion releases only when its
 * compare-and-set matched.
 */
export function taskGateRelease(
  input: { namespaceId: string; taskId: string; queueName?: string | null },
  onlyIf: RawBuilder<unknown> = sql`true`,
): { ctes: RawBuilder<unknown>; woken: RawBuilder<number> } {
  return {
    ctes: sql`"released" AS (
      DELETE FROM "SemaphoreHolders"
      WHERE "taskId" = ${input.taskId}
        AND "namespaceId" = ${input.namespaceId}
        AND ${onlyIf}
      RETURNING "namespaceId", "name"
    ),
    "limited" AS (
      SELECT "name"
      FROM "TaskDefinitions"
      WHERE "namespaceId" = ${input.namespaceId}
        AND "name" = ${input.queueName ?? null}
        AND "concurrentExecLimit" > 0
        AND ${onlyIf}
    )`,
    woken: sql<number>`(${notifySemaphoreUsers(sql`"released"`)}
        + (SELECT count(pg_notify(${TASKS_CHANNEL}, ${input.namespaceId}::text || ':' || "name"))::int FROM "limited"))`,
  };
}

/**
 * Deletes up to `limit` permits whose lease has run out (the worker crashed,
 * or stopped heartbeating) and wakes the queues using their semaphores.
 *
 * Capacity does not wait for this sweep: an acquire counts live permits only,
 * so an expired permit stops counting the moment it expires. The sweep keeps
 * the table and its count index as small as the permits in use, and wakes
 * pollers parked on a full semaphore sooner than their re-check would.
 *
 * Oldest first by "SemaphoreHolders_expiry_idx". SKIP LOCKED: a permit being
 * renewed right now is passed over, and a renewal committed after this
 * statement's snapshot fails the re-check under the lock ("leaseExpiresAt" <=
 * now no longer holds), so a renewed permit is never swept. Returns how many
 * were deleted; `count === limit` means run again at once.
 */
export async function expireSemaphoreHolders(
  db: Executor,
  input: { limit: number; now?: Date | string },
): Promise<{ count: number }> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > 10_000) {
    throw new RangeError(`limit must be an integer from 1 to 10000, got ${input.limit}`);
  }
  const { rows } = await sql<{ count: number; woken: number }>`
    WITH "expired" AS (
      SELECT "namespaceId", "name", "taskId"
      FROM "SemaphoreHolders"
      WHERE "leaseExpiresAt" <= ${at(input.now)}
      ORDER BY "leaseExpiresAt"
      LIMIT ${input.limit}
      FOR UPDATE SKIP LOCKED
    ),
    "deleted" AS (
      DELETE FROM "SemaphoreHolders" AS "h"
      USING "expired" AS "e"
      WHERE "h"."namespaceId" = "e"."namespaceId"
        AND "h"."name" = "e"."name"
        AND "h"."taskId" = "e"."taskId"
      RETURNING "h"."namespaceId", "h"."name"
    )
    SELECT (SELECT count(*) FROM "deleted")::int AS "count",
      ${notifySemaphoreUsers(sql`"deleted"`)} AS "woken"`.execute(db);
  return { count: rows[0]?.count ?? 0 };
}
