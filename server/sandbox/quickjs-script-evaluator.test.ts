import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doWhileConditionInput, scriptResultToBoolean } from "@/engine/expressions";
import { createQuickJsScriptEvaluator } from "./quickjs-script-evaluator";
import type { QuickJsScriptEvaluator, QuickJsScriptResult } from "./quickjs-script-evaluator";

let sandbox: QuickJsScriptEvaluator;

beforeAll(async () => {
  sandbox = await createQuickJsScriptEvaluator({ timeoutMs: 1000 });
});

afterAll(async () => {
  await sandbox.close();
});

/** Conductor scripts bind exactly `$`. */
const run = (script: string, input: unknown = {}, timeoutMs?: number): QuickJsScriptResult =>
  sandbox.evaluate(script, { $: input }, timeoutMs === undefined ? undefined : { timeoutMs });

/** After every failure the same sandbox must still answer a plain script. */
const expectHealthy = (): void => {
  expect(run("function e() { return $.n + 1 } e();", { n: 41 })).toEqual({ ok: true, value: 42 });
};

describe("Conductor INLINE scripts", () => {
  it("runs the function-then-call form and returns its value", () => {
    // The shape Conductor's docs use for INLINE: `$` is the whole task input.
    const input = {
      evaluatorType: "graaljs",
      expression: 'function e() { if ($.value == 1){return {"result": true}} else { return {"result": false}}} e();',
      value: 1,
    };
    expect(run(input.expression, input)).toEqual({ ok: true, value: { result: true } });
    expect(run(input.expression, { ...input, value: 2 })).toEqual({ ok: true, value: { result: false } });
  });

  it("runs an IIFE and a plain expression", () => {
    expect(run("(function () { return $.a + $.b; })();", { a: 2, b: 3 })).toEqual({ ok: true, value: 5 });
    expect(run("$.value > 3", { value: 5 })).toEqual({ ok: true, value: true });
    expect(run("$.value > 3", { value: 1 })).toEqual({ ok: true, value: false });
  });

  it("returns the completion value of the last statement", () => {
    expect(run("const xs = $.items.map((x) => x * 2);\nlet total = 0;\nfor (const x of xs) total += x;\ntotal", { items: [1, 2, 3] })).toEqual({
      ok: true,
      value: 12,
    });
  });

  it("supports the ES built-ins scripts commonly use", () => {
    expect(run("JSON.stringify({ d: new Date(Date.UTC(2024, 0, 2)).toISOString().slice(0, 10), up: 'abc'.toUpperCase(), m: Math.max(...$.xs) })", { xs: [3, 9, 4] })).toEqual({
      ok: true,
      value: '{"d":"2024-01-02","up":"ABC","m":9}',
    });
    expect(run("[...new Set($.tags)].sort().join(',')", { tags: ["b", "a", "b"] })).toEqual({ ok: true, value: "a,b" });
  });
});

describe("SWITCH with the javascript evaluator", () => {
  it("returns the case label the expression computes", () => {
    const expression = "$.type == 'a' ? 'caseA' : ($.type == 'b' ? 'caseB' : 'other')";
    expect(run(expression, { type: "a" })).toEqual({ ok: true, value: "caseA" });
    expect(run(expression, { type: "b" })).toEqual({ ok: true, value: "caseB" });
    expect(run(expression, { type: "z" })).toEqual({ ok: true, value: "other" });
  });

  it("returns non-string values for the engine to stringify", () => {
    expect(run("$.count % 2", { count: 3 })).toEqual({ ok: true, value: 1 });
  });
});

