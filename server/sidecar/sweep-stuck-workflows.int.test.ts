import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import type { TaskStatus, WorkflowStatus } from "../../db/schema";
import { useTestDatabase } from "../../db/testing/test-database";
import { STUCK_WORKFLOW_REASON, sweepStuckWorkflows } from "./sweep-stuck-workflows";
import type { StuckSweepCursor } from "./sweep-stuck-workflows";
import { enqueueDecide } from "../store/decide-queues";
import { findStuckWorkflows, findStuckWorkflowsStatement } from "../store/stuck-workflows";
import { insertWorkflowExecution } from "../store/workflow-executions";

const t = useTestDatabase();
const MINUTE = 60_000;

beforeEach(async () => {
  await t.db.deleteFrom("DecideQueues").execute();
  await t.db.deleteFrom("TaskExecutions").execute();
  await t.db.deleteFrom("WorkflowExecutions").execute();
});

interface Wf {
  id: string;
  namespaceId: string;
}

/** A workflow last evaluated `idleMs` ago. */
async function workflow(options: { status?: WorkflowStatus; idleMs?: number; startedAt?: string } = {}): Promise<Wf> {
  const namespaceId = randomUUID();
  const row = await insertWorkflowExecution(t.db, {
    namespaceId,
    defName: "stuck",
    defVersion: 1,
    status: options.status ?? "RUNNING",
    startedAt: options.startedAt ?? new Date(Date.now() - 60 * MINUTE),
  });
  await t.db
    .updateTable("WorkflowExecutions")
    .set({ updatedAt: new Date(Date.now() - (options.idleMs ?? 10 * MINUTE)) })
    .where("id", "=", row.id)
    .execute();
  return { id: row.id, namespaceId };
}

async function task(wf: Wf, status: TaskStatus, options: { taskType?: string; seen?: boolean } = {}): Promise<void> {
  const ended = !["SCHEDULED", "IN_PROGRESS"].includes(status);
  await t.db
    .insertInto("TaskExecutions")
    .values({
      workflowId: wf.id,
      namespaceId: wf.namespaceId,
      refName: `ref_${randomUUID().slice(0, 8)}`,
      taskType: options.taskType ?? "SIMPLE",
      taskDefName: "t",
      status,
      endedAt: ended ? new Date() : null,
      deciderSeenAt: ended && (options.seen ?? true) ? new Date() : null,
    })
    .execute();
}

async function decides(): Promise<Map<string, string | null>> {
  const rows = await t.db.selectFrom("DecideQueues").select(["workflowId", "reason"]).execute();
  return new Map(rows.map((row) => [row.workflowId, row.reason]));
}

