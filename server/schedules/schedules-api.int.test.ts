import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { keyPair, startConductorHarness } from "../conductor/testing/conductor-harness";
import type { ConductorHarness } from "../conductor/testing/conductor-harness";
import { createTestKey, createTestNamespace, startRestHarness } from "../rest/testing/rest-fixtures";
import type { RestHarness, TestNamespace } from "../rest/testing/rest-fixtures";
import { registerDefinition } from "../testing/runtime-fixtures";
import { tableCounts } from "../web/testing/table-counts";

/**
 * Schedules over real HTTP: REST v1 (create, replace, preview, pause,
 * resume, fires, delete; every refusal names its field and writes nothing)
 * and Conductor's SchedulerResource as its clients call it, round-tripping
 * the WorkflowSchedule JSON.
 */

const t = useTestDatabase();
let rest: RestHarness;
let conductor: ConductorHarness;
let ns: TestNamespace;
let key: string;
let token: string;

beforeAll(async () => {
  rest = await startRestHarness(t.db, t.url);
  conductor = await startConductorHarness(t.db, t.url);
  ns = await createTestNamespace(t.db, "sched-api");
  key = await createTestKey(t.db, ns, ["admin"]);
  token = (await conductor.call<{ token: string }>("POST", "/token", { body: keyPair(key) })).body.token;
  const position = { x: 0, y: 0 };
  await registerDefinition(t.db, ns.id, { schemaVersion: 1, name: "nightly", nodes: [{ ref: "work", type: "SIMPLE", name: "nightly_work", position }], edges: [] });
});
afterAll(async () => {
  await conductor?.close();
  await rest?.close();
});

type Problem = { errors?: { pointer: string; message: string }[] };
const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => rest.api<T>(method, `/ns/${ns.name}${path}`, { key, body });

describe("REST v1", () => {
  it("creates a schedule and answers its next five fire times; replacing it keeps its timing", async () => {
    const created = await api<{ nextFireTimes: string[]; nextFireAt: string; catchUp: string }>("PUT", "/schedules/nightly-berlin", {
      workflowName: "nightly",
      cronExpression: "30 2 * * *",
      zoneId: "Europe/Berlin",
      input: { day: "${schedule.fireTime}" },
      catchUp: "latest",
    });
    expect(created.status).toBe(201);
    expect(created.body.nextFireTimes).toHaveLength(5);
    expect(created.body.nextFireTimes[0]).toBe(created.body.nextFireAt);
    const local = created.body.nextFireTimes.map((iso) => new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" }).format(new Date(iso)));
    expect(new Set(local).size).toBeLessThanOrEqual(2); // 02:30, or 03:00 on a spring-forward day
    const replaced = await api<{ nextFireAt: string; overlap: string }>("PUT", "/schedules/nightly-berlin", { workflowName: "nightly", cronExpression: "30 2 * * *", zoneId: "Europe/Berlin", overlap: "skip" });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ nextFireAt: created.body.nextFireAt, overlap: "skip" });
    const listed = await api<{ items: { name: string }[] }>("GET", "/schedules?workflow=nightly");
    expect(listed.body.items.map((s) => s.name)).toEqual(["nightly-berlin"]);
  });

  it("refuses a bad expression, zone, missing workflow or reversed window by field, and writes nothing", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ workflowName: "nightly", cronExpression: "61 * * * *" }, "/body/cronExpression"],
      [{ workflowName: "nightly", cronExpression: "* * * *" }, "/body/cronExpression"],
      [{ workflowName: "nightly", cronExpression: "@hourly", zoneId: "Mars/Olympus" }, "/body/zoneId"],
      [{ workflowName: "no_such_flow", cronExpression: "@hourly" }, "/body/workflowName"],
      [{ workflowName: "nightly", workflowVersion: 9, cronExpression: "@hourly" }, "/body/workflowVersion"],
      [{ workflowName: "nightly", cronExpression: "@hourly", startAt: "2030-01-02T00:00:00Z", endAt: "2030-01-01T00:00:00Z" }, "/body/endAt"],
      [{ workflowName: "nightly", cronExpression: "@hourly", endAt: "2001-01-01T00:00:00Z" }, "/body/endAt"],
      [{ workflowName: "nightly", cronExpression: "@hourly", catchUp: "sometimes" }, "/body/catchUp"],
    ];
    for (const [body, pointer] of cases) {
      const before = await tableCounts(t.db);
      const answer = await api<Problem>("PUT", "/schedules/refused", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.errors?.map((e) => e.pointer), JSON.stringify(answer.body)).toContain(pointer);
      expect(await tableCounts(t.db)).toEqual(before);
    }
  });

  it("previews an expression without saving, with DST notes", async () => {
    const before = await tableCounts(t.db);
    const answer = await api<{ fireTimes: string[]; dstNotes: string[]; fixedTime: boolean }>("POST", "/schedules/preview", { cronExpression: "30 2 * * *", zoneId: "Europe/Berlin", count: 3 });
    expect(answer.status).toBe(200);
    expect(answer.body.fireTimes).toHaveLength(3);
    expect(answer.body.fixedTime).toBe(true);
    expect(answer.body.dstNotes.join(" ")).toMatch(/go forward .* runs at the first time after it/);
    expect(await tableCounts(t.db)).toEqual(before);
    const bad = await api<Problem>("POST", "/schedules/preview", { cronExpression: "every day" });
    expect(bad.status).toBe(400);
    expect(bad.body.errors?.[0]?.pointer).toBe("/body/cronExpression");
  });

  it("pauses, resumes, lists fires and deletes, each audited", async () => {
    const paused = await api<{ paused: boolean; nextFireTimes: string[]; pausedReason: string }>("POST", "/schedules/nightly-berlin/pause", { reason: "maintenance" });
    expect(paused.body).toMatchObject({ paused: true, nextFireTimes: [], pausedReason: "maintenance" });
    const resumed = await api<{ paused: boolean; nextFireTimes: string[] }>("POST", "/schedules/nightly-berlin/resume");
    expect(resumed.body.paused).toBe(false);
    expect(resumed.body.nextFireTimes).toHaveLength(5);
    expect((await api<{ items: unknown[] }>("GET", "/schedules/nightly-berlin/runs")).body.items).toEqual([]);
    expect((await api("DELETE", "/schedules/nightly-berlin")).status).toBe(200);
    expect((await api("GET", "/schedules/nightly-berlin")).status).toBe(404);
    const audit = await t.db.selectFrom("AuditEvents").select("action").where("namespaceId", "=", ns.id).where("resourceType", "=", "schedule").orderBy("at").execute();
    expect(audit.map((a) => a.action)).toEqual(["schedule.create", "schedule.update", "schedule.pause", "schedule.resume", "schedule.delete"]);
  });
});

