"use client";

import { useMemo } from "react";
import type { RunTask } from "./run-model";
import { formatDuration } from "./run-status";

const BAR_TONE: Record<string, string> = {
  COMPLETED: "bg-emerald-500",
  COMPLETED_WITH_ERRORS: "bg-amber-500",
  IN_PROGRESS: "bg-accent animate-pulse",
  SCHEDULED: "bg-default",
  FAILED: "bg-danger",
  FAILED_WITH_TERMINAL_ERROR: "bg-danger",
  TIMED_OUT: "bg-danger",
  CANCELED: "bg-default",
  SKIPPED: "bg-default",
};

/**
 * The whole run as a Gantt chart: one row per task attempt, from scheduled
 * (faint: waiting in the queue) through started to ended, on one time axis.
 */
export function RunTimeline({ tasks }: { tasks: ReadonlyMap<string, RunTask> }) {
  const rows = useMemo(() => [...tasks.values()].filter((t) => t.status !== "SKIPPED").sort((a, b) => a.scheduledAt.localeCompare(b.scheduledAt)), [tasks]);
  if (rows.length === 0) return <p className="text-sm text-muted">No task has been scheduled yet.</p>;
  const now = Date.now();
  const start = Math.min(...rows.map((r) => Date.parse(r.scheduledAt)));
  const end = Math.max(...rows.map((r) => (r.endedAt ? Date.parse(r.endedAt) : now)), start + 1);
  const span = end - start;
  const pct = (t: number) => `${((t - start) / span) * 100}%`;
  return (
    <div className="flex flex-col gap-1.5 text-xs" role="list" aria-label="Timeline">
      <div className="flex justify-between text-muted">
        <span>0</span>
        <span>{formatDuration(span)}</span>
      </div>
      {rows.map((t) => {
        const scheduled = Date.parse(t.scheduledAt);
        const started = t.startedAt ? Date.parse(t.startedAt) : null;
        const ended = t.endedAt ? Date.parse(t.endedAt) : now;
        return (
          <div key={t.id} className="flex items-center gap-2" role="listitem" title={`${t.ref}: ${t.status.toLowerCase()}`}>
            <span className="w-24 shrink-0 truncate font-mono">
              {t.ref}
              {t.attempt > 0 ? ` #${t.attempt + 1}` : ""}
            </span>
            <div className="relative h-3 flex-1 rounded bg-default/40">
              <div className="absolute top-0 h-3 rounded bg-default" style={{ left: pct(scheduled), width: `calc(${pct(started ?? ended)} - ${pct(scheduled)})` }} />
              {started !== null ? (
                <div className={`absolute top-0 h-3 min-w-[2px] rounded ${BAR_TONE[t.status] ?? "bg-default"}`} style={{ left: pct(started), width: `calc(${pct(ended)} - ${pct(started)})` }} />
              ) : null}
            </div>
          </div>
        );
      })}
    </div>
  );
}
