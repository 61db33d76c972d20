/**
 * The QuickJS sandbox behind the engine's {@link ScriptEvaluator}: INLINE
 * (`evaluatorType` "javascript" or "graaljs"), SWITCH with the javascript
 * evaluator and DO_WHILE conditions all run here. Never `node:vm`.
 *
 * Why a worker thread, when the evaluator must be synchronous: measured with
 * quickjs-emscripten 0.32 (`@jitl/quickjs-wasmfile-release-sync`) in-process,
 * three limits do not hold on the calling thread —
 *
 * - Time. QuickJS polls the interrupt handler once per 10 000 backward jumps
 *   or calls, so a loop whose body is one slow native call escapes the
 *   deadline: `for(;;) 'x'.repeat(1e6)` with a 300 ms deadline ran 16.8 s.
 *   Only a thread can be killed mid-call.
 * - Memory. `runtime.setMemoryLimit` bounds one allocation, not the total:
 *   the Emscripten build counts every block as 0 bytes
 *   (justjake/quickjs-emscripten#255, #271), and a 32 MiB "limit" let the
 *   heap reach 2 GiB. The build imports its `WebAssembly.Memory`, so we hand it
 *   one with a `maximum`: growth past it fails inside malloc and QuickJS throws
 *   a clean "out of memory" (measured: 42 × 1 MiB strings, then OOM, memory 48 MiB).
 * - Host stack. Native recursion that barely touches the wasm shadow stack
 *   (JSON.parse of 100 000 `[`, the parser on deeply nested source) overflows
 *   the *V8* stack before QuickJS's own check fires; the RangeError unwinds
 *   through wasm, leaks the shadow stack (recursion depth then fell 1257 →
 *   611 → 222 → 28 across four such calls) and leaves the module unusable.
 *   In a worker that costs one restart, not the process.
 *
 * So one worker holds the module; `evaluate` posts a request and blocks on
 * `Atomics.wait` until the worker signals, then takes the reply with
 * `receiveMessageOnPort` — synchronous, as `decide()` needs. The guest gets
 * its own deadline (QuickJS interrupt → "timed out after N ms"); if the
 * worker has not answered `killGraceMs` after it, the worker is terminated
 * and a fresh one boots (≈ 80 ms, paid by the next call). Measured median
 * per `evaluate`, round trip included, over two runs: 0.25–0.55 ms for a
 * SWITCH expression, a DO_WHILE condition or a small INLINE function, against
 * 0.24–0.4 ms for bare QuickJS on the calling thread — which waits either way.
 *
 * Each evaluation gets a fresh runtime and context (≈ 0.45 ms in-process;
 * a reused runtime saves only ≈ 0.04 ms), so nothing leaks between
 * evaluations. Only JSON crosses the boundary: bindings are `JSON.stringify`d
 * on the host and parsed in the guest; the result is `JSON.stringify`d in the
 * guest and parsed on the host. So results follow JSON rules — `undefined`,
 * functions and symbols at the top become `null` (as does a script ending in
 * a statement with no value), nested ones are dropped as `JSON.stringify`
 * drops them, `NaN`/`Infinity` become `null`, a `Date` becomes its ISO
 * string — and a cyclic or BigInt result fails with "result is not
 * JSON-serialisable: …". A returned Promise is settled by running the
 * guest's job queue (still inside the deadline) and its value used.
 *
 * The guest has the ECMAScript built-ins and nothing of the host: no
 * `require`, `process`, `fetch`, timers, module loader or file system. It
 * does have `Date` and `Math.random` (Conductor scripts format dates), which
 * read the host clock and are not replay-deterministic. `console.log`/`info`/
 * `debug`/`warn`/`error` write to a buffer returned as `logs` (at most 100
 * lines of 2 000 characters), never to the host's console.
 */
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import type { ScriptEvaluationOptions, ScriptEvaluator, ScriptResult } from "@/engine/expressions";
import { firstLine, positive, resolvePackageFile } from "./sandbox-helpers";

/**
 * Limits for every evaluation. A call's own {@link ScriptEvaluationOptions}
 * replace `timeoutMs` and may lower (never raise) `memoryBytes`.
 */
