import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../db/schema";
import { useTestDatabase } from "../../db/testing/test-database";
import { CREDENTIALS_CHANNEL, Notifier } from "../lib/notifier";
import { touchApiKeyLastUsed } from "../store/api-keys";
import { ApiKeyCache, apiKeyCache } from "./api-key-cache";
import { authenticateApiKey, createApiKey, createServiceAccount, disableServiceAccount, revokeApiKey } from "./api-keys";

const t = useTestDatabase();
let namespaceId: string;
let notifier: Notifier;
let detach: () => void;

/** t.db, counting the statements sent through it: a cache hit sends none. */
function countingDb(): { db: Kysely<Database>; count: () => number } {
  let statements = 0;
  const db = t.db.withPlugin({
    transformQuery: (args) => {
      statements++;
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  });
  return { db, count: () => statements };
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function workerKey(serviceAccountId?: string) {
  return createApiKey(t.db, { namespaceId, name: `k-${randomUUID().slice(0, 8)}`, scopes: ["worker"], createdBy: "test", serviceAccountId });
}

beforeAll(async () => {
  namespaceId = (await t.db.insertInto("Namespaces").values({ name: `ns-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
  notifier = new Notifier({ connectionString: t.url, applicationName: "api-key-cache-test", channels: [CREDENTIALS_CHANNEL] });
  detach = apiKeyCache.attach(notifier);
  await notifier.start();
});

afterAll(async () => {
  detach();
  await notifier.close();
});

afterEach(() => apiKeyCache.clear());

describe("the API-key cache, attached to a listening notifier", () => {
  it("reads a key once, then answers from memory", async () => {
    const key = await workerKey();
    const { db, count } = countingDb();
    const first = await authenticateApiKey(db, key.key);
    const afterFirst = count();
    expect(afterFirst).toBeGreaterThanOrEqual(1);
    const second = await authenticateApiKey(db, key.key);
    expect(second).toEqual(first);
    expect(count()).toBe(afterFirst);
    // A wrong secret under the cached prefix is still refused.
    expect(await authenticateApiKey(db, key.key.slice(0, -1) + (key.key.endsWith("A") ? "B" : "A"))).toBeNull();
  });

  it("refuses a revoked key as soon as the revocation's notification arrives", async () => {
    const key = await workerKey();
    expect(await authenticateApiKey(t.db, key.key)).not.toBeNull();
    expect(apiKeyCache.size).toBe(1);
    await revokeApiKey(t.db, { namespaceId, apiKeyId: key.id, actor: { type: "system", id: "test" } });
    await eventually(async () => (await authenticateApiKey(t.db, key.key)) === null, "the revoked key to be refused");
  });

  it("refuses the keys of a service account once it is disabled", async () => {
    const account = await createServiceAccount(t.db, { namespaceId, name: `sa-${randomUUID().slice(0, 8)}`, createdBy: "test", actor: { type: "system", id: "test" } });
    const key = await workerKey(account.id);
    expect(await authenticateApiKey(t.db, key.key)).not.toBeNull();
    await disableServiceAccount(t.db, { namespaceId, serviceAccountId: account.id, actor: { type: "system", id: "test" } });
    await eventually(async () => (await authenticateApiKey(t.db, key.key)) === null, "the disabled account's key to be refused");
  });

  it("is not emptied by the last-use stamp, which authentication itself writes", async () => {
    const heard: string[] = [];
    const unsubscribe = notifier.subscribeChannel(CREDENTIALS_CHANNEL, (event) => {
      if (event.kind === "notification") heard.push(event.payload);
    });
    try {
      const key = await workerKey();
      expect(await touchApiKeyLastUsed(t.db, key.id)).toBe(true);
      // A change that does notify, committed after the stamp. Notifications arrive in commit order,
      // so once this one is heard, the stamp's would have been heard before it.
      await t.db.updateTable("ApiKeys").set({ name: "renamed" }).where("id", "=", key.id).execute();
      await eventually(() => Promise.resolve(heard.length > 0), "the rename's notification");
      expect(heard).toEqual(["changed"]);
    } finally {
      unsubscribe();
    }
  });

  it("reads the database on every lookup while nothing listens, and holds nothing", async () => {
    const key = await workerKey();
    expect(await authenticateApiKey(t.db, key.key)).not.toBeNull();
    expect(apiKeyCache.size).toBe(1);
    const deaf = new ApiKeyCache();
    const { db, count } = countingDb();
    await deaf.find(db, key.prefix);
    await deaf.find(db, key.prefix);
    expect(count()).toBe(2);
    expect(deaf.size).toBe(0);
    // Attached to a notifier that is not connected: the same.
    const detachDeaf = deaf.attach({ connected: false, subscribeChannel: () => () => undefined });
    await deaf.find(db, key.prefix);
    expect(count()).toBe(3);
    expect(deaf.size).toBe(0);
    detachDeaf();
  });

  it("does not keep a read that an invalidation overtook", async () => {
    const key = await workerKey();
    const cache = new ApiKeyCache();
    cache.attach({ connected: true, subscribeChannel: () => () => undefined });
    const reading = cache.find(t.db, key.prefix);
    cache.clear(); // a notification arriving while the read is in flight
    expect((await reading)?.id).toBe(key.id);
    expect(cache.size).toBe(0);
    await cache.find(t.db, key.prefix);
    expect(cache.size).toBe(1);
  });

  it("judges expiry at each use, against the row's expiresAt", async () => {
    const key = await workerKey();
    const cache = new ApiKeyCache();
    cache.attach({ connected: true, subscribeChannel: () => () => undefined });
    expect((await cache.find(t.db, key.prefix))?.expired).toBe(false);
    // Made to expire behind the cache's back (no listener on this one): the cached row's expiresAt still tells.
    await t.db.updateTable("ApiKeys").set({ expiresAt: new Date(Date.now() + 150) }).where("id", "=", key.id).execute();
    cache.clear();
    expect((await cache.find(t.db, key.prefix))?.expired).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { db, count } = countingDb();
    expect((await cache.find(db, key.prefix))?.expired).toBe(true);
    expect(count()).toBe(0);
  });
});