describe("DO_WHILE conditions", () => {
  it("reads the loop's iteration through `$.<loopRef>` and loops while it is below 3", () => {
    const condition = "$.loop['iteration'] < 3";
    const decisions = [1, 2, 3].map((iteration) => {
      const input = doWhileConditionInput({ resolvedInput: {}, loopRef: "loop", loopOutput: {}, iteration, bodyOutputs: {} });
      const result = run(condition, input);
      if (!result.ok) throw new Error(result.error);
      return scriptResultToBoolean(result.value);
    });
    expect(decisions).toEqual([true, true, false]);
  });

  it("sees the resolved input and each body task's output by ref", () => {
    const input = doWhileConditionInput({
      resolvedInput: { max: 5 },
      loopRef: "loop_ref",
      loopOutput: {},
      iteration: 2,
      bodyOutputs: { fetch_ref: { hasMore: true, page: 2 } },
    });
    expect(run("$.loop_ref['iteration'] < $.max && $.fetch_ref.hasMore", input)).toEqual({ ok: true, value: true });
  });
});

describe("bindings and results cross as JSON", () => {
  it("round-trips nested data unchanged", () => {
    const input = { s: "héllo ✓ 😀 \"q\" \\ \n", n: -1.5e-7, big: 2 ** 53 - 1, t: true, f: false, z: null, list: [1, [2, [3, {}]]], empty: {} };
    expect(run("$", input)).toEqual({ ok: true, value: input });
  });

  it("keeps an own `__proto__` key as data", () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "loop": {"iteration": 1}}') as unknown;
    expect(run("[typeof ({}).polluted, $['__proto__'].polluted, $.loop.iteration]", input)).toEqual({ ok: true, value: ["undefined", true, 1] });
  });

  it("binds every key of `bindings` as a global", () => {
    expect(sandbox.evaluate("a + b.c", { a: 1, b: { c: 2 } })).toEqual({ ok: true, value: 3 });
  });

  it("follows JSON rules for what comes back", () => {
    expect(run("var x = 1;")).toEqual({ ok: true, value: null });
    expect(run("undefined")).toEqual({ ok: true, value: null });
    expect(run("(() => 1)")).toEqual({ ok: true, value: null });
    expect(run("({ f() {}, u: undefined, n: NaN, i: Infinity, d: new Date(0), xs: [undefined, () => 1] })")).toEqual({
      ok: true,
      value: { n: null, i: null, d: "1970-01-01T00:00:00.000Z", xs: [null, null] },
    });
  });

  it("fails clearly on a result JSON cannot carry", () => {
    expect(run("const o = {}; o.self = o; o")).toEqual({ ok: false, error: "result is not JSON-serialisable: TypeError: circular reference" });
    const bigint = run("10n");
    expect(bigint.ok).toBe(false);
    if (!bigint.ok) expect(bigint.error).toMatch(/^result is not JSON-serialisable: TypeError: .*BigInt/);
  });

  it("fails clearly on bindings JSON cannot carry", () => {
    const result = sandbox.evaluate("1", { $: { n: 1n } });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^bindings are not JSON-serialisable: /);
  });

  it("cannot be fooled by a script that replaces JSON.stringify", () => {
    expect(run("JSON.stringify = () => '\"hacked\"'; ({ a: 1 })")).toEqual({ ok: true, value: { a: 1 } });
  });

  it("settles a returned promise", () => {
    expect(run("Promise.resolve($.v).then((v) => v * 2)", { v: 4 })).toEqual({ ok: true, value: 8 });
    expect(run("(async () => { throw new RangeError('nope') })()")).toEqual({ ok: false, error: "RangeError: nope (line 1)" });
    expect(run("new Promise(() => {})")).toEqual({ ok: false, error: "script returned a promise that never settled" });
  });
});

describe("errors", () => {
  it("reports a thrown exception with its type, message and line", () => {
    expect(run("const a = 1;\n\nfunction f() {\n  return $.missing.x;\n}\nf();")).toEqual({
      ok: false,
      error: "TypeError: cannot read property 'x' of undefined (line 4)",
    });
  });

  it("reports a syntax error with its line", () => {
    expect(run("let ok = 1;\nlet = = 3;")).toEqual({ ok: false, error: "SyntaxError: unexpected token in expression: '=' (line 2)" });
  });

  it("reports a thrown non-Error value", () => {
    expect(run("throw 'plain'")).toEqual({ ok: false, error: "Uncaught plain" });
    expect(run("throw { code: 7 }")).toEqual({ ok: false, error: 'Uncaught {"code":7}' });
  });
});

