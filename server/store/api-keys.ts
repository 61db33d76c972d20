import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";

/**
 * ApiKeys: every statement about keys. Reads name their columns and never
 * return "keyHash", except the one lookup authentication needs — so a list or
 * an audit record built from these rows cannot carry it by accident.
 *
 * Every statement is scoped by "namespaceId", except findApiKeyByPrefix: a
 * worker presents only its key, and the key is what tells us the namespace.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/** A key as the rest of the server may see it: everything but the hash. */
export interface ApiKeyRecord {
  id: string;
  namespaceId: string;
  name: string;
  prefix: string;
  scopes: string[];
  userId: string | null;
  serviceAccountId: string | null;
  createdAt: Date;
  createdBy: string | null;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const RECORD_COLUMNS = [
  "id",
  "namespaceId",
  "name",
  "prefix",
  "scopes",
  "userId",
  "serviceAccountId",
  "createdAt",
  "createdBy",
  "lastUsedAt",
  "expiresAt",
  "revokedAt",
] as const;

export interface InsertApiKeyInput {
  namespaceId: string;
  name: string;
  prefix: string;
  keyHash: string;
  scopes: readonly string[];
  userId?: string | null;
  serviceAccountId?: string | null;
  createdBy?: string | null;
  expiresAt?: Date | null;
}

/**
 * Inserts a key, or returns undefined when `prefix` is already taken (the
 * caller draws another). ON CONFLICT DO NOTHING rather than catching the
 * unique violation, which would abort the caller's transaction; a concurrent
 * insert of the same prefix makes this one wait for it and then do nothing.
 */
export async function insertApiKey(db: Executor, input: InsertApiKeyInput): Promise<ApiKeyRecord | undefined> {
  return db
    .insertInto("ApiKeys")
    .values({
      namespaceId: input.namespaceId,
      name: input.name,
      prefix: input.prefix,
      keyHash: input.keyHash,
      scopes: [...input.scopes],
      userId: input.userId ?? null,
      serviceAccountId: input.serviceAccountId ?? null,
      createdBy: input.createdBy ?? null,
      expiresAt: input.expiresAt ?? null,
    })
    .onConflict((oc) => oc.column("prefix").doNothing())
    .returning(RECORD_COLUMNS)
    .executeTakeFirst();
}

/** What authentication needs about a presented prefix, with every time test made on the database's clock. */
export interface ApiKeyCredentialRow {
  id: string;
  namespaceId: string;
  keyHash: string;
  scopes: string[];
  userId: string | null;
  serviceAccountId: string | null;
  revoked: boolean;
  /** When the key stops working, or null; `expired` is the test of it against the database's clock at the read. */
  expiresAt: Date | null;
  expired: boolean;
  /** The owning user or service account exists (in the key's namespace) and is not disabled. */
  ownerActive: boolean;
  /** "lastUsedAt" is unset or more than a minute old. */
  lastUsedStale: boolean;
}

/**
 * The key with this prefix, through the unique index on "prefix". Expiry and
 * the last-use age are computed with the database's now(), so every web
 * process agrees with the others and with the writes, whatever its own clock.
 */
export async function findApiKeyByPrefix(db: Executor, prefix: string): Promise<ApiKeyCredentialRow | undefined> {
  return db
    .selectFrom("ApiKeys as k")
    .leftJoin("Users as u", "u.id", "k.userId")
    // The namespace condition is belt and braces: a key is only ever created
    // for a service account of its own namespace.
    .leftJoin("ServiceAccounts as sa", (join) => join.onRef("sa.id", "=", "k.serviceAccountId").onRef("sa.namespaceId", "=", "k.namespaceId"))
    .select([
      "k.id",
      "k.namespaceId",
      "k.keyHash",
      "k.scopes",
      "k.userId",
      "k.serviceAccountId",
      sql<boolean>`"k"."revokedAt" IS NOT NULL`.as("revoked"),
      "k.expiresAt",
      sql<boolean>`"k"."expiresAt" IS NOT NULL AND "k"."expiresAt" <= now()`.as("expired"),
      sql<boolean>`("k"."userId" IS NULL OR ("u"."id" IS NOT NULL AND "u"."disabledAt" IS NULL))
        AND ("k"."serviceAccountId" IS NULL OR ("sa"."id" IS NOT NULL AND "sa"."disabledAt" IS NULL))`.as("ownerActive"),
      sql<boolean>`"k"."lastUsedAt" IS NULL OR "k"."lastUsedAt" < now() - interval '1 minute'`.as("lastUsedStale"),
    ])
    .where("k.prefix", "=", prefix)
    .executeTakeFirst();
}

/**
 * Records a use, at most once a minute per key. A busy worker polls many times
 * a second; writing each time would turn every read into a row update (WAL, a
 * dead tuple, and lock contention between a fleet's workers sharing one key).
 * The caller skips this call when the row it read was fresh; the predicate
 * repeats the test so that of several pollers that all read a stale value, the
 * first to commit writes and the rest, re-checking the row after waiting on its
 * lock, update nothing. Returns whether this call wrote.
 */
export async function touchApiKeyLastUsed(db: Executor, apiKeyId: string): Promise<boolean> {
  const result = await db
    .updateTable("ApiKeys")
    .set({ lastUsedAt: sql<Date>`now()` })
    .where("id", "=", apiKeyId)
    .where((eb) => eb.or([eb("lastUsedAt", "is", null), eb("lastUsedAt", "<", sql<Date>`now() - interval '1 minute'`)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function getApiKey(db: Executor, input: { namespaceId: string; apiKeyId: string }): Promise<ApiKeyRecord | undefined> {
  return db
    .selectFrom("ApiKeys")
    .select(RECORD_COLUMNS)
    .where("namespaceId", "=", input.namespaceId)
    .where("id", "=", input.apiKeyId)
    .executeTakeFirst();
}

/**
 * Revokes a live key; undefined when it does not exist in the namespace or is
 * already revoked. The UPDATE is the arbiter between two concurrent revokes or
 * rotations of one key: the second waits on the row lock, re-checks
 * "revokedAt" IS NULL against the committed row, and updates nothing.
 */
export async function markApiKeyRevoked(db: Executor, input: { namespaceId: string; apiKeyId: string }): Promise<ApiKeyRecord | undefined> {
  return db
    .updateTable("ApiKeys")
    .set({ revokedAt: sql<Date>`now()` })
    .where("namespaceId", "=", input.namespaceId)
    .where("id", "=", input.apiKeyId)
    .where("revokedAt", "is", null)
    .returning(RECORD_COLUMNS)
    .executeTakeFirst();
}

export type ApiKeyStatus = "active" | "expired" | "revoked" | "ownerDisabled";

export interface ApiKeySummaryRow extends ApiKeyRecord {
  status: ApiKeyStatus;
  /** The owner's display: the user's email or the service account's name. */
  ownerUserEmail: string | null;
  ownerServiceAccountName: string | null;
}

/**
 * A namespace's keys with their owners: live keys first, then newest first.
 * Status is computed on the database's clock, in order of what a reader needs
 * to know first (a revoked key that has also expired reads "revoked").
 */
export async function listApiKeyRows(db: Executor, input: { namespaceId: string; limit: number }): Promise<ApiKeySummaryRow[]> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${input.limit}`);
  }
  const status = sql<ApiKeyStatus>`CASE
    WHEN "k"."revokedAt" IS NOT NULL THEN 'revoked'
    WHEN "k"."expiresAt" IS NOT NULL AND "k"."expiresAt" <= now() THEN 'expired'
    WHEN "u"."disabledAt" IS NOT NULL OR "sa"."disabledAt" IS NOT NULL THEN 'ownerDisabled'
    ELSE 'active' END`;
  return db
    .selectFrom("ApiKeys as k")
    .leftJoin("Users as u", "u.id", "k.userId")
    .leftJoin("ServiceAccounts as sa", (join) => join.onRef("sa.id", "=", "k.serviceAccountId").onRef("sa.namespaceId", "=", "k.namespaceId"))
    .select(RECORD_COLUMNS.map((c) => `k.${c}` as const))
    .select([status.as("status"), "u.email as ownerUserEmail", "sa.name as ownerServiceAccountName"])
    .where("k.namespaceId", "=", input.namespaceId)
    .orderBy(sql`("k"."revokedAt" IS NULL AND ("k"."expiresAt" IS NULL OR "k"."expiresAt" > now()))`, "desc")
    .orderBy("k.createdAt", "desc")
    .orderBy("k.id", "desc")
    .limit(input.limit)
    .execute();
}

