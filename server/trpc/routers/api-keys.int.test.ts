import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { authenticateApiKey } from "../../auth/api-keys";
import type { Principal } from "../../auth/principal";
import { upsertNamespaceMember } from "../../store/namespace-members";
import { insertNamespace } from "../../store/namespaces";
import type { User } from "../../store/users";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

const t = useTestDatabase();
let nsA: string;
let nsB: string;
let nsAId: string;
let admin: User;
let editor: User;
let outsider: User;

const as = (principal: Principal | null) => callerAs(t.db, t.url, principal);

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

beforeAll(async () => {
  nsA = `keys-a-${randomUUID().slice(0, 6)}`;
  nsB = `keys-b-${randomUUID().slice(0, 6)}`;
  nsAId = (await insertNamespace(t.db, { name: nsA })).id;
  await insertNamespace(t.db, { name: nsB });
  admin = await insertTestUser(t.db, "keys-admin@example.test");
  editor = await insertTestUser(t.db, "keys-editor@example.test");
  outsider = await insertTestUser(t.db, "keys-outsider@example.test");
  await upsertNamespaceMember(t.db, { namespaceId: nsAId, userId: admin.id, role: "admin" });
  await upsertNamespaceMember(t.db, { namespaceId: nsAId, userId: editor.id, role: "editor" });
});

