import { describe, expect, it } from "vitest";
import { analyzeDispatchString } from "./dispatch-references";

describe("analyzeDispatchString", () => {
  it.each([
    ["Bearer ${workflow.secrets.TOKEN}", [{ kind: "secrets", name: "TOKEN" }]],
    ["${workflow['secrets']['TOKEN']}", [{ kind: "secrets", name: "TOKEN" }]],
    ["${workflow.env.BASE}/items/${workflow.input.id}?key=${workflow.secrets.K}&t=${CPEWF_TASK_ID}", [
      { kind: "env", name: "BASE" },
      { kind: "secrets", name: "K" },
    ]],
    ["${workflow.secrets.A}${workflow.secrets.A}", [
      { kind: "secrets", name: "A" },
      { kind: "secrets", name: "A" },
    ]],
    ["no references ${workflow.input.x} ${a.output}", []],
    ["escaped $${workflow.secrets.X}", []],
  ])("%s reads %j, as written", (text, references) => {
    expect(analyzeDispatchString(text)).toEqual({ references, problems: [] });
  });

  it.each([
    ["${workflow.secrets}", /must name one secret/],
    ["${workflow.secrets.TOKEN.length}", /must name one secret/],
    ["${workflow.env['A','B']}", /must name one variable/],
    ["${workflow.secrets['bad name']}", /plain name/],
    ["${workflow.secrets.${workflow.input.which}}", /cannot be computed/],
    ["${workflow.input.${workflow.secrets.X}}", /inside another expression/],
    // Upstream outputs and variables can change between scheduling and dispatch (and carry data the dispatcher must not resolve).
    ["Bearer ${workflow.secrets.T} ${login.output.session}", /in a field of its own/],
    ["${workflow.secrets.T}${workflow.variables.v}", /in a field of its own/],
  ])("%s is refused", (text, message) => {
    const found = analyzeDispatchString(text);
    expect(found.problems.length).toBeGreaterThan(0);
    expect(found.problems.join("\n")).toMatch(message);
  });
});
