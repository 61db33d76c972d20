import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJqTransform, jqTaskOutput } from "./jq-transform";
import type { JqTransform } from "./jq-transform";

let jq: JqTransform;

beforeAll(async () => {
  jq = await createJqTransform({ timeoutMs: 5000 });
});

afterAll(async () => {
  await jq.close();
});

const expectHealthy = async (): Promise<void> => {
  expect(await jq.transform({ a: { b: 1 } }, ".a.b")).toEqual({ ok: true, results: [1] });
};

describe("jq filters", () => {
  it("returns one value", async () => {
    expect(await jq.transform({ a: 1 }, ".a")).toEqual({ ok: true, results: [1] });
  });

  it("returns every value of a stream, in order", async () => {
    expect(await jq.transform({ items: [{ x: 1 }, { x: "two" }, { x: null }] }, ".items[] | .x")).toEqual({ ok: true, results: [1, "two", null] });
  });

  it("returns nothing for empty", async () => {
    expect(await jq.transform({ a: 1 }, "empty")).toEqual({ ok: true, results: [] });
  });

  it("keeps strings with newlines and unicode intact", async () => {
    const s = "line 1\nline 2 — héllo ✓ 😀 \"q\" \\";
    expect(await jq.transform({ s }, ".s, (.s | length)")).toEqual({ ok: true, results: [s, [...s].length] });
  });

  it("runs Conductor's documented example over the whole task input", async () => {
    const queryExpression = "{ key3: (.key1.value1 + .key2.value2) }";
    const taskInput = { key1: { value1: ["a", "b"] }, key2: { value2: ["c", "d"] }, queryExpression };
    expect(jqTaskOutput(await jq.transform(taskInput, queryExpression))).toEqual({
      result: { key3: ["a", "b", "c", "d"] },
      resultList: [{ key3: ["a", "b", "c", "d"] }],
    });
  });

  it("speaks jq 1.7 and 1.8: // in object values, if without else, pick, trim, abs", async () => {
    expect(await jq.transform({ x: null, y: 2 }, "{a: .x // 1, b: .y // 1}")).toEqual({ ok: true, results: [{ a: 1, b: 2 }] });
    expect(await jq.transform({ n: -3 }, "if .n < 0 then .n end | abs")).toEqual({ ok: true, results: [3] });
    expect(await jq.transform({ a: { b: 1, c: 2 }, d: 3 }, "pick(.a.b)")).toEqual({ ok: true, results: [{ a: { b: 1 } }] });
    expect(await jq.transform("  padded  ", "trim, ltrimstr(\"  pa\")")).toEqual({ ok: true, results: ["padded", "dded  "] });
    expect(await jq.transform(null, "[splits(\"a\"; null)?], $__loc__.line, ([limit(0; 1, 2)] | length)")).toEqual({ ok: true, results: [[], 1, 0] });
  });

  it("fails a filter that errors after emitting values, as Conductor does", async () => {
    expect(await jq.transform(null, '1, 2, error("late")')).toEqual({ ok: false, error: "jq: error: late" });
  });

  it("reports a syntax error with jq's message", async () => {
    const outcome = await jq.transform({ a: 1 }, ".a |||");
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error).toMatch(/^jq: error: syntax error, unexpected '\|'/);
      expect(outcome.error).toMatch(/compile error$/);
      expect(outcome.error).not.toMatch(/Non-zero exit code|Unix shell/);
    }
  });

  it("reports runtime errors", async () => {
    expect(await jq.transform({ a: "x" }, ".a + 1")).toEqual({ ok: false, error: 'jq: error: string ("x") and number (1) cannot be added' });
    expect(await jq.transform({}, 'error("boom")')).toEqual({ ok: false, error: "jq: error: boom" });
    await expectHealthy();
  });

  it("refuses an empty query and input JSON cannot carry", async () => {
    expect(await jq.transform({}, "  ")).toEqual({ ok: false, error: "queryExpression is empty" });
    const outcome = await jq.transform({ n: 1n }, ".");
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error).toMatch(/^input is not JSON-serialisable: /);
  });

  it("shows jq Emscripten's fixed environment, not this process's", async () => {
    expect(await jq.transform(null, "env.USER, ($ENV | has(\"NODE_ENV\"))")).toEqual({ ok: true, results: ["web_user", false] });
  });

  it("serves concurrent calls, each with its own answer", async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => jq.transform({ i }, ".i * 2")));
    expect(outcomes).toEqual(Array.from({ length: 20 }, (_, i) => ({ ok: true, results: [i * 2] })));
  });
});

