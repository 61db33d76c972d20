import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJqTransform } from "../sandbox/jq-transform";
import type { JqTransform } from "../sandbox/jq-transform";
import { runJqTask } from "./jq-task";

let jq: JqTransform;
beforeAll(async () => {
  jq = await createJqTransform();
});
afterAll(async () => {
  await jq.close();
});

describe("runJqTask", () => {
  it("runs the filter over the whole input: result is the first value, resultList all of them", async () => {
    expect(await runJqTask({ queryExpression: ".items[] | .id", items: [{ id: 1 }, { id: 2 }] }, jq)).toEqual({
      status: "COMPLETED",
      output: { result: 1, resultList: [1, 2] },
    });
    expect((await runJqTask({ queryExpression: "empty" }, jq)).output).toEqual({ result: null, resultList: [] });
  });

  it("a runtime error fails (retryable) with output.error; a compile error or no query fails terminally", async () => {
    const runtime = await runJqTask({ queryExpression: ".a + 1", a: "x" }, jq);
    expect(runtime).toMatchObject({ status: "FAILED", output: { error: expect.stringMatching(/cannot be added/) as unknown } });
    expect(runtime.reason).toMatch(/^jq failed: /);
    expect(await runJqTask({ queryExpression: ".a | (" }, jq)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: expect.stringMatching(/compile error/) as unknown });
    expect(await runJqTask({}, jq)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: "JSON_JQ_TRANSFORM: the input has no queryExpression" });
  });

  it("a filter that never ends fails at its deadline", async () => {
    const outcome = await runJqTask({ queryExpression: "def f: f; f" }, jq, { timeoutMs: 300 });
    expect(outcome).toMatchObject({ status: "FAILED", reason: "jq failed: timed out after 300 ms" });
    expect((await runJqTask({ queryExpression: ".x", x: 7 }, jq)).output).toEqual({ result: 7, resultList: [7] });
  });
});
