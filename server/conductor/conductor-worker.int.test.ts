import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { createTestKey, createTestNamespace } from "../rest/testing/rest-fixtures";
import type { TestNamespace } from "../rest/testing/rest-fixtures";
import { startSidecar } from "../testing/sidecar-process";
import type { SidecarProcess } from "../testing/sidecar-process";
import { waitUntil } from "../testing/wait-until";
import { keyPair, startConductorHarness } from "./testing/conductor-harness";
import type { ConductorHarness } from "./testing/conductor-harness";

/**
 * The whole loop through Conductor's API: definitions registered through
 * /metadata, runs started through /workflow, evaluated by a real sidecar
 * process (decider and poller, so system tasks run too), and worked by a
 * worker written against Conductor's documented REST protocol with plain
 * fetch — batch poll, TaskResult updates, extendLease, logs — not node-flow's
 * SDK. The end state and the task list are read back through GET /workflow.
 */

const t = useTestDatabase();
let h: ConductorHarness;
let sidecar: SidecarProcess;
let ns: TestNamespace;
let adminToken: string;
let workerToken: string;
let echoServer: Server;
let echoUrl: string;

beforeAll(async () => {
  h = await startConductorHarness(t.db, t.url);
  ns = await createTestNamespace(t.db, "cdw");
  const token = async (key: string) => (await h.call<{ token: string }>("POST", "/token", { body: keyPair(key) })).body.token;
  adminToken = await token(await createTestKey(t.db, ns, ["admin"]));
  workerToken = await token(await createTestKey(t.db, ns, ["worker"]));
  // The HTTP task's target: echoes what it is sent.
  echoServer = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ echo: JSON.parse(body || "{}") as unknown }));
    });
  });
  await new Promise<void>((resolve) => echoServer.listen(0, "127.0.0.1", resolve));
  echoUrl = `http://127.0.0.1:${(echoServer.address() as AddressInfo).port}/echo`;
  sidecar = startSidecar({ databaseUrl: t.url, dataDir: h.dataDir, env: { NODE_FLOW_HTTP_ALLOW_PRIVATE: "true" } });
  await sidecar.ready();
});

afterAll(async () => {
  const code = await sidecar?.stop();
  await h?.close();
  await new Promise<void>((resolve) => (echoServer ? echoServer.close(() => resolve()) : resolve()));
  expect(code, sidecar?.output()).toBe(0);
});

interface ConductorTask {
  taskId: string;
  workflowInstanceId: string;
  taskType: string;
  referenceTaskName: string;
  status: string;
  inputData: Record<string, unknown>;
  outputData: Record<string, unknown>;
  retryCount: number;
  pollCount: number;
  seq: number;
  retried: boolean;
  retriedTaskId: string | null;
  scheduledTime: number;
  startTime: number;
  endTime: number;
  updateTime: number;
  callbackAfterSeconds: number;
  reasonForIncompletion: string | null;
  workerId: string | null;
  iteration: number;
}

interface ConductorWorkflow {
  workflowId: string;
  status: string;
  output: Record<string, unknown>;
  reasonForIncompletion: string | null;
  failedReferenceTaskNames: string[];
  tasks: ConductorTask[];
  startTime: number;
  endTime: number;
}

/** What a handler sends back: the TaskResult fields besides the ids. */
type Reply = Record<string, unknown> & { status: string };

/**
 * A Conductor worker in plain HTTP: batch-polls each task type (long-poll,
 * 1 s), runs the handler, and POSTs its TaskResult. A handler may make more
 * calls of its own first (an IN_PROGRESS update, a heartbeat, a log line).
 */
