import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { authenticateSession } from "../../auth/sessions";
import { createCaller } from "./_app";
import { trustedContext } from "../context";
import { callerAs, testConfig } from "../testing";

const database = useTestDatabase();
const PASSWORD = "tulip-harbour-9-lantern";

const isCode = (code: TRPCError["code"]) => (error: unknown) => error instanceof TRPCError && error.code === code;

function sessionTokenFrom(headers: Headers): string {
  const cookie = headers.getSetCookie().find((c) => c.startsWith("nf_session="));
  if (!cookie) throw new Error("no session cookie was set");
  return cookie.slice("nf_session=".length).split(";")[0] ?? "";
}

describe("auth router", () => {
  it("walks a fresh install through setup, sign-out and sign-in", async () => {
    const anonymous = callerAs(database.db, database.url, null);
    expect(await anonymous.auth.status()).toEqual({ setupRequired: true, user: null });

    // Setup signs the new owner in: the cookie it sets authenticates.
    const setupHeaders = new Headers();
    const owner = await callerAs(database.db, database.url, null, setupHeaders).auth.setupOwner({ email: "owner@example.com", password: PASSWORD });
    expect(owner).toMatchObject({ email: "owner@example.com", isOwner: true });
    const setCookie = setupHeaders.getSetCookie()[0] ?? "";
    expect(setCookie).toMatch(/^nf_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Expires=/);
    const principal = await authenticateSession(database.db, sessionTokenFrom(setupHeaders));
    expect(principal).toMatchObject({ userId: owner.id, isOwner: true });

    const signedIn = callerAs(database.db, database.url, principal);
    expect(await signedIn.auth.status()).toEqual({ setupRequired: false, user: { id: owner.id, email: "owner@example.com", displayName: null, isOwner: true } });

    // Setup is closed now, for everyone.
    await expect(anonymous.auth.setupOwner({ email: "late@example.com", password: PASSWORD })).rejects.toSatisfy(isCode("CONFLICT"));

    // Sign-out ends the session and clears the cookie.
    const outHeaders = new Headers();
    await callerAs(database.db, database.url, principal, outHeaders).auth.signOut();
    expect(outHeaders.getSetCookie()[0]).toMatch(/^nf_session=; .*Max-Age=0/);
    expect(await authenticateSession(database.db, sessionTokenFrom(setupHeaders))).toBeNull();

    // And signing in again works, setting a fresh cookie.
    const inHeaders = new Headers();
    await callerAs(database.db, database.url, null, inHeaders).auth.signIn({ email: "OWNER@example.com", password: PASSWORD });
    expect(await authenticateSession(database.db, sessionTokenFrom(inHeaders))).toMatchObject({ userId: owner.id });
  });

  it("refuses a weak setup password with a message the form can show", async () => {
    // (Setup is closed in this database by now; strength is checked first, so the message still shows.)
    await expect(callerAs(database.db, database.url, null).auth.setupOwner({ email: "x@example.com", password: "password1234" })).rejects.toSatisfy(
      (error: unknown) => error instanceof TRPCError && error.code === "BAD_REQUEST" && /too common/.test(error.message),
    );
  });

  it("answers a wrong password UNAUTHORIZED with no cookie, and throttles with TOO_MANY_REQUESTS and Retry-After", async () => {
    for (let i = 0; i < 5; i++) {
      const headers = new Headers();
      await expect(callerAs(database.db, database.url, null, headers).auth.signIn({ email: "owner@example.com", password: `nope-${i}` })).rejects.toSatisfy(
        (error: unknown) => error instanceof TRPCError && error.code === "UNAUTHORIZED" && error.message === "Wrong email or password.",
      );
      expect(headers.getSetCookie()).toEqual([]);
    }
    const headers = new Headers();
    await expect(callerAs(database.db, database.url, null, headers).auth.signIn({ email: "owner@example.com", password: PASSWORD })).rejects.toSatisfy(
      isCode("TOO_MANY_REQUESTS"),
    );
    expect(Number(headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("refuses a mutation whose request failed the same-origin check, even a public one", async () => {
    const context = { ...trustedContext({ db: database.db, config: testConfig(database.url), principal: null }) };
    context.request = { ...context.request, sameOrigin: { ok: false, message: "Cross-origin request refused." } };
    await expect(createCaller(context).auth.signIn({ email: "owner@example.com", password: PASSWORD })).rejects.toSatisfy(isCode("FORBIDDEN"));
    // Queries change nothing and are not refused.
    expect(await createCaller(context).auth.status()).toMatchObject({ setupRequired: false });
  });

  it("refuses sign-out to an anonymous caller", async () => {
    await expect(callerAs(database.db, database.url, null).auth.signOut()).rejects.toSatisfy(isCode("UNAUTHORIZED"));
  });
});
