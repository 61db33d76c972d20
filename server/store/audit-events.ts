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

export interface ListAuditEventsOptions {
  namespaceId: string;
  /** Only events about this resource (both or neither). */
  resource?: { type: string; id: string };
  /** Page size, 1 to 1000. */
  limit: number;
}

/**
 * A namespace's events newest first ("AuditEvents_namespace_at_idx"), or one
 * resource's ("AuditEvents_resource_idx", whose predicate "resourceId" IS NOT
 * NULL the equality implies). Ties on "at" (one transaction's events share its
 * now()) break on "id", a uuidv7, so insertion order holds within a transaction.
 */
export async function listAuditEvents(db: Executor, options: ListAuditEventsOptions): Promise<AuditEventRow[]> {
  if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${options.limit}`);
  }
  let query = db.selectFrom("AuditEvents").selectAll().where("namespaceId", "=", options.namespaceId);
  if (options.resource !== undefined) {
    query = query.where("resourceType", "=", options.resource.type).where("resourceId", "=", options.resource.id);
  }
  return query
    .orderBy("at", "desc")
    .orderBy("id", "desc")
    .limit(options.limit)
    .execute();
}
