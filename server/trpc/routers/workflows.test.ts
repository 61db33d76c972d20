import { describe, expect, it } from "vitest";
import { workflowListInput } from "./workflows";

describe("workflowListInput", () => {
  it("defaults the namespace to default", () => {
    expect(workflowListInput.parse({})).toEqual({ namespace: "default" });
  });

  it("refuses an empty namespace and an overlong search", () => {
    expect(workflowListInput.safeParse({ namespace: "  " }).success).toBe(false);
    expect(workflowListInput.safeParse({ search: "x".repeat(201) }).success).toBe(false);
  });
});
