import { describe, expect, it } from "vitest";
import { edge, node, simple, workflow } from "../definition/test-fixtures";
import { Harness } from "./test-harness";

/** What a failure workflow is started with: Conductor's documented parameters, failedWorkflow included. */
describe("failureWorkflow input", () => {
  it("carries workflowId, reason, failureStatus, failureTaskId and the failed workflow's execution", () => {
    const h = new Harness(workflow([simple("a", { policy: { retryCount: 0 } }), node("SET_VARIABLE", "v", { input: { step: "a" } })], [edge("v", "a")], { failureWorkflow: "cleanup", variables: { step: "none" } }), {
      input: { orderId: 7 },
    });
    h.evaluate();
    h.fail("a", "card declined");
    const end = h.evaluate().commands.at(-1)!;
    expect(end).toMatchObject({ kind: "failWorkflow" });
    const failure = (end as { failureWorkflow?: { name: string; input: Record<string, unknown> } }).failureWorkflow;
    expect(failure?.name).toBe("cleanup");
    expect(failure?.input).toMatchObject({ workflowId: "wf-1", failureStatus: "FAILED", failureTaskId: h.task("a").taskId, reason: expect.stringContaining("card declined") as unknown });
    expect(failure?.input.failedWorkflow).toEqual({
      workflowId: "wf-1",
      workflowName: "test_workflow",
      workflowVersion: 1,
      status: "FAILED",
      reasonForIncompletion: failure?.input.reason,
      input: { orderId: 7 },
      variables: { step: "a" },
      startTime: 1_000_000,
      failedTaskId: h.task("a").taskId,
    });
  });
});
