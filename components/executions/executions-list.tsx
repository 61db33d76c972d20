"use client";

import { Alert, Button, Checkbox, Input, Label, Skeleton, TextField } from "@heroui/react";
import { keepPreviousData, useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useEffect, useMemo, useState } from "react";
import { WORKFLOW_STATUSES } from "@/engine";
import type { WorkflowStatus } from "@/engine";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useNamespace } from "../console-session";
import { NoNamespacePanel } from "../no-namespace-panel";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { RunStatusChip } from "./run-status-chip";
import type { InitialFilters } from "./run-filters-query";
import { RUN_STATUS_DISPLAY, formatDuration } from "./run-status";

type ExecutionSummary = inferRouterOutputs<AppRouter>["executions"]["list"]["items"][number];
type ListInput = inferRouterInputs<AppRouter>["executions"]["list"];
type BulkAction = "terminate" | "retry" | "restart";

const PAGE_SIZE = 50;

/** The runs of the namespace the console shows; `initial` comes from the page's URL (the dashboard links here). */
export function CurrentNamespaceExecutions({ initial }: { initial?: InitialFilters }) {
  const namespace = useNamespace();
  if (!namespace) return <NoNamespacePanel />;
  // Keyed by the URL's filters too: a link to other filters, followed from this page, starts the list afresh.
  return <ExecutionsList key={`${namespace}\n${JSON.stringify(initial ?? {})}`} initial={initial} namespace={namespace} />;
}

interface Filters {
  statuses: WorkflowStatus[];
  workflow: string;
  version: string;
  startedAfter: string;
  startedBefore: string;
  correlationId: string;
  search: string;
}

const NO_FILTERS: Filters = { statuses: [], workflow: "", version: "", startedAfter: "", startedBefore: "", correlationId: "", search: "" };

/** Whether no filter is set (by value: the filters a URL gives are a copy, never NO_FILTERS itself). */
function isUnfiltered(f: Filters): boolean {
  return f.statuses.length === 0 && !f.workflow && !f.version && !f.startedAfter && !f.startedBefore && !f.correlationId && !f.search.trim();
}

/** `datetime-local` text (the browser's local time) as an ISO instant, or undefined. */
function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function toInput(namespace: string, f: Filters): ListInput {
  const version = /^\d+$/.test(f.version) ? Number(f.version) : undefined;
  return {
    namespace,
    limit: PAGE_SIZE,
    ...(f.statuses.length > 0 ? { statuses: f.statuses } : {}),
    ...(f.workflow.trim() ? { workflow: f.workflow.trim() } : {}),
    ...(version ? { version } : {}),
    ...(localToIso(f.startedAfter) ? { startedAfter: localToIso(f.startedAfter) } : {}),
    ...(localToIso(f.startedBefore) ? { startedBefore: localToIso(f.startedBefore) } : {}),
    ...(f.correlationId.trim() ? { correlationId: f.correlationId.trim() } : {}),
    ...(f.search.trim() ? { search: f.search.trim() } : {}),
  };
}

/** Whether a live summary belongs in the list as filtered (search terms need the server: those lists refetch instead). */
function matches(f: Filters, run: ExecutionSummary): boolean {
  if (f.statuses.length > 0 && !f.statuses.includes(run.status)) return false;
  if (f.workflow.trim() && run.workflow !== f.workflow.trim()) return false;
  if (/^\d+$/.test(f.version) && run.version !== Number(f.version)) return false;
  if (f.correlationId.trim() && run.correlationId !== f.correlationId.trim()) return false;
  const after = localToIso(f.startedAfter);
  const before = localToIso(f.startedBefore);
  if (after && run.startedAt < after) return false;
  if (before && run.startedAt >= before) return false;
  return true;
}

/**
 * Every run, newest first, paged by keyset (a cursor, never OFFSET), filtered
 * by status, workflow, version, time and correlation id, searched by
 * `input.x:y` / `output.x:y` terms (JSON containment on the GIN indexes). New
 * runs and status changes arrive live over the namespace's stream.
 */
