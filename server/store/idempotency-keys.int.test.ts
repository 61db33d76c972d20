import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { claimIdempotencyKey } from "./idempotency-keys";

const t = useTestDatabase();

async function rowsFor(namespaceId: string, key: string) {
  return t.db
    .selectFrom("IdempotencyKeys")
    .select(["workflowId", "strategy"])
    .where("namespaceId", "=", namespaceId)
    .where("key", "=", key)
    .execute();
}

describe("claimIdempotencyKey", () => {
  it("claims a fresh key once; a second claim reports the holder", async () => {
    const namespaceId = randomUUID();
    const first = randomUUID();
    const second = randomUUID();
    expect(await claimIdempotencyKey(t.db, { namespaceId, key: "order-1", workflowId: first, strategy: "RETURN_EXISTING" })).toEqual({
      claimed: true,
    });
    expect(await claimIdempotencyKey(t.db, { namespaceId, key: "order-1", workflowId: second, strategy: "FAIL" })).toEqual({
      claimed: false,
      existingWorkflowId: first,
    });
    expect(await rowsFor(namespaceId, "order-1")).toEqual([{ workflowId: first, strategy: "RETURN_EXISTING" }]);
  });

  it("lets exactly one of two overlapping transactions win, and the loser sees the winner", async () => {
    const namespaceId = randomUUID();
    const a = randomUUID();
    const b = randomUUID();
    let releaseA!: () => void;
    const aMayCommit = new Promise<void>((resolve) => (releaseA = resolve));
    let aClaimed!: () => void;
    const aHasClaimed = new Promise<void>((resolve) => (aClaimed = resolve));

    // A claims and holds its transaction open; B claims the same key meanwhile and
    // must block on A's uncommitted row, then lose once A commits. A read-then-
    // insert (or a unique index that never conflicts) would let both through.
    const txA = t.db.transaction().execute(async (trx) => {
      const result = await claimIdempotencyKey(trx, { namespaceId, key: "k", workflowId: a, strategy: "FAIL" });
      aClaimed();
      await aMayCommit;
      return result;
    });
    await aHasClaimed;
    let bSettled = false;
    const txB = t.db
      .transaction()
      .execute((trx) => claimIdempotencyKey(trx, { namespaceId, key: "k", workflowId: b, strategy: "FAIL" }))
      .finally(() => (bSettled = true));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(bSettled).toBe(false); // B is waiting on A's row, not racing past it
    releaseA();

    expect(await txA).toEqual({ claimed: true });
    expect(await txB).toEqual({ claimed: false, existingWorkflowId: a });
    expect(await rowsFor(namespaceId, "k")).toEqual([{ workflowId: a, strategy: "FAIL" }]);
  });

  it("has exactly one winner among many concurrent claims", async () => {
    const namespaceId = randomUUID();
    const contenders = Array.from({ length: 8 }, () => randomUUID());
    const results = await Promise.all(
      contenders.map((workflowId) =>
        t.db
          .transaction()
          .execute((trx) => claimIdempotencyKey(trx, { namespaceId, key: "hot", workflowId, strategy: "RETURN_EXISTING" })),
      ),
    );
    const winners = contenders.filter((_, i) => results[i]?.claimed);
    expect(winners).toHaveLength(1);
    for (const r of results) if (!r.claimed) expect(r.existingWorkflowId).toBe(winners[0]);
    expect(await rowsFor(namespaceId, "hot")).toHaveLength(1);
  });

  it("releases the key when the claiming transaction rolls back", async () => {
    const namespaceId = randomUUID();
    await expect(
      t.db.transaction().execute(async (trx) => {
        await claimIdempotencyKey(trx, { namespaceId, key: "r", workflowId: randomUUID(), strategy: "FAIL" });
        throw new Error("start failed after the claim");
      }),
    ).rejects.toThrow("start failed");
    const workflowId = randomUUID();
    expect(await claimIdempotencyKey(t.db, { namespaceId, key: "r", workflowId, strategy: "FAIL" })).toEqual({ claimed: true });
  });

  it("lets an expired key be claimed again, but not an unexpired one; namespaces are independent", async () => {
    const namespaceId = randomUUID();
    const old = randomUUID();
    const fresh = randomUUID();
    await claimIdempotencyKey(t.db, {
      namespaceId,
      key: "e",
      workflowId: old,
      strategy: "FAIL",
      expiresAt: new Date(Date.now() - 1_000),
    });
    expect(
      await claimIdempotencyKey(t.db, {
        namespaceId,
        key: "e",
        workflowId: fresh,
        strategy: "RETURN_EXISTING",
        expiresAt: new Date(Date.now() + 60_000),
      }),
    ).toEqual({ claimed: true });
    expect(await rowsFor(namespaceId, "e")).toEqual([{ workflowId: fresh, strategy: "RETURN_EXISTING" }]);
    expect(await claimIdempotencyKey(t.db, { namespaceId, key: "e", workflowId: randomUUID(), strategy: "FAIL" })).toEqual({
      claimed: false,
      existingWorkflowId: fresh,
    });
    expect(
      await claimIdempotencyKey(t.db, { namespaceId: randomUUID(), key: "e", workflowId: old, strategy: "FAIL" }),
    ).toEqual({ claimed: true });
  });
});
