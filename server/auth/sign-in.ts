import type { Db } from "../../db/pool";
import { appendAuditEvent } from "../store/audit-events";
import { clearSignInFailures, reserveSignInAttempt } from "../store/sign-in-throttles";
import { findUserCredentials, normalizeEmail, recordUserSignIn } from "../store/users";
import type { User } from "../store/users";
import { DECOY_PASSWORD_HASH, verifyPassword } from "./passwords";
import { createSession } from "./sessions";

export interface SignInInput {
  email: string;
  password: string;
  userAgent?: string | null;
  ipAddress?: string | null;
}

export type SignInResult =
  | { ok: true; user: User; token: string; expiresAt: Date }
  /** Unknown email, no password set, or the wrong password: one answer for all three. */
  | { ok: false; reason: "invalid-credentials" }
  | { ok: false; reason: "throttled"; retryAfterSeconds: number }
  /** Only ever returned after the right password: it reveals nothing a guesser could use. */
  | { ok: false; reason: "disabled" };

/**
 * Email and password to a session.
 *
 * An unknown email and a wrong password look the same from outside: the same
 * result, the same audit action, and the same work — the unknown email is
 * checked against a decoy scrypt hash, so the response time does not separate
 * them either. Attempts are throttled per email (store/sign-in-throttles.ts),
 * counted before the password is checked. Neither the password nor the token
 * is ever logged or audited.
 */
export async function signIn(db: Db, input: SignInInput): Promise<SignInResult> {
  const email = normalizeEmail(input.email);
  const reservation = await reserveSignInAttempt(db, email);
  if (!reservation.allowed) return { ok: false, reason: "throttled", retryAfterSeconds: reservation.retryAfterSeconds };

  const user = await findUserCredentials(db, email);
  const hash = user?.passwordHash ?? DECOY_PASSWORD_HASH;
  const matches = (await verifyPassword(input.password, hash)) && user?.passwordHash != null;

  if (!user || !matches) {
    await appendAuditEvent(db, {
      namespaceId: null,
      actorType: "user",
      actorId: user?.id ?? null,
      action: "auth.signInFailed",
      resourceType: "user",
      resourceId: user?.id ?? null,
      details: { email },
      ipAddress: input.ipAddress ?? null,
    });
    return { ok: false, reason: "invalid-credentials" };
  }
  if (user.disabledAt !== null) return { ok: false, reason: "disabled" };

  return db.transaction().execute(async (trx) => {
    await clearSignInFailures(trx, email);
    const session = await createSession(trx, { userId: user.id, userAgent: input.userAgent, ipAddress: input.ipAddress });
    await recordUserSignIn(trx, user.id);
    await appendAuditEvent(trx, {
      namespaceId: null,
      actorType: "user",
      actorId: user.id,
      action: "auth.signIn",
      resourceType: "user",
      resourceId: user.id,
      details: { email: user.email },
      ipAddress: input.ipAddress ?? null,
    });
    const { passwordHash: _omitted, ...publicUser } = user;
    return { ok: true, user: publicUser, token: session.token, expiresAt: session.expiresAt };
  });
}
