/**
 * Workflow and task statuses, with Conductor's names so its clients read them
 * unchanged. Shared by the decider, the store's row types and the UI.
 */
export const WORKFLOW_STATUSES = ["RUNNING", "PAUSED", "COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

export const TASK_STATUSES = [
  "SCHEDULED",
  "IN_PROGRESS",
  "COMPLETED",
  "COMPLETED_WITH_ERRORS",
  "FAILED",
  "FAILED_WITH_TERMINAL_ERROR",
  "TIMED_OUT",
  "CANCELED",
  "SKIPPED",
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** The statuses a workflow ends in. */
export const TERMINAL_WORKFLOW_STATUSES = ["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"] as const satisfies readonly WorkflowStatus[];
/** A status a workflow ends in: what an end writes to its row. */
export type WorkflowEndStatus = (typeof TERMINAL_WORKFLOW_STATUSES)[number];
const TERMINAL_WORKFLOW: ReadonlySet<WorkflowStatus> = new Set(TERMINAL_WORKFLOW_STATUSES);
/**
 * Every status an attempt ends in. The TaskExecutions frontier index's predicate
 * is `"status" NOT IN (these)`: a query that wants that index must spell the same list.
 */
export const TERMINAL_TASK_STATUSES = [
  "COMPLETED",
  "COMPLETED_WITH_ERRORS",
  "FAILED",
  "FAILED_WITH_TERMINAL_ERROR",
  "TIMED_OUT",
  "CANCELED",
  "SKIPPED",
] as const satisfies readonly TaskStatus[];
const TERMINAL_TASK: ReadonlySet<TaskStatus> = new Set(TERMINAL_TASK_STATUSES);
const SUCCESSFUL_TASK: ReadonlySet<TaskStatus> = new Set(["COMPLETED", "COMPLETED_WITH_ERRORS", "SKIPPED"]);

/** True once a workflow can change no further except by an operator's retry or restart. */
export function isTerminalWorkflowStatus(status: WorkflowStatus): boolean {
  return TERMINAL_WORKFLOW.has(status);
}

/** True for a task attempt that has ended, whether it succeeded or not. */
export function isTerminalTaskStatus(status: TaskStatus): boolean {
  return TERMINAL_TASK.has(status);
}

/** True for a terminal task whose successors may run (Conductor counts COMPLETED_WITH_ERRORS and SKIPPED as passing). */
export function isSuccessfulTaskStatus(status: TaskStatus): boolean {
  return SUCCESSFUL_TASK.has(status);
}