export interface QuickJsSandboxOptions {
  /** Default wall-clock budget per evaluation. Default 1000 ms. */
  timeoutMs?: number;
  /**
   * Heap the guest may use, bindings included. A hard cap: it sets the
   * `WebAssembly.Memory` maximum (this plus the module's ≈ 5 MiB of static
   * data and shadow stack), fixed when the worker boots. The module cannot
   * start with less than 16 MiB, so the floor is ≈ 11 MiB of heap. A call's
   * `memoryBytes` can only refuse single allocations larger than itself.
   * Default 32 MiB.
   */
  memoryBytes?: number;
  /**
   * QuickJS's stack limit. Always set: without it a guest recursion overflows
   * the host stack. Default 256 KiB (≈ 1 250 frames of a small function).
   */
  stackBytes?: number;
  /** How long past the guest's deadline the worker may take to answer before it is killed. Default 250 ms. */
  killGraceMs?: number;
  /** How long a call waits for a (re)starting worker. Default 10 s. */
  bootTimeoutMs?: number;
}

/** {@link ScriptResult} plus what the script wrote with `console.*`, when it wrote anything. */
export type QuickJsScriptResult = ScriptResult & { logs?: string[] };

/** A {@link ScriptEvaluator} that owns a worker thread. */
export interface QuickJsScriptEvaluator extends ScriptEvaluator {
  evaluate(script: string, bindings: Record<string, unknown>, options?: ScriptEvaluationOptions): QuickJsScriptResult;
  /** Stops the worker; later evaluations fail with "sandbox is closed". */
  close(): Promise<void>;
}

const DEFAULTS = {
  timeoutMs: 1000,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 256 * 1024,
  killGraceMs: 250,
  bootTimeoutMs: 10_000,
} as const;

// Int32 slots of the shared signal buffer.
const REPLY = 0; // 0 while a request is in flight, 1 once its reply is posted
const STATE = 1; // 0 booting, 1 ready, 2 failed to boot

interface Request {
  seq: number;
  script: string;
  /** Each binding's name and its value as JSON text; parsed one by one in the guest. */
  bindings: [string, string][];
  timeoutMs: number;
  memoryBytes: number;
}

interface Reply {
  seq: number;
  /** The result as JSON text, when the script succeeded. */
  json?: string;
  error?: string;
  logs?: string[];
  /** The module is unusable (a host-level exception came out of wasm): replace the worker. */
  restart?: boolean;
}

interface Slot {
  worker: Worker;
  port: MessagePort;
  signal: Int32Array;
  exited: boolean;
}

/**
 * Starts the sandbox worker and waits until QuickJS is loaded in it (≈ 80 ms).
 * The returned evaluator is synchronous; call `close()` on shutdown (the
 * worker is `unref`ed, so it never holds the process open by itself).
 */
export async function createQuickJsScriptEvaluator(options: QuickJsSandboxOptions = {}): Promise<QuickJsScriptEvaluator> {
  const sandbox = new QuickJsSandbox({
    timeoutMs: positive(options.timeoutMs, DEFAULTS.timeoutMs),
    memoryBytes: positive(options.memoryBytes, DEFAULTS.memoryBytes),
    stackBytes: positive(options.stackBytes, DEFAULTS.stackBytes),
    killGraceMs: positive(options.killGraceMs, DEFAULTS.killGraceMs),
    bootTimeoutMs: positive(options.bootTimeoutMs, DEFAULTS.bootTimeoutMs),
  });
  await sandbox.ready();
  return sandbox;
}

class QuickJsSandbox implements QuickJsScriptEvaluator {
  private slot: Slot | undefined;
  private seq = 0;
  private closed = false;

  constructor(private readonly limits: Required<QuickJsSandboxOptions>) {
    this.slot = this.spawn();
  }

  /** Resolves once the first worker has booted; rejects with its boot error. */
  async ready(): Promise<void> {
    const slot = this.slot;
    if (!slot) throw new Error("sandbox is closed");
    // Polled rather than Atomics.waitAsync, which the ES2023 lib we compile against does not declare.
    const giveUpAt = performance.now() + this.limits.bootTimeoutMs;
    while (Atomics.load(slot.signal, STATE) === 0 && performance.now() < giveUpAt) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const problem = this.bootProblem(slot);
    if (problem) {
      this.discard(slot);
      this.slot = undefined;
      throw new Error(problem);
    }
  }

