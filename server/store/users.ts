import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database, UserRow } from "../../db/schema";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * A user as the rest of the server sees it. The password hash is left out on
 * purpose: it is read only by {@link findUserCredentials}, so no list or API
 * response can carry it by accident.
 */
export interface User {
  id: string;
  email: string;
  displayName: string | null;
  /** The instance owner (Users.isAdmin). */
  isOwner: boolean;
  disabledAt: Date | null;
  lastLoginAt: Date | null;
  createdAt: Date;
}

const USER_COLUMNS = ["id", "email", "displayName", "isAdmin", "disabledAt", "lastLoginAt", "createdAt"] as const;

function toUser(row: Pick<UserRow, (typeof USER_COLUMNS)[number]>): User {
  return {
    id: row.id,
    email: row.email,
    displayName: row.displayName,
    isOwner: row.isAdmin,
    disabledAt: row.disabledAt,
    lastLoginAt: row.lastLoginAt,
    createdAt: row.createdAt,
  };
}

/** Emails are compared lower-cased everywhere ("Users_email_idx" is on lower("email")). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class DuplicateEmailError extends Error {
  override name = "DuplicateEmailError";
  constructor(email: string) {
    super(`A user with the email ${email} already exists.`);
  }
}

export interface CreateUserInput {
  email: string;
  displayName?: string | null;
  passwordHash: string | null;
  isOwner: boolean;
}

/** Inserts a user; a second account for the same mailbox (any case) throws DuplicateEmailError. */
export async function insertUser(db: Executor, input: CreateUserInput): Promise<User> {
  try {
    const row = await db
      .insertInto("Users")
      .values({
        email: input.email.trim(),
        displayName: input.displayName ?? null,
        passwordHash: input.passwordHash,
        isAdmin: input.isOwner,
      })
      .returning(USER_COLUMNS)
      .executeTakeFirstOrThrow();
    return toUser(row);
  } catch (error) {
    if ((error as { code?: string }).code === "23505") throw new DuplicateEmailError(input.email.trim());
    throw error;
  }
}

export async function findUserById(db: Executor, id: string): Promise<User | null> {
  const row = await db.selectFrom("Users").select(USER_COLUMNS).where("id", "=", id).executeTakeFirst();
  return row ? toUser(row) : null;
}

export async function findUserByEmail(db: Executor, email: string): Promise<User | null> {
  const row = await db
    .selectFrom("Users")
    .select(USER_COLUMNS)
    .where(sql<string>`lower(${sql.ref("email")})`, "=", normalizeEmail(email))
    .executeTakeFirst();
  return row ? toUser(row) : null;
}

/** The user plus their password hash: for sign-in only. */
export async function findUserCredentials(db: Executor, email: string): Promise<(User & { passwordHash: string | null }) | null> {
  const row = await db
    .selectFrom("Users")
    .select([...USER_COLUMNS, "passwordHash"])
    .where(sql<string>`lower(${sql.ref("email")})`, "=", normalizeEmail(email))
    .executeTakeFirst();
  return row ? { ...toUser(row), passwordHash: row.passwordHash } : null;
}

export async function anyUserExists(db: Executor): Promise<boolean> {
  const row = await db.selectFrom("Users").select(sql<number>`1`.as("one")).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Every user, by email: the owner's user list. */
export async function listUsers(db: Executor): Promise<User[]> {
  const rows = await db.selectFrom("Users").select(USER_COLUMNS).orderBy(sql`lower(${sql.ref("email")})`).execute();
  return rows.map(toUser);
}

/** Enabled owners other than `exceptUserId`: disabling the last one would lock everyone out of user management. */
export async function countOtherActiveOwners(db: Executor, exceptUserId: string): Promise<number> {
  const row = await db
    .selectFrom("Users")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("isAdmin", "=", true)
    .where("disabledAt", "is", null)
    .where("id", "!=", exceptUserId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Sets or clears "disabledAt"; null when the user does not exist. */
export async function setUserDisabledAt(db: Executor, id: string, disabled: boolean): Promise<User | null> {
  const row = await db
    .updateTable("Users")
    // Re-disabling keeps the original timestamp: "disabled since" stays true.
    .set({ disabledAt: disabled ? sql<Date>`coalesce(${sql.ref("disabledAt")}, now())` : null, updatedAt: sql<Date>`now()` })
    .where("id", "=", id)
    .returning(USER_COLUMNS)
    .executeTakeFirst();
  return row ? toUser(row) : null;
}

export async function recordUserSignIn(db: Executor, id: string): Promise<void> {
  await db.updateTable("Users").set({ lastLoginAt: sql<Date>`now()` }).where("id", "=", id).execute();
}

// One key for owner setup across the cluster: two setup requests racing on an
// empty Users table have no row to lock, so they serialise on this instead.
const OWNER_SETUP_LOCK_KEY = 7_263_104_552;

/** Holds the owner-setup lock until the caller's transaction ends. Call inside a transaction. */
export async function lockOwnerSetup(trx: Executor): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${OWNER_SETUP_LOCK_KEY})`.execute(trx);
}
