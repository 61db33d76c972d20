import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { evaluateBatch } from "../evaluator/evaluator";
import type { EvaluatorDeps } from "../evaluator/evaluator";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { configureSemaphore } from "../store/semaphores";
import { waitUntil } from "../testing/wait-until";
import { createTestKey, createTestNamespace, startRestHarness } from "./testing/rest-fixtures";
import type { RestHarness, TestNamespace } from "./testing/rest-fixtures";

// The worker protocol over real HTTP against real Postgres: a worker with a
// `worker`-scoped key polls, heartbeats and reports; the decider (evaluateBatch
// with QuickJS) moves the workflow on between steps.

const t = useTestDatabase();
let harness: RestHarness;
let scripts: QuickJsScriptEvaluator;
let ns: TestNamespace;
let other: TestNamespace;
let workerKey: string;
let adminKey: string;
let otherAdminKey: string;

beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator();
  harness = await startRestHarness(t.db, t.url);
  ns = await createTestNamespace(t.db, "wp");
  other = await createTestNamespace(t.db, "wp-other");
  workerKey = await createTestKey(t.db, ns, ["worker"]);
  adminKey = await createTestKey(t.db, ns, ["admin"]);
  otherAdminKey = await createTestKey(t.db, other, ["admin"]);
});
afterAll(async () => {
  await harness?.close();
  await scripts?.close();
});

const evaluator = (): EvaluatorDeps => ({ db: t.db, scripts, blobs: harness.blobs });

/** Evaluates until nothing is queued to decide. */
async function decide(): Promise<void> {
  for (let i = 0; i < 20 && (await evaluateBatch(evaluator(), { limit: 50 })) > 0; i++);
}

let definitionCounter = 0;

