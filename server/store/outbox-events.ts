import { sql } from "kysely";
import type { Kysely } from "kysely";
import { json } from "../../db/json";
import type { Database, OutboxEventRow } from "../../db/schema";
import { assertCount, at } from "./sql-helpers";

/**
 * OutboxEvents: events written in the same transaction as the state change
 * they announce (so an event exists exactly when its change committed), and
 * delivered afterwards by the relay (server/sidecar/outbox-relay.ts), at least once.
 *
 * Delivery is claim, deliver, record — three short statements, never one
 * transaction held open across the network: a slow webhook would otherwise
 * pin a pooled connection and hold back vacuum's horizon on this
 * high-churn table for as long as it takes. A claim pushes "nextAttemptAt"
 * out by the claim time, which takes the row out of every relay's reach
 * (SKIP LOCKED covers the instant of the claim itself); the new
 * "nextAttemptAt" is the claim's token, and recording the outcome requires it
 * unchanged, so a relay whose claim ran out and was re-claimed by another
 * cannot overwrite the newer attempt. A relay that dies mid-delivery leaves
 * the event to become deliverable again when its claim runs out.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * Raised by every event written, payload "wake", at its transaction's commit:
 * the sidecar's relay loop wakes on it and delivers at once, rather than at its
 * next pass (1 s). One payload, folded by Postgres within a transaction.
 */
export const OUTBOX_CHANNEL = "node_flow_outbox";
export const OUTBOX_WAKE_KEY = "wake";

export interface InsertOutboxEventInput {
  namespaceId: string;
  /** Where it goes: "webhook:<url>" or "conductor:<workflow>:<queue>" (see event-task.ts). */
  topic: string;
  workflowId?: string | null;
  payload: unknown;
  now?: Date;
}

/**
 * Writes one event, deliverable at once, and wakes the relay when it commits.
 * Call it in the transaction whose change it announces.
 */
export async function insertOutboxEvent(db: Executor, input: InsertOutboxEventInput): Promise<OutboxEventRow> {
  const { notified: _notified, ...row } = await db
    .insertInto("OutboxEvents")
    .values({
      namespaceId: input.namespaceId,
      topic: input.topic,
      workflowId: input.workflowId ?? null,
      payload: json(input.payload),
      createdAt: at(input.now),
      nextAttemptAt: at(input.now),
    })
    .returningAll()
    .returning(sql<null>`pg_notify(${OUTBOX_CHANNEL}, ${OUTBOX_WAKE_KEY})`.as("notified"))
    .executeTakeFirstOrThrow();
  return row;
}

/**
 * Writes an event for the namespace's event handlers only if an active one
 * listens to its topic (one probe of EventHandlers_event_idx), so a trigger
 * nobody handles costs no outbox row; true when it was written. Call it in
 * the transaction whose change it announces.
 */
export async function insertOutboxEventForHandlers(db: Executor, input: Omit<InsertOutboxEventInput, "now">): Promise<boolean> {
  const written = await sql<{ id: string }>`
    INSERT INTO "OutboxEvents" ("namespaceId", "topic", "workflowId", "payload")
    SELECT ${input.namespaceId}::uuid, ${input.topic}, ${input.workflowId ?? null}::uuid, ${json(input.payload)}::jsonb
    WHERE EXISTS (SELECT 1 FROM "EventHandlers" h WHERE h."namespaceId" = ${input.namespaceId}::uuid AND h."event" = ${input.topic} AND h."active")
    RETURNING "id", pg_notify(${OUTBOX_CHANNEL}, ${OUTBOX_WAKE_KEY})`.execute(db);
  return written.rows.length > 0;
}

export interface ClaimOutboxEventsInput {
  limit: number;
  /** How long the claim holds the events: longer than a delivery can take. */
  claimSeconds: number;
  now?: Date;
}

/**
 * Claims up to `limit` deliverable events, oldest due first, and returns them
 * with their claim token ("nextAttemptAt", now + claimSeconds, cut to
 * milliseconds so it survives the round trip through a JavaScript Date
 * exactly). The candidate scan is "OutboxEvents_deliverable_idx"
 * ("nextAttemptAt","id") WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS
 * NULL, in its order, so LIMIT stops early and published or dead-lettered
 * rows are never stepped over. FOR UPDATE SKIP LOCKED: concurrent relays take
 * disjoint batches; a row another relay claimed after our snapshot fails the
 * re-check under the lock ("nextAttemptAt" is in the future now).
 */
export async function claimOutboxEvents(db: Executor, input: ClaimOutboxEventsInput): Promise<OutboxEventRow[]> {
  assertCount("limit", input.limit, 1000);
  if (!(Number.isFinite(input.claimSeconds) && input.claimSeconds > 0)) throw new RangeError(`claimSeconds must be positive, got ${input.claimSeconds}`);
  const now = at(input.now);
  const { rows } = await sql<OutboxEventRow>`
    WITH "due" AS (
      SELECT "id"
      FROM "OutboxEvents"
      WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL
        AND "nextAttemptAt" <= ${now}
      ORDER BY "nextAttemptAt", "id"
      LIMIT ${input.limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE "OutboxEvents" AS "o"
    SET "nextAttemptAt" = date_trunc('milliseconds', ${now} + make_interval(secs => ${input.claimSeconds}::double precision))
    WHERE "o"."id" = ANY (ARRAY(SELECT "id" FROM "due"))
    RETURNING "o".*`.execute(db);
  // RETURNING order is unspecified, and every claimed row now shares one "nextAttemptAt".
  return rows.sort((a, b) => a.id - b.id);
}

