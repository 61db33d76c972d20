import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import type { WorkflowStatus } from "@/engine";
import type { Principal } from "../../auth/principal";
import { dashboardWindow } from "../../dashboard/dashboard-window";
import { upsertNamespaceMember } from "../../store/namespace-members";
import { insertNamespace } from "../../store/namespaces";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

/**
 * dashboard.runs on a real Postgres over runs whose times are known: the
 * counts by status, the failure rate, and percentile_cont's p50/p95 of
 * durations and queue waits, per bucket and for the window, per workflow and
 * for the namespace; and who may read it.
 */
const database = useTestDatabase();

let viewer: Principal;
let outsider: Principal;
let nsId: string;
let otherNsId: string;
/** Ten minutes before the query, on a minute boundary: every seeded run starts in this bucket of the hour range. */
let bucket: Date;

const MINUTE = 60_000;
const as = (principal: Principal) => callerAs(database.db, database.url, principal);

/** A run started at `bucket + offsetMs` that lasted `durationMs` (null: still running), with one worker task that waited `waitMs`. */
async function seedRun(namespaceId: string, defName: string, status: WorkflowStatus, offsetMs: number, durationMs: number | null, waitMs: number | null) {
  const startedAt = new Date(bucket.getTime() + offsetMs);
  const { id } = await database.db
    .insertInto("WorkflowExecutions")
    .values({ namespaceId, defName, defVersion: 1, status, startedAt, endedAt: durationMs === null ? null : new Date(startedAt.getTime() + durationMs) })
    .returning("id")
    .executeTakeFirstOrThrow();
  if (waitMs !== null) {
    await database.db
      .insertInto("TaskExecutions")
      .values({
        workflowId: id,
        namespaceId,
        refName: "work",
        taskType: "SIMPLE",
        taskDefName: "work",
        queueName: "work",
        status: "COMPLETED",
        scheduledAt: startedAt,
        startedAt: new Date(startedAt.getTime() + waitMs),
        endedAt: new Date(startedAt.getTime() + waitMs + 1),
      })
      .execute();
  }
  return id;
}

beforeAll(async () => {
  const db = database.db;
  nsId = (await insertNamespace(db, { name: "ops" })).id;
  otherNsId = (await insertNamespace(db, { name: "elsewhere" })).id;
  const user = await insertTestUser(db, "viewer@example.com");
  await upsertNamespaceMember(db, { namespaceId: nsId, userId: user.id, role: "viewer" });
  viewer = userPrincipal(user);
  outsider = userPrincipal(await insertTestUser(db, "outsider@example.com"));
  bucket = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE);
  // "orders": durations 100, 200, …, 800 ms over 6 completed and 2 failed runs, plus one running; waits 10…80 ms.
  for (let i = 1; i <= 8; i++) await seedRun(nsId, "orders", i <= 6 ? "COMPLETED" : "FAILED", i * 1000, i * 100, i * 10);
  await seedRun(nsId, "orders", "RUNNING", 9000, null, null);
  // "billing", a minute later: one timed out, one terminated (ended, not failed).
  await seedRun(nsId, "billing", "TIMED_OUT", MINUTE + 1000, 2000, 500);
  await seedRun(nsId, "billing", "TERMINATED", MINUTE + 2000, 3000, null);
  // Another namespace's failures never show; nor do runs older than the window.
  await seedRun(otherNsId, "orders", "FAILED", 1000, 50, 5);
  await seedRun(nsId, "orders", "FAILED", -2 * 60 * MINUTE, 50, 5);
});

/** percentile_cont over 100..800 step 100 (linear interpolation, as Postgres does). */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = p * (sorted.length - 1);
  const low = Math.floor(rank);
  return sorted[low]! + (sorted[Math.ceil(rank)]! - sorted[low]!) * (rank - low);
}