/** Registers a definition through the API and returns its name. */
async function register(space: TestNamespace, key: string, nodes: unknown[], edges: unknown[] = [], extra: Record<string, unknown> = {}): Promise<string> {
  const name = `wf_${++definitionCounter}`;
  const created = await harness.api("POST", `/ns/${space.name}/definitions`, { key, body: { schemaVersion: 1, name, nodes, edges, ...extra } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return name;
}

async function start(space: TestNamespace, key: string, name: string, input: Record<string, unknown> = {}): Promise<string> {
  const started = await harness.api<{ id: string }>("POST", `/ns/${space.name}/runs`, { key, body: { name, input } });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return started.body.id;
}

const simple = (ref: string, queue: string, input: Record<string, unknown> = {}) => ({ ref, type: "SIMPLE", name: queue, position: { x: 0, y: 0 }, input });

interface PolledTask {
  taskId: string;
  workflowId: string;
  refName: string;
  queue: string;
  attempt: number;
  pollCount: number;
  input: Record<string, unknown>;
  leaseExpiresAt: string;
}

async function poll(queue: string, options: { count?: number; timeoutMs?: number; workerId?: string; key?: string; space?: TestNamespace; signal?: AbortSignal } = {}) {
  return harness.api<{ tasks: PolledTask[] }>("POST", `/ns/${(options.space ?? ns).name}/tasks/poll`, {
    key: options.key ?? workerKey,
    body: { queue, count: options.count ?? 10, timeoutMs: options.timeoutMs ?? 0, workerId: options.workerId ?? "w1" },
    signal: options.signal,
  });
}

async function runStatus(workflowId: string) {
  return t.db.selectFrom("WorkflowExecutions").select(["status", "output", "reasonForIncompletion"]).where("id", "=", workflowId).executeTakeFirstOrThrow();
}

describe("the worker protocol", () => {
  it("poll → heartbeat → complete a SIMPLE task; the decider completes the workflow; a second completion is 409", async () => {
    const name = await register(ns, adminKey, [simple("greet", "greeter", { who: "${workflow.input.who}" })], [], { outputParameters: { said: "${greet.output.said}" } });
    const runId = await start(ns, adminKey, name, { who: "Ada" });
    await decide();

    const polled = await poll("greeter");
    expect(polled.status).toBe(200);
    expect(polled.body.tasks).toHaveLength(1);
    const task = polled.body.tasks[0]!;
    expect(task).toMatchObject({ workflowId: runId, refName: "greet", queue: "greeter", attempt: 0, input: { who: "Ada" } });
    // Tracing is off by default: no trace context that nobody would ever export (sdk/worker-observability.int.test.ts has it on).
    expect(task).not.toHaveProperty("traceparent");

    const beat = await harness.api("POST", `/ns/${ns.name}/tasks/${task.taskId}/heartbeat`, { key: workerKey, body: { workflowId: runId, workerId: "w1" } });
    expect(beat.status).toBe(200);
    expect(beat.body).toMatchObject({ taskId: task.taskId });
    const lease = await t.db.selectFrom("TaskQueues").select("leaseExpiresAt").where("taskId", "=", task.taskId).executeTakeFirstOrThrow();
    expect(lease.leaseExpiresAt!.getTime()).toBeGreaterThanOrEqual(new Date(task.leaseExpiresAt).getTime());

    const done = await harness.api("POST", `/ns/${ns.name}/tasks/${task.taskId}/complete`, { key: workerKey, body: { workflowId: runId, workerId: "w1", output: { said: "hello Ada" } } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toEqual({ taskId: task.taskId, workflowId: runId, status: "COMPLETED" });

    await decide();
    expect(await runStatus(runId)).toMatchObject({ status: "COMPLETED", output: { said: "hello Ada" } });

    const again = await harness.api("POST", `/ns/${ns.name}/tasks/${task.taskId}/complete`, { key: workerKey, body: { workflowId: runId, workerId: "w1", output: {} } });
    expect(again.status).toBe(409);
    expect(again.headers.get("content-type")).toBe("application/problem+json");
    const lateBeat = await harness.api("POST", `/ns/${ns.name}/tasks/${task.taskId}/heartbeat`, { key: workerKey, body: { workflowId: runId, workerId: "w1" } });
    expect(lateBeat.status).toBe(409);
  });

  it("a report with `next` leases the queue's next task to the same worker in its transaction; [] when none waits", async () => {
    const name = await register(ns, adminKey, [simple("step", "relay")]);
    const [first, second] = [await start(ns, adminKey, name), await start(ns, adminKey, name)];
    await decide();
    const polled = await poll("relay", { count: 1, workerId: "relay-w" });
    const held = polled.body.tasks[0]!;
    const waiting = held.workflowId === first ? second : first;

    const done = await harness.api<{ next: PolledTask[] }>("POST", `/ns/${ns.name}/tasks/${held.taskId}/complete`, {
      key: workerKey,
      body: { workflowId: held.workflowId, workerId: "relay-w", output: {}, next: { count: 5 } },
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.next).toHaveLength(1);
    expect(done.body.next[0]).toMatchObject({ workflowId: waiting, refName: "step", queue: "relay", attempt: 0, pollCount: 1 });
    // The completion and the lease were one write transaction: both task rows were last written by it. (Read from
    // the rows, not a cluster-wide xid counter, which other test files' transactions move at the same time.)
    const writers = await sql<{ xmin: string }>`
      SELECT DISTINCT "xmin"::text AS "xmin" FROM "TaskExecutions"
      WHERE "workflowId" IN (${held.workflowId}::uuid, ${waiting}::uuid) AND "refName" = 'step'`.execute(t.db);
    expect(writers.rows).toHaveLength(1);
    const lease = await t.db.selectFrom("TaskQueues").select(["leaseOwner", "leaseExpiresAt"]).where("taskId", "=", done.body.next[0]!.taskId).executeTakeFirstOrThrow();
    expect(lease.leaseOwner).toBe("relay-w");

    // Reported failed (terminally) with `next` again: nothing else waits, so `next` is [].
    const failed = await harness.api<{ next: PolledTask[] }>("POST", `/ns/${ns.name}/tasks/${done.body.next[0]!.taskId}/fail`, {
      key: workerKey,
      body: { workflowId: waiting, workerId: "relay-w", retryable: false, reason: "no", next: { count: 1 } },
    });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(failed.body.next).toEqual([]);
    const bad = await harness.api("POST", `/ns/${ns.name}/tasks/${held.taskId}/complete`, {
      key: workerKey,
      body: { workflowId: held.workflowId, workerId: "relay-w", next: { count: 0 } },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("/body/next/count");
  });

  it("a report whose `next` may wait answers with the chain's next task once the decider has scheduled it", async () => {
    const name = await register(ns, adminKey, [simple("one", "chain"), simple("two", "chain")], [{ source: "one", target: "two" }]);
    const runId = await start(ns, adminKey, name);
    await decide();
    const [first] = (await poll("chain", { workerId: "chain-w" })).body.tasks;

    const reported = harness.api<{ next: PolledTask[] }>("POST", `/ns/${ns.name}/tasks/${first!.taskId}/complete`, {
      key: workerKey,
      body: { workflowId: runId, workerId: "chain-w", output: {}, next: { count: 1, timeoutMs: 10_000 } },
    });
    // The report committed and is now parked: its completion is what the decider reacts to.
    await waitUntil(async () => (await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", runId).executeTakeFirst()) !== undefined, {
      what: "the report's completion to enqueue a decide",
      timeoutMs: 10_000,
      intervalMs: 10,
    });
    await decide();
    const done = await reported;
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.next).toHaveLength(1);
    expect(done.body.next[0]).toMatchObject({ workflowId: runId, refName: "two", queue: "chain" });
    const lease = await t.db.selectFrom("TaskQueues").select("leaseOwner").where("taskId", "=", done.body.next[0]!.taskId).executeTakeFirstOrThrow();
    expect(lease.leaseOwner).toBe("chain-w");

    // Nothing follows "two": the wait runs out and the answer is [].
    const startedAt = performance.now();
    const last = await harness.api<{ next: PolledTask[] }>("POST", `/ns/${ns.name}/tasks/${done.body.next[0]!.taskId}/complete`, {
      key: workerKey,
      body: { workflowId: runId, workerId: "chain-w", output: {}, next: { count: 1, timeoutMs: 300 } },
    });
    expect(last.status, JSON.stringify(last.body)).toBe(200);
    expect(last.body.next).toEqual([]);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(290);
    await decide();
    expect(await runStatus(runId)).toMatchObject({ status: "COMPLETED" });
  });

  it("refuses a report from a worker that does not hold the task (409), and an unknown task (404)", async () => {
    const name = await register(ns, adminKey, [simple("a", "held")]);
    const runId = await start(ns, adminKey, name);
    await decide();
    const [task] = (await poll("held", { workerId: "holder" })).body.tasks;
    const stolen = await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/complete`, { key: workerKey, body: { workflowId: runId, workerId: "thief" } });
    expect(stolen.status).toBe(409);
    const unknown = await harness.api("POST", `/ns/${ns.name}/tasks/${runId}/complete`, { key: workerKey, body: { workflowId: runId, workerId: "holder" } });
    expect(unknown.status).toBe(404);
    const beat = await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/heartbeat`, { key: workerKey, body: { workflowId: runId, workerId: "thief" } });
    expect(beat.status).toBe(409);
    // The holder still can.
    const done = await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/complete`, { key: workerKey, body: { workflowId: runId, workerId: "holder" } });
    expect(done.status).toBe(200);
  });

  it("fail: retryable is FAILED and retried as a new attempt, terminal is FAILED_WITH_TERMINAL_ERROR and fails the workflow", async () => {
    const name = await register(ns, adminKey, [{ ...simple("flaky", "flaky"), policy: { retryCount: 1, retryDelaySeconds: 0 } }]);
    const runId = await start(ns, adminKey, name);
    await decide();
    const [first] = (await poll("flaky")).body.tasks;
    const failed = await harness.api("POST", `/ns/${ns.name}/tasks/${first!.taskId}/fail`, { key: workerKey, body: { workflowId: runId, workerId: "w1", retryable: true, reason: "network blip" } });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: "FAILED" });
    await decide();
    const [second] = (await poll("flaky")).body.tasks;
    expect(second).toMatchObject({ refName: "flaky", attempt: 1 });
    const terminal = await harness.api("POST", `/ns/${ns.name}/tasks/${second!.taskId}/fail`, { key: workerKey, body: { workflowId: runId, workerId: "w1", retryable: false, reason: "bad input" } });
    expect(terminal.body).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    await decide();
    expect((await runStatus(runId)).status).toBe("FAILED");
    const rows = await t.db.selectFrom("TaskExecutions").select(["attempt", "status", "reasonForIncompletion"]).where("workflowId", "=", runId).orderBy("attempt").execute();
    expect(rows).toEqual([
      { attempt: 0, status: "FAILED", reasonForIncompletion: "network blip" },
      { attempt: 1, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "bad input" },
    ]);
  });

  it("release: the task goes back at once with its semaphore permit, as the same attempt; only its holder may release it (409)", async () => {
    // One permit: the next worker's lease can only succeed if the release gave the permit back.
    await configureSemaphore(t.db, { namespaceId: ns.id, name: "one-gpu", permits: 1 });
    const defined = await harness.api("PUT", `/ns/${ns.name}/task-definitions/releasable`, { key: adminKey, body: { semaphoreName: "one-gpu", retryCount: 0 } });
    expect(defined.status, JSON.stringify(defined.body)).toBe(200);
    const name = await register(ns, adminKey, [simple("render", "releasable")]);
    const runId = await start(ns, adminKey, name);
    await decide();
    const [task] = (await poll("releasable", { workerId: "leaving" })).body.tasks;
    expect(task).toMatchObject({ attempt: 0, pollCount: 1 });
    const permits = () => t.db.selectFrom("SemaphoreHolders").select("taskId").where("namespaceId", "=", ns.id).where("name", "=", "one-gpu").execute();
    expect(await permits()).toEqual([{ taskId: task!.taskId }]);

    const release = (workerId: string, taskId = task!.taskId) =>
      harness.api<{ detail?: string }>("POST", `/ns/${ns.name}/tasks/${taskId}/release`, { key: workerKey, body: { workflowId: runId, workerId } });
    const stolen = await release("thief");
    expect(stolen.status).toBe(409);
    expect(stolen.headers.get("content-type")).toBe("application/problem+json");
    expect(stolen.body.detail).toMatch(/does not hold/);
    expect((await release("leaving", runId)).status).toBe(404);

    // A worker parked on the queue meanwhile: the gate (the permit is taken) and the empty queue both hold it back.
    const waitersBefore = harness.notifier.stats.waiters;
    const parked = poll("releasable", { workerId: "next", timeoutMs: 20_000 });
    await waitUntil(() => harness.notifier.stats.waiters > waitersBefore, { what: "the next worker's poll to park", timeoutMs: 10_000, intervalMs: 10 });
    const released = await release("leaving");
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    expect(released.body).toEqual({ taskId: task!.taskId, workflowId: runId });

    // Woken by the release, well before its 20 s timeout: the same task, the same attempt, leased a second time.
    const handedOn = await parked;
    expect(handedOn.body.tasks.map((x) => [x.taskId, x.attempt, x.pollCount])).toEqual([[task!.taskId, 0, 2]]);
    expect(await permits()).toEqual([{ taskId: task!.taskId }]);

    // The leaver can no longer release, heartbeat or report it; the new holder can.
    expect((await release("leaving")).status).toBe(409);
    const late = await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/complete`, { key: workerKey, body: { workflowId: runId, workerId: "leaving" } });
    expect(late.status).toBe(409);
    const done = await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/complete`, { key: workerKey, body: { workflowId: runId, workerId: "next", output: { ok: true } } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    await decide();
    expect((await runStatus(runId)).status).toBe("COMPLETED");
    const rows = await t.db.selectFrom("TaskExecutions").select(["attempt", "status", "pollCount", "workerId"]).where("workflowId", "=", runId).execute();
    expect(rows).toEqual([{ attempt: 0, status: "COMPLETED", pollCount: 2, workerId: "next" }]);
    expect(await permits()).toEqual([]);
  });

  it("fail needs `retryable` and `reason`; an output that is not an object is refused naming /body/output", async () => {
    const taskId = "0191d6a4-0000-7000-8000-000000000001";
    const missing = await harness.api<{ errors: { pointer: string }[] }>("POST", `/ns/${ns.name}/tasks/${taskId}/fail`, { key: workerKey, body: { workflowId: taskId, workerId: "w1" } });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e) => e.pointer).sort()).toEqual(["/body/reason", "/body/retryable"]);
    const notObject = await harness.api<{ errors: { pointer: string }[] }>("POST", `/ns/${ns.name}/tasks/${taskId}/complete`, { key: workerKey, body: { workflowId: taskId, workerId: "w1", output: [1, 2] } });
    expect(notObject.status).toBe(400);
    expect(notObject.body.errors.map((e) => e.pointer)).toEqual(["/body/output"]);
  });

  it("long-poll: a parked poll answers with a task enqueued after it started", async () => {
    const name = await register(ns, adminKey, [simple("late", "late-queue")]);
    const waitersBefore = harness.notifier.stats.waiters;
    const parked = poll("late-queue", { timeoutMs: 20_000, workerId: "parked" });
    // Parked: subscribed to the queue's notifications, having found nothing.
    await waitUntil(() => harness.notifier.stats.waiters > waitersBefore, { what: "the poll to park", timeoutMs: 10_000, intervalMs: 10 });
    const runId = await start(ns, adminKey, name);
    await decide();
    const answer = await parked;
    expect(answer.status).toBe(200);
    // A poll that had timed out would have answered []: this one was woken by the task.
    expect(answer.body.tasks.map((task) => [task.workflowId, task.refName])).toEqual([[runId, "late"]]);
  });

  it("a client that hangs up ends its parked poll (the request's signal aborts it)", async () => {
    const waitersBefore = harness.notifier.stats.waiters;
    const controller = new AbortController();
    const parked = poll("nobody-enqueues-here", { timeoutMs: 30_000, signal: controller.signal }).catch((error: unknown) => error);
    await waitUntil(() => harness.notifier.stats.waiters > waitersBefore, { what: "the poll to park", timeoutMs: 10_000, intervalMs: 10 });
    controller.abort();
    expect(await parked).toBeInstanceOf(Error);
    await waitUntil(() => harness.notifier.stats.waiters === waitersBefore, { what: "the server to drop the parked poll", timeoutMs: 10_000, intervalMs: 10 });
  });

  it("refuses a built-in task's queue, and counts and timeouts out of range, naming the field", async () => {
    const system = await harness.api<{ errors: { pointer: string }[] }>("POST", `/ns/${ns.name}/tasks/poll`, { key: workerKey, body: { queue: "HTTP", workerId: "w1" } });
    expect(system.status).toBe(400);
    expect(system.body.errors.map((e) => e.pointer)).toEqual(["/body/queue"]);
    const range = await harness.api<{ errors: { pointer: string }[] }>("POST", `/ns/${ns.name}/tasks/poll`, {
      key: workerKey,
      body: { queue: "q", workerId: "w1", count: 101, timeoutMs: 30_001 },
    });
    expect(range.status).toBe(400);
    expect(range.body.errors.map((e) => e.pointer).sort()).toEqual(["/body/count", "/body/timeoutMs"]);
  });

  it("appends log lines to a held task and reads them back in order", async () => {
    const name = await register(ns, adminKey, [simple("logger", "logging")]);
    const runId = await start(ns, adminKey, name);
    await decide();
    const [task] = (await poll("logging")).body.tasks;
    // A NUL no row can hold is refused, naming the line, and nothing of the batch is stored.
    const refused = await harness.api<{ errors: { pointer: string }[] }>("POST", `/ns/${ns.name}/tasks/${task!.taskId}/logs`, { key: workerKey, body: { workflowId: runId, lines: ["lost", "nul\u0000byte"] } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((e) => e.pointer)).toEqual(["/body/lines/1"]);
    const first = await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/logs`, { key: workerKey, body: { workflowId: runId, lines: ["starting", "nulbyte"] } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ appended: 2 });
    await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/logs`, { key: workerKey, body: { workflowId: runId, lines: ["done"] } });
    const read = await harness.api<{ items: { line: string }[]; nextAfter: number | null }>("GET", `/ns/${ns.name}/tasks/${task!.taskId}/logs`, { key: adminKey });
    expect(read.status).toBe(200);
    expect(read.body.items.map((i) => i.line)).toEqual(["starting", "nulbyte", "done"]);
    const unknown = await harness.api("POST", `/ns/${ns.name}/tasks/${runId}/logs`, { key: workerKey, body: { workflowId: runId, lines: ["x"] } });
    expect(unknown.status).toBe(404);
  });

  it("offloads a large output and resolves it when the run is read", async () => {
    const name = await register(ns, adminKey, [simple("big", "big-output")]);
    const runId = await start(ns, adminKey, name);
    await decide();
    const [task] = (await poll("big-output")).body.tasks;
    const blob = "x".repeat(300 * 1024);
    const done = await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/complete`, { key: workerKey, body: { workflowId: runId, workerId: "w1", output: { blob } } });
    expect(done.status).toBe(200);
    const row = await t.db.selectFrom("TaskExecutions").select(["output", "outputRef"]).where("workflowId", "=", runId).where("id", "=", task!.taskId).executeTakeFirstOrThrow();
    expect(row.outputRef).not.toBeNull();
    expect(row.output).toEqual({});
    const run = await harness.api<{ tasks: { items: { id: string; output: { blob?: string } }[] } }>("GET", `/ns/${ns.name}/runs/${runId}`, { key: adminKey });
    expect(run.body.tasks.items.find((i) => i.id === task!.taskId)?.output.blob).toBe(blob);
  });

  it("never hands a task to, or takes a report from, a key of another namespace", async () => {
    const name = await register(ns, adminKey, [simple("mine", "isolated")]);
    const runId = await start(ns, adminKey, name);
    await decide();
    // Another namespace's key, on its own namespace's path: the queue of the same name there is empty.
    expect((await poll("isolated", { key: otherAdminKey, space: other })).body.tasks).toEqual([]);
    // … and on this namespace's path: it has no access, so the namespace does not exist for it.
    expect((await poll("isolated", { key: otherAdminKey })).status).toBe(404);
    const [task] = (await poll("isolated")).body.tasks;
    const report = { workflowId: runId, workerId: "w1" };
    expect((await harness.api("POST", `/ns/${other.name}/tasks/${task!.taskId}/complete`, { key: otherAdminKey, body: report })).status).toBe(404);
    expect((await harness.api("POST", `/ns/${other.name}/tasks/${task!.taskId}/heartbeat`, { key: otherAdminKey, body: report })).status).toBe(404);
    expect((await harness.api("POST", `/ns/${other.name}/tasks/${task!.taskId}/logs`, { key: otherAdminKey, body: { workflowId: runId, lines: ["x"] } })).status).toBe(404);
    expect((await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/complete`, { key: otherAdminKey, body: report })).status).toBe(404);
    // Still held and open for its real worker.
    expect((await harness.api("POST", `/ns/${ns.name}/tasks/${task!.taskId}/complete`, { key: workerKey, body: report })).status).toBe(200);
  });
});
