"use client";

import { Alert, Button, Card, Chip, Table, Tooltip } from "@heroui/react";
import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import type { Route } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { useEffect, useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { formatAbsoluteTime, pluralize } from "../format";
import { ArrowLeftIcon, RefreshIcon } from "../icons";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { useHydrated } from "../use-hydrated";
import { formatDuration } from "./run-status";
import { RunStatusChip, TaskStatusChip } from "./run-status-chip";

type Run = inferRouterOutputs<AppRouter>["runs"]["get"];
type TaskRow = Run["tasks"]["items"][number];

/** How often a run that can still change is read again. A PAUSED run waits on a person, so it is read less often. */
const REFRESH_MS = { RUNNING: 1000, PAUSED: 5000 } as const;

/** The clock, ticking once a second while `active`: a running run's duration counts up between refreshes. */
function useNow(active: boolean): number | null {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

function elapsed(startIso: string | null, endIso: string | null, now: number | null): string {
  if (!startIso) return "—";
  const end = endIso ? Date.parse(endIso) : now;
  return end === null ? "—" : formatDuration(end - Date.parse(startIso));
}

/**
 * The first run page: status, workflow and version, timings, input, output
 * and variables, and every task row. It re-reads the run every second while
 * it runs; the live diagram replaces most of this later.
 */
export function RunSummary({ namespace, id }: { namespace: string; id: string }) {
  const trpc = useTRPC();
  const run = useQuery({
    ...trpc.runs.get.queryOptions({ namespace, id }),
    refetchInterval: (query) => {
      const status = query.state.data?.status;
      return status === "RUNNING" || status === "PAUSED" ? REFRESH_MS[status] : false;
    },
  });
  const now = useNow(run.data?.status === "RUNNING");

  if (!run.data) {
    return run.isError ? (
      <Alert status="danger">
        <Alert.Indicator />
        <Alert.Content>
          <Alert.Title>The run could not be loaded</Alert.Title>
          <Alert.Description>{run.error.message}</Alert.Description>
        </Alert.Content>
        <Button size="sm" variant="danger-soft" onPress={() => void run.refetch()}>
          Try again
        </Button>
      </Alert>
    ) : (
      <p className="text-sm text-muted">Loading the run…</p>
    );
  }

  const data = run.data;
  const editorHref = `/workflows/${encodeURIComponent(data.defName)}?version=${data.defVersion}` as Route;
  return (
    <div className="flex flex-col gap-6">
      <div>
        <Link className="mb-4 inline-flex items-center gap-1.5 text-sm text-muted hover:text-foreground" href="/workflows">
          <ArrowLeftIcon className="size-4" />
          Workflows
        </Link>
        <header className="flex items-start justify-between gap-3">
          <div className="min-w-0">
            <div className="flex flex-wrap items-center gap-x-3 gap-y-2">
              <h1 className="min-w-0 text-2xl font-semibold tracking-tight break-words text-foreground sm:text-[28px]">
                <Link className="underline-offset-4 hover:underline" href={editorHref}>
                  {data.defName}
                </Link>
              </h1>
              <Chip color="accent" size="sm" variant="soft">
                v{data.defVersion}
              </Chip>
              <RunStatusChip status={data.status} />
            </div>
            <p className="mt-1.5 font-mono text-xs break-all text-muted">Run {data.id}</p>
          </div>
          <div className="flex shrink-0 items-center gap-2">
            {run.isError ? <span className="text-xs text-danger">Refresh failed; showing the last answer</span> : null}
            <Tooltip delay={400}>
              <Button aria-label="Refresh" isDisabled={run.isFetching} isIconOnly size="sm" variant="ghost" onPress={() => void run.refetch()}>
                <RefreshIcon className={`size-4 ${run.isFetching ? "animate-spin" : ""}`} />
              </Button>
              <Tooltip.Content>Refresh</Tooltip.Content>
            </Tooltip>
          </div>
        </header>
      </div>

      {data.reasonForIncompletion ? (
        <Alert status={data.status === "TERMINATED" ? "warning" : "danger"}>
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>{data.failedTaskRef ? `Stopped at ${data.failedTaskRef}` : "Why it stopped"}</Alert.Title>
            <Alert.Description className="break-words">{data.reasonForIncompletion}</Alert.Description>
          </Alert.Content>
        </Alert>
      ) : null}

      <Card className="p-0">
        <dl className="grid grid-cols-2 gap-px overflow-hidden rounded-t-[inherit] bg-separator lg:grid-cols-4">
          <Fact label="Started">
            <Timestamp iso={data.startedAt} />
          </Fact>
          <Fact label="Ended">{data.endedAt ? <Timestamp iso={data.endedAt} /> : <span className="text-muted">Not yet</span>}</Fact>
          <Fact label="Duration">
            <span className="tabular-nums">{elapsed(data.startedAt, data.endedAt, now)}</span>
          </Fact>
          <Fact label="Tasks">
            {pluralize(data.tasks.items.length, "task row")}
            {data.tasks.nextCursor ? "+" : ""}
          </Fact>
        </dl>
        {data.correlationId || data.parentWorkflowId ? (
          // Optional facts sit on their own line, so the grid above never shows an empty cell.
          <dl className="flex flex-wrap gap-x-8 gap-y-2 border-t border-separator px-5 py-3 text-sm">
            {data.correlationId ? (
              <div className="flex min-w-0 items-baseline gap-2">
                <dt className="text-xs font-medium text-muted">Correlation id</dt>
                <dd className="min-w-0 font-mono text-[13px] break-all text-foreground">{data.correlationId}</dd>
              </div>
            ) : null}
            {data.parentWorkflowId ? (
              <div className="flex min-w-0 items-baseline gap-2">
                <dt className="text-xs font-medium text-muted">Started by run</dt>
                <dd className="min-w-0">
                  <Link className="font-mono text-[13px] break-all text-foreground underline-offset-2 hover:underline" href={`/executions/${data.parentWorkflowId}` as Route}>
                    {data.parentWorkflowId}
                  </Link>
                </dd>
              </div>
            ) : null}
          </dl>
        ) : null}
      </Card>

      <div className="grid gap-4 lg:grid-cols-2">
        <JsonBlock title="Input" value={data.input} />
        <JsonBlock title="Output" value={data.output} empty={data.status === "RUNNING" ? "Set when the run completes." : "No output."} />
        {isEmptyObject(data.variables) ? null : <JsonBlock title="Variables" value={data.variables} />}
      </div>

      <TaskTable more={data.tasks.nextCursor !== null} now={now} rows={data.tasks.items} />
    </div>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="min-w-0 bg-surface px-5 py-3.5">
      <dt className="text-xs font-medium text-muted">{label}</dt>
      <dd className="mt-1 text-sm text-foreground">{children}</dd>
    </div>
  );
}

/** Relative, with the exact instant beside it once the viewer's time zone is known. */
function Timestamp({ iso }: { iso: string }) {
  const hydrated = useHydrated();
  return (
    <span className="flex flex-col">
      <RelativeTime iso={iso} />
      {hydrated ? <span className="text-xs text-muted">{formatAbsoluteTime(new Date(iso))}</span> : null}
    </span>
  );
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

function JsonBlock({ title, value, empty = "Empty." }: { title: string; value: unknown; empty?: string }) {
  const blank = value === null || value === undefined || isEmptyObject(value);
  return (
    <Card className="min-w-0 gap-2 p-0">
      <h2 className="px-5 pt-4 text-sm font-semibold text-foreground">{title}</h2>
      {blank ? (
        <p className="px-5 pb-4 text-sm text-muted">{empty}</p>
      ) : (
        <pre className="mx-2 mb-2 max-h-80 overflow-auto rounded-xl bg-surface-secondary px-3 py-2.5 font-mono text-[12.5px] leading-5 text-foreground">
          {JSON.stringify(value, null, 2)}
        </pre>
      )}
    </Card>
  );
}

/** "loop ×3 · retry 2": what distinguishes rows of the same ref. */
function identity(task: TaskRow): string | null {
  const parts: string[] = [];
  if (task.iteration > 0) parts.push(`iteration ${task.iteration}`);
  if (task.forkIndex !== null) parts.push(`fork ${task.forkIndex}`);
  if (task.attempt > 0) parts.push(`retry ${task.attempt}`);
  return parts.length > 0 ? parts.join(" · ") : null;
}

function TaskTable({ rows, more, now }: { rows: TaskRow[]; more: boolean; now: number | null }) {
  if (rows.length === 0) {
    return (
      <Card className="items-center py-10 text-center">
        <p className="text-sm font-medium text-foreground">No tasks scheduled yet</p>
        <p className="text-sm text-muted">The decider schedules the first tasks moments after a run starts.</p>
      </Card>
    );
  }
  return (
    <Table>
      <Table.ScrollContainer>
        <Table.Content aria-label="Tasks">
          <Table.Header>
            <Table.Column isRowHeader>Task</Table.Column>
            {/* Narrow screens fold these into the Task cell; the last column never hides (it carries the rounded corners). */}
            <Table.Column className="hidden w-40 md:table-cell">Started</Table.Column>
            <Table.Column className="hidden w-28 sm:table-cell">Duration</Table.Column>
            <Table.Column className="hidden w-44 lg:table-cell">Worker</Table.Column>
            <Table.Column className="w-40">Status</Table.Column>
          </Table.Header>
          <Table.Body>
            {rows.map((task) => {
              const which = identity(task);
              return (
                <Table.Row key={task.id} id={task.id}>
                  <Table.Cell>
                    <div className="flex min-w-0 flex-col gap-0.5 py-0.5">
                      <span className="flex min-w-0 flex-wrap items-center gap-x-2">
                        <span className="truncate font-mono text-[13px] font-medium text-foreground">{task.refName}</span>
                        {which ? <span className="text-xs text-muted">{which}</span> : null}
                      </span>
                      <span className="text-xs text-muted">
                        {task.taskType}
                        {task.taskType === "SIMPLE" ? ` · ${task.taskDefName}` : ""}
                        {task.parentRef ? ` · in ${task.parentRef}` : ""}
                      </span>
                      {task.subWorkflowId ? (
                        <Link className="text-xs text-accent underline-offset-2 hover:underline" href={`/executions/${task.subWorkflowId}` as Route}>
                          Open the sub-workflow run
                        </Link>
                      ) : null}
                      {task.reasonForIncompletion ? <span className="text-xs break-words text-danger">{task.reasonForIncompletion}</span> : null}
                      <span className="text-xs text-muted sm:hidden">{elapsed(task.startedAt, task.endedAt, now)}</span>
                    </div>
                  </Table.Cell>
                  <Table.Cell className="hidden md:table-cell">
                    {task.startedAt ? <RelativeTime className="text-sm whitespace-nowrap text-muted" iso={task.startedAt} /> : <span className="text-sm text-muted">Waiting</span>}
                  </Table.Cell>
                  <Table.Cell className="hidden sm:table-cell">
                    <span className="text-sm text-muted tabular-nums">{elapsed(task.startedAt, task.endedAt, now)}</span>
                  </Table.Cell>
                  <Table.Cell className="hidden lg:table-cell">
                    {task.workerId ? <code className="block truncate font-mono text-xs text-muted">{task.workerId}</code> : <span className="text-sm text-muted">—</span>}
                  </Table.Cell>
                  <Table.Cell>
                    <TaskStatusChip status={task.status} />
                  </Table.Cell>
                </Table.Row>
              );
            })}
          </Table.Body>
        </Table.Content>
      </Table.ScrollContainer>
      <Table.Footer>
        <span className="text-xs text-muted">
          {more ? `The first ${pluralize(rows.length, "task row")}, in the order they were scheduled.` : `${pluralize(rows.length, "task row")}, in the order they were scheduled.`}
        </span>
      </Table.Footer>
    </Table>
  );
}