describe("limits, with the host healthy after each", () => {
  it("times out an infinite loop", () => {
    const started = performance.now();
    expect(run("while (true) {}", {}, 150)).toEqual({ ok: false, error: "timed out after 150 ms" });
    expect(performance.now() - started).toBeLessThan(1000);
    expectHealthy();
  });

  it("cannot be kept alive by catching the interrupt", () => {
    expect(run("for (;;) { try { while (true) {} } catch (e) {} }", {}, 150)).toEqual({ ok: false, error: "timed out after 150 ms" });
    expectHealthy();
  });

  it("kills a loop of slow native calls that QuickJS's interrupt poll cannot reach", () => {
    // In-process this ran 16.8 s past a 300 ms deadline; the worker is killed at deadline + grace.
    const started = performance.now();
    expect(run("for (;;) 'x'.repeat(1e6).length", {}, 200)).toEqual({ ok: false, error: "timed out after 200 ms" });
    expect(performance.now() - started).toBeLessThan(1500);
    expectHealthy();
  });

  it("stops a memory bomb at the heap cap", { timeout: 30_000 }, () => {
    expect(run("const keep = []; for (;;) keep.push('x'.repeat(1 << 20) + keep.length);", {}, 10_000)).toEqual({ ok: false, error: "out of memory" });
    expectHealthy();
    expect(run("new Array(1e8).fill(0).length", {}, 10_000)).toEqual({ ok: false, error: "out of memory" });
    expectHealthy();
    expect(run("const keep = []; for (;;) keep.push(new Uint8Array(1 << 20));", {}, 10_000)).toEqual({ ok: false, error: "out of memory" });
    expectHealthy();
  });

  it("lets a script that catches out-of-memory carry on", { timeout: 30_000 }, () => {
    expect(run("try { const keep = []; for (;;) keep.push(new Array(1e5).fill(1)); } catch (e) { 'caught ' + e.message }", {}, 10_000)).toEqual({
      ok: true,
      value: "caught out of memory",
    });
    expectHealthy();
  });

  it("stops deep recursion with a stack overflow", () => {
    expect(run("function f(n) { return f(n + 1) + 1 } f(0)")).toEqual({ ok: false, error: "stack overflow" });
    expectHealthy();
    expect(run("function f() { return [0, 1].map(() => f()) } f()")).toEqual({ ok: false, error: "stack overflow" });
    expectHealthy();
  });

  // These took down (or poisoned) the module when QuickJS ran on the calling thread.
  it("survives native recursion that overflows the host stack in-process", () => {
    expect(run("JSON.parse('['.repeat(100000))")).toEqual({ ok: false, error: "stack overflow" });
    expectHealthy();
    expect(run("eval('('.repeat(100000) + '1' + ')'.repeat(100000))")).toEqual({ ok: false, error: "stack overflow" });
    expectHealthy();
  });

  it("survives JSON.stringify of a deeply nested value", { timeout: 30_000 }, () => {
    // Slow (≈ 2 s) before QuickJS gives up, hence the longer budget.
    expect(run("let a = []; for (let i = 0; i < 100000; i++) a = [a]; JSON.stringify(a).length", {}, 10_000)).toEqual({ ok: false, error: "stack overflow" });
    expectHealthy();
  });

  it("replaces a worker whose own V8 stack overflowed, with the same answer", { timeout: 30_000 }, () => {
    expect(run("eval('('.repeat(1000000) + '1' + ')'.repeat(1000000))", {}, 5000)).toEqual({ ok: false, error: "stack overflow" });
    expectHealthy();
    expect(run("eval('['.repeat(300000))", {}, 5000)).toEqual({ ok: false, error: "stack overflow" });
    expectHealthy();
  });

  it("honours a per-call timeout shorter than the default", () => {
    const started = performance.now();
    expect(run("let i = 0; while (true) i++;", {}, 50)).toEqual({ ok: false, error: "timed out after 50 ms" });
    expect(performance.now() - started).toBeLessThan(900);
    expectHealthy();
  });
});

