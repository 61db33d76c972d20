import { randomUUID } from "node:crypto";
import { Kysely, PostgresDialect, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../../db/pool";
import type { Db } from "../../db/pool";
import type { Database } from "../../db/schema";
import { useTestDatabase } from "../../db/testing/test-database";
import { compile, validateDefinition } from "../../engine";
import { chain, edge, node, simple, workflow } from "../../engine/definition/test-fixtures";
import type { Json } from "../../engine/definition/test-fixtures";
import { EvaluationError, evaluateBatch } from "./evaluator";
import { LoopOutputCache } from "./loop-output-cache";
import type { EvaluatorDeps } from "./evaluator";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { driveWorkflows } from "../testing/drive-workflows";
import type { DrivenResult } from "../testing/drive-workflows";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { enqueueDecide } from "../store/decide-queues";
import { leaseTasks } from "../store/task-queues";
import { completeTaskFromWorker } from "../store/task-executions";
import { insertWorkflowExecution } from "../store/workflow-executions";

const t = useTestDatabase();
let scripts: QuickJsScriptEvaluator;
let namespaceId: string;

beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator();
  const ns = await t.db.insertInto("Namespaces").values({ name: `ns-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow();
  namespaceId = ns.id;
});
afterAll(async () => {
  await scripts?.close();
});

const deps = (): EvaluatorDeps => ({ db: t.db, scripts });

/** Registers the definition (graph + compiled blueprint) and starts a RUNNING execution with a decide queued. */
async function start(definition: Json, input: Json = {}): Promise<string> {
  const name = `wf_${randomUUID().slice(0, 8)}`;
  const valid = validateDefinition({ ...definition, name });
  if (!valid.ok) throw new Error(`invalid test definition: ${JSON.stringify(valid.problems)}`);
  const blueprint = compile(valid.definition);
  await t.db
    .insertInto("WorkflowDefinitions")
    .values({ namespaceId, name, version: 1, graph: JSON.stringify(valid.definition), blueprint: JSON.stringify(blueprint) })
    .execute();
  const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: name, defVersion: 1, status: "RUNNING", input });
  await enqueueDecide(t.db, { workflowId: wf.id, namespaceId, reason: "start" });
  return wf.id;
}

type Handler = (ref: string, input: Record<string, unknown>, attempt: number) => DrivenResult;

/** Evaluates and works the `queue` until nothing moves; returns the final workflow row. */
async function run(workflowId: string, handler: Handler, queue = "task") {
  await driveWorkflows({ db: t.db, evaluator: deps(), namespaceId, queue, rounds: 50, handler: (task) => handler(task.refName, task.input as Record<string, unknown>, task.attempt) });
  return t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", workflowId).executeTakeFirstOrThrow();
}

async function tasks(db: Db, workflowId: string) {
  return db
    .selectFrom("TaskExecutions")
    .selectAll()
    .where("workflowId", "=", workflowId)
    .orderBy("refName")
    .orderBy("iteration")
    .orderBy("attempt")
    .execute();
}

async function expectGapFreeEvents(workflowId: string): Promise<string[]> {
  const events = await t.db.selectFrom("WorkflowEvents").select(["seq", "type"]).where("workflowId", "=", workflowId).orderBy("seq").execute();
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  return events.map((e) => e.type);
}

async function expectInvariantsAfterEnd(workflowId: string): Promise<void> {
  const rows = await tasks(t.db, workflowId);
  for (const r of rows) {
    expect(r.endedAt, `${r.refName} ${r.status}`).not.toBeNull();
    expect(r.deciderSeenAt, `${r.refName} seen`).not.toBeNull();
  }
  const queued = await t.db.selectFrom("TaskQueues").select("taskId").where("workflowId", "=", workflowId).execute();
  expect(queued).toEqual([]);
  const pending = await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", workflowId).execute();
  expect(pending).toEqual([]);
}

describe("evaluateBatch", () => {
  it("a transaction of several chain steps inserts all their next tasks in one statement, each step's completion recorded before its next task", async () => {
    const definition = workflow([simple("a"), simple("b")], chain("a", "b"));
    const ids = [await start(definition), await start(definition), await start(definition)];
    await evaluateBatch(deps(), { limit: 10 });
    const leased = await leaseTasks(t.db, { queueName: "task", namespaceId, count: 10, leaseSeconds: 30, owner: "w" });
    expect(leased.map((l) => l.task.workflowId).sort()).toEqual([...ids].sort());
    for (const { task } of leased) {
      expect((await completeTaskFromWorker(t.db, { namespaceId, workflowId: task.workflowId, taskId: task.id, status: "COMPLETED", workerId: "w" })).ok).toBe(true);
    }

    const statements: string[] = [];
    const logged = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: createPool(t.url, { max: 2 }) }),
      log: (event) => {
        if (event.level === "query") statements.push(event.query.sql);
      },
    });
    try {
      expect(await evaluateBatch({ db: logged, scripts }, { limit: 10 })).toBe(3);
    } finally {
      await logged.destroy();
    }
    expect(statements.filter((text) => /insert into "TaskExecutions"/i.test(text))).toHaveLength(1);
    for (const id of ids) {
      expect((await tasks(t.db, id)).map((r) => [r.refName, r.status])).toEqual([
        ["a", "COMPLETED"],
        ["b", "SCHEDULED"],
      ]);
      const events = await t.db.selectFrom("WorkflowEvents").select(["type", "refName"]).where("workflowId", "=", id).orderBy("seq").execute();
      expect(events.map((e) => `${e.type}:${e.refName ?? ""}`)).toEqual(["TASK_SCHEDULED:a", "TASK_COMPLETED:a", "TASK_SCHEDULED:b"]);
    }
  });

  it("runs a 3-task SIMPLE chain to completion; the last output is the workflow output", async () => {
    const id = await start(workflow([simple("a"), simple("b", { input: { prev: "${a.output.n}" } }), simple("c", { input: { prev: "${b.output.n}" } })], chain("a", "b", "c")));
    const seen: Record<string, unknown> = {};
    const wf = await run(id, (ref, input) => {
      seen[ref] = input;
      return { status: "COMPLETED", output: { n: `${ref}-done` } };
    });
    expect(wf.status).toBe("COMPLETED");
    expect(wf.endedAt).not.toBeNull();
    expect(wf.output).toEqual({ n: "c-done" });
    expect(seen).toEqual({ a: {}, b: { prev: "a-done" }, c: { prev: "b-done" } });
    const rows = await tasks(t.db, id);
    expect(rows.map((r) => [r.refName, r.attempt, r.status])).toEqual([
      ["a", 0, "COMPLETED"],
      ["b", 0, "COMPLETED"],
      ["c", 0, "COMPLETED"],
    ]);
    await expectInvariantsAfterEnd(id);
    const types = await expectGapFreeEvents(id);
    expect(types.filter((x) => x === "TASK_SCHEDULED")).toHaveLength(3);
    expect(types.at(-1)).toBe("WORKFLOW_COMPLETED");
    expect(wf.version).toBeGreaterThanOrEqual(4);
  });

  it("a javascript SWITCH (real QuickJS) takes its case and skips the other branch with SKIPPED rows", async () => {
    const id = await start(
      workflow(
        [
          simple("a"),
          node("SWITCH", "s", { cases: ["x", "y"], evaluatorType: "javascript", expression: "$.v == 1 ? 'x' : 'y'", input: { v: "${a.output.kind}" } }),
          simple("x1"),
          simple("y1"),
        ],
        [edge("a", "s"), edge("s", "x1", "x"), edge("s", "y1", "y")],
      ),
    );
    const wf = await run(id, (ref) => ({ status: "COMPLETED", output: ref === "a" ? { kind: 1 } : { ran: ref } }));
    expect(wf.status).toBe("COMPLETED");
    const rows = await tasks(t.db, id);
    const byRef = Object.fromEntries(rows.map((r) => [r.refName, r]));
    expect(byRef.s!.status).toBe("COMPLETED");
    expect(byRef.s!.output).toEqual({ evaluationResult: ["x"] });
    expect(byRef.x1!.status).toBe("COMPLETED");
    expect(byRef.y1!.status).toBe("SKIPPED");
    expect(byRef.y1!.endedAt).not.toBeNull();
    await expectInvariantsAfterEnd(id);
    await expectGapFreeEvents(id);
  });

  it("a fork/join of two SIMPLE tasks joins both outputs", async () => {
    const id = await start(
      workflow(
        [simple("a"), simple("b"), simple("c"), node("JOIN", "j", { joinOn: ["b", "c"] }), simple("z", { input: { b: "${b.output.v}", c: "${c.output.v}" } })],
        [edge("a", "b"), edge("a", "c"), edge("b", "j"), edge("c", "j"), edge("j", "z")],
      ),
    );
    let zInput: unknown;
    const wf = await run(id, (ref, input) => {
      if (ref === "z") zInput = input;
      return { status: "COMPLETED", output: { v: ref } };
    });
    expect(wf.status).toBe("COMPLETED");
    expect(zInput).toEqual({ b: "b", c: "c" });
    const rows = await tasks(t.db, id);
    expect(rows.map((r) => [r.refName, r.status])).toEqual([
      ["a", "COMPLETED"],
      ["b", "COMPLETED"],
      ["c", "COMPLETED"],
      ["j", "COMPLETED"],
      ["z", "COMPLETED"],
    ]);
    await expectInvariantsAfterEnd(id);
    await expectGapFreeEvents(id);
  });

  it("a task failing with retryCount 2 leaves attempts 0, 1, 2 and then fails the workflow", async () => {
    const id = await start(workflow([simple("a", { policy: { retryCount: 2, retryDelaySeconds: 0 } })]));
    const attempts: number[] = [];
    const wf = await run(id, (_ref, _input, attempt) => {
      attempts.push(attempt);
      return { status: "FAILED", reason: `boom ${attempt}` };
    });
    expect(attempts).toEqual([0, 1, 2]);
    expect(wf.status).toBe("FAILED");
    expect(wf.endedAt).not.toBeNull();
    expect(wf.reasonForIncompletion).toContain("boom 2");
    const rows = await tasks(t.db, id);
    expect(rows.map((r) => [r.refName, r.attempt, r.status])).toEqual([
      ["a", 0, "FAILED"],
      ["a", 1, "FAILED"],
      ["a", 2, "FAILED"],
    ]);
    await expectInvariantsAfterEnd(id);
    const types = await expectGapFreeEvents(id);
    expect(types.at(-1)).toBe("WORKFLOW_FAILED");
  });

  it("a dynamic fork runs one instance per item and aggregates their outputs in the documented SQL", async () => {
    const id = await start(
      workflow(
        [node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "work", items: "${workflow.input.items}" }), simple("after", { input: { all: "${fan.output.results}" } })],
        chain("fan", "after"),
      ),
      { items: [1, 2, 3] },
    );
    let afterInput: unknown;
    for (let round = 0; round < 20; round++) {
      await run(id, (ref, input) => ({ status: "COMPLETED", output: { ref, input } }), "work");
      await run(id, (ref, input) => {
        afterInput = input;
        return { status: "COMPLETED", output: { ref } };
      });
      const wf = await t.db.selectFrom("WorkflowExecutions").select("status").where("id", "=", id).executeTakeFirstOrThrow();
      if (wf.status !== "RUNNING") break;
    }
    const wf = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(wf.status).toBe("COMPLETED");
    const rows = await tasks(t.db, id);
    expect(rows.map((r) => [r.refName, r.status])).toEqual([
      ["after", "COMPLETED"],
      ["fan", "COMPLETED"],
      ["fan#0", "COMPLETED"],
      ["fan#1", "COMPLETED"],
      ["fan#2", "COMPLETED"],
    ]);
    const fan = rows.find((r) => r.refName === "fan")!;
    expect((fan.output as { results: { ref: string }[] }).results.map((o) => o.ref)).toEqual(["fan#0", "fan#1", "fan#2"]);
    expect((afterInput as { all: unknown[] }).all).toHaveLength(3);
    await expectInvariantsAfterEnd(id);
    await expectGapFreeEvents(id);
  });

  it("a DO_WHILE runs its body once per iteration, each iteration a new task identity", async () => {
    const id = await start(
      workflow(
        [
          node("DO_WHILE", "loop", { loopCondition: '$["loop"].iteration < $.times', input: { times: 3 } }),
          simple("body", { parent: "loop", input: { i: "${loop.output.iteration}" } }),
          simple("after", { input: { last: "${body.output.n}" } }),
        ],
        chain("loop", "after"),
      ),
    );
    const wf = await run(id, (ref, input) => ({ status: "COMPLETED", output: { n: `${ref}@${String(input.i)}` } }));
    expect(wf.status).toBe("COMPLETED");
    const rows = await tasks(t.db, id);
    expect(rows.filter((r) => r.refName === "body").map((r) => [r.iteration, r.input])).toEqual([
      [1, { i: 1 }],
      [2, { i: 2 }],
      [3, { i: 3 }],
    ]);
    expect(rows.find((r) => r.refName === "after")?.input).toEqual({ last: "body@3" });
    await expectGapFreeEvents(id);
  });

  it("with a LoopOutputCache, the loop still records every iteration", async () => {
    const loopOutputs = new LoopOutputCache();
    const id = await start(
      workflow([
        node("DO_WHILE", "loop", { loopCondition: '$["loop"].iteration < 3' }),
        simple("a", { parent: "loop", input: { i: "${loop.output.iteration}" } }),
        simple("b", { parent: "loop" }),
      ]),
    );
    await driveWorkflows({
      db: t.db,
      evaluator: { ...deps(), loopOutputs },
      namespaceId,
      rounds: 50,
      handler: (task) => ({ status: "COMPLETED", output: { n: `${task.refName}@${task.iteration}` } }),
    });
    expect((await t.db.selectFrom("WorkflowExecutions").select("status").where("id", "=", id).executeTakeFirstOrThrow()).status).toBe("COMPLETED");
    const loop = (await tasks(t.db, id)).find((r) => r.refName === "loop")!;
    expect(loop.output).toEqual({
      iteration: 3,
      "1": { a: { n: "a@1" }, b: { n: "b@1" } },
      "2": { a: { n: "a@2" }, b: { n: "b@2" } },
      "3": { a: { n: "a@3" }, b: { n: "b@3" } },
    });
  });

  it("with a LoopOutputCache, a loop row changed outside the decider is read again, not served stale", async () => {
    const loopOutputs = new LoopOutputCache();
    const cached: EvaluatorDeps = { ...deps(), loopOutputs };
    const id = await start(workflow([node("DO_WHILE", "loop", { loopCondition: '$["loop"].iteration < 2' }), simple("a", { parent: "loop" })]));
    const work = async (): Promise<void> => {
      for (const { task } of await leaseTasks(t.db, { queueName: "task", namespaceId, count: 5, leaseSeconds: 30, owner: "w1" })) {
        const report = await completeTaskFromWorker(t.db, { namespaceId, workflowId: id, taskId: task.id, status: "COMPLETED", output: { n: task.iteration }, reason: null, workerId: "w1" });
        expect(report.ok).toBe(true);
      }
    };
    const evaluate = async (): Promise<void> => {
      await enqueueDecide(t.db, { workflowId: id, namespaceId, reason: "test" });
      await evaluateBatch(cached, { limit: 10 });
    };
    await evaluateBatch(cached, { limit: 10 }); // the loop and a@1
    await work();
    await evaluateBatch(cached, { limit: 10 }); // iteration 1 recorded; a@2 scheduled
    await evaluate(); // reads the loop row as it now is
    const before = loopOutputs.hits;
    await evaluate(); // the same version again
    expect(loopOutputs.hits).toBeGreaterThan(before);

    await sql`UPDATE "TaskExecutions" SET "output" = "output" || '{"note": "set by hand"}'::jsonb WHERE "workflowId" = ${id} AND "refName" = 'loop'`.execute(t.db);
    await evaluate();
    await work();
    await evaluateBatch(cached, { limit: 10 });
    const loop = (await tasks(t.db, id)).find((r) => r.refName === "loop")!;
    expect(loop.status).toBe("COMPLETED");
    expect(loop.output).toEqual({ iteration: 2, note: "set by hand", "1": { a: { n: 1 } }, "2": { a: { n: 2 } } });
  });

  it("a DYNAMIC task runs as the task its input names, and an EXCLUSIVE_JOIN passes on the branch that ran", async () => {
    const id = await start(
      workflow(
        [
          node("DYNAMIC", "pick", { input: { taskToExecute: "${workflow.input.which}" } }),
          node("SWITCH", "s", { cases: ["x", "y"], input: { switchCaseValue: "${pick.output.kind}" } }),
          simple("x1"),
          simple("y1"),
          node("EXCLUSIVE_JOIN", "ej", { joinOn: ["x1", "y1"] }),
        ],
        [edge("pick", "s"), edge("s", "x1", "x"), edge("s", "y1", "y"), edge("x1", "ej"), edge("y1", "ej")],
      ),
      { which: "task" },
    );
    const wf = await run(id, (ref) => ({ status: "COMPLETED", output: ref === "pick" ? { kind: "y" } : { from: ref } }));
    expect(wf.status).toBe("COMPLETED");
    const rows = await tasks(t.db, id);
    expect(rows.find((r) => r.refName === "pick")).toMatchObject({ taskDefName: "task", status: "COMPLETED" });
    expect(rows.find((r) => r.refName === "x1")?.status).toBe("SKIPPED");
    expect(rows.find((r) => r.refName === "ej")).toMatchObject({ status: "COMPLETED", output: { from: "y1" } });
    await expectGapFreeEvents(id);
  });

  it("is idempotent: a re-enqueued decide schedules nothing new", async () => {
    const id = await start(workflow([simple("a"), simple("b")], chain("a", "b")));
    expect(await evaluateBatch(deps(), { limit: 10 })).toBeGreaterThanOrEqual(1);
    const before = await tasks(t.db, id);
    expect(before.map((r) => r.refName)).toEqual(["a"]);
    const queued = await t.db.selectFrom("TaskQueues").select("taskId").where("workflowId", "=", id).execute();
    expect(queued).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      await enqueueDecide(t.db, { workflowId: id, namespaceId, reason: "again" });
      expect(await evaluateBatch(deps(), { limit: 10 })).toBe(1);
    }
    expect(await tasks(t.db, id)).toHaveLength(1);
    expect(await t.db.selectFrom("TaskQueues").select("taskId").where("workflowId", "=", id).execute()).toHaveLength(1);
    expect((await expectGapFreeEvents(id)).filter((type) => type === "TASK_SCHEDULED")).toHaveLength(1);
    // Finish it so the queue is clean for the other tests.
    const wf = await run(id, () => ({ status: "COMPLETED" }));
    expect(wf.status).toBe("COMPLETED");
  });

  it("a completion committing after the claim leaves a pending decide that the next batch processes", async () => {
    const id = await start(workflow([simple("a"), simple("b")], chain("a", "b")));
    await evaluateBatch(deps(), { limit: 10 });
    const [leased] = await leaseTasks(t.db, { queueName: "task", namespaceId, count: 1, leaseSeconds: 30, owner: "w1" });
    expect(leased?.task.refName).toBe("a");
    await enqueueDecide(t.db, { workflowId: id, namespaceId, reason: "poke" });

    // A decider claims (and holds) the evaluation; the worker's completion commits while it is in flight.
    let completion: Promise<unknown> | undefined;
    let startedDuringEvaluation = false;
    const racing: EvaluatorDeps = {
      db: t.db,
      scripts,
      now: () => {
        // Called after the claim and the state reads, before decide: the completion starts now, on another
        // connection. It ends the task and deletes its queue row at once (the decider locks neither), and its
        // enqueueDecide then waits on the claim row the decider deleted but has not committed (invariant 3).
        startedDuringEvaluation = true;
        completion ??= completeTaskFromWorker(t.db, { namespaceId, workflowId: id, taskId: leased!.task.id, status: "COMPLETED", output: { late: true }, workerId: "w1" });
        return Date.now();
      },
    };
    // Once the evaluation commits, the completion's enqueue inserts a fresh DecideQueues row and commits:
    // the evaluation that could not see the completion leaves a pending decide behind.
    expect(await evaluateBatch(racing, { limit: 1 })).toBe(1);
    expect(startedDuringEvaluation).toBe(true);
    expect(await completion).toMatchObject({ ok: true });
    expect(await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", id).execute()).toHaveLength(1);
    // The evaluation that missed it did not schedule b; the next one does.
    expect((await tasks(t.db, id)).map((r) => r.refName)).toEqual(["a"]);
    expect(await evaluateBatch(deps(), { limit: 10 })).toBe(1);
    expect((await tasks(t.db, id)).map((r) => r.refName)).toEqual(["a", "b"]);
    const wf = await run(id, () => ({ status: "COMPLETED" }));
    expect(wf.status).toBe("COMPLETED");
    await expectGapFreeEvents(id);
  });

  it("a worker's second report of the same task is refused, and one for a task it does not hold", async () => {
    const id = await start(workflow([simple("a")]));
    await evaluateBatch(deps(), { limit: 10 });
    const [leased] = await leaseTasks(t.db, { queueName: "task", namespaceId, count: 1, leaseSeconds: 30, owner: "w1" });
    const taskId = leased!.task.id;
    expect(await completeTaskFromWorker(t.db, { namespaceId, workflowId: id, taskId, status: "COMPLETED", workerId: "w2" })).toMatchObject({ ok: false, error: "not_held" });
    expect(await completeTaskFromWorker(t.db, { namespaceId, workflowId: id, taskId, status: "COMPLETED", workerId: "w1" })).toMatchObject({ ok: true });
    expect(await completeTaskFromWorker(t.db, { namespaceId, workflowId: id, taskId, status: "FAILED", workerId: "w1" })).toMatchObject({ ok: false, error: "not_in_progress", status: "COMPLETED" });
    expect(await completeTaskFromWorker(t.db, { namespaceId, workflowId: id, taskId: randomUUID(), status: "COMPLETED" })).toMatchObject({ ok: false, error: "not_found" });
    const wf = await run(id, () => ({ status: "COMPLETED" }));
    expect(wf.status).toBe("COMPLETED");
  });

  it("evaluates several waiting workflows in one transaction, each from its own state", async () => {
    // Drain what earlier tests left, so the claim below takes exactly these.
    await t.db.deleteFrom("DecideQueues").execute();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await start(workflow([simple(`a${i}`), simple(`b${i}`)], chain(`a${i}`, `b${i}`))));
    expect(await evaluateBatch(deps(), { limit: 10 })).toBe(5);
    const scheduled = await t.db
      .selectFrom("TaskExecutions")
      .select(["workflowId", "refName", sql<string>`xmin::text`.as("xid")])
      .where("workflowId", "in", ids)
      .execute();
    // Each its own first task, and nothing else…
    expect(new Map(scheduled.map((r) => [r.workflowId, r.refName]))).toEqual(new Map(ids.map((id, i) => [id, `a${i}`])));
    expect(scheduled).toHaveLength(5);
    // …written by one transaction.
    expect(new Set(scheduled.map((r) => r.xid)).size).toBe(1);
    for (const id of ids) expect((await run(id, () => ({ status: "COMPLETED" }))).status).toBe("COMPLETED");
  });

  it("a workflow whose evaluation throws is re-queued behind the others, not retried at the head forever", async () => {
    // Poison: its definition does not exist, so every evaluation of it throws.
    const poison = await insertWorkflowExecution(t.db, { namespaceId, defName: "missing_definition", defVersion: 1, status: "RUNNING" });
    await enqueueDecide(t.db, { workflowId: poison.id, namespaceId, reason: "start" });
    const good = await start(workflow([simple("a")]));

    await expect(evaluateBatch(deps(), { limit: 10 })).rejects.toBeInstanceOf(EvaluationError);
    const requeued = await t.db.selectFrom("DecideQueues").selectAll().where("workflowId", "=", poison.id).executeTakeFirstOrThrow();
    expect(requeued.reason).toMatch(/^evaluation failed: .*missing_definition/);
    // The next batch reaches the good workflow first, then meets the poison again.
    await expect(evaluateBatch(deps(), { limit: 10 })).rejects.toThrow(/missing_definition/);
    expect((await tasks(t.db, good)).map((r) => r.refName)).toEqual(["a"]);
    expect(await t.db.selectFrom("TaskExecutions").select("id").where("workflowId", "=", poison.id).execute()).toEqual([]);

    await t.db.deleteFrom("DecideQueues").where("workflowId", "=", poison.id).execute();
    const wf = await run(good, () => ({ status: "COMPLETED" }));
    expect(wf.status).toBe("COMPLETED");
  });

  it("a transaction of several workflows whose last writes fail goes on one per transaction, and names the workflow they failed for", async () => {
    await t.db.deleteFrom("DecideQueues").execute();
    // The last writes (every workflow's scheduled tasks in one insert) fail for one workflow's task only.
    await sql`CREATE FUNCTION "refuse_poison_write"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW."refName" = 'poison_write' THEN RAISE EXCEPTION 'poisoned write'; END IF; RETURN NEW; END; $$`.execute(t.db);
    await sql`CREATE TRIGGER "refuse_poison_write" BEFORE INSERT ON "TaskExecutions" FOR EACH ROW EXECUTE FUNCTION "refuse_poison_write"()`.execute(t.db);
    try {
      const good = [await start(workflow([simple("g0")])), await start(workflow([simple("g1")]))];
      const poison = await start(workflow([simple("poison_write")]));
      const failure = await evaluateBatch(deps(), { limit: 10 }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(EvaluationError);
      expect((failure as EvaluationError).workflowId).toBe(poison);
      expect((failure as EvaluationError).message).toMatch(/poisoned write/);
      // The others were evaluated, one per transaction.
      for (const id of good) expect((await tasks(t.db, id)).map((r) => r.status)).toEqual(["SCHEDULED"]);
      expect(await tasks(t.db, poison)).toEqual([]);
      expect((await t.db.selectFrom("DecideQueues").select("workflowId").execute()).map((r) => r.workflowId)).toEqual([poison]);
    } finally {
      await sql`DROP TRIGGER "refuse_poison_write" ON "TaskExecutions"`.execute(t.db);
      await sql`DROP FUNCTION "refuse_poison_write"()`.execute(t.db);
      await t.db.deleteFrom("DecideQueues").execute();
    }
  });
});
