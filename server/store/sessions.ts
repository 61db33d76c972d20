import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * Sessions: one row per signed-in browser. Only the SHA-256 of the cookie's
 * token is stored ("tokenHash"), so a leaked table or backup is not a set of
 * live cookies. Tokens are hashed by server/auth/sessions.ts; this module never
 * sees one.
 */

export interface InsertSessionInput {
  userId: string;
  tokenHash: string;
  expiresAt: Date;
  userAgent?: string | null;
  ipAddress?: string | null;
}

export async function insertSession(db: Executor, input: InsertSessionInput): Promise<{ id: string; expiresAt: Date }> {
  return db
    .insertInto("Sessions")
    .values({
      userId: input.userId,
      tokenHash: input.tokenHash,
      expiresAt: input.expiresAt,
      userAgent: input.userAgent ?? null,
      ipAddress: input.ipAddress ?? null,
    })
    .returning(["id", "expiresAt"])
    .executeTakeFirstOrThrow();
}

export interface LiveSession {
  sessionId: string;
  userId: string;
  email: string;
  isOwner: boolean;
  lastSeenAt: Date | null;
}

/**
 * The session behind a token hash, if it is still good: not expired (by the
 * database's clock, the same one that wrote "expiresAt") and its user not
 * disabled. A disabled user's sessions are also deleted when they are
 * disabled; the check here covers the window and any path that forgets.
 */
export async function findLiveSession(db: Executor, tokenHash: string): Promise<LiveSession | null> {
  const row = await db
    .selectFrom("Sessions as s")
    .innerJoin("Users as u", "u.id", "s.userId")
    .select(["s.id as sessionId", "s.userId", "u.email", "u.isAdmin", "s.lastSeenAt"])
    .where("s.tokenHash", "=", tokenHash)
    .where("s.expiresAt", ">", sql<Date>`now()`)
    .where("u.disabledAt", "is", null)
    .executeTakeFirst();
  if (!row) return null;
  return { sessionId: row.sessionId, userId: row.userId, email: row.email, isOwner: row.isAdmin, lastSeenAt: row.lastSeenAt };
}

/**
 * Stamps "lastSeenAt" at most once per `intervalSeconds`: every request of a
 * busy page authenticates, and an UPDATE per request would turn reads into
 * writes (WAL, dead tuples) for a value nobody needs to the second. The
 * condition is in the statement, so concurrent requests do not each write.
 */
export async function touchSession(db: Executor, sessionId: string, intervalSeconds: number): Promise<void> {
  await db
    .updateTable("Sessions")
    .set({ lastSeenAt: sql<Date>`now()` })
    .where("id", "=", sessionId)
    .where((eb) =>
      eb.or([
        eb("lastSeenAt", "is", null),
        eb("lastSeenAt", "<", sql<Date>`now() - make_interval(secs => ${intervalSeconds})`),
      ]),
    )
    .execute();
}

export async function deleteSessionByTokenHash(db: Executor, tokenHash: string): Promise<boolean> {
  const result = await db.deleteFrom("Sessions").where("tokenHash", "=", tokenHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteSessionById(db: Executor, sessionId: string): Promise<boolean> {
  const result = await db.deleteFrom("Sessions").where("id", "=", sessionId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Signs a user out everywhere (disabling them, for one). */
export async function deleteSessionsOfUser(db: Executor, userId: string): Promise<number> {
  const result = await db.deleteFrom("Sessions").where("userId", "=", userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Prunes expired rows ("Sessions_expires_idx"); they are already refused, this only reclaims space. */
export async function deleteExpiredSessions(db: Executor): Promise<number> {
  const result = await db.deleteFrom("Sessions").where("expiresAt", "<=", sql<Date>`now()`).executeTakeFirst();
  return Number(result.numDeletedRows);
}
