import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TimerKind, TimerRow } from "../../db/schema";
import { useTestDatabase } from "../../db/testing/test-database";
import { PARTITIONED_TABLES, PartitionManager, partitionName, periodStart } from "./partition-manager";
import { armTimer, cancelTimers, claimDueTimers, deleteTimer, releaseStaleClaims } from "./timers";

const t = useTestDatabase();
const HOUR = 3_600_000;
const MINUTE = 60_000;

beforeAll(async () => {
  // Current hour plus the 24 ahead, as the poller's partition roll keeps them.
  const timers = PARTITIONED_TABLES.filter((spec) => spec.table === "Timers");
  await new PartitionManager(t.db, { tables: timers }).ensureAhead(new Date());
});

beforeEach(async () => {
  await t.db.deleteFrom("Timers").execute();
});

async function partitionOf(id: string): Promise<string> {
  const { rows } = await sql<{ partition: string }>`
    SELECT "tableoid"::regclass::text AS "partition" FROM "Timers" WHERE "id" = ${id}::uuid`.execute(t.db);
  // regclass renders a mixed-case name quoted.
  return rows[0]!.partition.replaceAll('"', "");
}

async function arm(fireAt: Date, extra: { workflowId?: string; taskId?: string; kind?: TimerKind } = {}) {
  return armTimer(t.db, {
    kind: extra.kind ?? "startToClose",
    fireAt,
    namespaceId: randomUUID(),
    workflowId: extra.workflowId ?? randomUUID(),
    taskId: extra.taskId,
    payload: { note: "x\u0000y" },
  });
}

