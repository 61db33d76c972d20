import { describe, expect, it } from "vitest";
import { compile } from "../compile";
import type { WorkflowDefinition } from "../definition";
import { dispatchSites, dispatchTemplate } from "./dispatch-template";
import { decide } from "./decide";
import { blueprintNode } from "../compile/compile";
import type { EvaluationState, ScheduleTaskCommand } from "./types";

const position = { x: 0, y: 0 };
const definition = {
  schemaVersion: 1,
  name: "calls",
  nodes: [
    {
      ref: "call",
      type: "HTTP",
      position,
      input: { note: "${workflow.env.NOTE}" },
      httpRequest: { uri: "${workflow.env.BASE}/items/${workflow.input.id}", method: "POST", headers: { Authorization: "Bearer ${workflow.secrets.TOKEN}" }, body: { id: "${workflow.input.id}" } },
    },
    { ref: "script", type: "INLINE", position, evaluatorType: "javascript", expression: "function e() { return `${workflow.secrets.NOT_THIS}`; }", input: { key: "${workflow.secrets.KEY}" } },
    { ref: "branch", type: "SWITCH", position, cases: ["a"], input: { switchCaseValue: "${workflow.input.kind}" } },
  ],
  edges: [
    { id: "e1", source: "call", target: "script" },
    { id: "e2", source: "script", target: "branch" },
  ],
} as unknown as WorkflowDefinition;
const blueprint = compile(definition);

describe("dispatchTemplate and dispatchSites", () => {
  it("find the strings of an HTTP task's input that read secrets and variables, at their input paths", () => {
    const sites = dispatchSites(dispatchTemplate(blueprintNode(blueprint, "call")!));
    expect(sites.map((s) => [s.path, s.text])).toEqual([
      [["note"], "${workflow.env.NOTE}"],
      [["http_request", "uri"], "${workflow.env.BASE}/items/${workflow.input.id}"],
      [["http_request", "headers", "Authorization"], "Bearer ${workflow.secrets.TOKEN}"],
    ]);
  });

  it("leave an INLINE's script alone: decide writes it unresolved", () => {
    expect(dispatchSites(dispatchTemplate(blueprintNode(blueprint, "script")!)).map((s) => s.path)).toEqual([["key"]]);
  });

  it("have nothing for a node that is not dispatched", () => {
    expect(dispatchTemplate(blueprintNode(blueprint, "branch")!)).toBeUndefined();
  });

  it("match the stored input decide writes: placeholders where the values go", () => {
    const state: EvaluationState = {
      workflow: { id: "w1", defName: "calls", defVersion: 1, status: "RUNNING", input: { id: 7 }, variables: {}, startedAt: 0, version: 1 },
      frontier: [],
      loaded: [],
    };
    const scripts = { evaluate: () => ({ ok: false as const, error: "no scripts here" }) };
    const scheduled = decide(blueprint, state, 1000, { scripts }).commands.find((c): c is ScheduleTaskCommand => c.kind === "scheduleTask");
    expect(scheduled?.input).toEqual({
      note: "${workflow.env.NOTE}",
      http_request: { uri: "${workflow.env.BASE}/items/7", method: "POST", headers: { Authorization: "Bearer ***" }, body: { id: 7 } },
    });
  });
});
