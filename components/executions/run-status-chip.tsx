import { Chip } from "@heroui/react";
import type { TaskStatus, WorkflowStatus } from "@/engine";
import { RUN_STATUS_DISPLAY, TASK_STATUS_DISPLAY } from "./run-status";

export function RunStatusChip({ status }: { status: WorkflowStatus }) {
  const display = RUN_STATUS_DISPLAY[status];
  return (
    <Chip color={display.color} size="sm" variant="soft">
      {status === "RUNNING" ? <span aria-hidden="true" className="mr-0.5 inline-block size-1.5 animate-pulse rounded-full bg-current" /> : null}
      {display.label}
    </Chip>
  );
}

export function TaskStatusChip({ status }: { status: TaskStatus }) {
  const display = TASK_STATUS_DISPLAY[status];
  return (
    <Chip color={display.color} size="sm" variant="soft">
      {display.label}
    </Chip>
  );
}
