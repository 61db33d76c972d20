import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../db/pool";
import { createDb } from "../../db/pool";
import { useTestDatabase } from "../../db/testing/test-database";
import { pruneRateLimitBuckets, rateLimitAllowance, takeRateLimitTokens } from "./rate-limits";
import { upsertTaskDefinition } from "./task-definitions";

const t = useTestDatabase();
/** Enough connections for the concurrent takers. */
let wide: Db;

beforeAll(() => {
  wide = createDb(t.url, { max: 10 });
});

afterAll(async () => {
  await wide?.destroy();
});

/** A 10 s window's start, a minute ahead of the clock so nothing else lands in it. */
const W = Math.ceil(Date.now() / 10_000) * 10_000 + 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

function bucket(ns: string, overrides: Partial<Parameters<typeof takeRateLimitTokens>[1]> = {}) {
  return { namespaceId: ns, queueName: "q", limit: 3, windowSeconds: 10, now: iso(W + 1000), count: 1, ...overrides };
}

async function buckets(ns: string): Promise<{ windowStart: string; count: number }[]> {
  const rows = await t.db
    .selectFrom("RateLimitBuckets")
    .select(["windowStart", "count"])
    .where("namespaceId", "=", ns)
    .orderBy("windowStart")
    .execute();
  return rows.map((r) => ({ windowStart: r.windowStart.toISOString(), count: r.count }));
}

describe("takeRateLimitTokens", () => {
  it("grants up to the limit in a window, part of a request when that is all that is left, then nothing", async () => {
    const ns = randomUUID();
    expect(await takeRateLimitTokens(t.db, bucket(ns, { count: 2 }))).toBe(2);
    expect(await takeRateLimitTokens(t.db, bucket(ns, { count: 5, now: iso(W + 4000) }))).toBe(1);
    expect(await takeRateLimitTokens(t.db, bucket(ns, { now: iso(W + 9999) }))).toBe(0);
    expect(await buckets(ns)).toEqual([{ windowStart: iso(W), count: 3 }]);
  });

  it("starts afresh in the next window; windows are aligned to the epoch, so every process agrees on them", async () => {
    const ns = randomUUID();
    expect(await takeRateLimitTokens(t.db, bucket(ns, { count: 3, now: iso(W + 9999) }))).toBe(3);
    expect(await takeRateLimitTokens(t.db, bucket(ns, { count: 3, now: iso(W + 10_000) }))).toBe(3);
    expect(await buckets(ns)).toEqual([
      { windowStart: iso(W), count: 3 },
      { windowStart: iso(W + 10_000), count: 3 },
    ]);
  });

  it("never grants more than the limit to concurrent takers", async () => {
    const ns = randomUUID();
    const granted = await Promise.all(Array.from({ length: 10 }, () => takeRateLimitTokens(wide, bucket(ns, { count: 1 }))));
    expect(granted.reduce((a, b) => a + b, 0)).toBe(3);
    expect(await buckets(ns)).toEqual([{ windowStart: iso(W), count: 3 }]);
  });

  it("gives its tokens back when the transaction rolls back", async () => {
    const ns = randomUUID();
    await t.db
      .transaction()
      .execute(async (trx) => {
        expect(await takeRateLimitTokens(trx, bucket(ns, { count: 3 }))).toBe(3);
        throw new Error("roll back");
      })
      .catch(() => undefined);
    expect(await takeRateLimitTokens(t.db, bucket(ns, { count: 3 }))).toBe(3);
  });

  it("grants nothing in a window already over a limit that was lowered", async () => {
    const ns = randomUUID();
    expect(await takeRateLimitTokens(t.db, bucket(ns, { count: 3 }))).toBe(3);
    expect(await takeRateLimitTokens(t.db, bucket(ns, { limit: 2 }))).toBe(0);
    expect(await buckets(ns)).toEqual([{ windowStart: iso(W), count: 3 }]);
  });

  it("refuses nonsense", async () => {
    await expect(takeRateLimitTokens(t.db, bucket(randomUUID(), { count: 0 }))).rejects.toThrow(RangeError);
    await expect(takeRateLimitTokens(t.db, bucket(randomUUID(), { limit: 0 }))).rejects.toThrow(RangeError);
    await expect(takeRateLimitTokens(t.db, bucket(randomUUID(), { windowSeconds: 0.5 }))).rejects.toThrow(RangeError);
  });
});

