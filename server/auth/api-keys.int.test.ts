import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { touchApiKeyLastUsed } from "../store/api-keys";
import {
  authenticateApiKey,
  createApiKey,
  createServiceAccount,
  disableServiceAccount,
  generateApiKey,
  listApiKeys,
  listServiceAccounts,
  revokeApiKey,
  rotateApiKey,
} from "./api-keys";
import type { CredentialActor } from "./api-keys";
import { IdentityError } from "./identity-error";

const t = useTestDatabase();
let nsA: string;
let nsB: string;
let aliceId: string;
const admin: CredentialActor = { type: "user", id: randomUUID() };

async function makeNamespace(): Promise<string> {
  const row = await t.db.insertInto("Namespaces").values({ name: `ns-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

async function makeUser(): Promise<string> {
  const row = await t.db.insertInto("Users").values({ email: `${randomUUID().slice(0, 8)}@example.test` }).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

/** The stored row, every column, as Postgres renders it: what a leaked table or backup would show. */
async function storedRow(apiKeyId: string): Promise<string> {
  const { row } = await sql<{ row: string }>`SELECT to_jsonb("k")::text AS "row" FROM "ApiKeys" AS "k" WHERE "id" = ${apiKeyId}::uuid`
    .execute(t.db)
    .then((r) => r.rows[0]!);
  return row;
}

async function lastUsedAt(apiKeyId: string): Promise<string | null> {
  // As text: a Date would drop the microseconds that tell two writes apart.
  const { at } = await sql<{ at: string | null }>`SELECT "lastUsedAt"::text AS "at" FROM "ApiKeys" WHERE "id" = ${apiKeyId}::uuid`
    .execute(t.db)
    .then((r) => r.rows[0]!);
  return at;
}

function refusal(code: IdentityError["code"], message?: RegExp) {
  return expect.objectContaining({ name: "IdentityError", code, ...(message ? { message: expect.stringMatching(message) as unknown } : {}) }) as unknown;
}

beforeAll(async () => {
  nsA = await makeNamespace();
  nsB = await makeNamespace();
  aliceId = await makeUser();
});

describe("createApiKey + authenticateApiKey", () => {
  it("mints a key that authenticates as its namespace, scopes and owner; the row holds only a hash", async () => {
    const created = await createApiKey(t.db, { namespaceId: nsA, name: "ci", scopes: ["admin", "worker"], userId: aliceId, createdBy: `user:${aliceId}`, actor: admin });
    expect(created.key).toMatch(new RegExp(`^nf_${created.prefix}_[A-Za-z0-9_-]{43}$`));

    const principal = await authenticateApiKey(t.db, created.key);
    expect(principal).toEqual({
      kind: "apiKey",
      apiKeyId: created.id,
      namespaceId: nsA,
      scopes: ["worker", "admin"],
      userId: aliceId,
      serviceAccountId: null,
    });

    const row = await storedRow(created.id);
    const secret = created.key.slice(`nf_${created.prefix}_`.length);
    expect(row).not.toContain(secret);
    expect(row).not.toContain(created.key);
    expect(row).toContain(created.prefix);
    expect(row).toMatch(/"keyHash": "sha256:[0-9a-f]{64}"/);
  });

  it("refuses a wrong secret under a real prefix, an unknown prefix, and anything malformed", async () => {
    const created = await createApiKey(t.db, { namespaceId: nsA, name: "w", scopes: ["worker"], createdBy: "test" });
    const forged = generateApiKey(created.prefix).key;
    expect(forged).not.toBe(created.key);
    expect(await authenticateApiKey(t.db, forged)).toBeNull();
    expect(await authenticateApiKey(t.db, generateApiKey().key)).toBeNull();
    for (const bad of ["", "nf_", created.key.slice(0, -1), `${created.key}A`, created.prefix]) {
      expect(await authenticateApiKey(t.db, bad)).toBeNull();
    }
    expect(await authenticateApiKey(t.db, created.key)).not.toBeNull();
  });

  it("gives each key the namespace it was created in, and nothing else", async () => {
    const inA = await createApiKey(t.db, { namespaceId: nsA, name: "same-name", scopes: ["admin"], createdBy: "test" });
    const inB = await createApiKey(t.db, { namespaceId: nsB, name: "same-name", scopes: ["admin"], createdBy: "test" });
    expect((await authenticateApiKey(t.db, inA.key))?.namespaceId).toBe(nsA);
    expect((await authenticateApiKey(t.db, inB.key))?.namespaceId).toBe(nsB);
    const listedA = (await listApiKeys(t.db, { namespaceId: nsA })).map((k) => k.id);
    const listedB = (await listApiKeys(t.db, { namespaceId: nsB })).map((k) => k.id);
    expect(listedA).toContain(inA.id);
    expect(listedA).not.toContain(inB.id);
    expect(listedB).toEqual([inB.id]);
  });

  it("refuses bad input: no scopes, an unknown scope, an empty name, a past expiry, two owners", async () => {
    const base = { namespaceId: nsA, name: "k", scopes: ["worker" as const], createdBy: "test" };
    await expect(createApiKey(t.db, { ...base, scopes: [] })).rejects.toEqual(refusal("invalid-input", /scopes/));
    await expect(createApiKey(t.db, { ...base, scopes: ["root" as "admin"] })).rejects.toEqual(refusal("invalid-input", /scopes/));
    await expect(createApiKey(t.db, { ...base, name: "   " })).rejects.toEqual(refusal("invalid-input", /name/));
    await expect(createApiKey(t.db, { ...base, expiresAt: new Date(Date.now() - 1000) })).rejects.toEqual(refusal("invalid-input", /expiresAt/));
    const sa = await createServiceAccount(t.db, { namespaceId: nsA, name: "two-owners", createdBy: "test", actor: admin });
    await expect(createApiKey(t.db, { ...base, userId: aliceId, serviceAccountId: sa.id })).rejects.toEqual(refusal("invalid-input", /not both/));
    await expect(createApiKey(t.db, { ...base, userId: randomUUID() })).rejects.toEqual(refusal("not-found", /user/));
  });

  it("draws another prefix when the first is taken, and gives up loudly if every draw collides", async () => {
    const first = await createApiKey(t.db, { namespaceId: nsA, name: "first", scopes: ["worker"], createdBy: "test" });
    const draws = [first.prefix, first.prefix, "0123456789ab"];
    const second = await createApiKey(t.db, { namespaceId: nsB, name: "second", scopes: ["worker"], createdBy: "test" }, { generatePrefix: () => draws.shift()! });
    expect(second.prefix).toBe("0123456789ab");
    expect(draws).toEqual([]);
    // Both keys still resolve to their own rows.
    expect((await authenticateApiKey(t.db, first.key))?.apiKeyId).toBe(first.id);
    expect((await authenticateApiKey(t.db, second.key))?.apiKeyId).toBe(second.id);

    await expect(
      createApiKey(t.db, { namespaceId: nsA, name: "doomed", scopes: ["worker"], createdBy: "test" }, { generatePrefix: () => first.prefix }),
    ).rejects.toThrow(/No unused API key prefix/);
    expect((await listApiKeys(t.db, { namespaceId: nsA })).filter((k) => k.name === "doomed")).toEqual([]);
  });
});

describe("lastUsedAt", () => {
  it("is written on first use and then at most once a minute", async () => {
    const created = await createApiKey(t.db, { namespaceId: nsA, name: "busy-worker", scopes: ["worker"], createdBy: "test" });
    expect(await lastUsedAt(created.id)).toBeNull();

    await authenticateApiKey(t.db, created.key);
    const first = await lastUsedAt(created.id);
    expect(first).not.toBeNull();

    for (let i = 0; i < 5; i++) await authenticateApiKey(t.db, created.key);
    expect(await lastUsedAt(created.id)).toBe(first);
    // The repository's own guard, for pollers that all read the value while it was stale.
    expect(await touchApiKeyLastUsed(t.db, created.id)).toBe(false);

    await sql`UPDATE "ApiKeys" SET "lastUsedAt" = now() - interval '61 seconds' WHERE "id" = ${created.id}::uuid`.execute(t.db);
    const stale = await lastUsedAt(created.id);
    await authenticateApiKey(t.db, created.key);
    const refreshed = await lastUsedAt(created.id);
    expect(refreshed).not.toBe(stale);
    expect(await sql<{ recent: boolean }>`SELECT ${refreshed}::timestamptz > now() - interval '10 seconds' AS "recent"`.execute(t.db).then((r) => r.rows[0]?.recent)).toBe(true);
  });

  it("is not written by a refused key", async () => {
    const created = await createApiKey(t.db, { namespaceId: nsA, name: "forged-against", scopes: ["worker"], createdBy: "test" });
    await authenticateApiKey(t.db, generateApiKey(created.prefix).key);
    expect(await lastUsedAt(created.id)).toBeNull();
  });
});

describe("expiry", () => {
  it("refuses a key once its expiresAt has passed", async () => {
    const created = await createApiKey(t.db, { namespaceId: nsA, name: "short-lived", scopes: ["worker"], createdBy: "test", expiresAt: new Date(Date.now() + 3_600_000) });
    expect(await authenticateApiKey(t.db, created.key)).not.toBeNull();
    await sql`UPDATE "ApiKeys" SET "expiresAt" = now() - interval '1 second' WHERE "id" = ${created.id}::uuid`.execute(t.db);
    expect(await authenticateApiKey(t.db, created.key)).toBeNull();
    expect((await listApiKeys(t.db, { namespaceId: nsA })).find((k) => k.id === created.id)?.status).toBe("expired");
  });
});

describe("revokeApiKey", () => {
  it("refuses the key from then on, keeps the row, and refuses a second revoke", async () => {
    const created = await createApiKey(t.db, { namespaceId: nsA, name: "to-revoke", scopes: ["worker"], createdBy: "test" });
    const revoked = await revokeApiKey(t.db, { namespaceId: nsA, apiKeyId: created.id, actor: admin });
    expect(revoked).toEqual({ id: created.id, prefix: created.prefix, revokedAt: expect.any(Date) as unknown });
    expect(await authenticateApiKey(t.db, created.key)).toBeNull();
    const listed = (await listApiKeys(t.db, { namespaceId: nsA })).find((k) => k.id === created.id);
    expect(listed).toMatchObject({ status: "revoked", revokedAt: expect.any(Date) as unknown });
    await expect(revokeApiKey(t.db, { namespaceId: nsA, apiKeyId: created.id, actor: admin })).rejects.toEqual(refusal("conflict", /already revoked/));
  });

  it("cannot reach a key of another namespace", async () => {
    const inB = await createApiKey(t.db, { namespaceId: nsB, name: "b-key", scopes: ["admin"], createdBy: "test" });
    await expect(revokeApiKey(t.db, { namespaceId: nsA, apiKeyId: inB.id, actor: admin })).rejects.toEqual(refusal("not-found"));
    await expect(rotateApiKey(t.db, { namespaceId: nsA, apiKeyId: inB.id, actor: admin, createdBy: "test" })).rejects.toEqual(refusal("not-found"));
    expect(await authenticateApiKey(t.db, inB.key)).not.toBeNull();
  });
});

describe("rotateApiKey", () => {
  it("issues a new key with the same name, scopes, owner and expiry, and revokes the old one", async () => {
    const sa = await createServiceAccount(t.db, { namespaceId: nsA, name: "rotating-fleet", createdBy: "test", actor: admin });
    const expiresAt = new Date(Date.now() + 86_400_000);
    const old = await createApiKey(t.db, { namespaceId: nsA, name: "fleet", scopes: ["worker"], serviceAccountId: sa.id, createdBy: "test", expiresAt });
    const rotated = await rotateApiKey(t.db, { namespaceId: nsA, apiKeyId: old.id, actor: admin, createdBy: "user:rotator" });

    expect(rotated.replaced).toEqual({ id: old.id, prefix: old.prefix });
    expect(rotated.id).not.toBe(old.id);
    expect(rotated.prefix).not.toBe(old.prefix);
    expect(await authenticateApiKey(t.db, old.key)).toBeNull();
    expect(await authenticateApiKey(t.db, rotated.key)).toEqual({
      kind: "apiKey",
      apiKeyId: rotated.id,
      namespaceId: nsA,
      scopes: ["worker"],
      userId: null,
      serviceAccountId: sa.id,
    });
    const keys = await listApiKeys(t.db, { namespaceId: nsA });
    const fresh = keys.find((k) => k.id === rotated.id)!;
    expect(fresh).toMatchObject({ name: "fleet", scopes: ["worker"], owner: { type: "serviceAccount", id: sa.id, name: "rotating-fleet" }, status: "active", createdBy: "user:rotator" });
    expect(fresh.expiresAt?.getTime()).toBe(expiresAt.getTime());
    expect(keys.find((k) => k.id === old.id)?.status).toBe("revoked");
  });

  it("lets exactly one of two concurrent rotations win", async () => {
    const old = await createApiKey(t.db, { namespaceId: nsA, name: "raced", scopes: ["worker"], createdBy: "test" });
    const results = await Promise.allSettled([
      rotateApiKey(t.db, { namespaceId: nsA, apiKeyId: old.id, actor: admin, createdBy: "test" }),
      rotateApiKey(t.db, { namespaceId: nsA, apiKeyId: old.id, actor: admin, createdBy: "test" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const rejected = results.filter((r) => r.status === "rejected");
    expect(rejected).toHaveLength(1);
    expect(rejected[0]?.reason).toEqual(refusal("conflict", /already revoked/));
    const live = (await listApiKeys(t.db, { namespaceId: nsA })).filter((k) => k.name === "raced" && k.status === "active");
    expect(live).toHaveLength(1);
  });

  it("refuses a revoked or expired key and leaves it as it was", async () => {
    const revoked = await createApiKey(t.db, { namespaceId: nsA, name: "gone", scopes: ["worker"], createdBy: "test" });
    await revokeApiKey(t.db, { namespaceId: nsA, apiKeyId: revoked.id, actor: admin });
    await expect(rotateApiKey(t.db, { namespaceId: nsA, apiKeyId: revoked.id, actor: admin, createdBy: "test" })).rejects.toEqual(refusal("conflict"));

    const expired = await createApiKey(t.db, { namespaceId: nsA, name: "stale", scopes: ["worker"], createdBy: "test", expiresAt: new Date(Date.now() + 60_000) });
    await sql`UPDATE "ApiKeys" SET "expiresAt" = now() - interval '1 second' WHERE "id" = ${expired.id}::uuid`.execute(t.db);
    await expect(rotateApiKey(t.db, { namespaceId: nsA, apiKeyId: expired.id, actor: admin, createdBy: "test" })).rejects.toEqual(refusal("conflict", /expired/));
    expect((await listApiKeys(t.db, { namespaceId: nsA })).filter((k) => k.name === "stale").map((k) => k.status)).toEqual(["expired"]);
  });

  it("rolls back with the caller's transaction", async () => {
    const old = await createApiKey(t.db, { namespaceId: nsA, name: "rolled-back", scopes: ["worker"], createdBy: "test" });
    await expect(
      t.db.transaction().execute(async (trx) => {
        await rotateApiKey(trx, { namespaceId: nsA, apiKeyId: old.id, actor: admin, createdBy: "test" });
        throw new Error("caller aborts");
      }),
    ).rejects.toThrow("caller aborts");
    expect(await authenticateApiKey(t.db, old.key)).not.toBeNull();
    expect((await listApiKeys(t.db, { namespaceId: nsA })).filter((k) => k.name === "rolled-back")).toHaveLength(1);
  });
});

describe("owners", () => {
  it("refuses every key of a disabled service account, and new keys for it", async () => {
    const sa = await createServiceAccount(t.db, { namespaceId: nsA, name: "workers", description: "the worker fleet", createdBy: "test", actor: admin });
    const k1 = await createApiKey(t.db, { namespaceId: nsA, name: "w1", scopes: ["worker"], serviceAccountId: sa.id, createdBy: "test" });
    const k2 = await createApiKey(t.db, { namespaceId: nsA, name: "w2", scopes: ["worker"], serviceAccountId: sa.id, createdBy: "test" });
    expect((await authenticateApiKey(t.db, k1.key))?.serviceAccountId).toBe(sa.id);
    expect((await listServiceAccounts(t.db, { namespaceId: nsA })).find((a) => a.id === sa.id)).toMatchObject({ activeKeyCount: 2, disabledAt: null, description: "the worker fleet" });

    await disableServiceAccount(t.db, { namespaceId: nsA, serviceAccountId: sa.id, actor: admin });
    expect(await authenticateApiKey(t.db, k1.key)).toBeNull();
    expect(await authenticateApiKey(t.db, k2.key)).toBeNull();
    expect((await listApiKeys(t.db, { namespaceId: nsA })).filter((k) => k.owner?.type === "serviceAccount" && k.owner.id === sa.id).map((k) => k.status)).toEqual([
      "ownerDisabled",
      "ownerDisabled",
    ]);
    await expect(createApiKey(t.db, { namespaceId: nsA, name: "w3", scopes: ["worker"], serviceAccountId: sa.id, createdBy: "test" })).rejects.toEqual(refusal("conflict", /disabled/));
    await expect(rotateApiKey(t.db, { namespaceId: nsA, apiKeyId: k1.id, actor: admin, createdBy: "test" })).rejects.toEqual(refusal("conflict", /disabled/));
    await expect(disableServiceAccount(t.db, { namespaceId: nsA, serviceAccountId: sa.id, actor: admin })).rejects.toEqual(refusal("conflict", /already disabled/));
  });

  it("refuses a service account of another namespace, and a duplicate name in one", async () => {
    const inB = await createServiceAccount(t.db, { namespaceId: nsB, name: "b-fleet", createdBy: "test", actor: admin });
    await expect(createApiKey(t.db, { namespaceId: nsA, name: "x", scopes: ["worker"], serviceAccountId: inB.id, createdBy: "test" })).rejects.toEqual(refusal("not-found"));
    await expect(disableServiceAccount(t.db, { namespaceId: nsA, serviceAccountId: inB.id, actor: admin })).rejects.toEqual(refusal("not-found"));
    await expect(createServiceAccount(t.db, { namespaceId: nsB, name: "b-fleet", createdBy: "test", actor: admin })).rejects.toEqual(refusal("conflict", /already exists/));
    // The same name in another namespace is another account.
    await createServiceAccount(t.db, { namespaceId: nsA, name: "b-fleet", createdBy: "test", actor: admin });
    expect((await listServiceAccounts(t.db, { namespaceId: nsB })).map((a) => a.name)).toEqual(["b-fleet"]);
  });

  it("refuses the keys of a disabled user", async () => {
    const bob = await makeUser();
    const key = await createApiKey(t.db, { namespaceId: nsA, name: "bob's", scopes: ["admin"], userId: bob, createdBy: `user:${bob}` });
    expect(await authenticateApiKey(t.db, key.key)).not.toBeNull();
    await t.db.updateTable("Users").set({ disabledAt: new Date() }).where("id", "=", bob).execute();
    expect(await authenticateApiKey(t.db, key.key)).toBeNull();
    await expect(createApiKey(t.db, { namespaceId: nsA, name: "again", scopes: ["admin"], userId: bob, createdBy: "test" })).rejects.toEqual(refusal("conflict", /disabled/));
  });
});

describe("listApiKeys", () => {
  it("shows prefix, name, scopes, owner, times and status — live keys first — and never a hash", async () => {
    const ns = await makeNamespace();
    const sa = await createServiceAccount(t.db, { namespaceId: ns, name: "robots", createdBy: "test", actor: admin });
    const aliceKey = await createApiKey(t.db, { namespaceId: ns, name: "alice", scopes: ["admin"], userId: aliceId, createdBy: `user:${aliceId}` });
    const revoked = await createApiKey(t.db, { namespaceId: ns, name: "old", scopes: ["worker"], createdBy: "test" });
    await revokeApiKey(t.db, { namespaceId: ns, apiKeyId: revoked.id, actor: admin });
    const robotKey = await createApiKey(t.db, { namespaceId: ns, name: "robot", scopes: ["worker"], serviceAccountId: sa.id, createdBy: "test" });

    const keys = await listApiKeys(t.db, { namespaceId: ns });
    const alice = await t.db.selectFrom("Users").select("email").where("id", "=", aliceId).executeTakeFirstOrThrow();
    expect(keys.map((k) => [k.name, k.prefix, k.scopes, k.owner, k.status])).toEqual([
      ["robot", robotKey.prefix, ["worker"], { type: "serviceAccount", id: sa.id, name: "robots" }, "active"],
      ["alice", aliceKey.prefix, ["admin"], { type: "user", id: aliceId, email: alice.email }, "active"],
      ["old", revoked.prefix, ["worker"], null, "revoked"],
    ]);
    expect(keys[1]).toMatchObject({ createdBy: `user:${aliceId}`, lastUsedAt: null, expiresAt: null, revokedAt: null, createdAt: expect.any(Date) as unknown });
    expect(JSON.stringify(keys)).not.toMatch(/keyHash|sha256:/);
  });
});

describe("audit", () => {
  it("records every change with its actor, and never a key, secret or hash", async () => {
    const ns = await makeNamespace();
    const sa = await createServiceAccount(t.db, { namespaceId: ns, name: "audited", createdBy: "test", actor: admin });
    const created = await createApiKey(t.db, { namespaceId: ns, name: "k", scopes: ["worker"], serviceAccountId: sa.id, createdBy: "test", actor: admin });
    const bootstrap = await createApiKey(t.db, { namespaceId: ns, name: "bootstrap", scopes: ["admin"], createdBy: "nf bootstrap" });
    const rotated = await rotateApiKey(t.db, { namespaceId: ns, apiKeyId: created.id, actor: admin, createdBy: "test" });
    await revokeApiKey(t.db, { namespaceId: ns, apiKeyId: rotated.id, actor: admin });
    await disableServiceAccount(t.db, { namespaceId: ns, serviceAccountId: sa.id, actor: admin });

    const events = await t.db.selectFrom("AuditEvents").selectAll().where("namespaceId", "=", ns).orderBy("at").orderBy("id").execute();
    expect(events.map((e) => [e.action, e.actorType, e.actorId, e.resourceType, e.resourceId])).toEqual([
      ["serviceAccount.create", "user", admin.id, "serviceAccount", sa.id],
      ["apiKey.create", "user", admin.id, "apiKey", created.id],
      ["apiKey.create", "system", "nf bootstrap", "apiKey", bootstrap.id],
      ["apiKey.rotate", "user", admin.id, "apiKey", created.id],
      ["apiKey.revoke", "user", admin.id, "apiKey", rotated.id],
      ["serviceAccount.disable", "user", admin.id, "serviceAccount", sa.id],
    ]);
    expect(events[1]?.details).toEqual({ name: "k", prefix: created.prefix, scopes: ["worker"], expiresAt: null, owner: { type: "serviceAccount", id: sa.id, name: "audited" } });
    expect(events[3]?.details).toEqual({ name: "k", prefix: created.prefix, newApiKeyId: rotated.id, newPrefix: rotated.prefix });

    const everything = JSON.stringify(events);
    for (const key of [created.key, bootstrap.key, rotated.key]) {
      expect(everything).not.toContain(key.slice(`nf_${key.slice(3, 15)}_`.length));
    }
    expect(everything).not.toMatch(/sha256:|keyHash/);
  });

  it("writes nothing when a change is refused", async () => {
    const ns = await makeNamespace();
    await expect(createApiKey(t.db, { namespaceId: ns, name: "x", scopes: ["worker"], serviceAccountId: randomUUID(), createdBy: "test" })).rejects.toBeInstanceOf(IdentityError);
    await expect(revokeApiKey(t.db, { namespaceId: ns, apiKeyId: randomUUID(), actor: admin })).rejects.toBeInstanceOf(IdentityError);
    expect(await t.db.selectFrom("AuditEvents").select("id").where("namespaceId", "=", ns).execute()).toEqual([]);
    expect(await t.db.selectFrom("ApiKeys").select("id").where("namespaceId", "=", ns).execute()).toEqual([]);
  });
});
