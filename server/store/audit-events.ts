import { sql } from "kysely";
import type { Kysely } from "kysely";
import { json } from "../../db/json";
import type { AuditActorType, AuditEventRow, Database } from "../../db/schema";

/**
 * AuditEvents: who did what to which resource. Append-only by construction —
 * this repository has an insert and reads, and deliberately no update or
 * delete (a trigger refuses both anyway; retention drops whole partitions).
 * An audit log with an edit path is one nobody can rely on.
 *
 * The columns are named one by one, never spread from a caller's object, so a
 * password, token or key hash can only land here if someone writes it into
 * `details` on purpose.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

export interface AppendAuditEventInput {
  /** Null for cluster-level actions (sign-in, creating a namespace). */
  namespaceId: string | null;
  actorType: AuditActorType;
  actorId: string | null;
  /** Dotted verb, e.g. "workflow.pause". */
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  details?: unknown;
  ipAddress?: string | null;
  /** Defaults to the transaction's now(). */
  at?: Date;
}

/**
 * Appends one event, in the caller's transaction so the record commits or
 * rolls back with the change it records. Returns the stored row.
 */
export async function appendAuditEvent(db: Executor, input: AppendAuditEventInput): Promise<AuditEventRow> {
  return db
    .insertInto("AuditEvents")
    .values({
      namespaceId: input.namespaceId,
      actorType: input.actorType,
      actorId: input.actorId,
      action: input.action,
      resourceType: input.resourceType,
      resourceId: input.resourceId,
      details: json(input.details ?? {}),
      ipAddress: input.ipAddress ?? null,
      at: input.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Who acted, as a service records it: a user, an API key, a service account,
 * or the system (a CLI command, a migration) with whatever names it.
 */
export interface AuditActor {
  type: AuditActorType;
  id: string | null;
  /** Informational: a client can claim any address through a proxy header. */
  ipAddress?: string | null;
}

/** The actor columns of {@link appendAuditEvent}'s input. */
export function auditActorColumns(actor: AuditActor): Pick<AppendAuditEventInput, "actorType" | "actorId" | "ipAddress"> {
  return { actorType: actor.type, actorId: actor.id, ipAddress: actor.ipAddress ?? null };
}

export interface ListAuditEventsOptions {
  /** The namespace's events; null: the cluster-level ones (sign-ins, users), which belong to no namespace. */
  namespaceId: string | null;
  /** Only events about this resource (both or neither). */
  resource?: { type: string; id: string };
  /** Only actions starting with this text ("workflow." for every operator action on a run). */
  actionPrefix?: string;
  /** Only events by this actor. */
  actor?: { type: AuditActorType; id: string };
  /** A page's `nextCursor`: continue after the event it names. */
  cursor?: string;
  /** Page size, 1 to 1000. */
  limit: number;
}

/** An event with a name for its actor, looked up for display (the row itself keeps only type and id). */
export interface AuditEventListItem extends AuditEventRow {
  /** The user's email, the API key's or the service account's name; null for the system or an actor since deleted. */
  actorName: string | null;
  /** An API key actor's public prefix (never the key or its hash). */
  actorKeyPrefix: string | null;
}

export interface AuditEventPage {
  items: AuditEventListItem[];
  /** Where the next (older) page starts; null on the last page. */
  nextCursor: string | null;
}

interface AuditCursor {
  /** "at" to the microsecond, as ISO 8601 UTC text. */
  at: string;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
// Matches the text to_char renders below, so a cursor round-trips exactly.
const AT_TEXT = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

function encodeCursor(cursor: AuditCursor): string {
  return Buffer.from(`${cursor.at}|${cursor.id}`, "utf8").toString("base64url");
}

/** The position a cursor names, or null for anything this list did not hand out. */
export function parseAuditCursor(cursor: string): AuditCursor | null {
  const [at, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  if (at === undefined || id === undefined || rest.length > 0 || !ISO_MICROS.test(at) || !UUID.test(id)) return null;
  return { at, id };
}

/**
 * The event's actor id as a uuid when its actor is of `type`, else null. A
 * CASE and not an AND: SQL does not promise to evaluate an AND's left side
 * first, and a system actor's id is free text ("nf bootstrap") that the cast
 * would fail on.
 */
function actorUuid(type: AuditActorType) {
  return sql`CASE WHEN "e"."actorType" = ${type} AND "e"."actorId" ~* ${UUID.source} THEN "e"."actorId"::uuid END`;
}

/** LIKE's wildcards and its escape character, escaped: a prefix of "a_b" matches only that text. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * A namespace's events (or the cluster-level ones) newest first, keyset-paged
 * on ("namespaceId","at" DESC,"id" DESC) — "AuditEvents_namespace_at_idx",
 * which `"namespaceId" IS NULL` uses too — or one resource's. Never OFFSET:
 * the log only grows, and an offset both rescans every skipped row and shifts
 * under new events between pages, repeating rows.
 *
 * Ties on "at" (one transaction's events share its now()) break on "id", a
 * uuidv7, so insertion order holds within a transaction. The cursor carries
 * "at" as text to the microsecond: pg reads timestamptz as a millisecond Date,
 * and a cursor rounded to the millisecond would skip or repeat the events of
 * that millisecond.
 *
 * The action prefix and actor filters are applied along the index scan, so a
 * filter matching rare events reads further back for a full page; the limit
 * bounds what is returned, not what is read.
 */
export async function listAuditEvents(db: Executor, options: ListAuditEventsOptions): Promise<AuditEventPage> {
  const { limit } = options;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${limit}`);
  }
  const cursor = options.cursor === undefined ? undefined : parseAuditCursor(options.cursor);
  if (cursor === null) throw new RangeError("cursor is not one this list handed out");
  const rows = await db
    .with("page", (qb) => {
      let page = qb
        .selectFrom("AuditEvents")
        .selectAll()
        .select(sql<string>`to_char("at" AT TIME ZONE 'UTC', ${sql.raw(AT_TEXT)})`.as("atText"))
        .where("namespaceId", options.namespaceId === null ? "is" : "=", options.namespaceId);
      if (options.resource !== undefined) {
        page = page.where("resourceType", "=", options.resource.type).where("resourceId", "=", options.resource.id);
      }
      if (options.actionPrefix !== undefined && options.actionPrefix !== "") {
        page = page.where("action", "like", `${escapeLike(options.actionPrefix)}%`);
      }
      if (options.actor !== undefined) page = page.where("actorType", "=", options.actor.type).where("actorId", "=", options.actor.id);
      // A row comparison, so the index scan starts at the cursor instead of
      // filtering up to it. The plain "at" bound says nothing new, but
      // partition pruning does not read row comparisons: without it every
      // month newer than the cursor is probed (84 months are kept).
      if (cursor !== undefined) {
        page = page
          .where(sql<boolean>`("at", "id") < (${cursor.at}::timestamptz, ${cursor.id}::uuid)`)
          .where(sql<boolean>`"at" <= ${cursor.at}::timestamptz`);
      }
      // One row past the page says whether another page exists.
      return page.orderBy("at", "desc").orderBy("id", "desc").limit(limit + 1);
    })
    .selectFrom("page as e")
    .leftJoin("Users as u", (join) => join.on(sql<boolean>`"u"."id" = ${actorUuid("user")}`))
    .leftJoin("ApiKeys as k", (join) => join.on(sql<boolean>`"k"."id" = ${actorUuid("apiKey")}`))
    .leftJoin("ServiceAccounts as s", (join) => join.on(sql<boolean>`"s"."id" = ${actorUuid("serviceAccount")}`))
    .select([
      "e.id",
      "e.at",
      "e.atText",
      "e.namespaceId",
      "e.actorType",
      "e.actorId",
      "e.action",
      "e.resourceType",
      "e.resourceId",
      "e.details",
      "e.ipAddress",
      (eb) => eb.fn.coalesce("u.email", "k.name", "s.name").as("actorName"),
      "k.prefix as actorKeyPrefix",
    ])
    .orderBy("e.at", "desc")
    .orderBy("e.id", "desc")
    .execute();
  const items = rows.slice(0, limit).map(({ atText: _atText, ...row }) => row);
  const last = rows[limit - 1];
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor({ at: last.atText, id: last.id }) : null };
}
