import { describe, expect, it } from "vitest";
import {
  TASK_STATUSES,
  WORKFLOW_STATUSES,
  isSuccessfulTaskStatus,
  isTerminalTaskStatus,
  isTerminalWorkflowStatus,
} from "./statuses";

describe("statuses", () => {
  it("treats only RUNNING and PAUSED workflows as live", () => {
    expect(WORKFLOW_STATUSES.filter((s) => !isTerminalWorkflowStatus(s))).toEqual(["RUNNING", "PAUSED"]);
  });

  it("treats only SCHEDULED and IN_PROGRESS tasks as live", () => {
    expect(TASK_STATUSES.filter((s) => !isTerminalTaskStatus(s))).toEqual(["SCHEDULED", "IN_PROGRESS"]);
  });

  it("lets successors run only after a passing terminal status", () => {
    expect(TASK_STATUSES.filter(isSuccessfulTaskStatus)).toEqual(["COMPLETED", "COMPLETED_WITH_ERRORS", "SKIPPED"]);
    for (const s of TASK_STATUSES.filter(isSuccessfulTaskStatus)) expect(isTerminalTaskStatus(s)).toBe(true);
  });
});
