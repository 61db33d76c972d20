import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NodeFlowApiError } from "../sdk";
import type { TaskContext, WorkerTask } from "../sdk";
import { UsageError } from "./help";
import { DEFAULT_URL, fatalPollProblem, loadWorkerDefinition, parseWorkerArgs, runWorker, workerDefinitionOf, WorkerModuleError } from "./worker";
import type { WorkerIo } from "./worker";

const scratch = mkdtempSync(path.join(tmpdir(), "nf-worker-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function io(): WorkerIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (line) => lines.push(line), err: (line) => errors.push(line), signals: new EventEmitter() };
}

describe("nf worker: arguments", () => {
  it("takes the server, key and namespace from the environment, and flags over it", () => {
    const env = { NODE_FLOW_URL: "http://nf.internal:8080", NODE_FLOW_API_KEY: "nf_env", NODE_FLOW_NAMESPACE: "team-a" };
    expect(parseWorkerArgs(["w.ts"], env)).toMatchObject({ modulePath: "w.ts", baseUrl: "http://nf.internal:8080", apiKey: "nf_env", namespace: "team-a", concurrency: undefined, shutdownTimeoutMs: 30_000, abandon: false });
    expect(parseWorkerArgs(["w.ts", "--url", "https://nf.example", "--api-key", "nf_flag", "--namespace", "b", "--concurrency", "8", "--shutdown-timeout", "2.5", "--abandon"], env)).toMatchObject({
      baseUrl: "https://nf.example",
      apiKey: "nf_flag",
      namespace: "b",
      concurrency: 8,
      shutdownTimeoutMs: 2500,
      abandon: true,
    });
    expect(parseWorkerArgs(["w.ts"], { NODE_FLOW_API_KEY: "  " })).toMatchObject({ baseUrl: DEFAULT_URL, apiKey: undefined, namespace: "default" });
  });

  it("refuses what cannot work, naming the flag", () => {
    expect(() => parseWorkerArgs([], {})).toThrow(UsageError);
    expect(() => parseWorkerArgs(["a.ts", "b.ts"], {})).toThrow(/one module/);
    expect(() => parseWorkerArgs(["w.ts", "--concurrency", "0"], {})).toThrow(/--concurrency/);
    expect(() => parseWorkerArgs(["w.ts", "--shutdown-timeout", "soon"], {})).toThrow(/--shutdown-timeout/);
    expect(() => parseWorkerArgs(["w.ts", "--url", "localhost:3000"], {})).toThrow(/--url/);
    expect(() => parseWorkerArgs(["w.ts", "--colour"], {})).toThrow(UsageError);
  });
});

describe("nf worker: the module", () => {
  const handler = () => ({});

  it("finds the handlers in the default export (defineWorker's or a bare map), else in `handlers`", () => {
    expect(workerDefinitionOf({ default: { queues: { a: handler }, concurrency: 2 } }, "m.ts")).toEqual({ queues: { a: handler }, concurrency: 2 });
    expect(workerDefinitionOf({ default: { a: handler, b: handler } }, "m.ts")).toEqual({ queues: { a: handler, b: handler } });
    expect(workerDefinitionOf({ handlers: { a: handler } }, "m.ts")).toEqual({ queues: { a: handler } });
  });

  it("says what a module without handlers should export", () => {
    expect(() => workerDefinitionOf({ something: 1 }, "m.ts")).toThrow(/m\.ts exports no handlers\. Expected: export default defineWorker/);
    expect(() => workerDefinitionOf({ default: { queues: { a: "x" } } }, "m.ts")).toThrow(/default export is not a worker: the handler of "a" is not a function/);
  });

  it("loads a TypeScript module from a path, and reports a missing file or one that throws as it loads", async () => {
    const example = await loadWorkerDefinition("examples/hello-worker.ts");
    expect(Object.keys(example.queues)).toEqual(["greet"]);
    await expect(loadWorkerDefinition("examples/no-such-worker.ts")).rejects.toThrow(/There is no file examples\/no-such-worker\.ts/);
    const broken = path.join(scratch, "broken-worker.ts");
    writeFileSync(broken, 'throw new Error("missing SMTP_HOST");\nexport default {};\n');
    const error = (await loadWorkerDefinition(broken).catch((e: unknown) => e)) as WorkerModuleError;
    expect(error).toBeInstanceOf(WorkerModuleError);
    expect(error.message).toMatch(/Could not load .*broken-worker\.ts:\n.*missing SMTP_HOST/);
  });

  it("the example's greet handler greets, replies, and refuses a missing name for good", async () => {
    const { greet } = (await loadWorkerDefinition("examples/hello-worker.ts")).queues;
    const logged: string[] = [];
    const ctx = { log: (line: string) => logged.push(line) } as unknown as TaskContext;
    const taskWith = (input: Record<string, unknown>) => ({ input }) as WorkerTask;
    expect(await greet!(taskWith({ name: "Ada" }), ctx)).toEqual({ greeting: "Hello, Ada!" });
    expect(await greet!(taskWith({ name: "node-flow", replyTo: "Hello, Ada!" }), ctx)).toEqual({ greeting: 'node-flow says: thanks! (you said "Hello, Ada!")' });
    expect(logged).toEqual(["greeting Ada", "greeting node-flow"]);
    expect(() => greet!(taskWith({}), ctx)).toThrow(expect.objectContaining({ name: "TerminalError" }) as Error);
  });
});

describe("nf worker: refusals", () => {
  it("without an API key: exit 1, saying how to create one, before loading anything", async () => {
    const out = io();
    expect(await runWorker(["examples/no-such-worker.ts"], {}, out)).toBe(1);
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]).toMatch(/NODE_FLOW_API_KEY/);
    expect(out.errors[0]).toMatch(/Settings → API keys/);
    expect(out.errors[0]).toMatch(/nf -- bootstrap --api-key-only/);
  });

  it("with no server at the address: exit 1, naming the address and NODE_FLOW_URL", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, "127.0.0.1", () => {
        const address = server.address() as net.AddressInfo;
        server.close(() => resolve(address.port));
      });
    });
    const out = io();
    expect(await runWorker(["examples/hello-worker.ts", "--url", `http://127.0.0.1:${port}`], { NODE_FLOW_API_KEY: "nf_x" }, out)).toBe(1);
    expect(out.errors).toEqual([expect.stringMatching(new RegExp(`^Cannot reach node-flow at http://127\\.0\\.0\\.1:${port}.*NODE_FLOW_URL`))]);
  });

  it("turns the poll refusals no retry can fix into one line with the fix; a 5xx is not one of them", () => {
    const refusal = (status: number, detail: string) => new NodeFlowApiError({ status, method: "POST", path: "/api/v1/ns/x/tasks/poll", body: { title: "t", status, detail }, attempts: 1 });
    const args = { namespace: "x", baseUrl: "http://nf" };
    expect(fatalPollProblem(refusal(401, "revoked"), args, undefined)).toMatch(/refused the API key \(401: revoked\).*Settings → API keys.*bootstrap/);
    expect(fatalPollProblem(refusal(403, "scope"), args, undefined)).toMatch(/worker or admin scope/);
    expect(fatalPollProblem(refusal(404, "no such namespace"), args, undefined)).toMatch(/Namespace "x" was not found.*NODE_FLOW_NAMESPACE/);
    expect(fatalPollProblem(refusal(400, "bad"), args, "HTTP")).toMatch(/refused to poll queue "HTTP" \(400: bad\)/);
    expect(fatalPollProblem(refusal(503, "busy"), args, undefined)).toBeUndefined();
    expect(fatalPollProblem(refusal(429, "slow down"), args, undefined)).toBeUndefined();
    expect(fatalPollProblem(new Error("ECONNRESET"), args, undefined)).toBeUndefined();
  });
});
