import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../db/pool";
import { createDb } from "../../db/pool";
import type { TaskExecutionRow } from "../../db/schema";
import { useTestDatabase } from "../../db/testing/test-database";
import { chain, edge, node, simple, workflow } from "../../engine/definition/test-fixtures";
import { FilesystemBlobStore } from "../lib/blob-store";
import { Notifier, SYSTEM_TASKS_CHANNEL, SYSTEM_TASKS_WAKE_KEY, TASKS_CHANNEL, taskAvailableKey } from "../lib/notifier";
import { startInTestWorker } from "../testing/in-test-worker";
import type { InTestWorker, TaskHandler } from "../testing/in-test-worker";
import { historyProblems, registerDefinition, startRuns, waitForWorkflowsToEnd } from "../testing/runtime-fixtures";
import { startSidecar } from "../testing/sidecar-process";
import type { SidecarProcess } from "../testing/sidecar-process";
import { waitUntil } from "../testing/wait-until";

/**
 * The whole loop, end to end: executions started the way the API starts them,
 * evaluated by the decider in a real sidecar process (server/sidecar/main.ts,
 * default roles), their tasks worked by an in-test worker that long-polls and
 * reports through the store like a remote worker will. Nothing is called
 * in-process that the sidecar should be doing.
 */

const t = useTestDatabase();
let namespaceId: string;
let dataDir: string;
let blobs: FilesystemBlobStore;
let workerDb: Db;
let notifier: Notifier;
let sidecar: SidecarProcess;

beforeAll(async () => {
  namespaceId = (await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow()).id;
  dataDir = await mkdtemp(path.join(tmpdir(), "nf-runtime-"));
  blobs = new FilesystemBlobStore({ root: path.join(dataDir, "blobs") });
  workerDb = createDb(t.url, { max: 8, applicationName: "in-test-worker" });
  notifier = new Notifier({ connectionString: t.url, applicationName: "in-test-worker-notifier" });
  await notifier.start();
  sidecar = startSidecar({ databaseUrl: t.url, dataDir });
  await sidecar.ready();
});

afterAll(async () => {
  const code = await sidecar?.stop();
  await notifier?.close();
  await workerDb?.destroy();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  expect(code, sidecar?.output()).toBe(0);
});

/** Runs `body` with a worker on `queueName`, and always stops it; a correct run has no refused report and no error. */
async function withWorker(queueName: string, handler: TaskHandler, body: (worker: InTestWorker) => Promise<void>): Promise<void> {
  const worker = startInTestWorker({ db: workerDb, notifier, namespaceId, queueName, handler, concurrency: 4, blobs });
  try {
    await body(worker);
  } finally {
    await worker.stop();
  }
  expect(worker.refused).toEqual([]);
  expect(worker.errors).toEqual([]);
}

const identityOf = (task: TaskExecutionRow) => `${task.workflowId}/${task.refName}[${task.iteration}.${task.attempt}]`;

async function tasksOf(workflowId: string) {
  return t.db
    .selectFrom("TaskExecutions")
    .selectAll()
    .where("workflowId", "=", workflowId)
    .orderBy("refName")
    .orderBy("iteration")
    .orderBy("attempt")
    .execute();
}