describe("isolation", () => {
  it("shows the guest no host globals", () => {
    expect(
      run("[typeof process, typeof require, typeof fetch, typeof setTimeout, typeof setInterval, typeof Buffer, typeof module, typeof globalThis.process, typeof WebAssembly]"),
    ).toEqual({ ok: true, value: Array<string>(9).fill("undefined") });
  });

  it("keeps nothing between evaluations", () => {
    expect(run("globalThis.leak = 1; var alsoLeak = 2; Array.prototype.evil = () => 'x'; Object.prototype.polluted = true; $.changed = true; 0", { changed: false })).toEqual({
      ok: true,
      value: 0,
    });
    expect(run("[typeof leak, typeof alsoLeak, typeof [].evil, typeof ({}).polluted, $.changed]", { changed: false })).toEqual({
      ok: true,
      value: ["undefined", "undefined", "undefined", "undefined", false],
    });
  });

  it("deep-copies bindings: a script cannot change the caller's objects", () => {
    const input = { list: [1, 2] };
    expect(run("$.list.push(3); $.list.length", input)).toEqual({ ok: true, value: 3 });
    expect(input).toEqual({ list: [1, 2] });
  });
});

describe("console", () => {
  it("captures console output as logs instead of printing it", () => {
    expect(run("console.log('hi', { a: 1 }, [2], null, undefined); console.warn('careful'); console.error(new Error('e').message); 7")).toEqual({
      ok: true,
      value: 7,
      logs: ['hi {"a":1} [2] null undefined', "warn: careful", "error: e"],
    });
  });

  it("keeps logs on failure, and caps them", () => {
    const failed = run("console.log('before'); null.x");
    expect(failed).toMatchObject({ ok: false, logs: ["before"] });
    const flood = run("for (let i = 0; i < 250; i++) console.log(i); 'done'");
    expect(flood.logs).toHaveLength(101);
    expect(flood.logs?.[100]).toBe("… 150 more lines dropped");
    const long = run("console.log('y'.repeat(5000)); 1");
    expect(long.logs?.[0]).toHaveLength(2001);
  });

  it("adds no logs key when nothing was logged", () => {
    expect(Object.keys(run("1"))).toEqual(["ok", "value"]);
  });
});

describe("lifecycle", () => {
  it("refuses work once closed", async () => {
    const own = await createQuickJsScriptEvaluator();
    expect(own.evaluate("1 + 1", {})).toEqual({ ok: true, value: 2 });
    await own.close();
    expect(own.evaluate("1 + 1", {})).toEqual({ ok: false, error: "sandbox is closed" });
  });

  it("enforces the heap cap chosen at creation", { timeout: 30_000 }, async () => {
    const small = await createQuickJsScriptEvaluator({ memoryBytes: 12 * 1024 * 1024, timeoutMs: 5000 });
    try {
      expect(small.evaluate("const keep = []; for (let i = 0; i < 8; i++) keep.push('x'.repeat(1 << 20) + i); keep.length", {})).toEqual({ ok: true, value: 8 });
      expect(small.evaluate("const keep = []; for (let i = 0; i < 16; i++) keep.push('x'.repeat(1 << 20) + i); keep.length", {})).toEqual({
        ok: false,
        error: "out of memory",
      });
      expect(small.evaluate("1 + 1", {})).toEqual({ ok: true, value: 2 });
    } finally {
      await small.close();
    }
  });
});
