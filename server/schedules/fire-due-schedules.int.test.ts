import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../db/pool";
import type { Db } from "../../db/pool";
import { useTestDatabase } from "../../db/testing/test-database";
import { createTestNamespace } from "../rest/testing/rest-fixtures";
import type { TestNamespace } from "../rest/testing/rest-fixtures";
import { registerDefinition } from "../testing/runtime-fixtures";
import { listScheduleRuns } from "../store/schedules";
import { fireDueScheduleBatch } from "./fire-due-schedules";
import { saveSchedule, setPaused } from "./save-schedule";
import { ScheduleConfigSchema } from "./schedule-config";

/**
 * The scheduler's pass on a real Postgres with an injected clock: the
 * overlap policies against runs that really are running (no decider here, so
 * a started run stays RUNNING until the test ends it), refused starts, pause
 * and resume, and two pollers on separate pools racing over the same fires.
 */

const t = useTestDatabase();
let ns: TestNamespace;
const actor = { type: "system" as const, id: "test" };
const position = { x: 0, y: 0 };
const T0 = new Date("2027-01-01T00:00:00Z");
const sec = (n: number) => new Date(T0.getTime() + n * 1000);

beforeAll(async () => {
  ns = await createTestNamespace(t.db, "sched");
  await registerDefinition(t.db, ns.id, { schemaVersion: 1, name: "tick", nodes: [{ ref: "work", type: "SIMPLE", name: "tick_work", position }], edges: [] });
  await registerDefinition(t.db, ns.id, {
    schemaVersion: 1,
    name: "strict",
    inputSchema: { type: "object", required: ["day"], properties: { day: { type: "string" } } },
    nodes: [{ ref: "work", type: "SIMPLE", name: "strict_work", position }],
    edges: [],
  });
});

async function create(name: string, config: Record<string, unknown>, db: Db = t.db) {
  const parsed = ScheduleConfigSchema.parse({ workflowName: "tick", cronExpression: "* * * * * *", ...config });
  // Saved a moment before T0, so the first fire is T0.
  const saved = await saveSchedule(db, { namespaceId: ns.id, name, config: parsed, actor, updatedBy: "test", now: new Date(T0.getTime() - 500) });
  if (!saved.ok) throw new Error(JSON.stringify(saved.problems));
  return saved.row;
}

const pass = (now: Date, db: Db = t.db) => fireDueScheduleBatch({ db, now: () => now }, { limit: 100 });

async function runsOf(scheduleId: string) {
  return (await listScheduleRuns(t.db, { namespaceId: ns.id, scheduleId, limit: 1000 })).reverse();
}

async function endRun(workflowId: string) {
  await t.db.updateTable("WorkflowExecutions").set({ status: "COMPLETED", endedAt: sql`now()` }).where("id", "=", workflowId).execute();
}

describe("overlap", () => {
  it("skip: a fire while the previous run runs is skipped, and the next after it ends starts", async () => {
    const schedule = await create("overlap-skip", { overlap: "skip" });
    const first = await pass(sec(0.1));
    const mine = () => first.started.filter((s) => s.scheduleId === schedule.id);
    expect(mine()).toHaveLength(1);
    await pass(sec(1.1));
    await endRun(mine()[0]!.workflowId);
    await pass(sec(2.1));
    const runs = await runsOf(schedule.id);
    expect(runs.map((r) => [r.fireAt.getTime() - T0.getTime(), r.outcome])).toEqual([
      [0, "started"],
      [1000, "skipped"],
      [2000, "started"],
    ]);
    expect(runs[1]!.reason).toContain("is still running (overlap policy skip)");
    const created = await t.db.selectFrom("WorkflowExecutions").select(["id", "createdBy"]).where("createdBy", "=", "schedule:overlap-skip").execute();
    expect(created.map((r) => r.id).sort()).toEqual([runs[0]!.workflowId, runs[2]!.workflowId].sort());
  });

  it("queue: one fire waits for the running run and starts when it ends; a second is skipped", async () => {
    const schedule = await create("overlap-queue", { overlap: "queue" });
    await pass(sec(0.1));
    await pass(sec(1.1));
    await pass(sec(2.1));
    let runs = await runsOf(schedule.id);
    expect(runs.map((r) => r.outcome)).toEqual(["started", "queued", "skipped"]);
    expect(runs[2]!.reason).toContain("already queued");
    // Still running: the queued fire keeps waiting.
    await pass(sec(2.2));
    expect((await runsOf(schedule.id))[1]!.outcome).toBe("queued");
    await endRun(runs[0]!.workflowId!);
    await pass(sec(2.3));
    runs = await runsOf(schedule.id);
    expect(runs.map((r) => r.outcome)).toEqual(["started", "started", "skipped"]);
    expect(runs[1]!.workflowId).not.toBeNull();
    const row = await t.db.selectFrom("Schedules").select(["queuedFireAt", "lastWorkflowId"]).where("id", "=", schedule.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ queuedFireAt: null, lastWorkflowId: runs[1]!.workflowId });
    // The started queued run now blocks the next fire.
    await pass(sec(3.1));
    expect((await runsOf(schedule.id)).map((r) => r.outcome)).toEqual(["started", "started", "skipped", "queued"]);
  });

  it("allow: runs overlap", async () => {
    const schedule = await create("overlap-allow", { overlap: "allow" });
    await pass(sec(0.1));
    await pass(sec(1.1));
    expect((await runsOf(schedule.id)).map((r) => r.outcome)).toEqual(["started", "started"]);
  });
});

