import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { createTestNamespace } from "../rest/testing/rest-fixtures";
import type { TestNamespace } from "../rest/testing/rest-fixtures";
import { registerDefinition } from "../testing/runtime-fixtures";
import { startSidecar } from "../testing/sidecar-process";
import type { SidecarProcess } from "../testing/sidecar-process";
import { DEFAULT_MIN_GRACE_MS } from "./plan-fires";
import { saveSchedule } from "./save-schedule";
import { ScheduleConfigSchema } from "./schedule-config";

/**
 * Every-second schedules fired by two real sidecar processes (the poller
 * role) on the real clock: each second fires exactly once, with no gap and no
 * duplicate; then both sidecars stop for ten seconds, two new ones start, and
 * each schedule catches up per its policy. A fire counts as missed when it is
 * handled more than its grace late — 2 s for an every-second schedule
 * (plan-fires.ts) — and its ScheduleRuns row says so.
 */

const t = useTestDatabase();
let ns: TestNamespace;
let dataDir: string;
const sidecars: SidecarProcess[] = [];
const actor = { type: "system" as const, id: "test" };

beforeAll(async () => {
  ns = await createTestNamespace(t.db, "cron");
  dataDir = await mkdtemp(path.join(tmpdir(), "nf-schedules-"));
  await registerDefinition(t.db, ns.id, { schemaVersion: 1, name: "tick", nodes: [{ ref: "work", type: "SIMPLE", name: "tick_work", position: { x: 0, y: 0 } }], edges: [] });
});
afterAll(async () => {
  await Promise.all(sidecars.map((s) => s.stop()));
});

async function startTwo(): Promise<SidecarProcess[]> {
  const two = [0, 1].map(() => startSidecar({ databaseUrl: t.url, roles: "poller", dataDir}));
  sidecars.push(...two);
  await Promise.all(two.map((s) => s.ready(60_000)));
  return two;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// An every-second schedule's grace is the least: its period (1 s) is shorter.
const GRACE_MS = DEFAULT_MIN_GRACE_MS;

it("fires once per second with two sidecars, and catches up per policy after ten seconds down", { timeout: 180_000 }, async () => {
  const first = await startTwo();
  const policies = { all: { catchUp: "all", catchUpLimit: 3 }, skip: { catchUp: "skip" }, latest: { catchUp: "latest" } } as const;
  const ids: Record<string, string> = {};
  for (const [name, policy] of Object.entries(policies)) {
    const saved = await saveSchedule(t.db, {
      namespaceId: ns.id,
      name: `every-second-${name}`,
      config: ScheduleConfigSchema.parse({ workflowName: "tick", cronExpression: "* * * * * *", ...policy }),
      actor,
      updatedBy: "test",
    });
    if (!saved.ok) throw new Error(JSON.stringify(saved.problems));
    ids[name] = saved.row.id;
  }

  await sleep(5_000);
  await Promise.all(first.map((s) => s.stop()));
  const stoppedAt = Date.now();
  await sleep(10_000);
  const second = await startTwo();
  const restartedAt = Date.now();
  await sleep(4_000);
  await Promise.all(second.map((s) => s.stop()));
  const output = sidecars.map((s) => s.output()).join("\n");

  for (const [name, id] of Object.entries(ids)) {
    const rows = await t.db.selectFrom("ScheduleRuns").selectAll().where("scheduleId", "=", id).orderBy("fireAt").execute();
    const label = `${name}: ${rows.map((r) => `${r.fireAt.toISOString().slice(17, 19)}:${r.outcome}`).join(" ")}\n${output.slice(-4000)}`;
    // Every second from the first fire to the last, exactly once: no gap, no duplicate, through the outage.
    expect(rows.length, label).toBeGreaterThan(15);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.fireAt.getTime() - rows[i - 1]!.fireAt.getTime(), label).toBe(1000);
    expect(rows.every((r) => r.fireCount === 1), label).toBe(true);

    const started = rows.filter((r) => r.outcome === "started");
    const runs = await t.db.selectFrom("WorkflowExecutions").select("id").where("createdBy", "=", `schedule:every-second-${name}`).execute();
    expect(runs.map((r) => r.id).sort(), label).toEqual(started.map((r) => r.workflowId).sort());

    // A row's handledAt is the clock its plan read: missed exactly when handled past the grace.
    const late = (r: (typeof rows)[number]) => r.createdAt.getTime() - r.fireAt.getTime();
    const isMissed = (r: (typeof rows)[number]) => r.reason?.startsWith("missed:") === true || r.reason?.startsWith("caught up:") === true;
    for (const r of rows) expect(isMissed(r), `${label}\n${r.fireAt.toISOString()} was handled ${late(r)} ms late: ${r.reason}`).toBe(late(r) > GRACE_MS);
    // Before the stop, and after the restart, on time (a fire a loaded machine reached late is judged by the rule above).
    expect(rows.filter((r) => r.fireAt.getTime() < stoppedAt - 1_500 && r.outcome === "started").length, label).toBeGreaterThanOrEqual(3);
    expect(rows.filter((r) => r.fireAt.getTime() > restartedAt + 1_000 && r.outcome === "started").length, label).toBeGreaterThanOrEqual(2);
    // The outage: every fire in its first seven seconds was reached at least three seconds late.
    const outage = rows.filter((r) => r.fireAt.getTime() > stoppedAt && r.fireAt.getTime() < stoppedAt + 7_000);
    expect(outage.length, label).toBeGreaterThanOrEqual(6);
    expect(outage.every(isMissed), label).toBe(true);
    // The restart's catch-up: of the missed fires, the policy runs none, the latest, or the latest three.
    const missed = rows.filter((r) => isMissed(r) && r.fireAt.getTime() > stoppedAt - 1_000 && r.fireAt.getTime() < restartedAt);
    const caughtUp = missed.filter((r) => r.outcome === "started");
    const skipped = missed.filter((r) => r.outcome === "skipped");
    expect(caughtUp.length, label).toBe(name === "skip" ? 0 : name === "latest" ? 1 : 3);
    expect(skipped.length + caughtUp.length, label).toBe(missed.length);
    for (const c of caughtUp) for (const k of skipped) expect(c.fireAt.getTime(), label).toBeGreaterThan(k.fireAt.getTime());
  }
});
