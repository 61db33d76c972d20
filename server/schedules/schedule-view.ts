import type { ScheduleRow, ScheduleRunRow } from "../store/schedules";
import { upcomingFires } from "./save-schedule";

/** How many upcoming fire times a schedule's view carries: the console's "next five". */
export const UPCOMING_FIRES = 5;

const isoOrNull = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/** A schedule as REST and the console answer it, with its next fire times (none while paused). */
export function toScheduleView(row: ScheduleRow, now: Date = new Date()) {
  return {
    name: row.name,
    description: row.description,
    workflowName: row.workflowName,
    workflowVersion: row.workflowVersion,
    input: row.input,
    correlationIdTemplate: row.correlationIdTemplate,
    priority: row.priority,
    cronExpression: row.cronExpression,
    zoneId: row.zoneId,
    startAt: isoOrNull(row.startAt),
    endAt: isoOrNull(row.endAt),
    catchUp: row.catchUp,
    catchUpLimit: row.catchUpLimit,
    overlap: row.overlap,
    paused: row.paused,
    pausedReason: row.pausedReason,
    nextFireAt: row.paused ? null : isoOrNull(row.nextFireAt),
    nextFireTimes: upcomingFires(row, UPCOMING_FIRES, now).map((d) => d.toISOString()),
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
    updatedAt: row.updatedAt.toISOString(),
    updatedBy: row.updatedBy,
  };
}

export type ScheduleView = ReturnType<typeof toScheduleView>;

/** One fire as the APIs answer it: when, the run it started, or why none. */
export function toScheduleRunView(row: ScheduleRunRow) {
  return {
    id: row.id,
    fireAt: row.fireAt.toISOString(),
    throughFireAt: isoOrNull(row.throughFireAt),
    fireCount: row.fireCount,
    outcome: row.outcome,
    workflowId: row.workflowId,
    reason: row.reason,
    handledAt: row.createdAt.toISOString(),
    startedAt: isoOrNull(row.startedAt),
  };
}

export type ScheduleRunView = ReturnType<typeof toScheduleRunView>;
