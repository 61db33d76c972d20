"use client";

import { Alert, Card, Chip, Skeleton, ToggleButton, ToggleButtonGroup } from "@heroui/react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import type { Route } from "next";
import Link from "next/link";
import { useState } from "react";
import type { ReactElement } from "react";
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useNamespace } from "../console-session";
import { RunStatusChip } from "../executions/run-status-chip";
import { formatDuration } from "../executions/run-status";
import { NoNamespacePanel } from "../no-namespace-panel";
import { OptionSelect } from "../option-select";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { EmptyState } from "../ui/empty-state";
import { RANGE_OPTIONS, REFRESH_MS, STATUS_SERIES, dashboardHref, formatPerMinute, formatRate, formatTick, isLonePoint } from "./dashboard-format";
import type { DashboardQuery, Range } from "./dashboard-format";

type Dashboard = inferRouterOutputs<AppRouter>["dashboard"]["runs"];
type Point = Dashboard["points"][number];

const ALL_WORKFLOWS = "__all__";
const CHART_HEIGHT = 200;

/** The dashboard of the namespace the console shows; `initial` is what the page's URL names. */
export function CurrentNamespaceDashboard({ initial }: { initial: DashboardQuery }) {
  const namespace = useNamespace();
  if (!namespace) return <NoNamespacePanel />;
  return <RunsDashboard key={`${namespace}\n${dashboardHref(initial)}`} initial={initial} namespace={namespace} />;
}

/**
 * How the namespace's runs are going: runs per minute by status, failure
 * rate, p50/p95 duration and queue wait, over the last hour, day or week, for
 * every workflow or one; the newest failing runs link to their pages, and the
 * runs list filtered to the failures has the rest. Aggregated in SQL
 * (dashboard.runs); read again about once a bucket. The range and workflow
 * are kept in the URL, so a view can be linked to and survives a reload.
 */
export function RunsDashboard({ namespace, initial }: { namespace: string; initial: DashboardQuery }) {
  const trpc = useTRPC();
  const [range, setRangeState] = useState<Range>(initial.range);
  const [workflow, setWorkflowState] = useState<string>(initial.workflow ?? ALL_WORKFLOWS);
  const workflows = useQuery(trpc.workflows.list.queryOptions({ namespace }));
  const input = { namespace, range, ...(workflow === ALL_WORKFLOWS ? {} : { workflow }) };
  const dashboard = useQuery({ ...trpc.dashboard.runs.queryOptions(input), placeholderData: keepPreviousData, refetchInterval: REFRESH_MS[range] });
  const names = (workflows.data ?? []).map((w) => w.name);
  // A workflow named by the URL stays choosable while the list loads, and once deleted (its runs remain).
  if (workflow !== ALL_WORKFLOWS && !names.includes(workflow)) names.unshift(workflow);
  const options = [{ id: ALL_WORKFLOWS, label: "All workflows" }, ...names.map((name) => ({ id: name, label: name }))];
  // The history entry is replaced, not pushed, and Next's router is not asked: nothing on the server depends on it.
  const show = (next: DashboardQuery) => window.history.replaceState(null, "", dashboardHref(next));
  const setRange = (next: Range) => {
    setRangeState(next);
    show({ range: next, workflow: workflow === ALL_WORKFLOWS ? null : workflow });
  };
  const setWorkflow = (next: string) => {
    setWorkflowState(next);
    show({ range, workflow: next === ALL_WORKFLOWS ? null : next });
  };

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <OptionSelect ariaLabel="Workflow" className="w-64" options={options} value={workflow} onChange={setWorkflow} />
        <ToggleButtonGroup
          aria-label="Time range"
          disallowEmptySelection
          selectedKeys={new Set([range])}
          selectionMode="single"
          size="sm"
          onSelectionChange={(keys) => {
            const [next] = [...keys];
            if (next === "hour" || next === "day" || next === "week") setRange(next);
          }}
        >
          {RANGE_OPTIONS.map((o) => (
            <ToggleButton key={o.id} id={o.id}>
              {o.label}
            </ToggleButton>
          ))}
        </ToggleButtonGroup>
      </div>
      {dashboard.isError ? (
        <Alert role="alert" status="danger">
          <Alert.Content>
            <Alert.Title>The dashboard could not be read</Alert.Title>
            <Alert.Description>{dashboard.error.message}</Alert.Description>
          </Alert.Content>
        </Alert>
      ) : dashboard.data === undefined ? (
        <DashboardSkeleton />
      ) : (
        <DashboardBody data={dashboard.data} range={range} workflow={workflow === ALL_WORKFLOWS ? null : workflow} />
      )}
    </div>
  );
}