describe("Conductor's scheduler API", () => {
  const call = <T = unknown>(method: string, path: string, body?: unknown) => conductor.call<T>(method, path, { token, body });
  const schedule = {
    name: "daily_report_schedule",
    cronExpression: "0 0 9 * * MON-FRI",
    zoneId: "America/New_York",
    startWorkflowRequest: { name: "nightly", version: 1, input: { region: "eu" }, correlationId: "daily-report-${scheduledTime}" },
    runCatchupScheduleInstances: true,
    paused: false,
    scheduleStartTime: Date.parse("2030-01-01T00:00:00Z"),
    scheduleEndTime: 0,
    description: "Weekday mornings",
    // A client sends what it read back; these are ignored.
    createTime: 1,
    tags: [],
  };

  it("round-trips a WorkflowSchedule: save, get, list, pause, resume, delete", async () => {
    expect((await call("POST", "/scheduler/schedules", schedule)).status).toBe(200);
    const got = await call<Record<string, unknown>>("GET", "/scheduler/schedules/daily_report_schedule");
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      name: schedule.name,
      cronExpression: schedule.cronExpression,
      zoneId: schedule.zoneId,
      startWorkflowRequest: { name: "nightly", version: 1, input: { region: "eu" }, correlationId: "daily-report-${scheduledTime}", priority: 0 },
      runCatchupScheduleInstances: true,
      paused: false,
      scheduleStartTime: schedule.scheduleStartTime,
      scheduleEndTime: null,
      description: "Weekday mornings",
      catchUp: "all",
    });
    // The first fire: 09:00 New York on the first weekday from the start time (Tuesday 2030-01-01 is 14:00 UTC).
    expect(got.body.nextRunTime).toBe(Date.parse("2030-01-01T14:00:00Z"));
    // What a client read back, saved again, is the same schedule.
    expect((await call("POST", "/scheduler/schedules", got.body)).status).toBe(200);
    expect((await call<Record<string, unknown>>("GET", "/scheduler/schedules/daily_report_schedule")).body).toMatchObject({ ...got.body, updatedTime: expect.any(Number) as unknown });

    const listed = await call<{ name: string }[]>("GET", "/scheduler/schedules?workflowName=nightly");
    expect(listed.body.map((s) => s.name)).toContain("daily_report_schedule");
    expect((await call("GET", "/scheduler/schedules/daily_report_schedule/pause")).status).toBe(200);
    expect((await call<{ paused: boolean }>("GET", "/scheduler/schedules/daily_report_schedule")).body.paused).toBe(true);
    expect((await call("PUT", "/scheduler/schedules/daily_report_schedule/resume")).status).toBe(200);
    expect((await call<{ paused: boolean }>("GET", "/scheduler/schedules/daily_report_schedule")).body.paused).toBe(false);
    expect((await call("DELETE", "/scheduler/schedules/daily_report_schedule")).status).toBe(200);
    expect((await call("GET", "/scheduler/schedules/daily_report_schedule")).status).toBe(404);
  });

  it("answers nextFewSchedules in epoch ms, 3 by default and 5 at most", async () => {
    const start = Date.parse("2030-01-01T00:00:00Z");
    const few = await call<number[]>("GET", `/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("0 0/15 * * * ?")}&scheduleStartTime=${start}&scheduleEndTime=${start + 3_600_000}&limit=5`);
    expect(few.body).toEqual([0, 15, 30, 45, 60].map((m) => start + m * 60_000));
    const three = await call<number[]>("GET", `/scheduler/nextFewSchedules?cronExpression=${encodeURIComponent("@hourly")}`);
    expect(three.body).toHaveLength(3);
    expect((await call("GET", `/scheduler/nextFewSchedules?cronExpression=x&limit=9`)).status).toBe(400);
  });

  it("refuses a bad schedule naming Conductor's field, and writes nothing", async () => {
    const before = await tableCounts(t.db);
    for (const [body, path] of [
      [{ ...schedule, cronExpression: "0 0 25 * * *" }, "body.cronExpression"],
      [{ ...schedule, zoneId: "Nowhere/City" }, "body.zoneId"],
      [{ ...schedule, startWorkflowRequest: { name: "no_such_flow" } }, "body.startWorkflowRequest.name"],
    ] as const) {
      const answer = await call<{ validationErrors?: { path: string }[] }>("POST", "/scheduler/schedules", body);
      expect(answer.status).toBe(400);
      expect(answer.body.validationErrors?.map((e) => e.path)).toContain(path);
    }
    expect(await tableCounts(t.db)).toEqual(before);
  });
});