describe("the runtime loop (sidecar process + in-test worker)", () => {
  it("runs 30 three-step SIMPLE chains to completion, each identity scheduled and worked once, histories gap-free", async () => {
    const queueName = "chain_step";
    const name = await registerDefinition(
      t.db,
      namespaceId,
      workflow(
        [
          simple("a", { name: queueName, input: { index: "${workflow.input.index}" } }),
          simple("b", { name: queueName, input: { prev: "${a.output.n}" } }),
          simple("c", { name: queueName, input: { prev: "${b.output.n}" } }),
        ],
        chain("a", "b", "c"),
        { name: "runtime_chain" },
      ),
    );
    const handled = new Map<string, number>();
    // Each step's output depends on its input, so a workflow's final output
    // proves its own tasks' outputs reached its own next steps.
    const handler: TaskHandler = (task) => {
      handled.set(identityOf(task), (handled.get(identityOf(task)) ?? 0) + 1);
      const input = task.input as { index?: number; prev?: number };
      const n = task.refName === "a" ? Number(input.index) : task.refName === "b" ? Number(input.prev) * 10 : Number(input.prev) + 1;
      return { status: "COMPLETED", output: { n } };
    };

    let ids: string[] = [];
    await withWorker(queueName, handler, async () => {
      ids = await startRuns({ db: t.db, blobs }, { namespaceId, name, count: 30 });
      await waitForWorkflowsToEnd(t.db, ids, { timeoutMs: 45_000, context: () => sidecar.output().slice(-4000) });
    });

    const rows = await t.db.selectFrom("WorkflowExecutions").select(["id", "status", "input", "output"]).where("id", "in", ids).execute();
    expect(rows).toHaveLength(30);
    for (const row of rows) {
      const index = (row.input as { index: number }).index;
      expect(row, row.id).toMatchObject({ status: "COMPLETED", output: { n: index * 10 + 1 } });
    }
    expect(await historyProblems(t.db, ids)).toEqual([]);
    const tasks = await t.db.selectFrom("TaskExecutions").select(["workflowId", "refName", "iteration", "attempt", "status"]).where("workflowId", "in", ids).execute();
    expect(tasks).toHaveLength(90);
    expect(tasks.every((task) => task.iteration === 0 && task.attempt === 0 && task.status === "COMPLETED")).toBe(true);
    expect(handled.size).toBe(90);
    expect([...handled.values()].every((count) => count === 1)).toBe(true);
  });

  it("notifies the queue when the decider schedules a task, so a parked worker wakes without waiting out its re-check", async () => {
    // Data, not timing: a subscription to the queue's key must hear a
    // notification once a run is started. NOTIFY is only an optimisation, but
    // one that never fires is a silent slowdown of every step by a worker's
    // re-check interval (1 s by default), which no completion test notices.
    const queueName = "notify_probe";
    const name = await registerDefinition(t.db, namespaceId, workflow([simple("only", { name: queueName })], [], { name: "runtime_notify_probe" }));
    const heard: string[] = [];
    const unsubscribe = notifier.subscribe(TASKS_CHANNEL, taskAvailableKey(namespaceId, queueName), (event) => {
      if (event.kind === "notification") heard.push(event.payload);
    });
    let id = "";
    try {
      [id = ""] = await startRuns({ db: t.db, blobs }, { namespaceId, name, count: 1 });
      await waitUntil(async () => (await t.db.selectFrom("TaskQueues").select("taskId").where("workflowId", "=", id).execute()).length > 0, {
        what: "the decider to queue the task",
        timeoutMs: 20_000,
      });
      await waitUntil(() => heard.length > 0, {
        what: `a ${TASKS_CHANNEL} notification for ${queueName}`,
        timeoutMs: 5_000,
        describe: async () => JSON.stringify(await t.db.selectFrom("TaskQueues").selectAll().where("workflowId", "=", id).execute()),
      });
    } finally {
      unsubscribe();
      await withWorker(queueName, () => ({ status: "COMPLETED" }), () => waitForWorkflowsToEnd(t.db, [id], { timeoutMs: 20_000 }));
    }
    expect(heard).toEqual([taskAvailableKey(namespaceId, queueName)]);
  });

  it("wakes the sidecar's system-task loop when the decider schedules an INLINE task, on the system tasks' channel", async () => {
    // Data, not timing, as above: without this notification the loop finds the task at its 250 ms interval, and
    // every INLINE, HTTP or JSON_JQ_TRANSFORM step of every run waits for it.
    const name = await registerDefinition(
      t.db,
      namespaceId,
      workflow([node("INLINE", "calc", { evaluatorType: "javascript", expression: "(function(){ return 1 + 1; })()", input: {} })], [], { name: "runtime_system_wake" }),
    );
    const heard: string[] = [];
    const unsubscribe = notifier.subscribe(SYSTEM_TASKS_CHANNEL, SYSTEM_TASKS_WAKE_KEY, (event) => {
      if (event.kind === "notification") heard.push(event.payload);
    });
    const misrouted: string[] = [];
    const unsubscribeWorkers = notifier.subscribe(TASKS_CHANNEL, taskAvailableKey(namespaceId, "INLINE"), (event) => {
      if (event.kind === "notification") misrouted.push(event.payload);
    });
    try {
      const [id = ""] = await startRuns({ db: t.db, blobs }, { namespaceId, name, count: 1 });
      await waitForWorkflowsToEnd(t.db, [id], { timeoutMs: 20_000 });
      await waitUntil(() => heard.length > 0, { what: `a ${SYSTEM_TASKS_CHANNEL} notification`, timeoutMs: 5_000 });
      expect((await tasksOf(id)).map((task) => [task.refName, task.status, task.output])).toEqual([["calc", "COMPLETED", { result: 2 }]]);
    } finally {
      unsubscribe();
      unsubscribeWorkers();
    }
    expect(heard).toEqual([SYSTEM_TASKS_WAKE_KEY]);
    expect(misrouted).toEqual([]);
  });

  it.each([
    ["FIXED", [1, 1]],
    ["EXPONENTIAL_BACKOFF", [1, 2]],
  ] as const)(
    "retries with %s backoff: attempts 0, 1, 2 in history, each retry started no sooner than its delay (%j s)",
    async (retryLogic, delays) => {
      const queueName = `flaky_${retryLogic.toLowerCase()}`;
      const name = await registerDefinition(
        t.db,
        namespaceId,
        workflow([simple("flaky", { name: queueName, policy: { retryCount: 2, retryDelaySeconds: 1, retryLogic } })], [], { name: `runtime_retry_${retryLogic.toLowerCase()}` }),
      );
      const handler: TaskHandler = (task) =>
        task.attempt < 2 ? { status: "FAILED", reason: `flaky attempt ${task.attempt}` } : { status: "COMPLETED", output: { attempt: task.attempt } };

      let id = "";
      await withWorker(queueName, handler, async () => {
        [id = ""] = await startRuns({ db: t.db, blobs }, { namespaceId, name, count: 1 });
        await waitForWorkflowsToEnd(t.db, [id], { timeoutMs: 20_000, context: () => sidecar.output().slice(-4000) });
      });

      const wf = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
      expect(wf.status).toBe("COMPLETED");
      expect(wf.output).toEqual({ attempt: 2 });
      const attempts = await tasksOf(id);
      expect(attempts.map((a) => [a.attempt, a.status, a.reasonForIncompletion])).toEqual([
        [0, "FAILED", "flaky attempt 0"],
        [1, "FAILED", "flaky attempt 1"],
        [2, "COMPLETED", null],
      ]);
      // The backoff lives on the retry's queue row ("visibleAt"), not in its
      // "scheduledAt" (when the decider wrote the row, moments after the
      // failure — Conductor's scheduledTime works the same way). So the delay
      // shows as the gap between one attempt's end and the next one's start:
      // the worker polls every 200 ms, so a retry delivered early would start
      // well inside the delay. Both stamps come from this machine's clock.
      for (const [k, delaySeconds] of delays.entries()) {
        const failed = attempts[k]!;
        const retry = attempts[k + 1]!;
        expect(retry.startedAt!.getTime() - failed.endedAt!.getTime(), `attempt ${k + 1} started too soon`).toBeGreaterThanOrEqual(delaySeconds * 1000);
        expect(retry.scheduledAt.getTime()).toBeGreaterThanOrEqual(failed.endedAt!.getTime() - 1);
        expect(retry.firstScheduledAt?.getTime()).toBe(attempts[0]!.scheduledAt.getTime());
      }
      const scheduled = await t.db
        .selectFrom("WorkflowEvents")
        .select(["data"])
        .where("workflowId", "=", id)
        .where("type", "=", "TASK_SCHEDULED")
        .orderBy("seq")
        .execute();
      expect(scheduled.map((e) => e.data)).toEqual([
        { iteration: 0, attempt: 0 },
        { iteration: 0, attempt: 1, reason: "retry of attempt 0: flaky attempt 0" },
        { iteration: 0, attempt: 2, reason: "retry of attempt 1: flaky attempt 1" },
      ]);
      expect(await historyProblems(t.db, [id])).toEqual([]);
    },
  );

  it("stores a worker output holding NUL characters (stripped) and the workflow completes, downstream reading the stripped value", async () => {
    const queueName = "nul_task";
    const name = await registerDefinition(
      t.db,
      namespaceId,
      workflow([simple("emit", { name: queueName }), simple("read", { name: queueName, input: { got: "${emit.output.text}", list: "${emit.output.list}" } })], chain("emit", "read"), {
        name: "runtime_nul",
      }),
    );
    const handler: TaskHandler = (task) =>
      task.refName === "emit"
        ? { status: "COMPLETED", output: { text: "before\u0000after", "ke\u0000y": "v", list: ["\u0000", "x\u0000y"] } }
        : { status: "COMPLETED", output: { echoed: task.input } };

    let id = "";
    await withWorker(queueName, handler, async () => {
      [id = ""] = await startRuns({ db: t.db, blobs }, { namespaceId, name, count: 1 });
      await waitForWorkflowsToEnd(t.db, [id], { timeoutMs: 20_000, context: () => sidecar.output().slice(-4000) });
    });

    const wf = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(wf.status).toBe("COMPLETED");
    const [emit, read] = await tasksOf(id); // ordered by ref: emit, read
    expect(emit?.refName).toBe("emit");
    expect(emit?.status).toBe("COMPLETED");
    expect(emit?.output).toEqual({ text: "beforeafter", key: "v", list: ["", "xy"] });
    expect(read?.input).toEqual({ got: "beforeafter", list: ["", "xy"] });
    expect(wf.output).toEqual({ echoed: { got: "beforeafter", list: ["", "xy"] } });
    expect(await historyProblems(t.db, [id])).toEqual([]);
  });

  it("offloads a 1 MB worker output to the blob store, and downstream expressions still read it", async () => {
    const queueName = "big_task";
    const name = await registerDefinition(
      t.db,
      namespaceId,
      workflow(
        [
          simple("produce", { name: queueName }),
          simple("consume", { name: queueName, input: { size: "${produce.output.size}", head: "${produce.output.blob}" } }),
        ],
        chain("produce", "consume"),
        { name: "runtime_big_output", outputParameters: { seen: "${consume.output.length}", size: "${produce.output.size}" } },
      ),
    );
    const blob = "z".repeat(1024 * 1024);
    const handler: TaskHandler = (task) =>
      task.refName === "produce"
        ? { status: "COMPLETED", output: { size: blob.length, blob } }
        : { status: "COMPLETED", output: { length: String((task.input as { head?: unknown }).head).length } };

    let id = "";
    await withWorker(queueName, handler, async () => {
      [id = ""] = await startRuns({ db: t.db, blobs }, { namespaceId, name, count: 1 });
      await waitForWorkflowsToEnd(t.db, [id], { timeoutMs: 30_000, context: () => sidecar.output().slice(-4000) });
    });

    const wf = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(wf.status).toBe("COMPLETED");
    expect(wf.output).toEqual({ seen: blob.length, size: blob.length });
    const [consume, produce] = await tasksOf(id); // ordered by ref
    // The worker's output went to the blob store; the row keeps {} and the ref.
    expect(produce?.output).toEqual({});
    expect(produce?.outputRef).toMatch(/^fs:/);
    // The consumer's 1 MB input was offloaded by the decider, and resolved for the worker.
    expect(consume?.inputRef).toMatch(/^fs:/);
    expect(await historyProblems(t.db, [id])).toEqual([]);
  });

  it("runs the built-in tasks in the sidecar: INLINE, JSON_JQ_TRANSFORM, SET_VARIABLE, SWITCH, WAIT, TERMINATE", async () => {
    const name = await registerDefinition(
      t.db,
      namespaceId,
      workflow(
        [
          node("INLINE", "calc", { evaluatorType: "javascript", expression: "(function(){ return $.a * 2; })()", input: { a: "${workflow.input.a}" } }),
          node("JSON_JQ_TRANSFORM", "shape", { queryExpression: "{ doubled: .v }", input: { v: "${calc.output.result}" } }),
          node("SET_VARIABLE", "remember", { input: { last: "${shape.output.result.doubled}" } }),
          node("WAIT", "pause", { duration: "1s" }),
          node("SWITCH", "route", { evaluatorType: "value-param", expression: "v", input: { v: "${workflow.variables.last}" }, cases: ["84"] }),
          node("TERMINATE", "stop", { terminationStatus: "COMPLETED", workflowOutput: { via: "terminate", v: "${workflow.variables.last}" } }),
          node("NOOP", "never"),
        ],
        [...chain("calc", "shape", "remember", "pause", "route"), edge("route", "stop", "84"), edge("route", "never", "default")],
        { name: "runtime_builtins" },
      ),
    );
    const [id = ""] = await startRuns({ db: t.db, blobs }, { namespaceId, name, count: 1, input: () => ({ a: 42 }) });
    await waitForWorkflowsToEnd(t.db, [id], { timeoutMs: 30_000, context: () => sidecar.output().slice(-4000) });
    const wf = await t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(wf.status, wf.reasonForIncompletion ?? "").toBe("COMPLETED");
    const rows = Object.fromEntries((await tasksOf(id)).map((r) => [r.refName, r]));
    expect(wf.output).toEqual({ via: "terminate", v: 84 });
    expect(rows.calc?.output).toEqual({ result: 84 });
    expect(rows.shape?.output).toMatchObject({ result: { doubled: 84 } });
    expect(rows.pause?.status).toBe("COMPLETED");
    // The WAIT really waited: the timer poller woke the decider no earlier than its second.
    expect(rows.pause!.endedAt!.getTime() - rows.pause!.startedAt!.getTime()).toBeGreaterThanOrEqual(1000);
    // The untaken branch never ran (TERMINATE may end the run before its SKIPPED row is written).
    expect([undefined, "SKIPPED"]).toContain(rows.never?.status);
    expect(await historyProblems(t.db, [id])).toEqual([]);
  });
});