  evaluate(script: string, bindings: Record<string, unknown>, options: ScriptEvaluationOptions = {}): QuickJsScriptResult {
    if (this.closed) return { ok: false, error: "sandbox is closed" };
    const timeoutMs = positive(options.timeoutMs, this.limits.timeoutMs);
    const memoryBytes = Math.min(positive(options.memoryBytes, this.limits.memoryBytes), this.limits.memoryBytes);
    const encoded: [string, string][] = [];
    try {
      for (const [name, value] of Object.entries(bindings)) {
        const json = JSON.stringify(value);
        if (json !== undefined) encoded.push([name, json]);
      }
    } catch (error) {
      return { ok: false, error: `bindings are not JSON-serialisable: ${firstLine(error)}` };
    }

    const slot = this.readySlot();
    if (typeof slot === "string") return { ok: false, error: slot };

    const request: Request = { seq: ++this.seq, script, bindings: encoded, timeoutMs, memoryBytes };
    Atomics.store(slot.signal, REPLY, 0);
    slot.port.postMessage(request);
    // The guest stops itself at its deadline; the grace covers the reply's
    // trip and a slow native call that the interrupt poll cannot reach.
    const giveUpAt = performance.now() + timeoutMs + this.limits.killGraceMs;
    while (Atomics.load(slot.signal, REPLY) === 0) {
      const left = giveUpAt - performance.now();
      if (left <= 0) {
        this.replace(slot);
        return { ok: false, error: `timed out after ${timeoutMs} ms` };
      }
      Atomics.wait(slot.signal, REPLY, 0, left);
    }

    const reply = takeReply(slot.port, request.seq);
    if (!reply) {
      this.replace(slot);
      return { ok: false, error: "sandbox crashed: no reply from the worker" };
    }
    if (reply.restart) this.replace(slot);
    const logs = reply.logs && reply.logs.length > 0 ? { logs: reply.logs } : {};
    if (reply.json === undefined) return { ok: false, error: reply.error ?? "sandbox returned no result", ...logs };
    return { ok: true, value: JSON.parse(reply.json) as unknown, ...logs };
  }

  async close(): Promise<void> {
    this.closed = true;
    const slot = this.slot;
    this.slot = undefined;
    if (slot) await slot.worker.terminate();
  }

  /** The current worker once it is ready, booting a new one if needed; or why there is none. */
  private readySlot(): Slot | string {
    let slot = this.slot;
    if (!slot || slot.exited) {
      if (slot) this.discard(slot);
      slot = this.slot = this.spawn();
    }
    // Blocking here is safe: a worker boots on its own thread, and nothing
    // it needs from us travels through this thread's event loop.
    if (Atomics.load(slot.signal, STATE) === 0) Atomics.wait(slot.signal, STATE, 0, this.limits.bootTimeoutMs);
    const problem = this.bootProblem(slot);
    if (problem) {
      this.discard(slot);
      this.slot = undefined;
      return problem;
    }
    return slot;
  }

  private bootProblem(slot: Slot): string | undefined {
    const state = Atomics.load(slot.signal, STATE);
    if (state === 1) return undefined;
    if (state === 2) return `sandbox failed to start: ${takeReply(slot.port, 0)?.error ?? "unknown error"}`;
    return `sandbox did not start within ${this.limits.bootTimeoutMs} ms`;
  }

  private spawn(): Slot {
    const { port1, port2 } = new MessageChannel();
    const signal = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        port: port2,
        signal,
        corePath: modulePaths().core,
        variantPath: modulePaths().variant,
        memoryBytes: this.limits.memoryBytes,
        stackBytes: this.limits.stackBytes,
      },
      transferList: [port2],
      // The worker's own JS heap holds bindings and results as strings; the
      // guest's heap is the wasm memory, capped separately.
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    const slot: Slot = { worker, port: port1, signal, exited: false };
    // Without an 'error' listener a crash in the worker would be rethrown here
    // as an unhandled 'error' event and take the process down.
    worker.on("error", () => undefined);
    worker.on("exit", () => {
      slot.exited = true;
    });
    worker.unref();
    return slot;
  }

  /** Kills a worker that is hung or poisoned and starts its successor booting now. */
  private replace(slot: Slot): void {
    this.discard(slot);
    if (this.slot === slot) this.slot = this.closed ? undefined : this.spawn();
  }

  private discard(slot: Slot): void {
    slot.port.close();
    slot.worker.terminate().catch(() => undefined);
  }
}

