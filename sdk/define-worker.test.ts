import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject, PolledTask } from "./api-types";
import { defineWorker, startWorker } from "./define-worker";
import type { NodeFlowWorker, WorkerTask } from "./worker";

/** Polls answered from per-queue lists (then empty, after a short wait); every call recorded. */
function fakeServer(tasks: Record<string, PolledTask[]>) {
  const calls: { action: string; body: Record<string, unknown> }[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const action = url.pathname.split("/").at(-1)!;
    const body = (init?.body ? JSON.parse(init.body as string) : {}) as Record<string, unknown>;
    calls.push({ action, body });
    let answer: unknown = {};
    if (action === "poll") {
      const queued = tasks[body.queue as string] ?? [];
      const handed = queued.splice(0, body.count as number);
      if (handed.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      answer = { tasks: handed };
    }
    return new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": "application/json" } });
  };
  return { calls, fetch };
}

function task(queue: string, n: number, input: JsonObject): PolledTask {
  return {
    taskId: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
    workflowId: "11111111-1111-4111-8111-111111111111",
    refName: `${queue}_${n}`,
    taskType: "SIMPLE",
    taskDefName: queue,
    queue,
    iteration: 0,
    attempt: 0,
    input,
    pollCount: 1,
    startedAt: new Date().toISOString(),
    leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    responseTimeoutSeconds: null,
    timeoutSeconds: null,
  };
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const workers: NodeFlowWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ timeoutMs: 100 })));
});

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

type ResizeInput = { width: number };

describe("defineWorker and startWorker", () => {
  it("hands each task to its queue's handler, and reports what that handler returned", async () => {
    // A handler may narrow its input type; one written inline gets a JSON object.
    const resize = (t: WorkerTask<ResizeInput>) => ({ resized: t.input.width / 2 });
    const definition = defineWorker({
      concurrency: 3,
      queues: {
        resize,
        greet: (t) => ({ greeting: `Hello, ${String(t.input.name)}!` }),
      },
    });
    const server = fakeServer({ resize: [task("resize", 1, { width: 640 })], greet: [task("greet", 2, { name: "Ada" }), task("greet", 3, { name: "Grace" })] });
    const worker = startWorker(definition, { baseUrl: "http://nf.test", apiKey: "k", namespace: "default", fetch: server.fetch, logger: silent, pollTimeoutMs: 10, workerId: "w" });
    workers.push(worker);
    expect(worker.queues).toEqual(["resize", "greet"]);
    await until(() => worker.stats().completed === 3, "three completions");
    const outputs = server.calls.filter((c) => c.action === "complete").map((c) => c.body.output);
    expect(outputs).toEqual(expect.arrayContaining([{ resized: 320 }, { greeting: "Hello, Ada!" }, { greeting: "Hello, Grace!" }]));
    // The definition's concurrency: the polls together never ask for more than three.
    expect(server.calls.filter((c) => c.action === "poll").every((c) => (c.body.count as number) <= 3)).toBe(true);
  });

  it("lets the caller's options win over the definition's, but not an option given as undefined", async () => {
    const server = fakeServer({});
    const definition = defineWorker({ concurrency: 7, queues: { a: () => ({}) } });
    const overridden = startWorker(definition, { baseUrl: "http://nf.test", apiKey: "k", namespace: "default", fetch: server.fetch, logger: silent, pollTimeoutMs: 10, concurrency: 2 });
    const kept = startWorker(definition, { baseUrl: "http://nf.test", apiKey: "k", namespace: "default", fetch: server.fetch, logger: silent, pollTimeoutMs: 10, concurrency: undefined });
    workers.push(overridden, kept);
    await until(() => server.calls.filter((c) => c.action === "poll").length >= 2, "a poll of each");
    const counts = new Set(server.calls.filter((c) => c.action === "poll").map((c) => c.body.count));
    expect(counts).toEqual(new Set([2, 7]));
  });

  it("refuses a definition without queues, or with a handler that is not a function", () => {
    expect(() => defineWorker({ queues: {} })).toThrow(/names no queue/);
    expect(() => defineWorker({ queues: { a: "nope" as unknown as () => undefined } })).toThrow(/handler of "a" is not a function/);
    expect(() => defineWorker(undefined as unknown as { queues: Record<string, () => undefined> })).toThrow(/must be an object/);
    expect(() => startWorker({ queues: [] as unknown as Record<string, () => undefined> }, { baseUrl: "http://x", apiKey: "k", namespace: "n" })).toThrow(/map queue names/);
  });
});
