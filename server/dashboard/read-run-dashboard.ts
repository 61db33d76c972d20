import type { Db } from "../../db/pool";
import { readDashboardSnapshot } from "../store/run-dashboard";
import type { FailingRun, QueueWaitAggregate, RunAggregate } from "../store/run-dashboard";
import { dashboardWindow, failureRate, toPoints, totalCounts } from "./dashboard-window";
import type { BucketAggregate, DashboardPoint, DashboardRange, DashboardWindow, StatusCounts } from "./dashboard-window";

/** How many failing runs the dashboard lists (the runs list, filtered, has the rest). */
export const FAILING_RUNS_SHOWN = 10;

export interface RunDashboard {
  window: DashboardWindow;
  points: DashboardPoint[];
  totals: {
    counts: StatusCounts;
    runs: number;
    failureRate: number | null;
    durationP50Ms: number | null;
    durationP95Ms: number | null;
    queuedTasks: number;
    queueWaitP50Ms: number | null;
    queueWaitP95Ms: number | null;
  };
  failing: FailingRun[];
}

export interface ReadRunDashboardInput {
  namespaceId: string;
  range: DashboardRange;
  workflow?: string | undefined;
  now: Date;
}

/** The dashboard of one namespace (or one workflow in it) over a range: three reads in one snapshot. */
export async function readRunDashboard(db: Db, input: ReadRunDashboardInput): Promise<RunDashboard> {
  const window = dashboardWindow(input.range, input.now);
  const q = { namespaceId: input.namespaceId, workflow: input.workflow, from: window.from, to: window.to, stepSeconds: window.stepSeconds };
  const { runs, waits, failing } = await readDashboardSnapshot(db, q, FAILING_RUNS_SHOWN);
  const points = toPoints(window, mergeBuckets(runs, waits));
  const counts = totalCounts(points);
  const windowRuns = runs.find((r) => r.at === null);
  const windowWaits = waits.find((w) => w.at === null);
  return {
    window,
    points,
    totals: {
      counts,
      runs: Object.values(counts).reduce((a, b) => a + b, 0),
      failureRate: failureRate(counts),
      durationP50Ms: windowRuns?.durationP50Ms ?? null,
      durationP95Ms: windowRuns?.durationP95Ms ?? null,
      queuedTasks: windowWaits?.tasks ?? 0,
      queueWaitP50Ms: windowWaits?.queueWaitP50Ms ?? null,
      queueWaitP95Ms: windowWaits?.queueWaitP95Ms ?? null,
    },
    failing,
  };
}

/** The runs' and the queue waits' buckets as one row per bucket (a bucket may have waits and no run started in it). */
export function mergeBuckets(runs: readonly RunAggregate[], waits: readonly QueueWaitAggregate[]): BucketAggregate[] {
  const byTime = new Map<number, BucketAggregate>();
  const bucket = (at: Date): BucketAggregate => {
    let row = byTime.get(at.getTime());
    if (!row) byTime.set(at.getTime(), (row = { at, counts: {}, durationP50Ms: null, durationP95Ms: null, queueWaitP50Ms: null, queueWaitP95Ms: null }));
    return row;
  };
  for (const r of runs) if (r.at !== null) Object.assign(bucket(r.at), { counts: r.counts, durationP50Ms: r.durationP50Ms, durationP95Ms: r.durationP95Ms });
  for (const w of waits) if (w.at !== null) Object.assign(bucket(w.at), { queueWaitP50Ms: w.queueWaitP50Ms, queueWaitP95Ms: w.queueWaitP95Ms });
  return [...byTime.values()];
}