function takeReply(port: MessagePort, seq: number): Reply | undefined {
  for (;;) {
    const received: { message: Reply } | undefined = receiveMessageOnPort(port);
    if (!received) return undefined;
    if (received.message.seq === seq) return received.message;
  }
}

let resolvedPaths: { core: string; variant: string } | undefined;

/** The worker loads the CommonJS builds by absolute path: an eval'd worker resolves bare names from the cwd. */
function modulePaths(): { core: string; variant: string } {
  if (!resolvedPaths) {
    resolvedPaths = { core: resolvePackageFile("quickjs-emscripten-core"), variant: resolvePackageFile("@jitl/quickjs-wasmfile-release-sync") };
  }
  return resolvedPaths;
}

/**
 * The worker, as CommonJS source: an eval'd worker cannot load TypeScript,
 * and a separate .js file would need its own place in every build. It is
 * small on purpose, and the tests drive it through `evaluate`.
 */
const WORKER_SOURCE = String.raw`"use strict";
const { workerData } = require("node:worker_threads");
const { port, signal, corePath, variantPath, memoryBytes, stackBytes } = workerData;
const POST_DEADLINE_MS = 100;
// The module imports its memory and refuses less than 256 pages (16 MiB), of
// which its static data and shadow stack take ≈ 5 MiB (measured: 11 MiB of
// strings fit in a memory that may not grow). The maximum is the heap cap.
const MIN_PAGES = 256;
const RESERVED_BYTES = 5 * 1024 * 1024;
const MAX_PAGES = Math.max(MIN_PAGES, Math.ceil((memoryBytes + RESERVED_BYTES) / 65536));
const MAX_LOG_LINES = 100;
const MAX_LOG_LINE = 2000;

function signalReply(message) {
  port.postMessage(message);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
}

function hostMessage(error) {
  return error instanceof Error ? error.name + ": " + error.message : String(error);
}

async function boot() {
  const core = require(corePath);
  const variant = require(variantPath).default;
  const memory = new WebAssembly.Memory({ initial: MIN_PAGES, maximum: MAX_PAGES });
  const module = await core.newQuickJSWASMModuleFromVariant(core.newVariant(variant, { wasmMemory: memory }));
  return { module, memory };
}

function evaluate(module, memory, request) {
  let deadline = Date.now() + request.timeoutMs;
  let timedOut = false;
  const runtime = module.newRuntime();
  const handles = [];
  const own = (handle) => { handles.push(handle); return handle; };
  const logs = [];
  let dropped = 0;
  let context;
  const result = { seq: request.seq };
  try {
    runtime.setMaxStackSize(stackBytes);
    runtime.setMemoryLimit(request.memoryBytes);
    runtime.setInterruptHandler(() => {
      if (Date.now() <= deadline) return false;
      timedOut = true;
      return true;
    });
    context = runtime.newContext();
    // Everything below goes through the FFI rather than a guest-side prelude:
    // compiling even 1.5 KB of helper source per evaluation cost ~0.4 ms.
    // JSON's functions are taken before the script runs, so a script that
    // replaces JSON.stringify cannot change how its result leaves.
    const json = own(context.getProp(context.global, "JSON"));
    const stringify = own(context.getProp(json, "stringify"));
    const parse = own(context.getProp(json, "parse"));
    const toJson = (handle) => {
      const out = context.callFunction(stringify, json, handle);
      if (out.error) return { error: own(out.error) };
      const text = own(out.value);
      return { text: context.typeof(text) === "string" ? context.getString(text) : undefined };
    };
    const describe = (errorHandle, prefix) => {
      // Formatting reads guest properties (getters may run): a short budget
      // of its own once the script's is spent.
      deadline = Date.now() + POST_DEADLINE_MS;
      let thrown;
      try { thrown = context.dump(errorHandle); } catch (e) { thrown = undefined; }
      return (prefix || "") + describeThrown(thrown, timedOut, memory, request.timeoutMs);
    };

    const show = (handle) => {
      const type = context.typeof(handle);
      if (type === "string") return context.getString(handle);
      const shown = toJson(handle);
      if (shown.text !== undefined) return shown.text;
      return type === "undefined" ? "undefined" : "[" + type + "]";
    };
    const guestConsole = own(context.newObject());
    for (const [name, prefix] of [["log", ""], ["info", ""], ["debug", ""], ["warn", "warn: "], ["error", "error: "]]) {
      const write = own(context.newFunction(name, (...args) => {
        if (logs.length >= MAX_LOG_LINES) { dropped++; return; }
        const line = prefix + args.map(show).join(" ");
        logs.push(line.length > MAX_LOG_LINE ? line.slice(0, MAX_LOG_LINE) + "…" : line);
      }));
      context.setProp(guestConsole, name, write);
    }
    context.setProp(context.global, "console", guestConsole);

    for (const [key, text] of request.bindings) {
      const parsed = context.callFunction(parse, json, own(context.newString(text)));
      if (parsed.error) {
        result.error = describe(own(parsed.error), "bindings: ");
        break;
      }
      context.setProp(context.global, key, own(parsed.value));
    }

    if (result.error === undefined) {
      const evaluated = context.evalCode(request.script, "script.js");
      if (evaluated.error) {
        result.error = describe(own(evaluated.error));
      } else {
        let value = own(evaluated.value);
        const jobs = runtime.executePendingJobs();
        if (jobs.error) own(jobs.error);
        const state = context.getPromiseState(value);
        if (!state.notAPromise) {
          if (state.type === "fulfilled") value = own(state.value);
          else if (state.type === "rejected") result.error = describe(own(state.error));
          else result.error = "script returned a promise that never settled";
        }
        if (result.error === undefined) {
          const out = toJson(value);
          if (out.error) result.error = describe(out.error, timedOut ? "" : "result is not JSON-serialisable: ");
          else result.json = out.text === undefined ? "null" : out.text;
        }
      }
    }
    if (dropped > 0) logs.push("… " + dropped + " more lines dropped");
    if (logs.length > 0) result.logs = logs;
  } catch (error) {
    // A host exception out of wasm (V8 stack overflow, an abort): the module's
    // shadow stack and heap are suspect, so nothing more runs on it.
    const stack = error instanceof RangeError && /call stack/i.test(error.message);
    return { seq: request.seq, error: stack ? "stack overflow" : "sandbox crashed: " + hostMessage(error), restart: true };
  }
  try {
    for (let i = handles.length - 1; i >= 0; i--) if (handles[i].alive) handles[i].dispose();
    context.dispose();
    runtime.dispose();
  } catch (error) {
    result.restart = true;
  }
  return result;
}

function describeThrown(thrown, timedOut, memory, timeoutMs) {
  if (timedOut) return "timed out after " + timeoutMs + " ms";
  if (thrown && typeof thrown === "object" && typeof thrown.message === "string") {
    // QuickJS raises its limits as InternalError; the parser's depth check as SyntaxError.
    const engine = thrown.name === "InternalError" || thrown.name === "SyntaxError";
    if (engine && thrown.message === "out of memory") return "out of memory";
    if (engine && thrown.message === "stack overflow") return "stack overflow";
    if (engine && thrown.message === "interrupted") return "timed out after " + timeoutMs + " ms";
    const where = /script\.js:(\d+)/.exec(typeof thrown.stack === "string" ? thrown.stack : "");
    const line = where ? where[1] : typeof thrown.lineNumber === "number" ? String(thrown.lineNumber) : undefined;
    return (thrown.name || "Error") + ": " + thrown.message + (line ? " (line " + line + ")" : "");
  }
  // QuickJS throws null when it cannot even allocate the error object.
  if (thrown === null && memory.buffer.byteLength >= MAX_PAGES * 65536) return "out of memory";
  let text;
  try { text = typeof thrown === "string" ? thrown : JSON.stringify(thrown); } catch (e) { text = String(thrown); }
  return "Uncaught " + text;
}

boot().then(
  ({ module, memory }) => {
    port.on("message", (request) => signalReply(evaluate(module, memory, request)));
    Atomics.store(signal, 1, 1);
    Atomics.notify(signal, 1);
  },
  (error) => {
    port.postMessage({ seq: 0, error: hostMessage(error) });
    Atomics.store(signal, 1, 2);
    Atomics.notify(signal, 1);
  },
);
`;
