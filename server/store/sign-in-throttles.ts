import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * The per-email brake on password guessing ("SignInThrottles", 0008).
 *
 * Policy: the first FREE_ATTEMPTS failures cost nothing; after that each
 * further attempt must wait BASE_DELAY · 2^(failures − FREE_ATTEMPTS) seconds
 * after the last one, capped at MAX_DELAY. A quiet hour forgets the count, and
 * a successful sign-in clears it. So a guesser gets 5 tries, then at most one
 * every 15 minutes (about 100 a day) once the delay has doubled up to its cap,
 * while a user who mistyped a sixth time waits 30 s.
 *
 * The attempt is counted *before* the password is checked and the row lock of
 * the upsert serialises concurrent attempts, so a parallel burst cannot slip
 * past the limit by all reading the count before any of them writes it.
 *
 * Keyed by email, not by user or by address: a per-user key would answer
 * "throttled" only for real accounts, and a per-IP one stops nobody with more
 * than one address. The cost is that anyone can delay a known user's sign-in
 * by guessing badly — a delay, never a lockout.
 */
export const FREE_ATTEMPTS = 5;
export const BASE_DELAY_SECONDS = 30;
export const MAX_DELAY_SECONDS = 15 * 60;
export const FORGET_AFTER_SECONDS = 60 * 60;

export type AttemptReservation = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** The wait after `failures` counted attempts, as SQL over a row alias. */
function delaySql(failures: ReturnType<typeof sql.ref>) {
  return sql`make_interval(secs => least(${MAX_DELAY_SECONDS}, ${BASE_DELAY_SECONDS} * power(2, greatest(0, ${failures} - ${FREE_ATTEMPTS}))))`;
}

/**
 * Counts one attempt for `email` (already normalised) if it is allowed now, in
 * one statement. When the email is in its waiting period nothing is counted
 * and the answer says how long is left.
 */
export async function reserveSignInAttempt(db: Executor, email: string): Promise<AttemptReservation> {
  const { rows } = await sql<{ failures: number }>`
    INSERT INTO "SignInThrottles" AS t ("email", "failures", "lastFailedAt")
    VALUES (${email}, 1, now())
    ON CONFLICT ("email") DO UPDATE SET
      "failures" = CASE WHEN t."lastFailedAt" < now() - make_interval(secs => ${FORGET_AFTER_SECONDS}) THEN 1 ELSE t."failures" + 1 END,
      "lastFailedAt" = now()
    WHERE t."failures" < ${FREE_ATTEMPTS}
       OR t."lastFailedAt" + ${delaySql(sql.ref("t.failures"))} <= now()
    RETURNING "failures"`.execute(db);
  if (rows.length > 0) return { allowed: true };
  const { rows: waiting } = await sql<{ seconds: number }>`
    SELECT greatest(1, ceil(extract(epoch FROM (t."lastFailedAt" + ${delaySql(sql.ref("t.failures"))} - now()))))::int AS "seconds"
      FROM "SignInThrottles" t WHERE t."email" = ${email}`.execute(db);
  return { allowed: false, retryAfterSeconds: waiting[0]?.seconds ?? 1 };
}

/** A successful sign-in forgets the email's failures. */
export async function clearSignInFailures(db: Executor, email: string): Promise<void> {
  await db.deleteFrom("SignInThrottles").where("email", "=", email).execute();
}
