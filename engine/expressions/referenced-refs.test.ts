import { describe, expect, it } from "vitest";
import { referencedRefs } from "./referenced-refs";
import type { ExpressionProblemCode } from "./referenced-refs";

const refsOf = (value: unknown): string[] => [...referencedRefs(value).refs].sort();
const fieldsOf = (value: unknown): string[] => [...referencedRefs(value).workflowFields].sort();
const codesOf = (value: unknown): ExpressionProblemCode[] => referencedRefs(value).problems.map((p) => p.code);

describe("referencedRefs: refs and workflow fields", () => {
  it.each<[unknown, string[], string[]]>([
    ["plain", [], []],
    [42, [], []],
    [null, [], []],
    ["${workflow.input.x}", [], ["input"]],
    ["${workflow.workflowId} ${workflow.variables.n}", [], ["variables", "workflowId"]],
    ["${workflow}", [], ["*"]],
    ["${workflow.*}", [], ["*"]],
    ["${workflow..id}", [], ["*"]],
    ["${workflow['input','output']}", [], ["input", "output"]],
    ["${workflow['input']['x']}", [], ["input"]],
    ["${$.workflow.output.x}", [], ["output"]],
    ["${fetch.output.body}", ["fetch"], []],
    ["${fetch}", ["fetch"], []],
    ["${fetch.status} and ${charge.reasonForIncompletion}", ["charge", "fetch"], []],
    ["${$['my ref'].output}", ["my ref"], []],
    ["${$['a','b'].output}", ["a", "b"], []],
    ["${loop_body.output.items[?(@.id == $.other.output.id)]}", ["loop_body", "other"], []],
    ["${workflow.input.list[?(@.x in $.cfg.output.allowed && $.workflow.variables.on == true)]}", ["cfg"], ["input", "variables"]],
    ["${a.output.x[?(@.y[?(@.z == $.deep.output.v)])]}", ["a", "deep"], []],
    // Nested expressions: inner refs and the outer root both count.
    ["${workflow.input.${lookup.output.key}}", ["lookup"], ["input"]],
    ["${fetch.output.ids[${workflow.input.idx}]}", ["fetch"], ["input"]],
    ["${workflow.${pick.output.field}}", ["pick"], ["*"]],
    ["${workflow.in${pick.output.suffix}}", ["pick"], ["*"]],
    ["${$['fetch'].output[${workflow.input.i}]}", ["fetch"], ["input"]],
    ["${fetch.output.ids[${other.output.list[${third.output.i}]}]}", ["fetch", "other", "third"], []],
    // Refs anywhere in a JSON value.
    [{ a: ["${x.output}", { b: "${y.input.z}" }], c: { d: [[["${z.status}"]]] } }, ["x", "y", "z"], []],
    // Escaped, unclosed, empty and system expressions read nothing.
    ["$${notaref.output}", [], []],
    ["${notaref.output", [], []],
    ["${}", [], []],
    ["${CPEWF_TASK_ID}", [], []],
  ])("%j", (value, refs, fields) => {
    expect(refsOf(value)).toEqual(refs);
    expect(fieldsOf(value)).toEqual(fields);
  });

  it("never reports `workflow` as a ref", () => {
    expect(refsOf({ a: "${workflow.input.x}", b: "${workflow}", c: "${$['workflow'].input}" })).toEqual([]);
  });
});

describe("referencedRefs: problems", () => {
  it.each<[unknown, ExpressionProblemCode[]]>([
    ["${fetch.output.x}", []],
    ["${workflow.input.x", ["unclosed-expression"]],
    ["${a ${b.output}", ["unclosed-expression"]],
    ["${}", ["empty-expression"]],
    ["x ${  } y", ["empty-expression"]],
    ["${workflow.input.bad name}", ["invalid-path"]],
    ["${workflow.input.}", ["invalid-path"]],
    ["${fetch.output[?(@.x =~ /a/)]}", ["invalid-path"]],
    ["${fetch.output.concat('x')}", ["invalid-path"]],
    ["${$}", ["invalid-root"]],
    ["${$..id}", ["invalid-root"]],
    ["${*.output}", ["invalid-root"]],
    ["${$[0]}", ["invalid-root"]],
    ["${fetch.output[?(@.id == $..id)]}", ["invalid-root"]],
    ["${${workflow.input.ref}.output}", ["dynamic-root"]],
    ["${task_${workflow.input.n}.output}", ["dynamic-root"]],
    ["${fetch.output[?(@.id == $.${workflow.input.ref}.output.id)]}", ["dynamic-root"]],
    // Read at dispatch: dispatch-references.test.ts checks how they are used.
    ["${workflow.env.REGION}", []],
    ["${workflow.secrets.DB_PASSWORD}", []],
    ["${" + "${".repeat(40) + "x" + "}".repeat(41), ["too-deep"]],
  ])("%j", (value, codes) => {
    expect(codesOf(value)).toEqual(codes);
  });

  it("locates each problem by its path inside the value and its offset in the string", () => {
    const { problems } = referencedRefs({
      name: "ok",
      input: { url: "https://${workflow.input.host", headers: [{ v: "x" }, { v: "${}" }] },
      list: ["${$..id}"],
    });
    expect(problems.map((p) => [p.code, p.severity, p.path, p.offset, p.expression])).toEqual([
      ["unclosed-expression", "warning", ["input", "url"], 8, "${workflow.input.host"],
      ["empty-expression", "warning", ["input", "headers", 1, "v"], 0, "${}"],
      ["invalid-root", "error", ["list", 0], 0, "${$..id}"],
    ]);
    for (const p of problems) expect(p.message.length).toBeGreaterThan(0);
  });

  it("explains a bad path", () => {
    const [problem] = referencedRefs({ a: "${workflow.input.bad name}" }).problems;
    expect(problem?.message).toContain("bracket notation");
  });

  it("still finds the refs of good expressions next to bad ones", () => {
    const result = referencedRefs(["${good.output} ${bad path} ${", "${also.status}"]);
    expect([...result.refs].sort()).toEqual(["also", "good"]);
    expect(result.problems.map((p) => p.code)).toEqual(["unclosed-expression", "invalid-path"]);
  });
});
