import type { TaskStatus, WorkflowStatus } from "@/engine";

/** Chip colours HeroUI offers. */
export type StatusColor = "accent" | "success" | "warning" | "danger" | "default";

/**
 * How run and task statuses read, in one place so the Workflows list, the run
 * page and (later) the live diagram agree. Words for people; the codes stay
 * Conductor's.
 */
export const RUN_STATUS_DISPLAY: Record<WorkflowStatus, { label: string; color: StatusColor }> = {
  RUNNING: { label: "Running", color: "accent" },
  PAUSED: { label: "Paused", color: "warning" },
  COMPLETED: { label: "Completed", color: "success" },
  FAILED: { label: "Failed", color: "danger" },
  TIMED_OUT: { label: "Timed out", color: "danger" },
  TERMINATED: { label: "Terminated", color: "default" },
};

export const TASK_STATUS_DISPLAY: Record<TaskStatus, { label: string; color: StatusColor }> = {
  SCHEDULED: { label: "Scheduled", color: "default" },
  IN_PROGRESS: { label: "In progress", color: "accent" },
  COMPLETED: { label: "Completed", color: "success" },
  COMPLETED_WITH_ERRORS: { label: "Completed with errors", color: "warning" },
  FAILED: { label: "Failed", color: "danger" },
  FAILED_WITH_TERMINAL_ERROR: { label: "Failed (terminal)", color: "danger" },
  TIMED_OUT: { label: "Timed out", color: "danger" },
  CANCELED: { label: "Canceled", color: "default" },
  SKIPPED: { label: "Skipped", color: "default" },
};

/** "1.2 s", "3 min 4 s", "2 h 5 min": a run's or task's duration, from start to end (or to now while it runs). */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const totalSeconds = Math.round(seconds);
  const minutes = Math.floor(totalSeconds / 60);
  if (minutes < 60) return `${minutes} min${totalSeconds % 60 ? ` ${totalSeconds % 60} s` : ""}`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ""}`;
  return `${Math.floor(hours / 24)} d${hours % 24 ? ` ${hours % 24} h` : ""}`;
}

/** Whether a run can still change: the run page keeps refreshing while it is. */
export function isLiveRunStatus(status: WorkflowStatus): boolean {
  return status === "RUNNING" || status === "PAUSED";
}