describe("starts", () => {
  it("resolves the input and correlation id templates per fire, and records a refused start without stopping", async () => {
    const good = await create("strict-good", { workflowName: "strict", input: { day: "${schedule.fireTime}", at: "${scheduledTime}" }, correlationIdTemplate: "nightly-${scheduledTime}" });
    const bad = await create("strict-bad", { workflowName: "strict", input: { other: 1 } });
    await pass(sec(0.1));
    await pass(sec(1.1));
    const goodRuns = await runsOf(good.id);
    expect(goodRuns.map((r) => r.outcome)).toEqual(["started", "started"]);
    const run = await t.db.selectFrom("WorkflowExecutions").select(["input", "correlationId", "createdBy"]).where("id", "=", goodRuns[0]!.workflowId!).executeTakeFirstOrThrow();
    expect(run).toEqual({ input: { day: "2027-01-01T00:00:00.000Z", at: T0.getTime() }, correlationId: `nightly-${T0.getTime()}`, createdBy: "schedule:strict-good" });
    const badRuns = await runsOf(bad.id);
    expect(badRuns.map((r) => r.outcome)).toEqual(["failed", "failed"]);
    expect(badRuns[0]!.reason).toMatch(/^the workflow refused the input: .*day/);
  });

  it("pauses without firing and resumes from now, not catching up the pause", async () => {
    const schedule = await create("pausing", {});
    await pass(sec(0.1));
    expect((await setPaused(t.db, { namespaceId: ns.id, name: "pausing", paused: true, actor, updatedBy: "test" })).ok).toBe(true);
    await pass(sec(3.1));
    expect(await runsOf(schedule.id)).toHaveLength(1);
    const resumed = await setPaused(t.db, { namespaceId: ns.id, name: "pausing", paused: false, actor, updatedBy: "test", now: sec(5.5) });
    expect(resumed.ok && resumed.row.nextFireAt?.toISOString()).toBe(sec(6).toISOString());
    await pass(sec(6.1));
    expect((await runsOf(schedule.id)).map((r) => r.fireAt.getTime() - T0.getTime())).toEqual([0, 6000]);
    const audit = await t.db.selectFrom("AuditEvents").select("action").where("resourceType", "=", "schedule").where("resourceId", "=", "pausing").orderBy("at").execute();
    expect(audit.map((a) => a.action)).toEqual(["schedule.create", "schedule.pause", "schedule.resume"]);
  });
});

describe("two pollers", () => {
  let other: Db;
  beforeAll(() => {
    other = createDb(t.url, { max: 5 });
  });
  afterAll(async () => {
    await other.destroy();
  });

  it("fire each (schedule, fire time) once when they race over the same due fires", async () => {
    const schedules = await Promise.all(Array.from({ length: 12 }, (_, i) => create(`race-${i}`, { catchUp: "all", catchUpLimit: 10 })));
    const ids = new Set(schedules.map((s) => s.id));
    for (let second = 0; second < 6; second++) {
      const now = sec(second + 0.2);
      await Promise.all([pass(now, t.db), pass(now, other), pass(now, t.db), pass(now, other)]);
    }
    const rows = await t.db.selectFrom("ScheduleRuns").select(["scheduleId", "fireAt", "outcome", "workflowId"]).where("namespaceId", "=", ns.id).execute();
    const mine = rows.filter((r) => ids.has(r.scheduleId));
    expect(mine).toHaveLength(12 * 6);
    expect(mine.every((r) => r.outcome === "started" && r.workflowId !== null)).toBe(true);
    const runs = await t.db.selectFrom("WorkflowExecutions").select(sql<number>`count(*)::int`.as("n")).where("createdBy", "like", "schedule:race-%").executeTakeFirstOrThrow();
    expect(runs.n).toBe(12 * 6);
  });
});