async function planScans(statement: ReturnType<typeof sql>): Promise<string[]> {
  const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${statement}`.execute(t.db);
  return rows.map((r) => r["QUERY PLAN"]).filter((line) => /Scan\b.* on "?Timers_/.test(line));
}

describe("armTimer", () => {
  it("puts a timer in the partition of its hour, and one beyond the created hours in DEFAULT, where it is still claimed", async () => {
    const now = new Date();
    const soon = await arm(new Date(now.getTime() + 5 * MINUTE));
    const later = await arm(new Date(now.getTime() + 90 * MINUTE));
    const nextDay = await arm(new Date(now.getTime() + 26 * HOUR)); // past the 24 h the roller keeps ahead

    expect(await partitionOf(soon.id)).toBe(partitionName("Timers", "hour", periodStart(soon.fireAt, "hour")));
    expect(await partitionOf(later.id)).toBe(partitionName("Timers", "hour", periodStart(later.fireAt, "hour")));
    expect(await partitionOf(nextDay.id)).toBe("Timers_default");

    // Not due yet: untouched.
    expect(await claimDueTimers(t.db, { now, limit: 10, owner: "p1" })).toEqual([]);
    // A day later, all three are due; the one in DEFAULT is claimed like the rest, and last.
    const claimed = await claimDueTimers(t.db, { now: new Date(nextDay.fireAt.getTime() + 1_000), limit: 10, owner: "p1" });
    expect(claimed.map((r) => r.id)).toEqual([soon.id, later.id, nextDay.id]);
    expect(claimed[0]?.payload).toEqual({ note: "xy" }); // through json(): NUL stripped
  });

  it("refuses an invalid fireAt", async () => {
    await expect(arm(new Date("not a date"))).rejects.toThrow(TypeError);
  });
});

describe("claimDueTimers", () => {
  it("hands each due timer to exactly one of 3 concurrent claimers and leaves future timers alone", async () => {
    const now = new Date();
    const due: string[] = [];
    for (let i = 0; i < 300; i++) due.push((await arm(new Date(now.getTime() - (i % 90) * 20_000))).id);
    const future: string[] = [];
    for (let i = 1; i <= 30; i++) future.push((await arm(new Date(now.getTime() + i * 4 * MINUTE))).id);

    const claimers = ["p1", "p2", "p3"].map(async (owner) => {
      const mine: TimerRow[] = [];
      for (;;) {
        const batch = await claimDueTimers(t.db, { now, limit: 20, owner });
        if (batch.length === 0) return mine;
        mine.push(...batch);
      }
    });
    const results = await Promise.all(claimers);
    const claimed = results.flat();
    expect(claimed).toHaveLength(due.length);
    expect(new Set(claimed.map((r) => r.id))).toEqual(new Set(due));
    results.forEach((rows, i) => {
      for (const row of rows) expect(row.claimedBy).toBe(`p${i + 1}`);
    });

    const stored = await t.db.selectFrom("Timers").select(["id", "claimedBy"]).where("id", "in", future).execute();
    expect(stored).toHaveLength(future.length);
    for (const row of stored) expect(row.claimedBy).toBeNull();
  });

  it("reads only the partitions that can hold due timers", async () => {
    const now = new Date();
    const scans = await planScans(sql`
      SELECT "id" FROM "Timers" WHERE "claimedAt" IS NULL AND "fireAt" <= ${now.toISOString()}::timestamptz
      ORDER BY "fireAt" LIMIT 50 FOR UPDATE SKIP LOCKED`);
    // The current hour's partition and DEFAULT (which could hold anything), not the 24 ahead.
    expect(scans.join("\n")).toContain(partitionName("Timers", "hour", periodStart(now, "hour")));
    expect(scans.join("\n")).toContain("Timers_default");
    expect(scans.length).toBeLessThanOrEqual(3);
  });
});

describe("cancelTimers", () => {
  it("deletes by task, by kind and by workflow; a cancelled timer is never claimed", async () => {
    const now = new Date();
    const workflowId = randomUUID();
    const taskA = randomUUID();
    const taskB = randomUUID();
    const past = new Date(now.getTime() - MINUTE);
    await arm(past, { workflowId, taskId: taskA, kind: "scheduleToStart" });
    await arm(past, { workflowId, taskId: taskA, kind: "startToClose" });
    const bTimeout = await arm(past, { workflowId, taskId: taskB, kind: "taskTimeout" });
    await arm(past, { workflowId, taskId: taskB, kind: "retry" });
    const wfTimeout = await arm(new Date(now.getTime() + 26 * HOUR), { workflowId, kind: "workflowTimeout" });
    const other = await arm(past);

    expect(await cancelTimers(t.db, { workflowId, taskId: taskA })).toBe(2);
    expect(await cancelTimers(t.db, { workflowId, taskId: taskB, kinds: ["retry", "wait"] })).toBe(1);
    expect(await cancelTimers(t.db, { workflowId, kinds: [] })).toBe(0);

    const claimed = await claimDueTimers(t.db, { now, limit: 100, owner: "p" });
    expect(claimed.map((r) => r.id).sort()).toEqual([bTimeout.id, other.id].sort());

    // Whole-workflow cancel reaches DEFAULT too, and claimed timers go as well.
    expect(await cancelTimers(t.db, { workflowId })).toBe(2);
    expect(await t.db.selectFrom("Timers").select("id").where("id", "=", wfTimeout.id).execute()).toEqual([]);
  });

  it("with fireAt bounds prunes to the partitions in range; without them touches every partition", async () => {
    const now = new Date();
    const workflowId = randomUUID();
    const inRange = await arm(new Date(now.getTime() + 10 * MINUTE), { workflowId });
    const from = new Date(now.getTime());
    const to = new Date(now.getTime() + 20 * MINUTE);
    expect(await cancelTimers(t.db, { workflowId, fireAtFrom: from, fireAtTo: to })).toBe(1);
    expect(await t.db.selectFrom("Timers").select("id").where("id", "=", inRange.id).execute()).toEqual([]);

    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS "n" FROM pg_inherits WHERE "inhparent" = '"Timers"'::regclass`.execute(t.db);
    const partitions = rows[0]!.n;
    const bounded = await planScans(sql`
      DELETE FROM "Timers" WHERE "workflowId" = ${workflowId}::uuid
        AND "fireAt" >= ${from.toISOString()}::timestamptz AND "fireAt" <= ${to.toISOString()}::timestamptz`);
    const unbounded = await planScans(sql`DELETE FROM "Timers" WHERE "workflowId" = ${workflowId}::uuid`);
    expect(bounded.length).toBeLessThanOrEqual(2); // the hour (or two) in range; DEFAULT is excluded by the bounds
    expect(unbounded).toHaveLength(partitions);
  });
});

