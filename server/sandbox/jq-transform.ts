/**
 * jq for JSON_JQ_TRANSFORM, through jq-wasm (jq 1.8.2 compiled to wasm: the
 * syntax Conductor users write, `{a: .x // 1}` included, which jq 1.6 and
 * 1.7 refuse), run in a worker thread.
 *
 * Why a worker: jq runs a filter as one synchronous call, and nothing can
 * interrupt it. Measured in-process: `[range(1e9)]`,
 * `def f: f; f`, `repeat(1)` and `last(range(1e9))` each hold the thread
 * until killed; `def f: [f]; f` and a heap past the cap abort the
 * Emscripten runtime. In a
 * worker a runaway filter is terminated at its deadline and a fresh worker
 * boots (≈ 200 ms, paid by the calls queued behind it); the process never
 * notices.
 *
 * Cost, measured on this machine (2 cores, median of 3 000 warm calls of
 * `.a.b | map(.*2)`, two runs): ≈ 1.4 ms in-process, 1.6–2.2 ms through the
 * worker — the two message hops and structured clones add 0.2–0.8 ms — and
 * the event loop is free while jq runs.
 * One worker serves calls in order; a queued call's clock starts when the
 * worker takes it.
 *
 * Memory: jq's wasm memory may grow to `memoryBytes` above its initial
 * 16 MiB (the worker refuses `WebAssembly.Memory#grow` past that, so jq's
 * malloc fails: "out of memory", and the worker is replaced), and the
 * worker's own JS heap, which holds the output text, is capped by
 * `resourceLimits`.
 *
 * The guest sees nothing of the host: jq-wasm has an in-memory file system
 * only, and `env`/`$ENV` are Emscripten's fixed defaults (USER=web_user…),
 * not this process's environment.
 */
import { Worker } from "node:worker_threads";
import { firstLine, positive, resolvePackageFile } from "./sandbox-helpers";

export interface JqTransformOptions {
  /** Default budget per call, from when the worker takes it. Default 5000 ms. */
  timeoutMs?: number;
  /** Wasm heap jq may grow to above its initial 16 MiB. Default 256 MiB. */
  memoryBytes?: number;
  /** Largest input accepted, in characters of its JSON text. Default 16 Mi. */
  maxInputChars?: number;
  /** How long a call waits for a (re)starting worker. Default 10 s. */
  bootTimeoutMs?: number;
}

/** Every value the filter emitted, in order (none for `empty`), or why it failed. */
export type JqOutcome = { ok: true; results: unknown[] } | { ok: false; error: string };

/**
 * A JSON_JQ_TRANSFORM task's output, as Conductor's JsonJqTransform writes it
 * (conductor-oss/conductor, JsonJqTransform.java): `result` is the first
 * value (`null` when there is none) and `resultList` all of them; on failure
 * the task FAILS with `error` in its output and as its reasonForIncompletion.
 */
export type JqTaskOutput = { result: unknown; resultList: unknown[] } | { error: string };

export interface JqTransform {
  /**
   * Runs `query` over `input` (which crosses as JSON text: `undefined`
   * becomes `null`). Conductor runs the filter over the task's whole resolved
   * input, `queryExpression` included. Never rejects.
   */
  transform(input: unknown, query: string, options?: { timeoutMs?: number }): Promise<JqOutcome>;
  /** Stops the worker; pending and later calls resolve to "jq is closed". */
  close(): Promise<void>;
}

/** Maps a transform's outcome to the task output Conductor produces. */
export function jqTaskOutput(outcome: JqOutcome): JqTaskOutput {
  if (!outcome.ok) return { error: outcome.error };
  return { result: outcome.results.length > 0 ? outcome.results[0] : null, resultList: outcome.results };
}

const DEFAULTS = {
  timeoutMs: 5000,
  memoryBytes: 256 * 1024 * 1024,
  maxInputChars: 16 * 1024 * 1024,
  bootTimeoutMs: 10_000,
} as const;

/** Starts the jq worker and waits until jq has loaded in it. */
export async function createJqTransform(options: JqTransformOptions = {}): Promise<JqTransform> {
  const pool = new JqWorker({
    timeoutMs: positive(options.timeoutMs, DEFAULTS.timeoutMs),
    memoryBytes: positive(options.memoryBytes, DEFAULTS.memoryBytes),
    maxInputChars: positive(options.maxInputChars, DEFAULTS.maxInputChars),
    bootTimeoutMs: positive(options.bootTimeoutMs, DEFAULTS.bootTimeoutMs),
  });
  const warmUp = await pool.transform(null, ".");
  if (!warmUp.ok) {
    await pool.close();
    throw new Error(warmUp.error);
  }
  return pool;
}