describe("rateLimitAllowance", () => {
  it("reports what is left without taking it, and when the window ends", async () => {
    const ns = randomUUID();
    expect(await rateLimitAllowance(t.db, bucket(ns, { now: iso(W + 2500) }))).toEqual({ remaining: 3, windowEndsInMs: 7500 });
    await takeRateLimitTokens(t.db, bucket(ns, { count: 2 }));
    expect(await rateLimitAllowance(t.db, bucket(ns, { now: iso(W + 2500) }))).toEqual({ remaining: 1, windowEndsInMs: 7500 });
    expect(await rateLimitAllowance(t.db, bucket(ns, { now: iso(W + 2500) }))).toEqual({ remaining: 1, windowEndsInMs: 7500 });
    expect(await rateLimitAllowance(t.db, bucket(ns, { now: iso(W + 10_000) }))).toEqual({ remaining: 3, windowEndsInMs: 10_000 });
  });
});

describe("pruneRateLimitBuckets", () => {
  // Pruning sees every namespace's buckets: a database of its own, emptied
  // before each test, so the counts below are exactly this test's.
  const p = useTestDatabase();
  beforeEach(async () => {
    await p.db.deleteFrom("RateLimitBuckets").execute();
    await p.db.deleteFrom("TaskDefinitions").execute();
  });

  async function namespaceWithWindow(seconds: number): Promise<string> {
    const { id } = await p.db
      .insertInto("Namespaces")
      .values({ name: `ns-${randomBytes(4).toString("hex")}` })
      .returning("id")
      .executeTakeFirstOrThrow();
    await upsertTaskDefinition(p.db, {
      namespaceId: id,
      definition: { name: "q", rateLimitPerFrequency: 3, rateLimitFrequencyInSeconds: seconds },
    });
    return id;
  }

  async function windows(ns: string): Promise<string[]> {
    const rows = await p.db.selectFrom("RateLimitBuckets").select("windowStart").where("namespaceId", "=", ns).orderBy("windowStart").execute();
    return rows.map((r) => r.windowStart.toISOString());
  }

  it("deletes ended windows before the cut-off, oldest first, in batches, and never one still open", async () => {
    const ns = await namespaceWithWindow(10);
    for (let i = 0; i < 5; i++) await takeRateLimitTokens(p.db, bucket(ns, { now: iso(W + i * 10_000 + 1) }));
    const now = iso(W + 4 * 10_000 + 5000); // inside the fifth window
    // A cut-off in the future still spares the open window (and, while the
    // longest window of any definition is 10 s, the one before it has ended).
    const olderThan = iso(W + 86_400_000);
    expect(await pruneRateLimitBuckets(p.db, { olderThan, limit: 2, now })).toEqual({ count: 2 });
    expect(await windows(ns)).toEqual([iso(W + 20_000), iso(W + 30_000), iso(W + 40_000)]);
    expect(await pruneRateLimitBuckets(p.db, { olderThan, limit: 100, now })).toEqual({ count: 2 });
    expect(await windows(ns)).toEqual([iso(W + 40_000)]);
  });

  it("respects the cut-off given, and the longest window any definition has", async () => {
    const ns = await namespaceWithWindow(10);
    await takeRateLimitTokens(p.db, bucket(ns, { now: iso(W) }));
    await takeRateLimitTokens(p.db, bucket(ns, { now: iso(W + 10_000) }));
    const now = iso(W + 60_000);
    expect(await pruneRateLimitBuckets(p.db, { olderThan: iso(W), limit: 100, now })).toEqual({ count: 0 });
    // Another definition's hour-long windows: a bucket that started 60 s ago
    // might be one of those, still open.
    const hourly = await namespaceWithWindow(3600);
    expect(await pruneRateLimitBuckets(p.db, { olderThan: iso(W + 60_000), limit: 100, now })).toEqual({ count: 0 });
    await p.db.deleteFrom("TaskDefinitions").where("namespaceId", "=", hourly).execute();
    expect(await pruneRateLimitBuckets(p.db, { olderThan: iso(W + 60_000), limit: 100, now })).toEqual({ count: 2 });
    expect(await windows(ns)).toEqual([]);
  });
});
