import { describe, expect, it } from "vitest";
import { workflowListInput } from "./workflows";

describe("workflowListInput", () => {
  it("requires the namespace: a forgotten one must fail, not quietly read default", () => {
    expect(workflowListInput.safeParse({}).success).toBe(false);
    expect(workflowListInput.parse({ namespace: " default " })).toEqual({ namespace: "default" });
  });

  it("refuses an empty namespace and an overlong search", () => {
    expect(workflowListInput.safeParse({ namespace: "  " }).success).toBe(false);
    expect(workflowListInput.safeParse({ namespace: "default", search: "x".repeat(201) }).success).toBe(false);
  });
});
