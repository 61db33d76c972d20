import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { insertUser } from "../store/users";
import type { User } from "../store/users";
import {
  SESSION_COOKIE,
  authenticateSession,
  clearedSessionCookie,
  createSession,
  hashSessionToken,
  readCookie,
  revokeSession,
  sessionCookie,
} from "./sessions";

const database = useTestDatabase();
let user: User;

beforeAll(async () => {
  user = await insertUser(database.db, { email: "Session.User@example.com", passwordHash: null, isOwner: false });
});

async function sessionRow(token: string) {
  return database.db.selectFrom("Sessions").selectAll().where("tokenHash", "=", hashSessionToken(token)).executeTakeFirst();
}

describe("createSession / authenticateSession", () => {
  it("stores only the token's SHA-256, and the token authenticates as the user", async () => {
    const { token, expiresAt } = await createSession(database.db, { userId: user.id, userAgent: "vitest", ipAddress: "203.0.113.9" });
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await database.db.selectFrom("Sessions").selectAll().where("userId", "=", user.id).execute();
    expect(rows.map((r) => r.tokenHash)).toContain(hashSessionToken(token));
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now() + 13 * 24 * 3600 * 1000);

    const principal = await authenticateSession(database.db, token);
    expect(principal).toEqual({ kind: "user", userId: user.id, email: "Session.User@example.com", isOwner: false, sessionId: rows.find((r) => r.tokenHash === hashSessionToken(token))?.id });
  });

  it("refuses an unknown, malformed or empty token", async () => {
    expect(await authenticateSession(database.db, "A".repeat(43))).toBeNull();
    expect(await authenticateSession(database.db, "not a token")).toBeNull();
    expect(await authenticateSession(database.db, "")).toBeNull();
  });

  it("refuses an expired session", async () => {
    const { token } = await createSession(database.db, { userId: user.id });
    await database.db.updateTable("Sessions").set({ expiresAt: sql<Date>`now() - interval '1 second'` }).where("tokenHash", "=", hashSessionToken(token)).execute();
    expect(await authenticateSession(database.db, token)).toBeNull();
  });

  it("refuses the session of a user who has since been disabled", async () => {
    const other = await insertUser(database.db, { email: "soon-disabled@example.com", passwordHash: null, isOwner: false });
    const { token } = await createSession(database.db, { userId: other.id });
    expect(await authenticateSession(database.db, token)).not.toBeNull();
    await database.db.updateTable("Users").set({ disabledAt: sql<Date>`now()` }).where("id", "=", other.id).execute();
    expect(await authenticateSession(database.db, token)).toBeNull();
  });

  it("stamps lastSeenAt on first use, then not again within the minute", async () => {
    const { token } = await createSession(database.db, { userId: user.id });
    expect((await sessionRow(token))?.lastSeenAt).toBeNull();
    await authenticateSession(database.db, token);
    const first = (await sessionRow(token))?.lastSeenAt;
    expect(first).toBeInstanceOf(Date);
    await authenticateSession(database.db, token);
    expect((await sessionRow(token))?.lastSeenAt).toEqual(first);
    // Two minutes later (moved back rather than waited for) it is stamped again.
    await database.db.updateTable("Sessions").set({ lastSeenAt: sql<Date>`now() - interval '2 minutes'` }).where("tokenHash", "=", hashSessionToken(token)).execute();
    const stale = (await sessionRow(token))?.lastSeenAt;
    await authenticateSession(database.db, token);
    expect((await sessionRow(token))?.lastSeenAt?.getTime()).toBeGreaterThan(stale?.getTime() ?? Infinity);
  });

  it("revokeSession ends exactly that session", async () => {
    const a = await createSession(database.db, { userId: user.id });
    const b = await createSession(database.db, { userId: user.id });
    await revokeSession(database.db, a.token);
    expect(await authenticateSession(database.db, a.token)).toBeNull();
    expect(await authenticateSession(database.db, b.token)).not.toBeNull();
    expect(await sessionRow(a.token)).toBeUndefined();
  });
});

describe("session cookies", () => {
  it("is HttpOnly, SameSite=Lax, Path=/, expiring with the session; Secure only over HTTPS", () => {
    const expiresAt = new Date(Date.now() + 3600 * 1000);
    const plain = sessionCookie("tok", expiresAt, { secure: false });
    expect(plain.split("; ")).toEqual(
      expect.arrayContaining([`${SESSION_COOKIE}=tok`, "Path=/", "HttpOnly", "SameSite=Lax", `Expires=${expiresAt.toUTCString()}`]),
    );
    expect(plain).toMatch(/Max-Age=(3599|3600)/);
    expect(plain).not.toContain("Secure");
    expect(sessionCookie("tok", expiresAt, { secure: true }).split("; ")).toContain("Secure");
  });

  it("clears with an empty value and Max-Age=0", () => {
    expect(clearedSessionCookie()).toMatch(/^nf_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
  });

  it("reads one cookie out of a Cookie header", () => {
    expect(readCookie("a=1; nf_session=xyz; b=2", SESSION_COOKIE)).toBe("xyz");
    expect(readCookie("nf_session_old=1", SESSION_COOKIE)).toBeNull();
    expect(readCookie(null, SESSION_COOKIE)).toBeNull();
  });
});
