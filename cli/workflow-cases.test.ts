import { describe, expect, it } from "vitest";
import type { SimulationResult } from "../engine/testkit";
import { CasesFileSchema, checkCase, formatMismatch, mockOutcome } from "./workflow-cases";

/** A simulation result with only what checkCase reads. */
function result(partial: Partial<SimulationResult>): SimulationResult {
  return { status: "COMPLETED", output: {}, tasks: [], ...partial } as SimulationResult;
}

const task = (ref: string, status: string, attempt = 0, output: Record<string, unknown> = {}) =>
  ({ ref, status, attempt, iteration: 0, output }) as SimulationResult["tasks"][number];

const oneCase = (expect: Record<string, unknown>) => CasesFileSchema.parse({ cases: [{ name: "c", expect }] }).cases[0]!;

describe("the cases file", () => {
  it("fills the defaults: no input, no mocks, COMPLETED expected", () => {
    expect(CasesFileSchema.parse({ cases: [{ name: "c" }] }).cases[0]).toEqual({ name: "c", input: {}, tasks: {}, signals: {}, expect: { status: "COMPLETED" } });
  });

  it("names a mistyped field by its path", () => {
    const parsed = CasesFileSchema.safeParse({ cases: [{ name: "c", expect: { stauts: "FAILED" } }] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ["cases", 0, "expect"], code: "unrecognized_keys" });
  });

  it("a list of mocks answers attempt by attempt, the last repeating", () => {
    const mock = CasesFileSchema.parse({ cases: [{ name: "c", tasks: { x: [{ status: "FAILED", reason: "no" }, { output: { ok: true } }] } }] }).cases[0]!.tasks.x!;
    expect(mockOutcome(mock, 0)).toEqual({ status: "FAILED", output: {}, reason: "no" });
    expect(mockOutcome(mock, 1)).toEqual({ status: "COMPLETED", output: { ok: true } });
    expect(mockOutcome(mock, 5)).toEqual({ status: "COMPLETED", output: { ok: true } });
  });
});

describe("checkCase", () => {
  it("passes when every given expectation holds, output compared as a subset", () => {
    const r = result({ output: { id: "o-1", extra: 1 }, tasks: [task("a", "COMPLETED"), task("b", "SKIPPED"), task("c", "FAILED"), task("c", "COMPLETED", 1, { n: 2 })] });
    expect(checkCase(oneCase({ output: { id: "o-1" }, path: ["a", "c"], skipped: ["b"], tasks: { c: { status: "COMPLETED", attempts: 2, output: { n: 2 } } } }), r)).toEqual([]);
  });

  it("reports each difference with what was expected and what happened", () => {
    const r = result({ status: "FAILED", reasonForIncompletion: "boom", output: { id: "o-2" }, tasks: [task("a", "COMPLETED"), task("b", "COMPLETED")] });
    expect(checkCase(oneCase({ output: { id: "o-1" }, path: ["a"], skipped: ["b"], tasks: { z: { status: "COMPLETED" } } }), r)).toEqual([
      { what: "status", expected: "COMPLETED", actual: "FAILED (boom)" },
      { what: "output.id", expected: "o-1", actual: "o-2" },
      { what: "path", expected: ["a"], actual: ["a", "b"] },
      { what: "skipped b", expected: "SKIPPED", actual: "COMPLETED" },
      { what: "tasks.z", expected: "to run", actual: "(never scheduled)" },
    ]);
  });

  it("formats a mismatch as expected and actual lines", () => {
    expect(formatMismatch({ what: "output.id", expected: "o-1", actual: undefined })).toBe("    output.id:\n      - expected o-1\n      + actual   (absent)\n");
  });
});