describe("apiKeys router", () => {
  it("creates a key for the calling admin, shows it once, and lists it without the secret", async () => {
    const caller = as(userPrincipal(admin));
    const created = await caller.apiKeys.create({ namespace: nsA, name: "  billing workers ", scopes: ["worker"] });
    expect(created.key).toMatch(new RegExp(`^nf_${created.prefix}_`));

    const principal = await authenticateApiKey(t.db, created.key);
    expect(principal).toMatchObject({ namespaceId: nsAId, scopes: ["worker"], userId: admin.id, serviceAccountId: null });

    const list = await caller.apiKeys.list({ namespace: nsA });
    const row = list.find((k) => k.id === created.id);
    expect(row).toEqual({
      id: created.id,
      prefix: created.prefix,
      name: "billing workers",
      scopes: ["worker"],
      owner: { type: "user", id: admin.id, email: admin.email },
      status: "active",
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
      createdBy: `user:${admin.id}`,
      lastUsedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
      expiresAt: null,
      revokedAt: null,
    });
    expect(JSON.stringify(list)).not.toContain(created.key.slice(16));
  });

  it("rotates (new key once, old refused) and revokes", async () => {
    const caller = as(userPrincipal(admin));
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const old = await caller.apiKeys.create({ namespace: nsA, name: "rotating", scopes: ["admin", "worker"], expiresAt });
    const rotated = await caller.apiKeys.rotate({ namespace: nsA, apiKeyId: old.id });
    expect(rotated.replaced).toEqual({ id: old.id, prefix: old.prefix });
    expect(await authenticateApiKey(t.db, old.key)).toBeNull();
    expect(await authenticateApiKey(t.db, rotated.key)).toMatchObject({ scopes: ["worker", "admin"], userId: admin.id });

    const revoked = await caller.apiKeys.revoke({ namespace: nsA, apiKeyId: rotated.id });
    expect(revoked.id).toBe(rotated.id);
    expect(await authenticateApiKey(t.db, rotated.key)).toBeNull();
    const statuses = (await caller.apiKeys.list({ namespace: nsA })).filter((k) => k.name === "rotating").map((k) => [k.status, k.expiresAt]);
    expect(statuses).toEqual([
      ["revoked", expiresAt],
      ["revoked", expiresAt],
    ]);

    expect((await trpcError(caller.apiKeys.revoke({ namespace: nsA, apiKeyId: rotated.id }))).code).toBe("CONFLICT");
    expect((await trpcError(caller.apiKeys.rotate({ namespace: nsA, apiKeyId: randomUUID() }))).code).toBe("NOT_FOUND");
  });

  it("manages service accounts and keys owned by them", async () => {
    const caller = as(userPrincipal(admin));
    const account = await caller.apiKeys.serviceAccounts.create({ namespace: nsA, name: "fleet", description: "the fleet" });
    const key = await caller.apiKeys.create({ namespace: nsA, name: "fleet key", scopes: ["worker"], serviceAccountId: account.id });
    expect(await authenticateApiKey(t.db, key.key)).toMatchObject({ userId: null, serviceAccountId: account.id });
    expect((await caller.apiKeys.serviceAccounts.list({ namespace: nsA })).find((a) => a.id === account.id)).toMatchObject({
      name: "fleet",
      description: "the fleet",
      activeKeyCount: 1,
      disabledAt: null,
    });
    expect((await trpcError(caller.apiKeys.serviceAccounts.create({ namespace: nsA, name: "fleet" }))).code).toBe("CONFLICT");

    await caller.apiKeys.serviceAccounts.disable({ namespace: nsA, serviceAccountId: account.id });
    expect(await authenticateApiKey(t.db, key.key)).toBeNull();
    expect((await caller.apiKeys.list({ namespace: nsA })).find((k) => k.id === key.id)?.status).toBe("ownerDisabled");
  });

  it("validates input with the field named", async () => {
    const caller = as(userPrincipal(admin));
    const noScopes = await trpcError(caller.apiKeys.create({ namespace: nsA, name: "x", scopes: [] }));
    expect(noScopes.code).toBe("BAD_REQUEST");
    const badExpiry = await trpcError(caller.apiKeys.create({ namespace: nsA, name: "x", scopes: ["worker"], expiresAt: "next tuesday" }));
    expect(badExpiry.code).toBe("BAD_REQUEST");
    const pastExpiry = await trpcError(caller.apiKeys.create({ namespace: nsA, name: "x", scopes: ["worker"], expiresAt: "2000-01-01T00:00:00Z" }));
    expect([pastExpiry.code, pastExpiry.message]).toEqual(["BAD_REQUEST", "expiresAt: must be in the future"]);
    expect((await trpcError(caller.apiKeys.revoke({ namespace: nsA, apiKeyId: "not-a-uuid" }))).code).toBe("BAD_REQUEST");
  });

  it("refuses the anonymous, non-admins, outsiders and other namespaces", async () => {
    expect((await trpcError(as(null).apiKeys.list({ namespace: nsA }))).code).toBe("UNAUTHORIZED");
    expect((await trpcError(as(userPrincipal(editor)).apiKeys.list({ namespace: nsA }))).code).toBe("FORBIDDEN");
    expect((await trpcError(as(userPrincipal(editor)).apiKeys.create({ namespace: nsA, name: "x", scopes: ["admin"] }))).code).toBe("FORBIDDEN");
    expect((await trpcError(as(userPrincipal(outsider)).apiKeys.list({ namespace: nsA }))).code).toBe("NOT_FOUND");
    // The admin of A has no access to B at all: B is as good as nonexistent.
    expect((await trpcError(as(userPrincipal(admin)).apiKeys.list({ namespace: nsB }))).code).toBe("NOT_FOUND");
  });

  it("lets an admin-scoped key manage keys of its own namespace only, and a worker key none", async () => {
    const caller = as(userPrincipal(admin));
    const adminKey = await caller.apiKeys.create({ namespace: nsA, name: "automation", scopes: ["admin"] });
    const workerKey = await caller.apiKeys.create({ namespace: nsA, name: "worker only", scopes: ["worker"] });
    const adminPrincipal = (await authenticateApiKey(t.db, adminKey.key))!;
    const workerPrincipal = (await authenticateApiKey(t.db, workerKey.key))!;

    const minted = await as(adminPrincipal).apiKeys.create({ namespace: nsA, name: "minted by a key", scopes: ["worker"] });
    // A key minted by a key acts for the same owner, and the row says which key made it.
    expect(await authenticateApiKey(t.db, minted.key)).toMatchObject({ userId: admin.id, namespaceId: nsAId });
    expect((await caller.apiKeys.list({ namespace: nsA })).find((k) => k.id === minted.id)?.createdBy).toBe(`apiKey:${adminKey.id}`);

    expect((await trpcError(as(adminPrincipal).apiKeys.list({ namespace: nsB }))).code).toBe("NOT_FOUND");
    expect((await trpcError(as(workerPrincipal).apiKeys.list({ namespace: nsA }))).code).toBe("FORBIDDEN");
    expect((await trpcError(as(workerPrincipal).apiKeys.revoke({ namespace: nsA, apiKeyId: adminKey.id }))).code).toBe("FORBIDDEN");
  });

  it("records the acting user in the audit log", async () => {
    const caller = as(userPrincipal(admin));
    const created = await caller.apiKeys.create({ namespace: nsA, name: "audited", scopes: ["worker"] });
    const event = await t.db.selectFrom("AuditEvents").selectAll().where("resourceId", "=", created.id).executeTakeFirstOrThrow();
    expect([event.action, event.actorType, event.actorId, event.namespaceId]).toEqual(["apiKey.create", "user", admin.id, nsAId]);
    expect(JSON.stringify(event)).not.toContain(created.key.slice(16));
  });
});