function startWorker(handlers: Record<string, (task: ConductorTask, api: ConductorHarness["call"]) => Promise<Reply | null>>) {
  let running = true;
  const errors: string[] = [];
  const loops = Object.entries(handlers).map(async ([taskType, handle]) => {
    while (running) {
      const polled = await h.call<ConductorTask[]>("GET", `/tasks/poll/batch/${taskType}?count=5&timeout=1000&workerid=plain-worker`, { token: workerToken });
      if (polled.status !== 200) {
        errors.push(`poll ${taskType}: ${polled.status} ${JSON.stringify(polled.body)}`);
        continue;
      }
      for (const task of polled.body) {
        const reply = await handle(task, h.call.bind(h));
        if (reply === null) continue;
        const answer = await h.call("POST", "/tasks", { token: workerToken, body: { workflowInstanceId: task.workflowInstanceId, taskId: task.taskId, workerId: "plain-worker", ...reply } });
        if (answer.status !== 200 || answer.body !== task.taskId) errors.push(`update ${task.referenceTaskName}: ${answer.status} ${JSON.stringify(answer.body)}`);
      }
    }
  });
  return {
    errors,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function register(def: Record<string, unknown>): Promise<void> {
  const answer = await h.call("POST", "/metadata/workflow", { token: adminToken, body: def });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

async function start(request: Record<string, unknown>): Promise<string> {
  const answer = await h.call<string>("POST", "/workflow", { token: adminToken, body: request });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

async function read(id: string): Promise<ConductorWorkflow> {
  return (await h.call<ConductorWorkflow>("GET", `/workflow/${id}`, { token: adminToken })).body;
}

async function waitForEnd(id: string, timeoutMs = 20_000): Promise<ConductorWorkflow> {
  let last: ConductorWorkflow | undefined;
  await waitUntil(
    async () => {
      last = await read(id);
      return last.status !== "RUNNING" && last.status !== "PAUSED";
    },
    { what: `workflow ${id} to end`, timeoutMs, intervalMs: 150, describe: () => `${JSON.stringify(last?.tasks.map((x) => [x.referenceTaskName, x.status]))}\n${sidecar.output().slice(-2000)}` },
  );
  return last!;
}

describe("a plain-HTTP Conductor worker against a workflow registered through /metadata", () => {
  it("polls, reports progress with callbackAfterSeconds, heartbeats, logs, fails once and completes; GET /workflow shows Conductor's semantics", async () => {
    // The retry policy comes from the registered TaskDef, as in Conductor.
    expect(
      (await h.call("POST", "/metadata/taskdefs", { token: adminToken, body: [{ name: "cdw_flaky", retryCount: 1, retryLogic: "FIXED", retryDelaySeconds: 0, responseTimeoutSeconds: 60 }] })).status,
    ).toBe(200);
    await register({
      name: "cdw_order",
      version: 1,
      schemaVersion: 2,
      tasks: [
        { name: "cdw_prepare", taskReferenceName: "prepare", type: "SIMPLE", inputParameters: { x: "${workflow.input.x}" } },
        { name: "cdw_slow", taskReferenceName: "slow", type: "SIMPLE", inputParameters: { y: "${prepare.output.y}" } },
        { name: "cdw_flaky", taskReferenceName: "flaky", type: "SIMPLE", inputParameters: { y: "${slow.output.y}" } },
      ],
      outputParameters: { z: "${flaky.output.z}", progress: "${slow.output.progress}" },
    });

    const polledAt: Record<string, number[]> = {};
    const worker = startWorker({
      cdw_prepare: (task) => Promise.resolve({ status: "COMPLETED", outputData: { y: (task.inputData.x as number) * 2 }, logs: ["prepared"] }),
      cdw_slow: async (task, api) => {
        (polledAt[task.taskId] ??= []).push(Date.now());
        if (task.pollCount === 1) {
          // Not done yet: record progress and come back in a second (the task returns to its queue).
          return { status: "IN_PROGRESS", outputData: { progress: 50 }, callbackAfterSeconds: 1 };
        }
        expect(task.outputData).toEqual({ progress: 50 });
        // A pure heartbeat: nothing but the lease changes.
        const beat = await api("POST", "/tasks", { token: workerToken, body: { workflowInstanceId: task.workflowInstanceId, taskId: task.taskId, status: "IN_PROGRESS", extendLease: true, outputData: { ignored: true } } });
        expect(beat.status).toBe(200);
        expect((await api("POST", `/tasks/${task.taskId}/log`, { token: workerToken, body: "almost there" })).status).toBe(200);
        return { status: "COMPLETED", outputData: { progress: 100, y: task.inputData.y } };
      },
      cdw_flaky: (task) =>
        Promise.resolve(
          task.retryCount === 0 ? { status: "FAILED", reasonForIncompletion: "flaky, once" } : { status: "COMPLETED", outputData: { z: (task.inputData.y as number) + 1 } },
        ),
    });
    let wf: ConductorWorkflow;
    let id: string;
    try {
      id = await start({ name: "cdw_order", input: { x: 20 }, correlationId: "order-1" });
      wf = await waitForEnd(id);
    } finally {
      await worker.stop();
    }
    expect(worker.errors).toEqual([]);
    expect(wf.status).toBe("COMPLETED");
    expect(wf.output).toEqual({ z: 41, progress: 100 });
    expect(wf.endTime).toBeGreaterThanOrEqual(wf.startTime);
    const summary = wf.tasks.map((x) => [x.seq, x.referenceTaskName, x.taskType, x.status, x.retryCount]);
    expect(summary).toEqual([
      [1, "prepare", "cdw_prepare", "COMPLETED", 0],
      [2, "slow", "cdw_slow", "COMPLETED", 0],
      [3, "flaky", "cdw_flaky", "FAILED", 0],
      [4, "flaky", "cdw_flaky", "COMPLETED", 1],
    ]);
    const [prepare, slow, failed, retried] = wf.tasks as [ConductorTask, ConductorTask, ConductorTask, ConductorTask];
    expect(prepare).toMatchObject({ inputData: { x: 20 }, outputData: { y: 40 }, workerId: "plain-worker", pollCount: 1, retried: false, retriedTaskId: null });
    // Handed out twice (the IN_PROGRESS update put it back), at least the callback apart, and its output replaced.
    expect(slow).toMatchObject({ pollCount: 2, callbackAfterSeconds: 1, outputData: { progress: 100, y: 40 } });
    const [first, second] = polledAt[slow.taskId]!;
    expect(second! - first!).toBeGreaterThanOrEqual(900);
    expect(failed).toMatchObject({ reasonForIncompletion: "flaky, once", retried: true, retriedTaskId: retried.taskId });
    expect(retried).toMatchObject({ retried: false, outputData: { z: 41 } });
    for (const task of wf.tasks) {
      expect(task.scheduledTime).toBeGreaterThan(0);
      expect(task.startTime).toBeGreaterThanOrEqual(task.scheduledTime);
      expect(task.endTime).toBeGreaterThanOrEqual(task.startTime);
      expect(task.updateTime).toBeGreaterThanOrEqual(task.startTime);
    }
    // The logs: the TaskResult's and the one POSTed to /log, in order.
    expect((await h.call<{ log: string }[]>("GET", `/tasks/${prepare.taskId}/log`, { token: workerToken })).body.map((l) => l.log)).toEqual(["prepared"]);
    expect((await h.call<{ log: string; createdTime: number }[]>("GET", `/tasks/${slow.taskId}/log`, { token: workerToken })).body).toMatchObject([{ log: "almost there", taskId: slow.taskId }]);
    expect((await h.call<ConductorTask>("GET", `/tasks/${failed.taskId}`, { token: workerToken })).body).toMatchObject({ status: "FAILED", seq: 3, retriedTaskId: retried.taskId });
    const found = await h.call<{ totalHits: number; results: { workflowId: string; status: string }[] }>(
      "GET",
      `/workflow/search?query=${encodeURIComponent("workflowType IN (cdw_order) AND status IN (COMPLETED) AND correlationId = 'order-1'")}`,
      { token: adminToken },
    );
    expect(found.body).toMatchObject({ totalHits: 1, results: [{ workflowId: id!, status: "COMPLETED" }] });
  });

  it("FAILED_WITH_TERMINAL_ERROR fails the workflow without a retry; retry then runs the task again", async () => {
    await register({
      name: "cdw_terminal",
      version: 1,
      schemaVersion: 2,
      tasks: [{ name: "cdw_fatal", taskReferenceName: "fatal", type: "SIMPLE", taskDefinition: { retryCount: 3, retryDelaySeconds: 0 } }],
    });
    let attempts = 0;
    const worker = startWorker({
      cdw_fatal: () => Promise.resolve(++attempts === 1 ? { status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: "bad input" } : { status: "COMPLETED", outputData: { fixed: true } }),
    });
    try {
      const id = await start({ name: "cdw_terminal", input: {} });
      const failed = await waitForEnd(id);
      expect(failed).toMatchObject({ status: "FAILED", failedReferenceTaskNames: ["fatal"] });
      expect(failed.reasonForIncompletion).toContain("bad input");
      expect(failed.tasks.map((x) => [x.referenceTaskName, x.status, x.retryCount])).toEqual([["fatal", "FAILED_WITH_TERMINAL_ERROR", 0]]);
      expect((await h.call("POST", `/workflow/${id}/retry`, { token: adminToken })).status).toBe(200);
      const retried = await waitForEnd(id);
      expect(retried.status).toBe("COMPLETED");
      expect(retried.tasks.map((x) => [x.referenceTaskName, x.status])).toEqual([
        ["fatal", "FAILED_WITH_TERMINAL_ERROR"],
        ["fatal", "COMPLETED"],
      ]);
    } finally {
      await worker.stop();
    }
    expect(worker.errors).toEqual([]);
  });

  it("update-v2 completes a task and hands out the next one of its type, or null", async () => {
    await register({ name: "cdw_v2", version: 1, schemaVersion: 2, tasks: [{ name: "cdw_v2_step", taskReferenceName: "step", type: "SIMPLE" }] });
    const ids = [await start({ name: "cdw_v2" }), await start({ name: "cdw_v2" })];
    await waitUntil(async () => (await h.call<Record<string, number>>("GET", "/tasks/queue/sizes?taskType=cdw_v2_step", { token: workerToken })).body.cdw_v2_step === 2, {
      what: "two queued tasks",
      timeoutMs: 10_000,
    });
    const [first] = (await h.call<ConductorTask[]>("GET", "/tasks/poll/batch/cdw_v2_step?timeout=0&workerid=v2", { token: workerToken })).body;
    const next = await h.call<ConductorTask | null>("POST", "/tasks/update-v2", { token: workerToken, body: { workflowInstanceId: first!.workflowInstanceId, taskId: first!.taskId, status: "COMPLETED", workerId: "v2" } });
    expect(next.status).toBe(200);
    expect(next.contentType).toMatch(/^application\/json/);
    expect(next.body).toMatchObject({ taskType: "cdw_v2_step", status: "IN_PROGRESS", workerId: "v2" });
    expect(next.body!.workflowInstanceId).not.toBe(first!.workflowInstanceId);
    const none = await h.call("POST", "/tasks/update-v2", { token: workerToken, body: { workflowInstanceId: next.body!.workflowInstanceId, taskId: next.body!.taskId, status: "COMPLETED" } });
    expect(none).toMatchObject({ status: 200, body: null });
    for (const id of ids) expect((await waitForEnd(id)).status).toBe("COMPLETED");
  });

  it("execute waits for a run of system tasks to finish and answers the WorkflowRun", async () => {
    await register({
      name: "cdw_sync",
      version: 1,
      schemaVersion: 2,
      tasks: [{ name: "add", taskReferenceName: "add", type: "INLINE", inputParameters: { evaluatorType: "javascript", expression: "$.a + $.b", a: "${workflow.input.a}", b: 2 } }],
      outputParameters: { sum: "${add.output.result}" },
    });
    const run = await h.call<{ workflowId: string; status: string; output: unknown; tasks: ConductorTask[]; requestId: string }>("POST", "/workflow/execute/cdw_sync/1?requestId=r-1&waitForSeconds=15", {
      token: adminToken,
      body: { input: { a: 40 } },
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ status: "COMPLETED", output: { sum: 42 }, requestId: "r-1" });
    expect(run.body.tasks.map((x) => [x.taskType, x.status])).toEqual([["INLINE", "COMPLETED"]]);
  });
});

const samples = (file: string) => JSON.parse(readFileSync(path.join(import.meta.dirname, "fixtures", file), "utf8")) as Record<string, unknown>;

describe("Conductor JSON samples of each task type import, run and finish", () => {
  it("SIMPLE, LAMBDA, INLINE, JSON_JQ_TRANSFORM, SET_VARIABLE, EVENT, HTTP, NOOP, SWITCH, DECISION, EXCLUSIVE_JOIN, FORK_JOIN, JOIN, FORK_JOIN_DYNAMIC, DO_WHILE, DYNAMIC, SUB_WORKFLOW, START_WORKFLOW, WAIT, HUMAN, TERMINATE", async () => {
    for (const file of ["sample-child.json", "sample-system-tasks.json", "sample-branching.json", "sample-loops-and-children.json", "sample-wait-human-terminate.json"]) await register(samples(file));
    const echo = (task: ConductorTask) => Promise.resolve({ status: "COMPLETED", outputData: { ran: task.referenceTaskName } });
    const worker = startWorker({
      sample_double: (task) => Promise.resolve({ status: "COMPLETED", outputData: { value: (task.inputData.n as number) * 2 } }),
      sample_fast: echo,
      sample_slow: echo,
      sample_yes: echo,
      sample_no: echo,
      sample_left: echo,
      sample_right: echo,
      sample_item: (task) => Promise.resolve({ status: "COMPLETED", outputData: { v: task.inputData.v } }),
      sample_loop_step: (task) => Promise.resolve({ status: "COMPLETED", outputData: { i: task.inputData.i } }),
      sample_dynamic_target: echo,
      sample_child_step: (task) => Promise.resolve({ status: "COMPLETED", outputData: { doubled: (task.inputData.v as number) * 2 } }),
      sample_never: echo,
    });
    try {
      const system = await start({ name: "sample_system_tasks", input: { n: 3, url: echoUrl } });
      const branching = await start({ name: "sample_branching", input: { kind: "fast", flag: "no" } });
      const loops = await start({ name: "sample_loops_and_children", input: { times: 3, dynamicTask: "sample_dynamic_target" } });
      const human = await start({ name: "sample_wait_human_terminate", input: {} });

      const sys = await waitForEnd(system);
      expect(sys.status, JSON.stringify(sys)).toBe("COMPLETED");
      // n=3 → double 6 → lambda 7 → square 49.
      expect(sys.output).toEqual({ squared: 49, list: [0, 1, 2], echo: { squared: 49 }, event: "conductor:sample_system_tasks:sample_events" });
      expect(sys.tasks.map((x) => x.taskType)).toEqual(["sample_double", "INLINE", "INLINE", "JSON_JQ_TRANSFORM", "SET_VARIABLE", "EVENT", "HTTP", "NOOP"]);

      const br = await waitForEnd(branching);
      expect(br.status, JSON.stringify(br)).toBe("COMPLETED");
      const ran = br.tasks.filter((x) => x.status === "COMPLETED").map((x) => x.referenceTaskName);
      expect(ran).toEqual(expect.arrayContaining(["route", "fast", "decide", "no_task", "after_decision", "left", "right", "join", "make_forks", "dynamic_fork", "item_a", "item_b"]));
      // A dynamic fork's instances carry the references its task list gave them.
      expect(br.tasks.filter((x) => x.taskType === "sample_item").map((x) => [x.referenceTaskName, x.inputData])).toEqual([
        ["item_a", { v: 1 }],
        ["item_b", { v: 2 }],
      ]);
      expect(ran).not.toContain("slow");
      expect(ran).not.toContain("yes_task");
      expect(br.output).toMatchObject({ joined: { left: { ran: "left" }, right: { ran: "right" } }, items: { item_a: { v: 1 }, item_b: { v: 2 } } });

      const lp = await waitForEnd(loops);
      expect(lp.status, JSON.stringify(lp)).toBe("COMPLETED");
      expect(lp.tasks.filter((x) => x.taskType === "sample_loop_step").map((x) => [x.referenceTaskName, x.iteration])).toEqual([
        ["step__1", 1],
        ["step__2", 2],
        ["step__3", 3],
      ]);
      expect(lp.tasks.find((x) => x.referenceTaskName === "dyn")).toMatchObject({ taskType: "sample_dynamic_target", status: "COMPLETED" });
      expect(lp.output).toMatchObject({ childOutput: { doubled: 14 } });
      const startedChild = (await h.call<ConductorWorkflow>("GET", `/workflow/${lp.output.started as string}`, { token: adminToken })).body;
      expect(startedChild.workflowId).toBe(lp.output.started);

      // WAIT with a duration ends by itself; the HUMAN task is completed the Conductor way, by a TaskResult.
      let humanTask: ConductorTask | undefined;
      await waitUntil(
        async () => {
          humanTask = (await read(human)).tasks.find((x) => x.taskType === "HUMAN" && x.status === "IN_PROGRESS");
          return humanTask !== undefined;
        },
        { what: "the HUMAN task to open", timeoutMs: 15_000 },
      );
      expect((await read(human)).tasks[0]).toMatchObject({ taskType: "WAIT", status: "COMPLETED" });
      const done = await h.call("POST", "/tasks", { token: adminToken, body: { workflowInstanceId: human, taskId: humanTask!.taskId, status: "COMPLETED", outputData: { approved: true } } });
      expect(done.status).toBe(200);
      const hm = await waitForEnd(human);
      expect(hm).toMatchObject({ status: "COMPLETED", output: { approved: true } });
      expect(hm.tasks.map((x) => [x.taskType, x.status])).toEqual([
        ["WAIT", "COMPLETED"],
        ["HUMAN", "COMPLETED"],
        ["SWITCH", "COMPLETED"],
        ["TERMINATE", "COMPLETED"],
      ]);
    } finally {
      await worker.stop();
    }
    expect(worker.errors).toEqual([]);
  });
});