describe("deleteTimer and releaseStaleClaims", () => {
  it("deletes a claimed timer by the key read back, even when it was armed with microseconds", async () => {
    const now = new Date();
    const micros = new Date(now.getTime() - 1_000).toISOString().replace("Z", "123Z"); // …:05.678123Z
    const { rows } = await sql<{ id: string }>`
      INSERT INTO "Timers" ("kind", "fireAt", "namespaceId", "workflowId")
      VALUES ('wait', ${micros}::timestamptz, ${randomUUID()}::uuid, ${randomUUID()}::uuid)
      RETURNING "id"`.execute(t.db);
    const [claimed] = await claimDueTimers(t.db, { now, limit: 1, owner: "p1" });
    expect(claimed?.id).toBe(rows[0]?.id);
    expect(await deleteTimer(t.db, { id: claimed!.id, fireAt: claimed!.fireAt, owner: "p2" })).toBe(false);
    expect(await deleteTimer(t.db, { id: claimed!.id, fireAt: claimed!.fireAt, owner: "p1" })).toBe(true);
    expect(await deleteTimer(t.db, { id: claimed!.id, fireAt: claimed!.fireAt })).toBe(false);
  });

  it("hands back claims older than the cutoff, which are then claimed again", async () => {
    const now = new Date();
    const timer = await arm(new Date(now.getTime() - 15 * MINUTE));
    // A poller claimed it ten minutes ago and died before deleting it.
    const deadClaim = new Date(now.getTime() - 10 * MINUTE);
    expect(await claimDueTimers(t.db, { now: deadClaim, limit: 10, owner: "dead" })).toHaveLength(1);
    expect(await claimDueTimers(t.db, { now, limit: 10, owner: "live" })).toEqual([]);

    expect(await releaseStaleClaims(t.db, { olderThan: new Date(now.getTime() - 11 * MINUTE) })).toBe(0);
    expect(await releaseStaleClaims(t.db, { olderThan: new Date(now.getTime() - 5 * MINUTE) })).toBe(1);
    const again = await claimDueTimers(t.db, { now, limit: 10, owner: "live" });
    expect(again.map((r) => [r.id, r.claimedBy])).toEqual([[timer.id, "live"]]);
  });
});

// NODE_FLOW_MEASURE=1: the numbers behind the why-comments in timers.ts.
describe.runIf(process.env.NODE_FLOW_MEASURE)("measurements", () => {
  it("claims and cancels with 100,000 timers pending over the next 24 h", async () => {
    const workflowId = randomUUID();
    await sql`
      INSERT INTO "Timers" ("kind", "fireAt", "namespaceId", "workflowId", "taskId")
      SELECT 'startToClose', now() + make_interval(secs => 60 + (i % 86000)),
             ${randomUUID()}::uuid, CASE WHEN i % 1000 = 0 THEN ${workflowId}::uuid ELSE uuidv7() END, uuidv7()
      FROM generate_series(1, 100000) AS i`.execute(t.db);
    await sql`
      INSERT INTO "Timers" ("kind", "fireAt", "namespaceId", "workflowId")
      SELECT 'wait', now() - make_interval(secs => i % 600), ${randomUUID()}::uuid, uuidv7()
      FROM generate_series(1, 1000) AS i`.execute(t.db);
    await sql`ANALYZE "Timers"`.execute(t.db);

    const time = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
      const started = performance.now();
      const value = await fn();
      return [value, performance.now() - started];
    };
    const now = new Date();
    const claimMs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const [batch, ms] = await time(() => claimDueTimers(t.db, { now, limit: 100, owner: "m" }));
      expect(batch).toHaveLength(100);
      claimMs.push(ms.toFixed(1));
    }
    const [unbounded, unboundedMs] = await time(() => cancelTimers(t.db, { workflowId }));
    const [a, b] = await t.db
      .selectFrom("Timers")
      .select(["workflowId", "taskId", "fireAt"])
      .where("fireAt", ">", now)
      .where("kind", "=", "startToClose")
      .limit(2)
      .execute();
    const [bounded, boundedMs] = await time(() =>
      cancelTimers(t.db, {
        workflowId: a!.workflowId,
        taskId: a!.taskId!,
        fireAtFrom: new Date(a!.fireAt.getTime() - MINUTE),
        fireAtTo: new Date(a!.fireAt.getTime() + MINUTE),
      }),
    );
    const [byTaskUnbounded, byTaskMs] = await time(() => cancelTimers(t.db, { workflowId: b!.workflowId, taskId: b!.taskId! }));
    console.info(
      `[timers] 101,000 pending: 5 successive claims of 100 due: ${claimMs.join(", ")} ms; ` +
        `cancel by workflow without bounds ${unboundedMs.toFixed(1)} ms (${unbounded} rows); ` +
        `by task with ±1 min bounds ${boundedMs.toFixed(1)} ms (${bounded}); by task without bounds ${byTaskMs.toFixed(1)} ms (${byTaskUnbounded})`,
    );
  });
});
