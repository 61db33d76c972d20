import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { FREE_ATTEMPTS } from "../store/sign-in-throttles";
import { insertUser } from "../store/users";
import { IdentityError } from "./identity-error";
import { hashPassword } from "./passwords";
import { authenticateSession } from "./sessions";
import { setupOwner } from "./setup-owner";
import { signIn } from "./sign-in";

const database = useTestDatabase();
const PASSWORD = "tulip-harbour-9-lantern";

async function auditActions(): Promise<{ action: string; details: unknown }[]> {
  return database.db.selectFrom("AuditEvents").select(["action", "details"]).orderBy("at").orderBy("id").execute();
}

describe("setupOwner", () => {
  it("refuses a weak password or a bad email before creating anything", async () => {
    await expect(setupOwner(database.db, { email: "root@example.com", password: "short", via: "test" })).rejects.toSatisfy(
      (e: unknown) => e instanceof IdentityError && e.code === "invalid-input",
    );
    await expect(setupOwner(database.db, { email: "not an email", password: PASSWORD, via: "test" })).rejects.toSatisfy(
      (e: unknown) => e instanceof IdentityError && e.code === "invalid-input",
    );
    expect(await database.db.selectFrom("Users").select("id").execute()).toEqual([]);
  });

  it("lets exactly one of two racing setups create the owner; the other gets a conflict", async () => {
    const results = await Promise.allSettled([
      setupOwner(database.db, { email: "first@example.com", password: PASSWORD, via: "test" }),
      setupOwner(database.db, { email: "second@example.com", password: PASSWORD, via: "test" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const rejected = results.find((r) => r.status === "rejected");
    expect(rejected?.status === "rejected" && rejected.reason instanceof IdentityError && rejected.reason.code).toBe("conflict");
    const users = await database.db.selectFrom("Users").select(["email", "isAdmin", "passwordHash"]).execute();
    expect(users).toHaveLength(1);
    expect(users[0]?.isAdmin).toBe(true);
    expect(users[0]?.passwordHash).toMatch(/^\$scrypt\$/);
    // Audited, without the password or its hash.
    const audit = await auditActions();
    expect(audit.map((a) => a.action)).toEqual(["user.setupOwner"]);
    expect(JSON.stringify(audit)).not.toContain(PASSWORD);
    expect(JSON.stringify(audit)).not.toContain("$scrypt$");
  });
});

describe("signIn", () => {
  beforeAll(async () => {
    const passwordHash = await hashPassword(PASSWORD);
    await insertUser(database.db, { email: "Grace@Example.com", passwordHash, isOwner: false });
    await insertUser(database.db, { email: "disabled@example.com", passwordHash, isOwner: false });
    await database.db.updateTable("Users").set({ disabledAt: sql<Date>`now()` }).where("email", "=", "disabled@example.com").execute();
    await insertUser(database.db, { email: "sso-only@example.com", passwordHash: null, isOwner: false });
  });

  it("signs in with the right password (email in any case) and the token authenticates", async () => {
    const result = await signIn(database.db, { email: "  grace@EXAMPLE.com ", password: PASSWORD, userAgent: "vitest", ipAddress: "198.51.100.7" });
    if (!result.ok) throw new Error(`sign-in failed: ${result.reason}`);
    expect(result.user.email).toBe("Grace@Example.com");
    expect(result.user).not.toHaveProperty("passwordHash");
    expect(await authenticateSession(database.db, result.token)).toMatchObject({ kind: "user", userId: result.user.id });
    const user = await database.db.selectFrom("Users").select("lastLoginAt").where("id", "=", result.user.id).executeTakeFirstOrThrow();
    expect(user.lastLoginAt).toBeInstanceOf(Date);
  });

  it("answers an unknown email, a wrong password and a password-less user identically", async () => {
    const unknown = await signIn(database.db, { email: "nobody@example.com", password: PASSWORD });
    const wrong = await signIn(database.db, { email: "grace@example.com", password: `${PASSWORD}x` });
    const noPassword = await signIn(database.db, { email: "sso-only@example.com", password: "" });
    expect(unknown).toEqual({ ok: false, reason: "invalid-credentials" });
    expect(wrong).toEqual(unknown);
    expect(noPassword).toEqual(unknown);
  });

  it("says 'disabled' only to someone who knows the password", async () => {
    expect(await signIn(database.db, { email: "disabled@example.com", password: "wrong-password-123" })).toEqual({ ok: false, reason: "invalid-credentials" });
    expect(await signIn(database.db, { email: "disabled@example.com", password: PASSWORD })).toEqual({ ok: false, reason: "disabled" });
  });

  it("records sign-ins and failures in the audit log, never the password", async () => {
    const audit = await auditActions();
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(["auth.signIn", "auth.signInFailed"]));
    expect(JSON.stringify(audit)).not.toContain(PASSWORD);
  });
});

describe("signIn throttling", () => {
  beforeAll(async () => {
    await insertUser(database.db, { email: "target@example.com", passwordHash: await hashPassword(PASSWORD), isOwner: false });
  });

  it(`refuses even the right password after ${FREE_ATTEMPTS} failures, for that email only, and a success resets it`, async () => {
    for (let i = 0; i < FREE_ATTEMPTS; i++) {
      expect(await signIn(database.db, { email: "target@example.com", password: `guess-${i}-abcdefgh` })).toEqual({ ok: false, reason: "invalid-credentials" });
    }
    const throttled = await signIn(database.db, { email: "TARGET@example.com", password: PASSWORD });
    expect(throttled).toMatchObject({ ok: false, reason: "throttled" });
    expect(throttled.ok === false && throttled.reason === "throttled" && throttled.retryAfterSeconds).toBeGreaterThan(0);
    expect(throttled.ok === false && throttled.reason === "throttled" && throttled.retryAfterSeconds).toBeLessThanOrEqual(30);
    // Another email is not slowed by it.
    expect((await signIn(database.db, { email: "grace@example.com", password: PASSWORD })).ok).toBe(true);

    // The wait is over (moved back rather than waited out): one more try is allowed, and succeeds.
    await database.db.updateTable("SignInThrottles").set({ lastFailedAt: sql<Date>`now() - interval '31 seconds'` }).where("email", "=", "target@example.com").execute();
    expect((await signIn(database.db, { email: "target@example.com", password: PASSWORD })).ok).toBe(true);
    expect(await database.db.selectFrom("SignInThrottles").selectAll().where("email", "=", "target@example.com").execute()).toEqual([]);
  });

  it("doubles the wait after each further failure", async () => {
    const email = "doubling@example.com";
    for (let i = 0; i < FREE_ATTEMPTS; i++) await signIn(database.db, { email, password: "wrong-password-123" });
    await database.db.updateTable("SignInThrottles").set({ lastFailedAt: sql<Date>`now() - interval '31 seconds'` }).where("email", "=", email).execute();
    expect(await signIn(database.db, { email, password: "wrong-password-123" })).toEqual({ ok: false, reason: "invalid-credentials" });
    const next = await signIn(database.db, { email, password: "wrong-password-123" });
    expect(next.ok === false && next.reason === "throttled" && next.retryAfterSeconds).toBeGreaterThan(30);
  });

  it("counts attempts before checking the password, so a parallel burst gets no more than the free ones through", async () => {
    const email = "burst@example.com";
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(database.db, { email, password: `burst-guess-${i}` })));
    expect(results.filter((r) => !r.ok && r.reason === "invalid-credentials")).toHaveLength(FREE_ATTEMPTS);
    expect(results.filter((r) => !r.ok && r.reason === "throttled")).toHaveLength(12 - FREE_ATTEMPTS);
  });

  it("forgets failures after a quiet hour", async () => {
    const email = "forgetful@example.com";
    for (let i = 0; i < FREE_ATTEMPTS; i++) await signIn(database.db, { email, password: "wrong-password-123" });
    await database.db.updateTable("SignInThrottles").set({ lastFailedAt: sql<Date>`now() - interval '61 minutes'` }).where("email", "=", email).execute();
    expect(await signIn(database.db, { email, password: "wrong-password-123" })).toEqual({ ok: false, reason: "invalid-credentials" });
    const row = await database.db.selectFrom("SignInThrottles").select("failures").where("email", "=", email).executeTakeFirstOrThrow();
    expect(row.failures).toBe(1);
  });
});
