import { describe, expect, it } from "vitest";
import { doWhileConditionInput, scriptResultToBoolean } from "./script-evaluator";
import type { ScriptEvaluator, ScriptResult } from "./script-evaluator";

describe("scriptResultToBoolean (Conductor's ScriptEvaluator.toBoolean)", () => {
  it.each<[unknown, boolean]>([
    [true, true],
    [false, false],
    [1, true],
    [0.5, true],
    [0, false],
    [-1, false],
    [Number.NaN, false],
    ["true", false],
    ["", false],
    [null, false],
    [undefined, false],
    [{}, false],
    [[1], false],
  ])("%j → %s", (value, expected) => {
    expect(scriptResultToBoolean(value)).toBe(expected);
  });
});

describe("doWhileConditionInput", () => {
  it("builds `$` as Conductor's DoWhile.evaluateCondition does", () => {
    const input = doWhileConditionInput({
      resolvedInput: { max: 5, evaluatorType: "javascript" },
      loopRef: "loop",
      loopOutput: { 1: { fetch: { n: 1 } } },
      iteration: 2,
      bodyOutputs: { fetch: { hasMore: true }, loop: { ignored: true } },
    });
    expect(input).toEqual({
      max: 5,
      evaluatorType: "javascript",
      loop: { 1: { fetch: { n: 1 } }, iteration: 2 },
      fetch: { hasMore: true },
    });
  });

  it("keeps an iteration the loop's output already has", () => {
    const input = doWhileConditionInput({ resolvedInput: {}, loopRef: "loop", loopOutput: { iteration: 7 }, iteration: 2, bodyOutputs: {} });
    expect(input).toEqual({ loop: { iteration: 7 } });
  });

  it("keeps keys such as __proto__ as data", () => {
    const resolvedInput = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    const input = doWhileConditionInput({ resolvedInput, loopRef: "loop", loopOutput: {}, iteration: 1, bodyOutputs: {} });
    expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
    expect(Object.keys(input)).toEqual(["__proto__", "loop"]);
  });
});

describe("ScriptEvaluator", () => {
  it("is an interface the engine can drive with any implementation", () => {
    // A stand-in for the QuickJS sandbox in server/: reads `$.value` only.
    const evaluator: ScriptEvaluator = {
      evaluate(script, bindings): ScriptResult {
        if (script !== "$.value * 2") return { ok: false, error: `unsupported script: ${script}` };
        const input = bindings.$ as { value: number };
        return { ok: true, value: input.value * 2 };
      },
    };
    expect(evaluator.evaluate("$.value * 2", { $: { value: 21 } }, { timeoutMs: 100 })).toEqual({ ok: true, value: 42 });
    expect(evaluator.evaluate("while(true){}", { $: {} }).ok).toBe(false);
  });
});
