import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject, PolledTask } from "./api-types";
import { createWorker } from "./worker";
import type { NodeFlowWorker, TaskHandler, WorkerLogger, WorkerOptions } from "./worker";
import { LeaseLostError, TerminalError, WorkerShutdownError } from "./worker-errors";

/**
 * The worker's own logic — batch sizes, reports, heartbeats, logs, shutdown —
 * against an in-memory fake of the worker protocol served through `fetch`.
 * The real server is exercised in worker.int.test.ts; here each rule is
 * isolated and the timings are short.
 */

interface Call {
  action: string;
  taskId?: string;
  body: Record<string, unknown>;
}

/** The worker protocol in memory: a queue of tasks, long-polls that wait for one, and a log of every call. */
class FakeProtocol {
  readonly calls: Call[] = [];
  readonly queue: PolledTask[] = [];
  private wake: (() => void)[] = [];
  /** Answers for the next requests of an action, in order (a status, with an optional problem detail). */
  readonly scripted = new Map<string, { status: number; detail?: string }[]>();
  /** While set, heartbeats are answered only once it resolves (an answer that arrives late). */
  heartbeatGate: Promise<void> | undefined;
  private next = 0;

  add(count: number, input: (i: number) => JsonObject = (i) => ({ i }), extra: Partial<PolledTask> = {}): void {
    for (let i = 0; i < count; i++) {
      const n = this.next++;
      this.queue.push({
        taskId: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
        workflowId: "11111111-1111-4111-8111-111111111111",
        refName: `step${n}`,
        taskType: "SIMPLE",
        taskDefName: "q",
        queue: "q",
        iteration: 0,
        attempt: 0,
        input: input(n),
        pollCount: 1,
        startedAt: new Date().toISOString(),
        leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
        responseTimeoutSeconds: null,
        timeoutSeconds: null,
        ...extra,
      });
    }
    for (const wake of this.wake.splice(0)) wake();
  }

  callsOf(action: string): Call[] {
    return this.calls.filter((c) => c.action === action);
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const body = (init?.body ? JSON.parse(init.body as string) : {}) as Record<string, unknown>;
    const match = /^\/api\/v1\/ns\/[^/]+\/tasks\/(?:([^/]+)\/)?([a-z]+)$/.exec(url.pathname);
    if (!match) return json(404, { title: "Not found" });
    const [, taskId, action] = match as unknown as [string, string | undefined, string];
    this.calls.push({ action, taskId, body });
    if (action === "heartbeat" && this.heartbeatGate) await this.heartbeatGate;
    const scripted = this.scripted.get(action)?.shift();
    if (scripted) return json(scripted.status, { title: "scripted", status: scripted.status, detail: scripted.detail ?? "scripted" }, "application/problem+json");
    switch (action) {
      case "poll":
        return json(200, { tasks: await this.poll(body.count as number, body.timeoutMs as number, init?.signal ?? undefined) });
      case "heartbeat":
        return json(200, { taskId, leaseSeconds: 60 });
      case "release":
        return json(200, { taskId, workflowId: body.workflowId });
      case "complete":
        return json(200, { taskId, workflowId: body.workflowId, status: "COMPLETED" });
      case "fail":
        return json(200, { taskId, workflowId: body.workflowId, status: body.retryable ? "FAILED" : "FAILED_WITH_TERMINAL_ERROR" });
      case "logs":
        return json(200, { appended: (body.lines as string[]).length });
      default:
        return json(404, { title: "Not found" });
    }
  };

  private async poll(count: number, timeoutMs: number, signal: AbortSignal | undefined): Promise<PolledTask[]> {
    if (this.queue.length === 0 && timeoutMs > 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
        signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason as Error);
        });
      });
    }
    return this.queue.splice(0, count);
  }
}

function json(status: number, body: unknown, contentType = "application/json"): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": contentType } });
}