describe("dashboard.runs", () => {
  it("counts one workflow's runs by status in their bucket, with its failure rate and percentiles", async () => {
    const d = await as(viewer).dashboard.runs({ namespace: "ops", range: "hour", workflow: "orders" });
    expect(d.points).toHaveLength(60);
    const point = d.points.find((p) => p.at === bucket.toISOString())!;
    expect(point.counts).toMatchObject({ COMPLETED: 6, FAILED: 2, RUNNING: 1, TIMED_OUT: 0 });
    expect(point.perMinute.COMPLETED).toBe(6);
    expect(point.failureRate).toBeCloseTo(2 / 8);
    const durations = [100, 200, 300, 400, 500, 600, 700, 800];
    expect(point.durationP50Ms).toBeCloseTo(percentile(durations, 0.5));
    expect(point.durationP95Ms).toBeCloseTo(percentile(durations, 0.95));
    expect(point.queueWaitP50Ms).toBeCloseTo(45);
    expect(point.queueWaitP95Ms).toBeCloseTo(percentile([10, 20, 30, 40, 50, 60, 70, 80], 0.95));
    // Every other bucket is empty: zero counts, no rate, no percentiles.
    const others = d.points.filter((p) => p.at !== bucket.toISOString());
    expect(others.every((p) => p.failureRate === null && p.durationP50Ms === null && Object.values(p.counts).every((n) => n === 0))).toBe(true);
    expect(d.totals).toMatchObject({ runs: 9, failureRate: 0.25, queuedTasks: 8 });
    expect(d.totals.durationP95Ms).toBeCloseTo(percentile(durations, 0.95));
    expect(d.failing.map((r) => r.workflow)).toEqual(["orders", "orders"]);
    expect(d.failing[0]!.startedAt > d.failing[1]!.startedAt).toBe(true);
  });

  it("covers the whole namespace without a workflow: timed out counts as failed, terminated only as ended", async () => {
    const d = await as(viewer).dashboard.runs({ namespace: "ops", range: "hour" });
    expect(d.totals.counts).toMatchObject({ COMPLETED: 6, FAILED: 2, TIMED_OUT: 1, TERMINATED: 1, RUNNING: 1 });
    expect(d.totals.failureRate).toBeCloseTo(3 / 10);
    const later = d.points.find((p) => p.at === new Date(bucket.getTime() + MINUTE).toISOString())!;
    expect(later).toMatchObject({ failureRate: 0.5, durationP50Ms: 2500, queueWaitP50Ms: 500 });
    expect(d.failing.map((r) => r.status)).toEqual(["TIMED_OUT", "FAILED", "FAILED"]);
  });

  it("widens to a day and a week, where the run from two hours ago counts too", async () => {
    const day = await as(viewer).dashboard.runs({ namespace: "ops", range: "day", workflow: "orders" });
    expect(day.points).toHaveLength(96);
    expect(day.stepSeconds).toBe(900);
    expect(day.totals.counts.FAILED).toBe(3);
    const week = await as(viewer).dashboard.runs({ namespace: "ops", range: "week", workflow: "orders" });
    expect(week.points).toHaveLength(168);
    expect(Date.parse(week.to) - Date.parse(week.from)).toBe(7 * 24 * 60 * MINUTE);
    expect(week.to).toBe(dashboardWindow("week", new Date(Date.parse(week.to) - 1)).to.toISOString());
    expect(week.totals.runs).toBe(10);
  });

  it("shows an empty window as zeros, and nothing of a workflow with no runs", async () => {
    const d = await as(viewer).dashboard.runs({ namespace: "ops", range: "hour", workflow: "nobody" });
    expect(d.totals).toMatchObject({ runs: 0, failureRate: null, durationP50Ms: null, queuedTasks: 0, queueWaitP50Ms: null });
    expect(d.failing).toEqual([]);
  });

  it("is a 404 for a namespace the caller has no role in, and refuses an unknown range by name", async () => {
    await expect(as(outsider).dashboard.runs({ namespace: "ops" })).rejects.toSatisfy((e) => e instanceof TRPCError && e.code === "NOT_FOUND");
    await expect(as(viewer).dashboard.runs({ namespace: "elsewhere" })).rejects.toSatisfy((e) => e instanceof TRPCError && e.code === "NOT_FOUND");
    await expect(as(viewer).dashboard.runs({ namespace: "ops", range: "year" as "hour" })).rejects.toSatisfy(
      (e) => e instanceof TRPCError && e.code === "BAD_REQUEST" && /range/.test(JSON.stringify(e.cause)),
    );
  });
});
