import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { planWithoutSeqScans } from "../../db/testing/scan-observation";
import { useTestDatabase } from "../../db/testing/test-database";
import pg from "pg";
import { TASKS_CHANNEL, enqueueTask, leaseTasks } from "./task-queues";
import { finishEvaluations } from "./workflow-events";
import { insertWorkflowExecution } from "./workflow-executions";
import {
  EvaluationReads,
  TaskReportRefusedError,
  completeTaskFromWorker,
  frontierStatement,
  frontiersStatement,
  insertAndEnqueueTasks,
  insertAndEnqueueTasksStatement,
  insertTasks,
  loadFrontier,
  loadFrontiers,
  loadLatestByRefs,
  loadLatestByRefsOf,
  transitionTask,
} from "./task-executions";

const t = useTestDatabase();
let namespaceId: string;

beforeAll(async () => {
  const ns = await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  namespaceId = ns.id;
});

const ended = new Date("2026-01-01T00:00:00Z");

function row(workflowId: string, refName: string, extra: Record<string, unknown> = {}) {
  return { workflowId, namespaceId, refName, iteration: 0, attempt: 0, taskType: "SIMPLE", taskDefName: "t", queueName: null, ...extra };
}

describe("insertTasks", () => {
  it("returns only the rows it inserted (ON CONFLICT DO NOTHING on the identity)", async () => {
    const wf = randomUUID();
    const first = await insertTasks(t.db, [row(wf, "a"), row(wf, "b")]);
    expect(first.map((r) => r.refName).sort()).toEqual(["a", "b"]);
    const second = await insertTasks(t.db, [row(wf, "a"), row(wf, "a", { attempt: 1 }), row(wf, "c", { input: { s: "x\u0000y" } })]);
    expect(second.map((r) => [r.refName, r.attempt]).sort()).toEqual([
      ["a", 1],
      ["c", 0],
    ]);
    expect(second.find((r) => r.refName === "c")!.input).toEqual({ s: "xy" });
  });

  it("refuses a terminal row without endedAt", async () => {
    await expect(insertTasks(t.db, [row(randomUUID(), "a", { status: "SKIPPED" })])).rejects.toThrow(/endedAt/);
  });
});

describe("insertAndEnqueueTasks", () => {
  it("inserts a fork's tasks and queues each one it inserted, in one statement; a repeat queues nothing twice", async () => {
    const wf = randomUUID();
    const queueName = `fork_${randomUUID().slice(0, 8)}`;
    const later = new Date(Date.now() + 3_600_000);
    const fork = [
      ...Array.from({ length: 3 }, (_, i) => ({ ...row(wf, `f${i}`, { queueName }), enqueue: { priority: i } })),
      { ...row(wf, "delayed", { queueName }), enqueue: { priority: 0, visibleAt: later } },
      row(wf, "noop", { taskType: "NOOP", status: "COMPLETED", endedAt: ended }),
    ];
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (n) => heard.push(n.payload ?? ""));
    await listener.query(`LISTEN ${TASKS_CHANNEL}`);
    const created = await insertAndEnqueueTasks(t.db, fork);
    expect(created.map((r) => r.refName).sort()).toEqual(["delayed", "f0", "f1", "f2", "noop"]);
    // Without the payloads the caller sent (a fork's instances can each carry a large input).
    for (const r of created) expect(Object.keys(r).filter((k) => k === "input" || k === "output")).toEqual([]);
    const unqueued = await insertAndEnqueueTasks(t.db, [row(wf, "noop2", { taskType: "NOOP", status: "COMPLETED", endedAt: ended })]);
    expect(unqueued.map((r) => [r.refName, "input" in r, "output" in r])).toEqual([["noop2", false, false]]);
    // Parked pollers of the queue are told once; a queue whose only new row is
    // not due yet is not (its pollers' re-check finds it when it is).
    await insertAndEnqueueTasks(t.db, [{ ...row(randomUUID(), "only_later", { queueName: `${queueName}_later` }), enqueue: { priority: 0, visibleAt: later } }]);
    await listener.query("SELECT 1");
    await listener.end();
    expect(heard).toEqual([`${namespaceId}:${queueName}`]);
    const queued = async () =>
      t.db.selectFrom("TaskQueues").select(["taskId", "priority", "visibleAt", "taskType"]).where("workflowId", "=", wf).execute();
    const byTask = new Map(created.map((r) => [r.id, r.refName]));
    const rows = await queued();
    expect(rows.map((q) => [byTask.get(q.taskId), q.priority, q.taskType]).sort()).toEqual([
      ["delayed", 0, "SIMPLE"],
      ["f0", 0, "SIMPLE"],
      ["f1", 1, "SIMPLE"],
      ["f2", 2, "SIMPLE"],
    ]);
    expect(rows.find((q) => byTask.get(q.taskId) === "delayed")?.visibleAt.getTime()).toBe(later.getTime());

    // Invariant 5: the same identities again insert nothing and queue nothing.
    expect(await insertAndEnqueueTasks(t.db, fork)).toEqual([]);
    expect(await queued()).toHaveLength(4);
    // The leases see the due ones only.
    const leased = await leaseTasks(t.db, { namespaceId, queueName, count: 10, owner: "w", leaseSeconds: 30 });
    expect(leased.map((l) => l.task.refName).sort()).toEqual(["f0", "f1", "f2"]);
  });

  it("refuses a task to queue without a queue name, before writing anything", async () => {
    const wf = randomUUID();
    await expect(insertAndEnqueueTasks(t.db, [{ ...row(wf, "x"), enqueue: { priority: 0 } }])).rejects.toThrow(/no queueName/);
    expect(await loadFrontier(t.db, wf)).toEqual([]);
  });
});