describe("sweepStuckWorkflows", () => {
  it("enqueues a decide for exactly the RUNNING workflows with nothing in flight and no decide queued", async () => {
    // Stuck: every row terminal and seen; a terminal row never seen (its decide was lost); no rows at all;
    // only a loop container unfinished, which nothing but the decider advances.
    const allSeen = await workflow();
    await task(allSeen, "COMPLETED");
    await task(allSeen, "FAILED");
    const unseen = await workflow();
    await task(unseen, "COMPLETED", { seen: false });
    const empty = await workflow();
    const loop = await workflow();
    await task(loop, "IN_PROGRESS", { taskType: "DO_WHILE" });
    await task(loop, "COMPLETED");

    // Not stuck.
    const fresh = await workflow({ idleMs: 5_000 });
    const queued = await workflow();
    await task(queued, "COMPLETED");
    await enqueueDecide(t.db, { ...queued, workflowId: queued.id, reason: "task done" });
    const waiting = await workflow();
    await task(waiting, "COMPLETED");
    await task(waiting, "IN_PROGRESS", { taskType: "WAIT" });
    const human = await workflow();
    await task(human, "IN_PROGRESS", { taskType: "HUMAN" });
    const loopBody = await workflow();
    await task(loopBody, "IN_PROGRESS", { taskType: "DO_WHILE" });
    await task(loopBody, "SCHEDULED");
    const ended = await workflow({ status: "COMPLETED" });
    await task(ended, "COMPLETED");
    const paused = await workflow({ status: "PAUSED" });

    const logged: object[] = [];
    const swept = await sweepStuckWorkflows(t.db, { limit: 100, olderThanMs: MINUTE, logger: { warn: (obj: object) => logged.push(obj) } });
    expect(swept).toBe(4);
    const stuck = [allSeen, unseen, empty, loop].map((wf) => wf.id).sort();
    const queuedNow = await decides();
    expect([...queuedNow.keys()].sort()).toEqual([...stuck, queued.id].sort());
    for (const id of stuck) expect(queuedNow.get(id)).toBe(STUCK_WORKFLOW_REASON);
    expect(queuedNow.get(queued.id)).toBe("task done");
    expect(logged.map((entry) => (entry as { workflowId: string }).workflowId).sort()).toEqual(stuck);
    for (const wf of [fresh, waiting, human, loopBody, ended, paused]) expect(queuedNow.has(wf.id)).toBe(false);

    // Now every one of them has a decide queued: nothing more to do.
    expect(await sweepStuckWorkflows(t.db, { limit: 100, olderThanMs: MINUTE })).toBe(0);
    // Once idle long enough, the fresh one is stuck too.
    expect(await sweepStuckWorkflows(t.db, { limit: 100, olderThanMs: 1_000 })).toBe(1);
    expect((await decides()).get(fresh.id)).toBe(STUCK_WORKFLOW_REASON);
  });

  it("walks the RUNNING workflows a page per pass with a microsecond-exact cursor, then starts over", async () => {
    const base = new Date(Date.now() - 2 * 60 * MINUTE).toISOString(); // …:12.345Z
    const micro = (n: string) => base.replace("Z", `${n}Z`);
    // Two share a millisecond: a cursor truncated to milliseconds would skip one or repeat one.
    const startedAt = [micro("100"), micro("200"), micro("300"), new Date(Date.now() - 90 * MINUTE).toISOString(), new Date(Date.now() - 80 * MINUTE).toISOString()];
    const wfs: Wf[] = [];
    for (const at of startedAt) wfs.push(await workflow({ startedAt: at }));
    await workflow({ status: "COMPLETED", startedAt: micro("150") });

    const cursor: StuckSweepCursor = {};
    const pass = () => sweepStuckWorkflows(t.db, { limit: 2, olderThanMs: MINUTE, cursor });
    const seen: string[][] = [];
    let before = new Set<string>();
    for (let i = 0; i < 3; i++) {
      await pass();
      const now = new Set((await decides()).keys());
      seen.push([...now].filter((id) => !before.has(id)));
      before = now;
    }
    const ids = wfs.map((wf) => wf.id);
    expect(seen).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)].map((page) => page.sort()));
    // The last page was short: the walk starts over from the oldest.
    expect(cursor.after).toBeUndefined();

    const page = await findStuckWorkflows(t.db, { limit: 2, updatedBefore: new Date(), after: undefined });
    expect(page).toMatchObject({ scanned: 2, stuck: [] });
    expect(page.next?.id).toBe(ids[1]);
    expect(page.next?.startedAt).toBe(micro("200"));
  });

  it("reads a page of the RUNNING index in order: no sort, no scan of the whole table", async () => {
    await sql`
      INSERT INTO "WorkflowExecutions" ("namespaceId", "defName", "defVersion", "status", "startedAt")
      SELECT uuidv7(), 'plan', 1, CASE WHEN g % 100 = 0 THEN 'RUNNING' ELSE 'COMPLETED' END, now() - make_interval(secs => g)
      FROM generate_series(1, 5000) AS g`.execute(t.db);
    await sql`ANALYZE "WorkflowExecutions"`.execute(t.db);
    const statement = findStuckWorkflowsStatement({
      limit: 20,
      updatedBefore: new Date(),
      after: { startedAt: new Date(Date.now() - 10 * 24 * 60 * MINUTE).toISOString(), id: randomUUID() },
    });
    const { rows } = await sql<{ "QUERY PLAN": unknown }>`EXPLAIN (FORMAT JSON) ${statement}`.execute(t.db);
    const nodes: Record<string, unknown>[] = [];
    const walk = (node: Record<string, unknown>) => {
      nodes.push(node);
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk((rows[0]!["QUERY PLAN"] as { Plan: Record<string, unknown> }[])[0]!.Plan);

    const { rows: running } = await sql<{ name: string }>`
      SELECT c.relname AS "name" FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = '"WorkflowExecutions_running_idx"'::regclass`.execute(t.db);
    const runningIndexes = new Set(running.map((r) => r.name));
    const workflowScans = nodes.filter((n) => typeof n["Relation Name"] === "string" && n["Relation Name"].startsWith("WorkflowExecutions"));
    expect(workflowScans.length).toBeGreaterThan(0);
    for (const scan of workflowScans) {
      expect(scan["Node Type"]).toMatch(/^Index (Only )?Scan$/);
      expect(runningIndexes.has(scan["Index Name"] as string)).toBe(true);
    }
    // The LIMIT sits over an ordered walk of the index (a merge of the partitions' walks): nothing sorts.
    expect(nodes.map((n) => n["Node Type"])).not.toContain("Sort");
    expect(nodes.map((n) => n["Node Type"])).not.toContain("Incremental Sort");
    expect(nodes.map((n) => n["Node Type"])).toContain("Limit");
  });
});
