import { describe, expect, it } from "vitest";
import kitchenSink from "./fixtures/kitchen-sink.json";
import { ConductorTaskDefSchema, ConductorWorkflowDefSchema, ConductorWorkflowTaskSchema } from "./conductor-schema";

describe("Conductor schemas", () => {
  it("accept a WorkflowDef as a Conductor server returns it, unknown fields passing through", () => {
    const parsed = ConductorWorkflowDefSchema.safeParse(kitchenSink);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toMatchObject({ accessPolicy: {}, createdBy: "someone" });
  });

  it("take null for an absent field and default nothing", () => {
    expect(ConductorWorkflowTaskSchema.parse({ taskReferenceName: "a", type: null, inputParameters: null, decisionCases: null })).toEqual({
      taskReferenceName: "a",
      type: null,
      inputParameters: null,
      decisionCases: null,
    });
  });

  it("check the fields they know, through nested task lists", () => {
    const result = ConductorWorkflowDefSchema.safeParse({
      name: "x",
      tasks: [{ taskReferenceName: "s", type: "SWITCH", decisionCases: { a: [{ taskReferenceName: "t", startDelay: -1 }] }, forkTasks: [[{ name: "no ref" }]] }],
      timeoutPolicy: "RETRY",
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path)).toEqual([
      ["tasks", 0, "decisionCases", "a", 0, "startDelay"],
      ["tasks", 0, "forkTasks", 0, 0, "taskReferenceName"],
      ["timeoutPolicy"],
    ]);
    expect(ConductorTaskDefSchema.safeParse({ name: "t", retryLogic: "RANDOM", responseTimeoutSeconds: 0 }).error?.issues.map((i) => i.path)).toEqual([
      ["retryLogic"],
      ["responseTimeoutSeconds"],
    ]);
  });
});