/** Identifies a claimed event: its id and the claim token claimOutboxEvents returned. */
export interface ClaimedEvent {
  id: number;
  claimedUntil: Date;
}

/** Marks a claimed event delivered. False when the claim is no longer ours (it ran out and another relay took it). */
export async function markOutboxEventPublished(db: Executor, event: ClaimedEvent & { now?: Date }): Promise<boolean> {
  const result = await db
    .updateTable("OutboxEvents")
    .set({ publishedAt: at(event.now), lastError: null })
    .where("id", "=", event.id)
    .where("nextAttemptAt", "=", event.claimedUntil)
    .where("publishedAt", "is", null)
    .where("deadLetteredAt", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Records a failed delivery of a claimed event: "attempts" + 1, "lastError",
 * and either the next attempt `retryAfterSeconds` from now or, with `deadLetter`, the dead
 * letter ("deadLetteredAt" set; the row leaves the deliverable index and is
 * kept for inspection and {@link replayDeadLetteredEvent}). False when the
 * claim is no longer ours.
 */
export async function recordOutboxEventFailure(
  db: Executor,
  event: ClaimedEvent & { error: string; retryAfterSeconds: number; deadLetter: boolean; now?: Date },
): Promise<boolean> {
  const result = await db
    .updateTable("OutboxEvents")
    .set((eb) => ({
      attempts: eb("attempts", "+", 1),
      lastError: event.error,
      nextAttemptAt: sql<Date>`${at(event.now)} + make_interval(secs => ${event.retryAfterSeconds}::double precision)`,
      ...(event.deadLetter ? { deadLetteredAt: at(event.now) } : {}),
    }))
    .where("id", "=", event.id)
    .where("nextAttemptAt", "=", event.claimedUntil)
    .where("publishedAt", "is", null)
    .where("deadLetteredAt", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Puts one dead-lettered event back in the delivery path, due at once, with a
 * fresh budget of attempts ("lastError" is kept until a delivery succeeds).
 * False when there is no such dead-lettered event in the namespace.
 */
export async function replayDeadLetteredEvent(db: Executor, input: { namespaceId: string; id: number; now?: Date }): Promise<boolean> {
  const result = await db
    .updateTable("OutboxEvents")
    .set({ deadLetteredAt: null, attempts: 0, nextAttemptAt: at(input.now) })
    .where("id", "=", input.id)
    .where("namespaceId", "=", input.namespaceId)
    .where("deadLetteredAt", "is not", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Dead-lettered events of a namespace, newest first (the "OutboxEvents_deadletter_idx" order), for an operator to inspect. */
export async function listDeadLetteredEvents(db: Executor, input: { namespaceId: string; limit: number }): Promise<OutboxEventRow[]> {
  assertCount("limit", input.limit, 1000);
  return db
    .selectFrom("OutboxEvents")
    .selectAll()
    .where("deadLetteredAt", "is not", null)
    .where("namespaceId", "=", input.namespaceId)
    .orderBy("deadLetteredAt", "desc")
    .orderBy("id", "desc")
    .limit(input.limit)
    .execute();
}

export interface OutboxBacklog {
  /** Not yet delivered and not dead-lettered (due now or backing off). */
  pending: number;
  deadLettered: number;
  /** "createdAt" of the oldest pending event: how far behind delivery is. */
  oldestPendingAt: Date | null;
}

/**
 * For /metrics. Each part reads only rows in its partial index (pending rows
 * through "OutboxEvents_deliverable_idx", dead letters through
 * "OutboxEvents_deadletter_idx"), so the cost follows the backlog, not the
 * table's history of published events.
 */
export async function outboxBacklog(db: Executor): Promise<OutboxBacklog> {
  const { rows } = await sql<OutboxBacklog>`
    SELECT
      (SELECT count(*)::int FROM "OutboxEvents" WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL) AS "pending",
      (SELECT count(*)::int FROM "OutboxEvents" WHERE "deadLetteredAt" IS NOT NULL) AS "deadLettered",
      (SELECT min("createdAt") FROM "OutboxEvents" WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL) AS "oldestPendingAt"`.execute(db);
  return rows[0]!;
}

/**
 * Deletes up to `limit` events published before `before`. Published rows are
 * kept a while (what was sent, and when) but would otherwise grow the table
 * forever. No index has "publishedAt" outside the partial ones, so each pass
 * scans the table: run it rarely (hourly) with a generous `limit`.
 */
export async function prunePublishedOutboxEvents(db: Executor, input: { before: Date; limit: number }): Promise<number> {
  assertCount("limit", input.limit, 100_000);
  const result = await sql`
    DELETE FROM "OutboxEvents"
    WHERE "id" = ANY (ARRAY(
      SELECT "id" FROM "OutboxEvents"
      WHERE "publishedAt" IS NOT NULL AND "publishedAt" < ${input.before}::timestamptz
      LIMIT ${input.limit}
      FOR UPDATE SKIP LOCKED
    ))`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
