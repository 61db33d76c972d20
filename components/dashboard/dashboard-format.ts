import type { WorkflowStatus } from "@/engine";

/** The dashboard's ranges as the console names them (the server's DASHBOARD_RANGES). */
export const RANGE_OPTIONS = [
  { id: "hour", label: "Last hour" },
  { id: "day", label: "Last day" },
  { id: "week", label: "Last week" },
] as const;
export type Range = (typeof RANGE_OPTIONS)[number]["id"];

/** What the dashboard's URL names: `/dashboard?range=day&workflow=orders`; anything unknown falls back to the default. */
export interface DashboardQuery {
  range: Range;
  workflow: string | null;
}

export function dashboardQueryFrom(query: Record<string, string | string[] | undefined>): DashboardQuery {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const range = RANGE_OPTIONS.find((o) => o.id === first(query.range))?.id ?? "hour";
  const workflow = first(query.workflow)?.trim();
  return { range, workflow: workflow ? workflow : null };
}

/** The URL that shows `q` again; the default range is left out. */
export function dashboardHref(q: DashboardQuery): string {
  const params = new URLSearchParams();
  if (q.range !== "hour") params.set("range", q.range);
  if (q.workflow !== null) params.set("workflow", q.workflow);
  const search = params.toString();
  return search === "" ? "/dashboard" : `/dashboard?${search}`;
}

/** How often each range is read again: about one bucket, never faster than the data changes shape. */
export const REFRESH_MS: Record<Range, number> = { hour: 15_000, day: 60_000, week: 300_000 };

/** Stacking order of the runs chart, bottom up, with the theme colour each status is drawn in. */
export const STATUS_SERIES: readonly { status: WorkflowStatus; label: string; color: string }[] = [
  { status: "COMPLETED", label: "Completed", color: "var(--success)" },
  { status: "FAILED", label: "Failed", color: "var(--danger)" },
  { status: "TIMED_OUT", label: "Timed out", color: "color-mix(in oklab, var(--danger) 55%, var(--warning))" },
  { status: "TERMINATED", label: "Terminated", color: "var(--muted)" },
  { status: "PAUSED", label: "Paused", color: "var(--warning)" },
  { status: "RUNNING", label: "Running", color: "var(--accent)" },
];

/** A tick on the time axis: the clock for an hour or a day, the weekday and hour for a week (the browser's zone). */
export function formatTick(iso: string, range: Range): string {
  const date = new Date(iso);
  if (range === "week") return date.toLocaleString(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" });
  return date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
}

/** "12.5 %", or "—" where nothing ended. */
export function formatRate(rate: number | null): string {
  if (rate === null) return "—";
  const percent = rate * 100;
  return `${percent === 0 || percent === 100 || percent >= 10 ? Math.round(percent) : percent.toFixed(1)} %`;
}

/** "0.4/min", "12/min": a rate of runs per minute. */
export function formatPerMinute(value: number): string {
  if (value === 0) return "0/min";
  return `${value < 10 ? value.toFixed(value < 1 ? 2 : 1) : Math.round(value)}/min`;
}

/** A measured point whose neighbours have no measurement: a line has nothing to draw to, so it needs a dot to be seen. */
export function isLonePoint(values: readonly (number | null)[], index: number): boolean {
  return values[index] != null && values[index - 1] == null && values[index + 1] == null;
}
