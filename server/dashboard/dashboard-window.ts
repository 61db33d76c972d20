import { WORKFLOW_STATUSES } from "../../engine";
import type { WorkflowStatus } from "../../engine";

/**
 * The runs dashboard's arithmetic, pure: which time window a range means,
 * how it is cut into buckets, and how the SQL's per-bucket aggregates become
 * the chart's points. The SQL (store/run-dashboard.ts) only counts and takes
 * percentiles; everything derived from those — rates, failure ratios, the
 * window's totals — is here, unit-tested on plain data.
 */

export const DASHBOARD_RANGES = ["hour", "day", "week"] as const;
export type DashboardRange = (typeof DASHBOARD_RANGES)[number];

/** A range's length and bucket: 60, 96 and 168 points — enough to read a trend, few enough to draw at 1280 px. */
const RANGE_SHAPE: Record<DashboardRange, { rangeSeconds: number; stepSeconds: number }> = {
  hour: { rangeSeconds: 3600, stepSeconds: 60 },
  day: { rangeSeconds: 86_400, stepSeconds: 900 },
  week: { rangeSeconds: 604_800, stepSeconds: 3600 },
};

export interface DashboardWindow {
  range: DashboardRange;
  /** Inclusive start, a multiple of the step since the Unix epoch. */
  from: Date;
  /** Exclusive end: the end of the bucket `now` falls in. */
  to: Date;
  stepSeconds: number;
  buckets: number;
}

/** The window of `range` that ends with the bucket holding `now`; buckets are aligned to the epoch (UTC). */
export function dashboardWindow(range: DashboardRange, now: Date): DashboardWindow {
  const { rangeSeconds, stepSeconds } = RANGE_SHAPE[range];
  const stepMs = stepSeconds * 1000;
  const toMs = Math.floor(now.getTime() / stepMs) * stepMs + stepMs;
  return { range, from: new Date(toMs - rangeSeconds * 1000), to: new Date(toMs), stepSeconds, buckets: rangeSeconds / stepSeconds };
}

/** Runs that ended badly: the failure rate's numerator. TERMINATED is an operator's choice, not a failure. */
export const FAILED_STATUSES = ["FAILED", "TIMED_OUT"] as const satisfies readonly WorkflowStatus[];
const ENDED_STATUSES: readonly WorkflowStatus[] = ["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"];

export type StatusCounts = Record<WorkflowStatus, number>;

export function zeroCounts(): StatusCounts {
  return Object.fromEntries(WORKFLOW_STATUSES.map((s) => [s, 0])) as StatusCounts;
}

/** Failed over ended (completed, failed, timed out, terminated); null when nothing ended, so a quiet hour is no 0 %. */
export function failureRate(counts: StatusCounts): number | null {
  const ended = ENDED_STATUSES.reduce((sum, s) => sum + counts[s], 0);
  if (ended === 0) return null;
  return FAILED_STATUSES.reduce((sum, s) => sum + counts[s], 0) / ended;
}

/** One bucket as the SQL returns it: counts by status and percentiles (null where nothing was measured). */
export interface BucketAggregate {
  at: Date;
  counts: Partial<StatusCounts>;
  durationP50Ms: number | null;
  durationP95Ms: number | null;
  queueWaitP50Ms: number | null;
  queueWaitP95Ms: number | null;
}

/** One point of the charts. */
export interface DashboardPoint {
  at: string;
  /** Runs started in the bucket, by their status now. */
  counts: StatusCounts;
  /** The same counts per minute of the bucket. */
  perMinute: StatusCounts;
  failureRate: number | null;
  durationP50Ms: number | null;
  durationP95Ms: number | null;
  queueWaitP50Ms: number | null;
  queueWaitP95Ms: number | null;
}

/**
 * Every bucket of the window in order, those the SQL had no row for filled
 * with zero counts and no percentiles; a row outside the window is a bug in
 * the query and throws rather than drawing a point off the axis.
 */
export function toPoints(window: DashboardWindow, rows: readonly BucketAggregate[]): DashboardPoint[] {
  const stepMs = window.stepSeconds * 1000;
  const byIndex = new Map<number, BucketAggregate>();
  for (const row of rows) {
    const offset = row.at.getTime() - window.from.getTime();
    const index = offset / stepMs;
    if (!Number.isInteger(index) || index < 0 || index >= window.buckets) throw new RangeError(`bucket ${row.at.toISOString()} is not in the window`);
    byIndex.set(index, row);
  }
  const minutes = window.stepSeconds / 60;
  const points: DashboardPoint[] = [];
  for (let i = 0; i < window.buckets; i++) {
    const row = byIndex.get(i);
    const counts = { ...zeroCounts(), ...row?.counts };
    points.push({
      at: new Date(window.from.getTime() + i * stepMs).toISOString(),
      counts,
      perMinute: Object.fromEntries(WORKFLOW_STATUSES.map((s) => [s, counts[s] / minutes])) as StatusCounts,
      failureRate: failureRate(counts),
      durationP50Ms: row?.durationP50Ms ?? null,
      durationP95Ms: row?.durationP95Ms ?? null,
      queueWaitP50Ms: row?.queueWaitP50Ms ?? null,
      queueWaitP95Ms: row?.queueWaitP95Ms ?? null,
    });
  }
  return points;
}

/** The counts of every bucket added up. */
export function totalCounts(points: readonly DashboardPoint[]): StatusCounts {
  const total = zeroCounts();
  for (const p of points) for (const s of WORKFLOW_STATUSES) total[s] += p.counts[s];
  return total;
}