interface Job {
  id: number;
  inputJson: string;
  query: string;
  timeoutMs: number;
  resolve: (outcome: JqOutcome) => void;
}

type WorkerMessage =
  | { type: "ready" }
  | { type: "boot-failed"; error: string }
  | { type: "result"; id: number; results: unknown[] }
  | { type: "error"; id: number; error: string; fatal: boolean };

interface Slot {
  worker: Worker;
  ready: boolean;
  /** The job the worker holds, and the timer that kills the worker if it overruns. */
  current?: { job: Job; timer: NodeJS.Timeout };
  bootTimer?: NodeJS.Timeout;
}

class JqWorker implements JqTransform {
  private slot: Slot | undefined;
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly limits: Required<JqTransformOptions>) {}

  transform(input: unknown, query: string, options: { timeoutMs?: number } = {}): Promise<JqOutcome> {
    if (this.closed) return Promise.resolve({ ok: false, error: "jq is closed" });
    if (typeof query !== "string" || query.trim() === "") return Promise.resolve({ ok: false, error: "queryExpression is empty" });
    let inputJson: string;
    try {
      inputJson = JSON.stringify(input) ?? "null";
    } catch (error) {
      return Promise.resolve({ ok: false, error: `input is not JSON-serialisable: ${firstLine(error)}` });
    }
    if (inputJson.length > this.limits.maxInputChars) {
      return Promise.resolve({ ok: false, error: `input too large: ${inputJson.length} characters of JSON, limit ${this.limits.maxInputChars}` });
    }
    const timeoutMs = positive(options.timeoutMs, this.limits.timeoutMs);
    return new Promise<JqOutcome>((resolve) => {
      this.queue.push({ id: this.nextId++, inputJson, query, timeoutMs, resolve });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve({ ok: false, error: "jq is closed" });
    const slot = this.slot;
    this.slot = undefined;
    if (slot) {
      this.settle(slot, { ok: false, error: "jq is closed" });
      clearTimeout(slot.bootTimer);
      await slot.worker.terminate();
    }
  }

  /** Hands the next queued job to the worker when it is ready and idle, booting one if there is none. */
  private pump(): void {
    if (this.closed || this.queue.length === 0) return;
    const slot = (this.slot ??= this.spawn());
    if (!slot.ready || slot.current) return;
    const job = this.queue.shift();
    if (!job) return;
    const timer = setTimeout(() => this.fail(slot, `timed out after ${job.timeoutMs} ms`), job.timeoutMs);
    slot.current = { job, timer };
    slot.worker.postMessage({ id: job.id, input: job.inputJson, query: job.query });
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { jqPath: jqWasmPath(), memoryBytes: this.limits.memoryBytes },
      // The output is held as JS text before it is parsed and cloned back.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    const slot: Slot = { worker, ready: false };
    slot.bootTimer = setTimeout(() => this.bootFailed(slot, `jq did not start within ${this.limits.bootTimeoutMs} ms`), this.limits.bootTimeoutMs);
    worker.on("message", (message: WorkerMessage) => this.onMessage(slot, message));
    worker.on("error", (error: Error & { code?: string }) => {
      const outOfMemory = error.code === "ERR_WORKER_OUT_OF_MEMORY";
      if (!slot.ready) this.bootFailed(slot, `jq failed to start: ${error.message}`);
      else this.fail(slot, outOfMemory ? "out of memory" : `jq crashed: ${error.message}`);
    });
    worker.on("exit", () => {
      if (this.slot === slot) this.fail(slot, "jq crashed: worker exited");
    });
    // An idle worker must not keep the process alive; a job in flight holds its timer, which does.
    worker.unref();
    return slot;
  }

  private onMessage(slot: Slot, message: WorkerMessage): void {
    if (this.slot !== slot) return;
    switch (message.type) {
      case "ready":
        clearTimeout(slot.bootTimer);
        slot.ready = true;
        break;
      case "boot-failed":
        this.bootFailed(slot, `jq failed to start: ${message.error}`);
        return;
      case "result":
        if (slot.current?.job.id === message.id) this.settle(slot, { ok: true, results: message.results });
        break;
      case "error":
        if (slot.current?.job.id !== message.id) break;
        if (message.fatal) {
          // jq aborted: its Emscripten runtime is not trusted to run another filter.
          this.fail(slot, message.error);
          return;
        }
        this.settle(slot, { ok: false, error: message.error });
        break;
    }
    this.pump();
  }

  private settle(slot: Slot, outcome: JqOutcome): void {
    const current = slot.current;
    if (!current) return;
    slot.current = undefined;
    clearTimeout(current.timer);
    current.job.resolve(outcome);
  }

  /** The worker is hung, dead or poisoned: fail its job, kill it, and let the queue boot a successor. */
  private fail(slot: Slot, error: string): void {
    if (this.slot !== slot) return;
    this.slot = undefined;
    this.settle(slot, { ok: false, error });
    clearTimeout(slot.bootTimer);
    slot.worker.terminate().catch(() => undefined);
    this.pump();
  }

  /** A worker that cannot start fails everything waiting; the next call tries again. */
  private bootFailed(slot: Slot, error: string): void {
    if (this.slot !== slot) return;
    this.slot = undefined;
    clearTimeout(slot.bootTimer);
    slot.worker.terminate().catch(() => undefined);
    for (const job of this.queue.splice(0)) job.resolve({ ok: false, error });
  }
}

let resolvedJqWasm: string | undefined;

/** The worker loads jq-wasm by absolute path: an eval'd worker resolves bare names from the cwd. */
function jqWasmPath(): string {
  resolvedJqWasm ??= resolvePackageFile("jq-wasm");
  return resolvedJqWasm;
}

/**
 * The worker, as CommonJS source (an eval'd worker cannot load TypeScript).
 * `raw(input, filter, ["-c"])` and split lines: jq-wasm's `raw` never throws
 * for a jq error (it answers the exit code and stderr), so a throw is an abort.
 * A filter that printed values and then failed is an error, as in Conductor.
 */
const WORKER_SOURCE = String.raw`"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const { jqPath, memoryBytes } = workerData;

// jq.wasm defines its own memory (16 MiB initial) and grows it through this
// method; refusing past the cap makes jq's malloc fail.
const INITIAL_BYTES = 16 * 1024 * 1024;
const realGrow = WebAssembly.Memory.prototype.grow;
let heapRefused = false;
WebAssembly.Memory.prototype.grow = function (deltaPages) {
  if (this.buffer.byteLength + deltaPages * 65536 > INITIAL_BYTES + memoryBytes) {
    heapRefused = true;
    throw new RangeError("jq heap limit");
  }
  return realGrow.call(this, deltaPages);
};
// The runtime prints an abort's "Aborted()" with console.error.
console.warn = () => undefined;
console.error = () => undefined;

function message(raw) {
  if (/cannot allocate memory|jq heap limit|out of memory/i.test(raw)) return "out of memory";
  return raw
    .replace(/jq: error \(at [^)]*\): /g, "jq: error: ")
    .replace(/ \(Unix shell quoting issues\?\)/g, "")
    .split("\n").map((line) => line.trimEnd()).join("\n").trim();
}

require(jqPath).loadJq().then(
  (jq) => {
    parentPort.on("message", ({ id, input, query }) => {
      heapRefused = false;
      let output;
      try {
        output = jq.raw(input, query, ["-c"]);
      } catch (error) {
        const text = heapRefused ? "out of memory" : message(error && typeof error.message === "string" ? error.message : String(error));
        parentPort.postMessage({ type: "error", id, error: text, fatal: true });
        return;
      }
      if (output.exitCode !== 0) {
        const text = output.stderr.split("\n").filter((line) => !line.startsWith('["DEBUG:"')).join("\n");
        parentPort.postMessage({ type: "error", id, error: message(text) || "jq exited with status " + output.exitCode, fatal: false });
        return;
      }
      let results;
      try {
        results = output.stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
      } catch (error) {
        parentPort.postMessage({ type: "error", id, error: "jq output is not JSON: " + message(String(error)), fatal: false });
        return;
      }
      parentPort.postMessage({ type: "result", id, results });
    });
    parentPort.postMessage({ type: "ready" });
  },
  (error) => parentPort.postMessage({ type: "boot-failed", error: message(String(error && error.message || error)) }),
);
`;