function DashboardBody({ data, range, workflow }: { data: Dashboard; range: Range; workflow: string | null }) {
  const { totals } = data;
  const rangeLabel = RANGE_OPTIONS.find((o) => o.id === range)!.label.toLowerCase();
  const minutes = (Date.parse(data.to) - Date.parse(data.from)) / 60_000;
  if (totals.runs === 0) {
    return (
      <EmptyState framed title={`No runs in the ${rangeLabel}`}>
        {workflow === null ? "Runs of any workflow in this namespace" : `Runs of ${workflow}`} will be counted here as they start: by status, with
        their failure rate, durations and time in the queue.
      </EmptyState>
    );
  }
  return (
    <>
      <div className="grid grid-cols-2 gap-3 lg:grid-cols-4">
        <Stat label="Runs started" value={String(totals.runs)} detail={`${formatPerMinute(totals.runs / minutes)} on average`} />
        <Stat
          label="Failure rate"
          value={formatRate(totals.failureRate)}
          detail={`${totals.counts.FAILED + totals.counts.TIMED_OUT} failed or timed out`}
          tone={totals.failureRate !== null && totals.failureRate > 0 ? "danger" : undefined}
        />
        <Stat label="Duration p50 / p95" value={pair(totals.durationP50Ms, totals.durationP95Ms)} detail="of the runs that ended" />
        <Stat label="Queue wait p50 / p95" value={pair(totals.queueWaitP50Ms, totals.queueWaitP95Ms)} detail={`over ${totals.queuedTasks} worker task${totals.queuedTasks === 1 ? "" : "s"}`} />
      </div>
      <div className="grid gap-3 lg:grid-cols-2">
        <ChartCard title="Runs per minute, by status">
          <BarChart data={data.points} margin={{ top: 4, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" vertical={false} />
            <TimeAxis range={range} />
            <YAxis stroke="var(--muted)" tick={{ fontSize: 11 }} tickFormatter={(v: number) => formatPerMinute(v)} width={56} />
            <Tooltip content={<PointTooltip range={range} render={(p) => runsLines(p)} />} cursor={{ fill: "var(--default)" }} />
            <Legend iconSize={8} wrapperStyle={{ fontSize: 12 }} />
            {STATUS_SERIES.filter((s) => totals.counts[s.status] > 0).map((s) => (
              <Bar key={s.status} dataKey={(p: Point) => p.perMinute[s.status]} fill={s.color} isAnimationActive={false} name={s.label} stackId="runs" />
            ))}
          </BarChart>
        </ChartCard>
        <ChartCard title="Failure rate">
          <LineChart data={data.points} margin={{ top: 4, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" vertical={false} />
            <TimeAxis range={range} />
            <YAxis domain={[0, 1]} stroke="var(--muted)" tick={{ fontSize: 11 }} tickFormatter={(v: number) => formatRate(v)} width={56} />
            <Tooltip content={<PointTooltip range={range} render={(p) => [`Failure rate ${formatRate(p.failureRate)}`]} />} />
            <Line
              connectNulls
              dataKey="failureRate"
              dot={loneDot(data.points.map((p) => p.failureRate), "var(--danger)")}
              isAnimationActive={false}
              name="Failure rate"
              stroke="var(--danger)"
              strokeWidth={2}
            />
          </LineChart>
        </ChartCard>
        <ChartCard title="Run duration">
          <PercentileChart data={data.points} p50="durationP50Ms" p95="durationP95Ms" range={range} />
        </ChartCard>
        <ChartCard title="Queue wait (worker tasks, scheduled to leased)">
          <PercentileChart data={data.points} p50="queueWaitP50Ms" p95="queueWaitP95Ms" range={range} />
        </ChartCard>
      </div>
      <FailingRuns failing={data.failing} rangeLabel={rangeLabel} workflow={workflow} />
    </>
  );
}

function pair(p50: number | null, p95: number | null): string {
  return p50 === null || p95 === null ? "—" : `${formatDuration(p50)} / ${formatDuration(p95)}`;
}

function Stat({ label, value, detail, tone }: { label: string; value: string; detail: string; tone?: "danger" | undefined }) {
  return (
    <Card aria-label={label} className="min-w-0 gap-1 p-4" role="group">
      <p className="text-xs font-medium text-muted">{label}</p>
      <p className={`break-words text-lg font-semibold tabular-nums sm:text-xl ${tone === "danger" ? "text-danger" : "text-foreground"}`}>{value}</p>
      <p className="text-xs text-muted">{detail}</p>
    </Card>
  );
}

function ChartCard({ title, children }: { title: string; children: ReactElement }) {
  return (
    <Card aria-label={title} className="min-w-0 gap-3 p-4" role="figure">
      <h2 className="text-sm font-medium text-foreground">{title}</h2>
      <div style={{ height: CHART_HEIGHT }}>
        <ResponsiveContainer height="100%" initialDimension={{ width: 520, height: CHART_HEIGHT }} width="100%">
          {children}
        </ResponsiveContainer>
      </div>
    </Card>
  );
}

function TimeAxis({ range }: { range: Range }) {
  return <XAxis dataKey="at" minTickGap={24} stroke="var(--muted)" tick={{ fontSize: 11 }} tickFormatter={(v: string) => formatTick(v, range)} />;
}

function PercentileChart({ data, p50, p95, range }: { data: Point[]; p50: "durationP50Ms" | "queueWaitP50Ms"; p95: "durationP95Ms" | "queueWaitP95Ms"; range: Range }) {
  return (
    <LineChart data={data} margin={{ top: 4, right: 8, bottom: 0, left: 0 }}>
      <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" vertical={false} />
      <TimeAxis range={range} />
      <YAxis stroke="var(--muted)" tick={{ fontSize: 11 }} tickFormatter={(v: number) => formatDuration(v)} width={64} />
      <Tooltip content={<PointTooltip range={range} render={(p) => [`p50 ${fmt(p[p50])}`, `p95 ${fmt(p[p95])}`]} />} />
      <Legend iconSize={8} wrapperStyle={{ fontSize: 12 }} />
      <Line connectNulls dataKey={p50} dot={loneDot(data.map((p) => p[p50]), "var(--accent)")} isAnimationActive={false} name="p50" stroke="var(--accent)" strokeWidth={2} />
      <Line
        connectNulls
        dataKey={p95}
        dot={loneDot(data.map((p) => p[p95]), "var(--warning)")}
        isAnimationActive={false}
        name="p95"
        stroke="var(--warning)"
        strokeDasharray="4 3"
        strokeWidth={2}
      />
    </LineChart>
  );
}

/** Dots only where a line cannot show the value (a bucket measured alone), so a single failed run is still drawn. */
function loneDot(values: readonly (number | null)[], color: string) {
  function LoneDot({ index, cx, cy }: { index: number; cx?: number | undefined; cy?: number | undefined }) {
    if (!isLonePoint(values, index) || cx === undefined || cy === undefined) return null;
    return <circle className="lone-point" cx={cx} cy={cy} fill={color} r={3} />;
  }
  return LoneDot;
}

const fmt = (ms: number | null) => (ms === null ? "—" : formatDuration(ms));

function runsLines(p: Point): string[] {
  const lines = STATUS_SERIES.filter((s) => p.counts[s.status] > 0).map((s) => `${s.label}: ${p.counts[s.status]}`);
  return lines.length > 0 ? lines : ["No runs started"];
}

/** The tooltip as the console's popovers look, for any chart: the bucket's time and the lines `render` gives. */
function PointTooltip({ active, payload, range, render }: { active?: boolean; payload?: readonly { payload?: Point }[]; range: Range; render: (p: Point) => string[] }) {
  const point = payload?.[0]?.payload;
  if (!active || !point) return null;
  return (
    <div className="rounded-lg border border-separator bg-overlay px-3 py-2 text-xs text-foreground shadow-md">
      <p className="mb-1 font-medium">{formatTick(point.at, range)}</p>
      {render(point).map((line) => (
        <p key={line} className="text-muted">
          {line}
        </p>
      ))}
    </div>
  );
}

function FailingRuns({ failing, rangeLabel, workflow }: { failing: Dashboard["failing"]; rangeLabel: string; workflow: string | null }) {
  const params = new URLSearchParams([["status", "FAILED"], ["status", "TIMED_OUT"]]);
  if (workflow !== null) params.set("workflow", workflow);
  return (
    <Card className="gap-0 p-0">
      <div className="flex items-center justify-between gap-3 border-b border-separator px-4 py-3">
        <h2 className="text-sm font-medium text-foreground">Failing runs</h2>
        <Link className="text-sm text-accent hover:underline" href={`/executions?${params.toString()}` as Route}>
          All failed runs
        </Link>
      </div>
      {failing.length === 0 ? (
        <EmptyState compact title={`No run failed in the ${rangeLabel}`} />
      ) : (
        <ul aria-label="Failing runs" className="divide-y divide-separator">
          {failing.map((run) => (
            <li key={run.id}>
              <Link className="flex items-center gap-3 px-4 py-2.5 hover:bg-default" href={`/executions/${run.id}` as Route}>
                <RunStatusChip status={run.status} />
                <span className="min-w-0 flex-1">
                  <span className="block truncate text-sm font-medium text-foreground">
                    {run.workflow} <span className="text-muted">v{run.version}</span>
                    {run.failedTaskRef ? <Chip className="ml-2" size="sm" variant="soft">{run.failedTaskRef}</Chip> : null}
                  </span>
                  {run.reasonForIncompletion ? <span className="block truncate text-xs text-muted">{run.reasonForIncompletion}</span> : null}
                </span>
                <span className="shrink-0 text-xs text-muted">
                  <RelativeTime iso={run.startedAt} />
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

function DashboardSkeleton() {
  return (
    <div aria-busy="true" aria-label="Loading the dashboard" className="flex flex-col gap-3">
      <div className="grid grid-cols-2 gap-3 lg:grid-cols-4">
        {[0, 1, 2, 3].map((i) => (
          <Card key={i} className="gap-2 p-4">
            <Skeleton className="h-3 w-24 rounded-md" />
            <Skeleton className="h-6 w-20 rounded-md" />
          </Card>
        ))}
      </div>
      <div className="grid gap-3 lg:grid-cols-2">
        {[0, 1, 2, 3].map((i) => (
          <Card key={i} className="gap-3 p-4">
            <Skeleton className="h-3.5 w-40 rounded-md" />
            <Skeleton className="rounded-lg" style={{ height: CHART_HEIGHT }} />
          </Card>
        ))}
      </div>
    </div>
  );
}
