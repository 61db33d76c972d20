import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database, ServiceAccountRow } from "../../db/schema";

/**
 * ServiceAccounts: non-human owners of API keys (a worker fleet, a CI job), so
 * a key outlives the person who created it. Every statement is scoped by
 * "namespaceId" even when the id alone would find the row: an id taken from one
 * namespace's request must never reach a row of another.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

export interface InsertServiceAccountInput {
  namespaceId: string;
  name: string;
  description?: string | null;
  createdBy?: string | null;
}

/**
 * Inserts a service account, or returns undefined when the namespace already
 * has one of that name. ON CONFLICT DO NOTHING rather than catching the unique
 * violation: an error would abort the caller's transaction.
 */
export async function insertServiceAccount(db: Executor, input: InsertServiceAccountInput): Promise<ServiceAccountRow | undefined> {
  return db
    .insertInto("ServiceAccounts")
    .values({
      namespaceId: input.namespaceId,
      name: input.name,
      description: input.description ?? null,
      createdBy: input.createdBy ?? null,
    })
    .onConflict((oc) => oc.columns(["namespaceId", "name"]).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function getServiceAccount(
  db: Executor,
  input: { namespaceId: string; serviceAccountId: string },
): Promise<ServiceAccountRow | undefined> {
  return db
    .selectFrom("ServiceAccounts")
    .selectAll()
    .where("namespaceId", "=", input.namespaceId)
    .where("id", "=", input.serviceAccountId)
    .executeTakeFirst();
}

export interface ServiceAccountSummaryRow extends ServiceAccountRow {
  /** Keys neither revoked nor expired. */
  activeKeyCount: number;
}

/**
 * A namespace's service accounts by name, each with its count of live keys.
 * The count is a correlated subquery over "ApiKeys_namespace_idx"; a namespace
 * holds tens of accounts, not thousands.
 */
export async function listServiceAccountRows(db: Executor, input: { namespaceId: string }): Promise<ServiceAccountSummaryRow[]> {
  return db
    .selectFrom("ServiceAccounts as sa")
    .selectAll("sa")
    .select(
      sql<number>`(
        SELECT count(*)::int FROM "ApiKeys" AS "k"
        WHERE "k"."namespaceId" = "sa"."namespaceId"
          AND "k"."serviceAccountId" = "sa"."id"
          AND "k"."revokedAt" IS NULL
          AND ("k"."expiresAt" IS NULL OR "k"."expiresAt" > now())
      )`.as("activeKeyCount"),
    )
    .where("sa.namespaceId", "=", input.namespaceId)
    .orderBy("sa.name")
    .execute();
}

/**
 * Sets "disabledAt" once; undefined when the account does not exist in the
 * namespace or is already disabled. The predicate on "disabledAt" keeps the
 * first timestamp when two admins disable at once.
 */
export async function markServiceAccountDisabled(
  db: Executor,
  input: { namespaceId: string; serviceAccountId: string },
): Promise<ServiceAccountRow | undefined> {
  return db
    .updateTable("ServiceAccounts")
    .set({ disabledAt: sql<Date>`now()` })
    .where("namespaceId", "=", input.namespaceId)
    .where("id", "=", input.serviceAccountId)
    .where("disabledAt", "is", null)
    .returningAll()
    .executeTakeFirst();
}