export function ExecutionsList({ namespace, initial }: { namespace: string; initial?: InitialFilters | undefined }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<Filters>(() => ({ ...NO_FILTERS, ...initial }));
  const [filters, setFilters] = useState<Filters>(() => ({ ...NO_FILTERS, ...initial }));
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [bulk, setBulk] = useState<BulkAction | null>(null);
  const [bulkResult, setBulkResult] = useState<string | null>(null);
  /** Runs the stream told us about: newer facts than the pages hold, and runs started since. */
  const [live, setLive] = useState<ReadonlyMap<string, ExecutionSummary>>(new Map());

  const input = useMemo(() => toInput(namespace, filters), [namespace, filters]);
  const list = useInfiniteQuery(
    trpc.executions.list.infiniteQueryOptions(input, {
      getNextPageParam: (last) => last.nextCursor,
      placeholderData: keepPreviousData,
    }),
  );

  useEffect(() => {
    setLive(new Map());
  }, [input]);

  useEffect(() => {
    const source = new EventSource(`/api/executions/stream?namespace=${encodeURIComponent(namespace)}`);
    source.addEventListener("execution", (event) => {
      const run = JSON.parse((event as MessageEvent<string>).data) as ExecutionSummary;
      setLive((current) => new Map(current).set(run.id, run));
    });
    // Too much to deliver one by one (or a lost connection): read the list again.
    source.addEventListener("resync", () => void queryClient.invalidateQueries(trpc.executions.list.pathFilter()));
    return () => source.close();
  }, [namespace, queryClient, trpc]);

  const rows = useMemo(() => {
    const paged = list.data?.pages.flatMap((p) => p.items) ?? [];
    const known = new Set(paged.map((r) => r.id));
    const oldest = paged.at(-1)?.startedAt;
    // A run started after the first page was read joins the top, when it passes the filters.
    const fresh = filters.search.trim()
      ? []
      : [...live.values()].filter((r) => !known.has(r.id) && matches(filters, r) && (!oldest || r.startedAt >= oldest)).sort((a, b) => b.startedAt.localeCompare(a.startedAt));
    return [...fresh, ...paged.map((r) => live.get(r.id) ?? r)];
  }, [list.data, live, filters]);

  const bulkMutation = useMutation(
    trpc.executions.bulk.mutationOptions({
      onSuccess: async (result) => {
        const failed = result.results.filter((r) => !r.ok);
        setBulkResult(
          failed.length === 0
            ? `${bulk ?? "Done"}: ${result.results.length} run(s) done.`
            : `${result.results.length - failed.length} done, ${failed.length} refused: ${failed.map((f) => f.error).join("; ")}`,
        );
        setBulk(null);
        setSelected(new Set());
        await queryClient.invalidateQueries(trpc.executions.list.pathFilter());
      },
    }),
  );

  const toggleStatus = (status: WorkflowStatus) =>
    setDraft((d) => ({ ...d, statuses: d.statuses.includes(status) ? d.statuses.filter((s) => s !== status) : [...d.statuses, status] }));

  return (
    <div className="flex flex-col gap-4">
      <form
        aria-label="Filter runs"
        className="flex flex-col gap-3 rounded-xl border border-separator bg-surface p-4"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
          setSelected(new Set());
        }}
      >
        <div className="flex flex-wrap items-center gap-2" role="group" aria-label="Status">
          {WORKFLOW_STATUSES.map((s) => (
            <button
              key={s}
              aria-pressed={draft.statuses.includes(s)}
              className={`rounded-full border px-2.5 py-0.5 text-xs font-medium ${draft.statuses.includes(s) ? "border-accent bg-accent-soft text-foreground" : "border-separator text-muted hover:text-foreground"}`}
              type="button"
              onClick={() => toggleStatus(s)}
            >
              {RUN_STATUS_DISPLAY[s].label}
            </button>
          ))}
        </div>
        <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
          <TextField value={draft.workflow} onChange={(v) => setDraft((d) => ({ ...d, workflow: v }))}>
            <Label>Workflow</Label>
            <Input placeholder="orders" />
          </TextField>
          <TextField value={draft.version} onChange={(v) => setDraft((d) => ({ ...d, version: v.replace(/\D/g, "") }))}>
            <Label>Version</Label>
            <Input inputMode="numeric" placeholder="any" />
          </TextField>
          <TextField value={draft.startedAfter} onChange={(v) => setDraft((d) => ({ ...d, startedAfter: v }))}>
            <Label>Started after</Label>
            <Input type="datetime-local" />
          </TextField>
          <TextField value={draft.startedBefore} onChange={(v) => setDraft((d) => ({ ...d, startedBefore: v }))}>
            <Label>Started before</Label>
            <Input type="datetime-local" />
          </TextField>
          <TextField value={draft.correlationId} onChange={(v) => setDraft((d) => ({ ...d, correlationId: v }))}>
            <Label>Correlation id</Label>
            <Input placeholder="order-42" />
          </TextField>
          <TextField className="sm:col-span-2 lg:col-span-3" value={draft.search} onChange={(v) => setDraft((d) => ({ ...d, search: v }))}>
            <Label>Search</Label>
            <Input placeholder="input.customer.id:42 output.approved:true" spellCheck={false} />
          </TextField>
        </div>
        <div className="flex gap-2">
          <Button size="sm" type="submit">
            Apply
          </Button>
          <Button
            size="sm"
            variant="ghost"
            onPress={() => {
              setDraft(NO_FILTERS);
              setFilters(NO_FILTERS);
            }}
          >
            Clear
          </Button>
        </div>
      </form>

      {list.isError ? (
        <Alert role="alert" status="danger">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>The runs could not be listed</Alert.Title>
            <Alert.Description>{list.error.message}</Alert.Description>
          </Alert.Content>
        </Alert>
      ) : null}
      {bulkResult ? (
        <p className="rounded-lg bg-default/60 px-3 py-2 text-sm" role="status">
          {bulkResult}
        </p>
      ) : null}

      {selected.size > 0 ? (
        <div className="flex items-center gap-2 text-sm" role="toolbar" aria-label="Bulk actions">
          <span className="text-muted">{selected.size} selected</span>
          <Button size="sm" variant="danger-soft" onPress={() => setBulk("terminate")}>
            Terminate
          </Button>
          <Button size="sm" variant="secondary" onPress={() => setBulk("retry")}>
            Retry
          </Button>
          <Button size="sm" variant="secondary" onPress={() => setBulk("restart")}>
            Restart
          </Button>
        </div>
      ) : null}

      {list.isPending ? (
        <div className="flex flex-col gap-2">
          {[0, 1, 2].map((i) => (
            <Skeleton key={i} className="h-10 rounded-lg" />
          ))}
        </div>
      ) : rows.length === 0 && !list.isError ? (
        <p className="rounded-xl border border-separator py-10 text-center text-sm text-muted">
          {isUnfiltered(filters) ? "No runs yet. Start one from a workflow's editor (Run), the REST API or a worker SDK." : "No run matches these filters."}
        </p>
      ) : (
        <div className="overflow-x-auto rounded-xl border border-separator">
          <table aria-label="Runs" className="w-full text-sm">
            <thead className="bg-surface text-left text-xs text-muted">
              <tr>
                <th className="w-8 px-3 py-2">
                  <span className="sr-only">Select</span>
                </th>
                <th className="px-3 py-2 font-medium">Workflow</th>
                <th className="px-3 py-2 font-medium">Status</th>
                <th className="hidden px-3 py-2 font-medium md:table-cell">Run id</th>
                <th className="px-3 py-2 font-medium">Started</th>
                <th className="hidden px-3 py-2 font-medium sm:table-cell">Duration</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id} className="border-t border-separator" data-run-id={r.id}>
                  <td className="px-3 py-2">
                    <Checkbox
                      aria-label={`Select run ${r.id}`}
                      isSelected={selected.has(r.id)}
                      onChange={(on) =>
                        setSelected((s) => {
                          const next = new Set(s);
                          if (on) next.add(r.id);
                          else next.delete(r.id);
                          return next;
                        })
                      }
                    >
                      <Checkbox.Control>
                        <Checkbox.Indicator />
                      </Checkbox.Control>
                    </Checkbox>
                  </td>
                  <td className="px-3 py-2">
                    <Link className="font-medium text-foreground hover:underline" href={`/executions/${r.id}`}>
                      {r.workflow}
                    </Link>{" "}
                    <span className="text-xs text-muted">v{r.version}</span>
                    {r.correlationId ? <span className="block text-xs text-muted">{r.correlationId}</span> : null}
                  </td>
                  <td className="px-3 py-2" data-testid="run-status">
                    <RunStatusChip status={r.status} />
                  </td>
                  <td className="hidden px-3 py-2 font-mono text-xs text-muted md:table-cell">{r.id}</td>
                  <td className="px-3 py-2 text-muted">
                    <RelativeTime iso={r.startedAt} />
                  </td>
                  <td className="hidden px-3 py-2 text-muted sm:table-cell">{r.durationMs === null ? "—" : formatDuration(r.durationMs)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.hasNextPage ? (
        <Button className="self-center" isPending={list.isFetchingNextPage} size="sm" variant="secondary" onPress={() => void list.fetchNextPage()}>
          Load more
        </Button>
      ) : null}

      {bulk ? (
        <ConfirmDialog
          confirmLabel={`${bulk[0]!.toUpperCase()}${bulk.slice(1)} ${selected.size}`}
          error={bulkMutation.error?.message ?? null}
          isOpen
          isPending={bulkMutation.isPending}
          pendingLabel="Working…"
          tone={bulk === "terminate" ? "danger" : "warning"}
          title={`${bulk[0]!.toUpperCase()}${bulk.slice(1)} ${selected.size} run(s)?`}
          onConfirm={() => bulkMutation.mutate({ namespace, action: bulk, ids: [...selected] })}
          onOpenChange={(open) => {
            if (!open) setBulk(null);
          }}
        >
          Each run is handled on its own; one that cannot be {bulk === "terminate" ? "terminated" : bulk === "retry" ? "retried" : "restarted"} is reported and the others go on.
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