describe("runaway filters are stopped, and jq keeps working", () => {
  it("stops a filter that builds an enormous array", async () => {
    const started = performance.now();
    expect(await jq.transform({}, "[range(1e9)]", { timeoutMs: 300 })).toEqual({ ok: false, error: "timed out after 300 ms" });
    expect(performance.now() - started).toBeLessThan(1500);
    await expectHealthy();
  });

  it("stops infinite recursion and endless output", async () => {
    expect(await jq.transform({}, "def f: f; f", { timeoutMs: 300 })).toEqual({ ok: false, error: "timed out after 300 ms" });
    await expectHealthy();
    expect(await jq.transform({}, "repeat(1)", { timeoutMs: 300 })).toEqual({ ok: false, error: "timed out after 300 ms" });
    await expectHealthy();
  });

  it("lets calls queued behind a runaway filter finish", async () => {
    const runaway = jq.transform({}, "last(range(1e10))", { timeoutMs: 300 });
    const queued = Promise.all([jq.transform({ a: 1 }, ".a"), jq.transform({ a: 2 }, ".a")]);
    expect(await runaway).toEqual({ ok: false, error: "timed out after 300 ms" });
    expect(await queued).toEqual([
      { ok: true, results: [1] },
      { ok: true, results: [2] },
    ]);
  });
});

describe("limits chosen at creation", () => {
  it("stops a filter at the heap cap", { timeout: 30_000 }, async () => {
    const small = await createJqTransform({ memoryBytes: 32 * 1024 * 1024, timeoutMs: 10_000 });
    try {
      expect(await small.transform({}, "[range(1e7)] | length")).toEqual({ ok: false, error: "out of memory" });
      expect(await small.transform({ a: 1 }, ".a")).toEqual({ ok: true, results: [1] });
    } finally {
      await small.close();
    }
  });

  it("refuses an input larger than the limit before sending it", async () => {
    const small = await createJqTransform({ maxInputChars: 100 });
    try {
      expect(await small.transform({ s: "x".repeat(200) }, ".")).toEqual({ ok: false, error: "input too large: 208 characters of JSON, limit 100" });
      expect(await small.transform({ s: "x" }, ".s")).toEqual({ ok: true, results: ["x"] });
    } finally {
      await small.close();
    }
  });

  it("refuses work once closed", async () => {
    const own = await createJqTransform();
    const pending = own.transform({}, "def f: f; f");
    await own.close();
    expect(await pending).toEqual({ ok: false, error: "jq is closed" });
    expect(await own.transform({}, ".")).toEqual({ ok: false, error: "jq is closed" });
  });
});

describe("jqTaskOutput (Conductor's JsonJqTransform output)", () => {
  it("puts the first value in result and all of them in resultList", () => {
    expect(jqTaskOutput({ ok: true, results: [1, 2] })).toEqual({ result: 1, resultList: [1, 2] });
  });

  it("keeps a falsy first value", () => {
    expect(jqTaskOutput({ ok: true, results: [false, 1] })).toEqual({ result: false, resultList: [false, 1] });
    expect(jqTaskOutput({ ok: true, results: [0] })).toEqual({ result: 0, resultList: [0] });
  });

  it("gives null and an empty list when the filter emits nothing", () => {
    expect(jqTaskOutput({ ok: true, results: [] })).toEqual({ result: null, resultList: [] });
  });

  it("gives the error on failure", () => {
    expect(jqTaskOutput({ ok: false, error: "jq: error: boom" })).toEqual({ error: "jq: error: boom" });
  });
});
