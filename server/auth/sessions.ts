import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db/pool";
import { deleteSessionById, deleteSessionByTokenHash, findLiveSession, insertSession, touchSession } from "../store/sessions";
import type { Principal } from "./principal";

/*
 * Browser sessions. The cookie carries a random token; the database keeps only
 * its SHA-256 (a fast hash is right here, unlike for passwords: the token has
 * 256 bits of entropy, so there is nothing to brute-force).
 */

export { SESSION_COOKIE, clearedSessionCookie, readCookie, sessionCookie } from "./session-cookie";

/** Absolute lifetime: a session is never extended, so a stolen cookie dies on schedule. */
export const SESSION_TTL_SECONDS = 14 * 24 * 60 * 60;
const TOUCH_INTERVAL_SECONDS = 60;

export function hashSessionToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

export interface CreateSessionInput {
  userId: string;
  userAgent?: string | null;
  ipAddress?: string | null;
}

/** Starts a session; the token is returned once, for the cookie, and never stored. */
export async function createSession(db: Db, input: CreateSessionInput): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + SESSION_TTL_SECONDS * 1000);
  const row = await insertSession(db, {
    userId: input.userId,
    tokenHash: hashSessionToken(token),
    expiresAt,
    // Bounded: both come from request headers the client controls.
    userAgent: input.userAgent?.slice(0, 512) ?? null,
    ipAddress: input.ipAddress?.slice(0, 64) ?? null,
  });
  return { token, expiresAt: row.expiresAt };
}

// A real token is 43 base64url characters; anything else is refused before it
// costs a hash and a query.
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The signed-in user behind a session token, or null (unknown, expired, or the user is disabled). */
export async function authenticateSession(db: Db, token: string): Promise<(Principal & { kind: "user" }) | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const session = await findLiveSession(db, hashSessionToken(token));
  if (!session) return null;
  if (session.lastSeenAt === null || Date.now() - session.lastSeenAt.getTime() > TOUCH_INTERVAL_SECONDS * 1000) {
    await touchSession(db, session.sessionId, TOUCH_INTERVAL_SECONDS);
  }
  return { kind: "user", userId: session.userId, email: session.email, isOwner: session.isOwner, sessionId: session.sessionId };
}

/** Ends the session behind a token (sign-out). Unknown tokens are ignored. */
export async function revokeSession(db: Db, token: string): Promise<void> {
  if (!TOKEN_PATTERN.test(token)) return;
  await deleteSessionByTokenHash(db, hashSessionToken(token));
}

/** Ends a session by its id (a signed-in principal's `sessionId`: sign-out without the raw token). */
export async function revokeSessionById(db: Db, sessionId: string): Promise<void> {
  await deleteSessionById(db, sessionId);
}