const silent: WorkerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A promise and its resolve, for handlers that wait on the test. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function until(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const workers: NodeFlowWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ timeoutMs: 100 })));
});

function start(fake: FakeProtocol, handler: TaskHandler, options: Partial<WorkerOptions> = {}): NodeFlowWorker {
  const worker = createWorker({
    baseUrl: "http://nf.test",
    apiKey: "nf_key",
    namespace: "default",
    queue: "q",
    handler,
    pollTimeoutMs: 50,
    workerId: "w1",
    logger: silent,
    fetch: fake.fetch,
    retry: { minDelayMs: 1, maxDelayMs: 2 },
    ...options,
  });
  workers.push(worker);
  return worker;
}

describe("createWorker", () => {
  it("asks each poll for exactly the free slots: concurrency minus tasks in flight", async () => {
    const fake = new FakeProtocol();
    fake.add(6);
    const gates = new Map<string, ReturnType<typeof gate>>();
    let releaseAll = false;
    const worker = start(
      fake,
      async (task) => {
        const g = gate();
        gates.set(task.refName, g);
        if (!releaseAll) await g.promise;
        return { done: task.refName };
      },
      { concurrency: 4 },
    );
    await until(() => gates.size === 4, "four tasks in hand");
    expect(fake.callsOf("poll")[0]!.body.count).toBe(4);
    expect(worker.stats().inFlight).toBe(4);
    // Full: no poll goes out while every slot is taken.
    const pollsWhileFull = fake.callsOf("poll").length;
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(fake.callsOf("poll")).toHaveLength(pollsWhileFull);

    gates.get("step0")!.open();
    await until(() => gates.size === 5, "a fifth task");
    expect(fake.callsOf("poll").at(-1)!.body.count).toBe(1);
    releaseAll = true;
    for (const g of gates.values()) g.open();
    await until(() => worker.stats().completed === 6, "six completions");
    await until(() => fake.callsOf("poll").at(-1)!.body.count === 4, "a poll for all four slots again");
    expect(worker.stats()).toMatchObject({ tasksReceived: 6, completed: 6, refused: 0 });
  });

  it("reports the returned object as the output, and failures by what was thrown", async () => {
    const fake = new FakeProtocol();
    fake.add(5, (i) => ({ i }));
    const worker = start(fake, (task) => {
      switch (task.input.i) {
        case 0:
          return { doubled: 2 * (task.input.i as number) };
        case 1:
          throw new Error("the mail server said no");
        case 2:
          throw new TerminalError("no such customer", { output: { customer: "c9" } });
        case 3:
          return undefined;
        default:
          return [1, 2] as unknown as JsonObject;
      }
    });
    await until(() => worker.stats().completed + worker.stats().failed + worker.stats().failedTerminal === 5, "five reports");
    const byTask = (n: number) => fake.calls.find((c) => c.taskId?.endsWith(String(n).padStart(12, "0")) && c.action !== "logs");
    expect(byTask(0)).toMatchObject({ action: "complete", body: { workerId: "w1", output: { doubled: 0 } } });
    expect(byTask(1)).toMatchObject({ action: "fail", body: { retryable: true, reason: "the mail server said no" } });
    expect(byTask(2)).toMatchObject({ action: "fail", body: { retryable: false, reason: "no such customer", output: { customer: "c9" } } });
    expect(byTask(3)).toMatchObject({ action: "complete", body: { output: {} } });
    expect(byTask(4)).toMatchObject({ action: "fail", body: { retryable: false, reason: expect.stringMatching(/returned an array/) as string } });
    expect(fake.callsOf("complete").every((c) => c.body.workflowId === "11111111-1111-4111-8111-111111111111")).toBe(true);
  });

  it("heartbeats a long task, and aborts the handler without reporting when the lease is lost", async () => {
    const fake = new FakeProtocol();
    fake.add(1);
    let reason: unknown;
    const worker = start(
      fake,
      (_task, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            reason = ctx.signal.reason;
            resolve({ late: true });
          });
        }),
      { heartbeatIntervalMs: 10 },
    );
    await until(() => fake.callsOf("heartbeat").length >= 3, "three heartbeats");
    expect(fake.callsOf("heartbeat")[0]!.body).toMatchObject({ workerId: "w1", workflowId: "11111111-1111-4111-8111-111111111111", leaseSeconds: 60 });
    fake.scripted.set("heartbeat", [{ status: 409, detail: "Worker w1 does not hold task" }]);
    await until(() => reason !== undefined, "the handler to be aborted");
    expect(reason).toBeInstanceOf(LeaseLostError);
    await until(() => worker.stats().inFlight === 0, "the task to be let go");
    expect(fake.callsOf("complete")).toHaveLength(0);
    expect(worker.stats()).toMatchObject({ leaseLost: 1, completed: 0, refused: 0 });
  });

  it("does not count a heartbeat answered after the task's report as a lost lease", async () => {
    const fake = new FakeProtocol();
    fake.add(1);
    const handler = gate();
    const worker = start(fake, () => handler.promise.then(() => ({ ok: true })), { heartbeatIntervalMs: 10 });
    await until(() => fake.callsOf("heartbeat").length >= 1, "a heartbeat");
    // The next heartbeat is sent while the task runs and answered only after its report.
    const late = gate();
    fake.heartbeatGate = late.promise;
    const sent = fake.callsOf("heartbeat").length;
    await until(() => fake.callsOf("heartbeat").length > sent, "a heartbeat in flight");
    handler.open();
    await until(() => worker.stats().completed === 1, "the report");
    // The report deleted the lease, so the late heartbeat is refused.
    fake.scripted.set("heartbeat", [{ status: 409, detail: "Worker w1 does not hold task" }]);
    late.open();
    await until(() => fake.scripted.get("heartbeat")?.length === 0, "the late heartbeat's answer");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(worker.stats()).toMatchObject({ completed: 1, leaseLost: 0, heartbeatErrors: 0 });
    await worker.stop();
  });

  it("derives the heartbeat interval from the task's response timeout", async () => {
    const fake = new FakeProtocol();
    // A third of a 1 s window: about three heartbeats a second.
    fake.add(1, () => ({}), { responseTimeoutSeconds: 1 });
    const g = gate();
    start(fake, async () => {
      await g.promise;
    });
    await until(() => fake.callsOf("heartbeat").length >= 2, "two heartbeats", 2000);
    g.open();
  });

  it("sends the handler's log lines before it reports", async () => {
    const fake = new FakeProtocol();
    fake.add(1);
    const worker = start(fake, (_task, ctx) => {
      ctx.log("one");
      ctx.log("two");
      return { ok: true };
    });
    await until(() => worker.stats().completed === 1, "the completion");
    const actions = fake.calls.filter((c) => c.action !== "poll" && c.action !== "heartbeat");
    expect(actions.map((c) => c.action)).toEqual(["logs", "complete"]);
    expect(actions[0]!.body.lines).toEqual(["one", "two"]);
  });

  it("counts a refused report, and tells a refusal after a retry apart from one on the first attempt", async () => {
    const fake = new FakeProtocol();
    fake.scripted.set("complete", [{ status: 409 }, { status: 503 }, { status: 409 }]);
    fake.add(1);
    const worker = start(fake, () => ({ ok: true }));
    await until(() => worker.stats().refused === 1, "a refused report");
    fake.add(1);
    await until(() => worker.stats().unconfirmed === 1, "an unconfirmed report");
    expect(worker.stats()).toMatchObject({ completed: 0, refused: 1, unconfirmed: 1 });
  });

  it("keeps sending a finished result through an outage while its lease lasts, and it lands once the server is back", async () => {
    const fake = new FakeProtocol();
    // More failures than the client's own retries take (5 attempts a call here): the worker's own retry must carry it.
    fake.scripted.set("complete", Array.from({ length: 8 }, () => ({ status: 503 })));
    fake.add(1);
    const worker = start(fake, () => ({ ok: true }));
    await until(() => worker.stats().completed === 1, "the report to land", 10_000);
    expect(worker.stats()).toMatchObject({ completed: 1, reportErrors: 0, refused: 0, unconfirmed: 0 });
    expect(worker.stats().reportRetries).toBeGreaterThan(0);
    expect(fake.callsOf("complete")).toHaveLength(9);
  });

  it("gives a report up only once the task's lease can no longer be valid", async () => {
    const fake = new FakeProtocol();
    fake.scripted.set("complete", Array.from({ length: 500 }, () => ({ status: 503 })));
    fake.scripted.set("heartbeat", Array.from({ length: 500 }, () => ({ status: 503 })));
    fake.add(1);
    const began = Date.now();
    const worker = start(fake, () => ({ ok: true }), { leaseSeconds: 2 });
    await until(() => worker.stats().reportErrors === 1, "the report to be given up", 10_000);
    expect(worker.stats()).toMatchObject({ completed: 0, reportErrors: 1 });
    const retries = worker.stats().reportRetries;
    expect(retries).toBeGreaterThan(0);
    // Given up only when the wait it did not take (retry `retries + 1`: at most
    // 500 ms doubling, capped at 10 s) would have outlasted the 2-second lease.
    const longestSkippedWait = Math.min(10_000, 500 * 2 ** retries);
    expect(Date.now() - began + longestSkippedWait).toBeGreaterThanOrEqual(2000);
  });

  it("stop() aborts the parked poll, lets the running handler finish and report, and polls no more", async () => {
    const fake = new FakeProtocol();
    fake.add(1);
    const g = gate();
    let started = false;
    const worker = start(
      fake,
      async () => {
        started = true;
        await g.promise;
        return { finished: true };
      },
      { pollTimeoutMs: 30_000, concurrency: 2 },
    );
    await until(() => started && fake.callsOf("poll").length === 2, "a task in hand and a second poll parked");
    const stopped = worker.stop({ timeoutMs: 5000 });
    g.open();
    expect(await stopped).toEqual({ drained: true, released: 0, abandoned: 0 });
    expect(fake.callsOf("complete")).toHaveLength(1);
    const polls = fake.callsOf("poll").length;
    fake.add(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fake.callsOf("poll")).toHaveLength(polls);
    expect(fake.queue).toHaveLength(1);
    expect(await worker.stop()).toEqual({ drained: true, released: 0, abandoned: 0 });
  });

  it("at the shutdown timeout, aborts what still runs, sends its logs, and gives it back without reporting it", async () => {
    const fake = new FakeProtocol();
    fake.add(1);
    let reason: unknown;
    const finished: string[] = [];
    const worker = start(
      fake,
      (_task, ctx) => {
        ctx.log("working");
        // Ignores the abort: the worker must not wait for it.
        ctx.signal.addEventListener("abort", () => {
          reason = ctx.signal.reason;
        });
        return new Promise<JsonObject>(() => undefined);
      },
      { onEvent: (e) => e.type === "task-finished" && finished.push(e.outcome) },
    );
    await until(() => worker.stats().inFlight === 1, "the task in hand");
    expect(await worker.stop({ timeoutMs: 30 })).toEqual({ drained: false, released: 1, abandoned: 0 });
    expect(reason).toBeInstanceOf(WorkerShutdownError);
    expect(fake.callsOf("release")).toHaveLength(1);
    expect(fake.callsOf("release")[0]!.body).toEqual({ workflowId: "11111111-1111-4111-8111-111111111111", workerId: "w1" });
    expect(fake.callsOf("fail")).toHaveLength(0);
    expect(fake.callsOf("complete")).toHaveLength(0);
    // The log went out while the task was still this worker's.
    expect(fake.calls.filter((c) => c.action === "logs" || c.action === "release").map((c) => c.action)).toEqual(["logs", "release"]);
    expect(fake.callsOf("logs")[0]!.body.lines).toEqual(["working"]);
    expect(worker.stats()).toMatchObject({ released: 1, abandoned: 0, failed: 0, inFlight: 0 });
    expect(finished).toEqual(["released"]);
  });

  it("counts a release the server refuses as a lost lease, and one that cannot be sent as abandoned", async () => {
    const fake = new FakeProtocol();
    fake.scripted.set("release", [{ status: 409, detail: "does not hold" }, { status: 500 }, { status: 500 }, { status: 500 }]);
    fake.add(2);
    const worker = start(fake, () => new Promise<JsonObject>(() => undefined), { concurrency: 2, retry: { retries: 2, minDelayMs: 1, maxDelayMs: 2 } });
    await until(() => worker.stats().inFlight === 2, "both tasks in hand");
    expect(await worker.stop({ timeoutMs: 10 })).toEqual({ drained: false, released: 0, abandoned: 1 });
    expect(fake.callsOf("release")).toHaveLength(4);
    expect(worker.stats()).toMatchObject({ released: 0, abandoned: 1, leaseLost: 1 });
  });

  it("with the abandon policy, leaves the task to its lease", async () => {
    const fake = new FakeProtocol();
    fake.add(1);
    const worker = start(fake, () => new Promise<JsonObject>(() => undefined), { onShutdownTimeout: "abandon" });
    await until(() => worker.stats().inFlight === 1, "the task in hand");
    expect(await worker.stop({ timeoutMs: 10 })).toEqual({ drained: false, released: 0, abandoned: 1 });
    expect(fake.callsOf("release")).toHaveLength(0);
    expect(fake.callsOf("fail")).toHaveLength(0);
    expect(fake.callsOf("complete")).toHaveLength(0);
  });

  it("a second stop() with a shorter timeout brings the deadline forward; a longer one does not push it back", async () => {
    const fake = new FakeProtocol();
    fake.add(1);
    const worker = start(fake, () => new Promise<JsonObject>(() => undefined));
    await until(() => worker.stats().inFlight === 1, "the task in hand");
    const first = worker.stop({ timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.callsOf("release")).toHaveLength(0);
    expect(worker.stop({ timeoutMs: 120_000 })).toBe(first);
    const second = worker.stop({ timeoutMs: 0 });
    expect(second).toBe(first);
    expect(await second).toEqual({ drained: false, released: 1, abandoned: 0 });
  });

  it("shares the slots between queues so that each keeps a poll going", async () => {
    const fake = new FakeProtocol();
    const worker = start(fake, () => ({}), { queue: undefined, queues: ["a", "b"], concurrency: 4, pollTimeoutMs: 1000 });
    await until(() => new Set(fake.callsOf("poll").map((c) => c.body.queue)).size === 2, "a poll of each queue");
    const [first, second] = fake.callsOf("poll");
    expect((first!.body.count as number) + (second!.body.count as number)).toBe(4);
    expect(worker.queues).toEqual(["a", "b"]);
  });

  it("refuses options that cannot work", () => {
    const base = { baseUrl: "http://x", apiKey: "k", namespace: "n", handler: () => ({}) };
    expect(() => createWorker({ ...base })).toThrow(/at least one queue/);
    expect(() => createWorker({ ...base, queue: "a", queues: ["b"] })).toThrow(/not both/);
    expect(() => createWorker({ ...base, queue: "a", concurrency: 0 })).toThrow(/concurrency/);
    expect(() => createWorker({ ...base, queue: "a", pollTimeoutMs: 60_000 })).toThrow(/pollTimeoutMs/);
    expect(() => createWorker({ ...base, queue: "a", onShutdownTimeout: "fail" as "abandon" })).toThrow(/"release" or "abandon"/);
  });
});
