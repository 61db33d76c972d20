import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { runInlineTask } from "./inline-task";

let scripts: QuickJsScriptEvaluator;
beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator({ timeoutMs: 300 });
});
afterAll(async () => {
  await scripts.close();
});

const inline = (expression: string, extra: Record<string, unknown> = {}) => ({ evaluatorType: "graaljs", expression, ...extra });

describe("runInlineTask", () => {
  it("returns the script's value as output.result, with the input as $", () => {
    expect(runInlineTask(inline("(function () { return { sum: $.a + $.b, type: $.evaluatorType }; })()", { a: 2, b: 3 }), scripts)).toEqual({
      status: "COMPLETED",
      output: { result: { sum: 5, type: "graaljs" } },
    });
    expect(runInlineTask({ ...inline("$.x * 2", { x: 21 }), evaluatorType: "javascript" }, scripts).output).toEqual({ result: 42 });
  });

  it("value-param returns the named input parameter, as Conductor's ValueParamEvaluator", () => {
    expect(runInlineTask({ evaluatorType: "value-param", expression: "pick", pick: [1, 2] }, scripts).output).toEqual({ result: [1, 2] });
  });

  it("a script that loops forever fails with a reason, and the sandbox runs the next script", () => {
    const looping = runInlineTask(inline("while (true) {}"), scripts);
    expect(looping).toMatchObject({ status: "FAILED", reason: "INLINE script failed: timed out after 300 ms", output: { error: "timed out after 300 ms" } });
    expect(runInlineTask(inline("1 + 1"), scripts).output).toEqual({ result: 2 });
  });

  it("a script that allocates without bound fails with a reason, and the sandbox recovers", () => {
    const hungry = runInlineTask(inline("const a = []; for (;;) a.push('x'.repeat(1 << 20));"), scripts);
    expect(hungry.status).toBe("FAILED");
    expect(hungry.reason).toMatch(/out of memory|timed out/);
    expect(runInlineTask(inline("'still ' + 'alive'"), scripts).output).toEqual({ result: "still alive" });
  });

  it("a thrown error fails (retryable); a syntax error or a bad config fails terminally", () => {
    expect(runInlineTask(inline("throw new Error('nope')"), scripts)).toMatchObject({ status: "FAILED", reason: expect.stringMatching(/Error: nope/) as unknown });
    expect(runInlineTask(inline("function ("), scripts)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: expect.stringMatching(/SyntaxError/) as unknown });
    expect(runInlineTask({ evaluatorType: "graaljs" }, scripts)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: "INLINE: the input has no expression" });
    expect(runInlineTask(inline("1", { evaluatorType: "python" }), scripts)).toMatchObject({
      status: "FAILED_WITH_TERMINAL_ERROR",
      reason: expect.stringMatching(/unsupported evaluatorType "python"/) as unknown,
    });
  });
});