describe("loadFrontier / loadLatestByRefs", () => {
  it("loads non-terminal rows and unseen terminal rows, not seen ones; a running fork's input is elided", async () => {
    const wf = randomUUID();
    await insertTasks(t.db, [
      row(wf, "running", { status: "IN_PROGRESS" }),
      row(wf, "unseen", { status: "COMPLETED", endedAt: ended }),
      row(wf, "seen", { status: "COMPLETED", endedAt: ended, deciderSeenAt: ended }),
      row(wf, "fan", { taskType: "FORK_JOIN_DYNAMIC", status: "IN_PROGRESS", input: { forkedTasks: ["x", "y"] }, output: { total: 2, completed: 0 } }),
    ]);
    const frontier = await loadFrontier(t.db, wf);
    expect(frontier.map((r) => r.refName).sort()).toEqual(["fan", "running", "unseen"]);
    const fan = frontier.find((r) => r.refName === "fan")!;
    expect(fan.input).toEqual({});
    expect(fan.output).toEqual({ total: 2, completed: 0 });
    expect(await loadFrontier(t.db, randomUUID())).toEqual([]);
  });

  it("the frontier query is one scan of the pending index", async () => {
    const plan = await planWithoutSeqScans(t.db, frontierStatement(randomUUID()));
    // Partition indexes are named after their columns: the partial one is "…_workflowId_idx".
    expect(plan.match(/Index Scan using "TaskExecutions_p\d+_workflowId_idx"/g)).toHaveLength(1);
    expect(plan).not.toMatch(/Seq Scan|pkey/);
  });

  it("the several-workflow frontier read probes one partition per workflow, even under a generic plan made on small partitions", async () => {
    // The shape every pool connection runs (db/pool.ts: force_generic_plan),
    // planned on this test database's near-empty partitions — where a
    // flattened join chose a hash join reading every partition whole.
    const ids = [randomUUID(), randomUUID()];
    await insertTasks(t.db, ids.map((wf) => row(wf, "a", { status: "IN_PROGRESS" })));
    const compiled = frontiersStatement(ids).compile(t.db);
    const plan = await t.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(trx);
      await sql`PREPARE nf_frontiers_plan AS ${sql.raw(compiled.sql)}`.execute(trx);
      // EXECUTE's arguments cannot be bind parameters: array literals (of uuids, safe to inline).
      const args = compiled.parameters.map((p) => `'{${(p as string[]).join(",")}}'`).join(", ");
      const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE nf_frontiers_plan(${sql.raw(args)})`.execute(trx);
      await sql`DEALLOCATE nf_frontiers_plan`.execute(trx);
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
    expect(plan).not.toMatch(/Hash Join/);
    // Partitions the run-time pruning skipped show as "never executed"; the others were read.
    const read = plan.split("\n").filter((line) => /on "TaskExecutions_p\d+"/.test(line) && !line.includes("never executed"));
    expect(read.length).toBeGreaterThan(0);
    expect(read.length).toBeLessThanOrEqual(ids.length);
  });

  it("loads each ref's latest row by iteration, then attempt; refs without rows are absent", async () => {
    const wf = randomUUID();
    await insertTasks(t.db, [
      row(wf, "a", { iteration: 1, attempt: 0 }),
      row(wf, "a", { iteration: 2, attempt: 0 }),
      row(wf, "a", { iteration: 2, attempt: 1 }),
      row(wf, "a", { iteration: 1, attempt: 5 }),
      row(wf, "b"),
      row(randomUUID(), "b", { attempt: 9 }),
    ]);
    const latest = await loadLatestByRefs(t.db, wf, ["a", "b", "missing"]);
    expect(latest.map((r) => [r.refName, r.iteration, r.attempt]).sort()).toEqual([
      ["a", 2, 1],
      ["b", 0, 0],
    ]);
    expect(await loadLatestByRefs(t.db, wf, [])).toEqual([]);
  });

  it("loads several workflows' frontiers and latest rows in one statement each, by workflow", async () => {
    const [one, two, none] = [randomUUID(), randomUUID(), randomUUID()];
    await insertTasks(t.db, [
      row(one, "a", { status: "IN_PROGRESS" }),
      row(one, "b", { status: "COMPLETED", endedAt: ended, deciderSeenAt: ended }),
      row(two, "a", { status: "COMPLETED", endedAt: ended }),
      row(two, "a", { attempt: 1, status: "COMPLETED", endedAt: ended, deciderSeenAt: ended }),
    ]);
    const frontiers = await loadFrontiers(t.db, [one, two, none]);
    const refs = (rows: readonly { refName: string; attempt: number }[] | undefined) => rows?.map((r) => `${r.refName}.${r.attempt}`).sort();
    expect(refs(frontiers.get(one))).toEqual(["a.0"]);
    expect(refs(frontiers.get(two))).toEqual(["a.0"]);
    expect(frontiers.get(none)).toEqual([]);
    const latest = await loadLatestByRefsOf(t.db, [
      { workflowId: one, refs: ["a", "b"] },
      { workflowId: two, refs: ["a", "missing"] },
      { workflowId: none, refs: [] },
    ]);
    expect(refs(latest.get(one))).toEqual(["a.0", "b.0"]);
    expect(refs(latest.get(two))).toEqual(["a.1"]);
    expect(latest.get(none)).toEqual([]);
    expect(await loadFrontiers(t.db, [])).toEqual(new Map());
  });
});

describe("EvaluationReads", () => {
  it("a row already read in the same version comes back with the payloads in hand, not read again; a changed row is read whole", async () => {
    const wf = randomUUID();
    const big = { text: "x".repeat(5000) };
    const [a] = await insertTasks(t.db, [row(wf, "a", { status: "COMPLETED", endedAt: ended, input: big, output: { n: 1 } }), row(wf, "b", { input: { k: 2 } })]);
    const reads = new EvaluationReads();
    const frontier = (await loadFrontiers(t.db, [wf], reads)).get(wf)!;
    const inFrontier = frontier.find((r) => r.refName === "a")!;
    expect(inFrontier.input).toEqual(big);
    const latest = (await loadLatestByRefsOf(t.db, [{ workflowId: wf, refs: ["a", "b"] }], reads)).get(wf)!;
    const again = latest.find((r) => r.refName === "a")!;
    // The same objects: Postgres left them out (NULL) and the copy in hand filled them in.
    expect(again.input).toBe(inFrontier.input);
    expect(again.output).toBe(inFrontier.output);
    expect(again).toEqual(inFrontier);
    expect(Object.keys(again)).not.toContain("rowVersion");

    // Changed since: a new version, read whole.
    await sql`UPDATE "TaskExecutions" SET "output" = '{"n": 2}' WHERE "workflowId" = ${wf} AND "id" = ${a!.id}`.execute(t.db);
    const changed = (await loadLatestByRefsOf(t.db, [{ workflowId: wf, refs: ["a"] }], reads)).get(wf)![0]!;
    expect(changed.output).toEqual({ n: 2 });
    expect(changed.input).toEqual(big);
    expect(changed.input).not.toBe(inFrontier.input);
  });
});

describe("transitionTask / the seen watermark", () => {
  it("compare-and-sets on status, by id or by identity", async () => {
    const wf = randomUUID();
    const [a] = await insertTasks(t.db, [row(wf, "a", { status: "SCHEDULED" })]);
    const now = new Date();
    expect(await transitionTask(t.db, { workflowId: wf, taskId: a!.id, from: "IN_PROGRESS" }, { status: "CANCELED", endedAt: now, updatedAt: now })).toBeUndefined();
    const started = await transitionTask(t.db, { workflowId: wf, key: { ref: "a", iteration: 0, attempt: 0 }, from: "SCHEDULED" }, { status: "IN_PROGRESS", startedAt: now, updatedAt: now });
    expect(started?.status).toBe("IN_PROGRESS");
    await expect(transitionTask(t.db, { workflowId: wf, taskId: a!.id, from: "IN_PROGRESS" }, { status: "FAILED", updatedAt: now })).rejects.toThrow(/endedAt/);
  });

  it("finishEvaluations stamps only unseen terminal rows, and only once", async () => {
    const wf = randomUUID();
    const rows = await insertTasks(t.db, [row(wf, "a", { status: "COMPLETED", endedAt: ended }), row(wf, "b", { status: "IN_PROGRESS" })]);
    const ids = rows.map((r) => r.id);
    const seenAt = async () =>
      (await t.db.selectFrom("TaskExecutions").select(["refName", "deciderSeenAt"]).where("workflowId", "=", wf).orderBy("refName").execute()).map((r) => [
        r.refName,
        r.deciderSeenAt?.getTime() ?? null,
      ]);
    const first = new Date("2026-01-01T00:00:00Z");
    await t.db.transaction().execute((trx) => finishEvaluations(trx, [{ locked: { id: wf, namespaceId }, seenTaskIds: ids, events: [], at: first }]));
    expect(await seenAt()).toEqual([["a", first.getTime()], ["b", null]]);
    await t.db.transaction().execute((trx) => finishEvaluations(trx, [{ locked: { id: wf, namespaceId }, seenTaskIds: ids, events: [], at: new Date() }]));
    expect(await seenAt()).toEqual([["a", first.getTime()], ["b", null]]);
  });

  it("finishEvaluations writes several workflows in one call: each its own seen marks, version and events numbered on from its own history", async () => {
    const execution = () => insertWorkflowExecution(t.db, { namespaceId, defName: "finish", defVersion: 1 }).then((r) => r.id);
    const [one, two, three, bystander] = [await execution(), await execution(), await execution(), await execution()];
    const [a] = await insertTasks(t.db, [row(one, "a", { status: "COMPLETED", endedAt: ended })]);
    const [b] = await insertTasks(t.db, [row(two, "b", { status: "FAILED", endedAt: ended })]);
    await t.db.insertInto("WorkflowEvents").values({ workflowId: one, seq: 1, at: ended, namespaceId, type: "WORKFLOW_STARTED", data: "{}" }).execute();
    const inboxRow = (workflowId: string, status: "PENDING" | "COMPLETED") => ({ namespaceId, workflowId, taskId: randomUUID(), refName: "r", title: "t", status });
    await t.db.insertInto("HumanTasks").values([inboxRow(one, "PENDING"), inboxRow(three, "PENDING"), inboxRow(three, "COMPLETED")]).execute();
    const at = new Date("2026-02-01T00:00:00Z");
    await t.db.transaction().execute((trx) =>
      finishEvaluations(trx, [
        { locked: { id: one, namespaceId }, seenTaskIds: [a!.id], events: [{ type: "TASK_COMPLETED", refName: "a", taskId: a!.id, status: "COMPLETED" }, { type: "WORKFLOW_COMPLETED", status: "COMPLETED", data: { n: "\u0000x" } }], at },
        // Another workflow's task id among the seen marks is not stamped: each statement is its own workflow's.
        { locked: { id: two, namespaceId }, seenTaskIds: [b!.id, a!.id], events: [{ type: "TASK_FAILED", refName: "b", taskId: b!.id, status: "FAILED" }], at },
        // Nothing to mark, and the evaluation ended the run: its terminal columns go with the bump, its open inbox rows are canceled.
        {
          locked: { id: three, namespaceId },
          seenTaskIds: [],
          events: [{ type: "TASK_SCHEDULED", refName: "c" }, { type: "TASK_SCHEDULED", refName: "d" }],
          at,
          ending: { status: "FAILED", output: { why: "x\u0000y" }, outputRef: null, reasonForIncompletion: "stopped", failedTaskRef: "c" },
        },
      ]),
    );
    const versions = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "in", [one, two, three, bystander]).execute();
    expect(Object.fromEntries(versions.map((r) => [r.id, Number(r.version)]))).toEqual({ [one]: 1, [two]: 1, [three]: 1, [bystander]: 0 });
    const byId = new Map(versions.map((r) => [r.id, r]));
    expect(byId.get(three)).toMatchObject({ status: "FAILED", output: { why: "xy" }, outputRef: null, endedAt: at, reasonForIncompletion: "stopped", failedTaskRef: "c" });
    expect(byId.get(one)).toMatchObject({ status: "RUNNING", output: {}, endedAt: null, reasonForIncompletion: null, failedTaskRef: null });
    const inbox = await t.db.selectFrom("HumanTasks").select(["workflowId", "status"]).where("workflowId", "in", [one, three]).orderBy("workflowId").execute();
    expect(inbox.map((r) => [r.workflowId, r.status]).sort()).toEqual([[one, "PENDING"], [three, "CANCELED"], [three, "COMPLETED"]].sort());
    const scheduled = await t.db.selectFrom("WorkflowEvents").select(["seq", "refName"]).where("workflowId", "=", three).orderBy("seq").execute();
    expect(scheduled.map((e) => [e.seq, e.refName])).toEqual([[1, "c"], [2, "d"]]);
    const events = await t.db.selectFrom("WorkflowEvents").select(["workflowId", "seq", "type", "data"]).where("workflowId", "in", [one, two]).orderBy("workflowId").orderBy("seq").execute();
    expect(events.filter((e) => e.workflowId === one).map((e) => [e.seq, e.type])).toEqual([[1, "WORKFLOW_STARTED"], [2, "TASK_COMPLETED"], [3, "WORKFLOW_COMPLETED"]]);
    expect(events.filter((e) => e.workflowId === two).map((e) => [e.seq, e.type])).toEqual([[1, "TASK_FAILED"]]);
    // Through json(): the NUL is stripped (invariant 9).
    expect(events.find((e) => e.type === "WORKFLOW_COMPLETED")?.data).toEqual({ n: "x" });
    const seen = await t.db.selectFrom("TaskExecutions").select(["workflowId", "deciderSeenAt"]).where("workflowId", "in", [one, two]).execute();
    expect(seen.map((r) => r.deciderSeenAt?.getTime())).toEqual([at.getTime(), at.getTime()]);
  });
  it("finishEvaluations led by the tasks' insert, unanswered: a TASK_SCHEDULED is kept only for a row it inserted, the rest numbered with no gap", async () => {
    const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: "finish", defVersion: 1 }).then((r) => r.id);
    // "a" is there already (an earlier evaluation's): inserting it again is absorbed (invariant 5), under a new id.
    const [earlier] = await insertTasks(t.db, [row(wf, "a", { queueName: "q-finish" })]);
    const ids = { a: randomUUID(), b: randomUUID() };
    const scheduled = (ref: "a" | "b") => ({ type: "TASK_SCHEDULED", refName: ref, taskId: ids[ref], status: "SCHEDULED", ifInserted: true });
    await t.db.transaction().execute((trx) =>
      finishEvaluations(
        trx,
        [{ locked: { id: wf, namespaceId }, seenTaskIds: [], events: [scheduled("a"), { type: "MARK" }, scheduled("b"), { type: "LAST" }], at: new Date() }],
        {
          commit: true,
          before: insertAndEnqueueTasksStatement(trx, [
            { ...row(wf, "a", { queueName: "q-finish" }), id: ids.a, enqueue: { priority: 0 } },
            { ...row(wf, "b", { queueName: "q-finish" }), id: ids.b, enqueue: { priority: 0 } },
          ]),
        },
      ),
    );
    const stored = await t.db.selectFrom("TaskExecutions").select(["refName", "id"]).where("workflowId", "=", wf).orderBy("refName").execute();
    expect(stored).toEqual([{ refName: "a", id: earlier!.id }, { refName: "b", id: ids.b }]);
    const queued = await t.db.selectFrom("TaskQueues").select("taskId").where("queueName", "=", "q-finish").where("workflowId", "=", wf).execute();
    expect(queued).toEqual([{ taskId: ids.b }]);
    const events = await t.db.selectFrom("WorkflowEvents").select(["seq", "type", "taskId"]).where("workflowId", "=", wf).orderBy("seq").execute();
    expect(events).toEqual([
      { seq: 1, type: "MARK", taskId: null },
      { seq: 2, type: "TASK_SCHEDULED", taskId: ids.b },
      { seq: 3, type: "LAST", taskId: null },
    ]);
  });
});

describe("completeTaskFromWorker", () => {
  it("ends the task, deletes its queue row and enqueues a decide, in one transaction", async () => {
    const wf = randomUUID();
    const [task] = await insertTasks(t.db, [row(wf, "a", { queueName: "q-report" })]);
    await enqueueTask(t.db, { queueName: "q-report", taskId: task!.id, workflowId: wf, namespaceId, taskType: "SIMPLE", priority: 0 });
    const [leased] = await leaseTasks(t.db, { queueName: "q-report", namespaceId, count: 1, leaseSeconds: 30, owner: "w" });
    expect(leased?.task.id).toBe(task!.id);

    const result = await completeTaskFromWorker(t.db, { namespaceId, workflowId: wf, taskId: task!.id, status: "COMPLETED", output: { ok: 1 }, workerId: "w" });
    expect(result.ok).toBe(true);
    const stored = await t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", wf).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ status: "COMPLETED", output: { ok: 1 }, deciderSeenAt: null });
    expect(stored.endedAt).not.toBeNull();
    expect(await t.db.selectFrom("TaskQueues").select("id").where("queueName", "=", "q-report").where("taskId", "=", task!.id).execute()).toEqual([]);
    expect(await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", wf).execute()).toHaveLength(1);
  });

  it("a refused report changes nothing: the queue row stays, no decide is enqueued", async () => {
    const wf = randomUUID();
    const [task] = await insertTasks(t.db, [row(wf, "a", { queueName: "q-refuse" })]);
    await enqueueTask(t.db, { queueName: "q-refuse", taskId: task!.id, workflowId: wf, namespaceId, taskType: "SIMPLE", priority: 0 });
    // Still SCHEDULED (never leased): not in progress.
    expect(await completeTaskFromWorker(t.db, { namespaceId, workflowId: wf, taskId: task!.id, status: "COMPLETED" })).toMatchObject({ ok: false, error: "not_in_progress", status: "SCHEDULED" });
    expect(await t.db.selectFrom("TaskQueues").select("id").where("queueName", "=", "q-refuse").where("taskId", "=", task!.id).execute()).toHaveLength(1);
    expect(await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", wf).execute()).toEqual([]);
    // Another namespace cannot see it.
    expect(await completeTaskFromWorker(t.db, { namespaceId: randomUUID(), workflowId: wf, taskId: task!.id, status: "COMPLETED" })).toMatchObject({ ok: false, error: "not_found" });
    // Inside a caller's transaction the refusal throws, so the caller's transaction rolls back.
    await expect(
      t.db.transaction().execute((trx) => completeTaskFromWorker(trx, { namespaceId, workflowId: wf, taskId: task!.id, status: "COMPLETED" })),
    ).rejects.toBeInstanceOf(TaskReportRefusedError);
    expect(await t.db.selectFrom("TaskQueues").select("id").where("queueName", "=", "q-refuse").where("taskId", "=", task!.id).execute()).toHaveLength(1);
  });
});
