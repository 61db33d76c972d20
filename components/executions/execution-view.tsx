"use client";

import { Button, Chip } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ReactFlowProvider } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { ArrowLeft, Pause, Play, RotateCcw, Square } from "lucide-react";
import Link from "next/link";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand";
import type { WorkflowDefinition, WorkflowStatus } from "@/engine";
import { EditorCanvas } from "../editor/editor-canvas";
import { EditorStoreProvider, useEditor } from "../editor/editor-context";
import { RunOverlayContext } from "../editor/run-overlay";
import type { NodeRunState, RunOverlayState } from "../editor/run-overlay";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { ExecutionSidePanel } from "./execution-side-panel";
import type { ExecutionDetail } from "./execution-types";
import { RunStatusChip } from "./run-status-chip";
import { applyHistory, applySnapshot, availableActions, overlayModel } from "./run-model";
import type { RunTask } from "./run-model";
import { useExecutionStream } from "./use-execution-stream";

type SimpleAction = "pause" | "resume" | "terminate" | "retry" | "restart";

const ACTION_TEXT: Record<SimpleAction, { title: string; body: string; confirm: string; pending: string; tone: "danger" | "warning" }> = {
  pause: { title: "Pause this run?", body: "Nothing new is scheduled until it is resumed; tasks already running finish.", confirm: "Pause", pending: "Pausing…", tone: "warning" },
  resume: { title: "Resume this run?", body: "Scheduling carries on where it stopped.", confirm: "Resume", pending: "Resuming…", tone: "warning" },
  terminate: { title: "Terminate this run?", body: "Running tasks are cancelled and the run ends as TERMINATED. This cannot be undone.", confirm: "Terminate", pending: "Terminating…", tone: "danger" },
  retry: { title: "Retry from the failed tasks?", body: "The failed tasks run again as new attempts; everything that completed is kept.", confirm: "Retry", pending: "Retrying…", tone: "warning" },
  restart: { title: "Restart from the beginning?", body: "Every task runs again, with the same input and the version this run used.", confirm: "Restart", pending: "Restarting…", tone: "warning" },
};

/** Equal states keep their object, so a node whose state did not change does not re-render. */
function keepEqual(prev: ReadonlyMap<string, NodeRunState>, next: Map<string, NodeRunState>): Map<string, NodeRunState> {
  for (const [ref, state] of next) {
    const old = prev.get(ref);
    if (
      old &&
      old.status === state.status &&
      old.attempts === state.attempts &&
      old.startedAt === state.startedAt &&
      old.endedAt === state.endedAt &&
      old.iterations === state.iterations &&
      old.turns === state.turns &&
      old.instances?.total === state.instances?.total &&
      old.instances?.ended === state.instances?.ended
    ) {
      next.set(ref, old);
    }
  }
  return next;
}

/**
 * A run on its diagram: the definition it ran, drawn exactly as the editor
 * draws it (read-only), each node showing its status, attempts and duration,
 * the path taken highlighted, updated live over SSE.
 */
export function ExecutionView({ namespace, initial }: { namespace: string; initial: ExecutionDetail }) {
  const definition = initial.definition as WorkflowDefinition | null;
  if (!definition) {
    return <p className="text-sm text-muted">The definition this run used ({initial.execution.workflow} v{initial.execution.version}) is no longer stored.</p>;
  }
  return (
    <EditorStoreProvider definition={definition} readOnly>
      <ReactFlowProvider>
        <ExecutionLayout definition={definition} initial={initial} namespace={namespace} />
      </ReactFlowProvider>
    </EditorStoreProvider>
  );
}

function ExecutionLayout({ namespace, initial, definition }: { namespace: string; initial: ExecutionDetail; definition: WorkflowDefinition }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const id = initial.execution.id;
  const [tasks, setTasks] = useState(() => new Map<string, RunTask>(initial.tasks.map((t) => [t.id, t])));
  const [status, setStatus] = useState<WorkflowStatus>(initial.execution.status);
  const [reason, setReason] = useState(initial.execution.reasonForIncompletion);
  const [endedAt, setEndedAt] = useState(initial.execution.endedAt);
  const [historyVersion, setHistoryVersion] = useState(0);
  const [action, setAction] = useState<SimpleAction | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const selectedNodes = useEditor((s) => s.selectedNodes);
  const selectedRef = selectedNodes.size === 1 ? [...selectedNodes][0]! : null;

  const overlay = useRef<StoreApi<RunOverlayState> | null>(null);
  overlay.current ??= createStore<RunOverlayState>()((set) => ({
    nodes: new Map(),
    takenEdges: new Set(),
    iteration: new Map(),
    selected: null,
    setIteration: (loop, n) => set((s) => ({ iteration: new Map(s.iteration).set(loop, n) })),
  }));
  const picked = useStoreIteration(overlay.current);
  const model = useMemo(() => overlayModel(definition, tasks.values(), picked), [definition, tasks, picked]);
  useEffect(() => {
    const store = overlay.current!;
    store.setState({ nodes: keepEqual(store.getState().nodes, model.nodes), takenEdges: model.takenEdges });
  }, [model]);

  /** The last history seq the page has applied from the stream. */
  const appliedSeq = useRef(initial.lastSeq);
  const reload = useCallback(async () => {
    // A snapshot read before events the stream has already applied would put the page back in time — after a Retry,
    // the run completing while the snapshot was on its way showed "Running" for good, since an ended run sends
    // nothing more to correct it. Such a snapshot is fetched again; one as new as the stream replaces the state.
    for (let attempt = 0; attempt < 5; attempt++) {
      const fresh = await queryClient.fetchQuery({ ...trpc.executions.get.queryOptions({ namespace, id }), staleTime: 0 });
      if (fresh.lastSeq < appliedSeq.current) continue;
      setTasks(new Map(fresh.tasks.map((t) => [t.id, t])));
      setStatus(fresh.execution.status);
      setReason(fresh.execution.reasonForIncompletion);
      setEndedAt(fresh.execution.endedAt);
      setHistoryVersion((v) => v + 1);
      return;
    }
  }, [id, namespace, queryClient, trpc]);

  const stream = useExecutionStream(id, initial.lastSeq, {
    onHistory(events) {
      appliedSeq.current = Math.max(appliedSeq.current, ...events.map((e) => e.seq));
      setTasks((current) => {
        let next: Map<string, RunTask> | null = null;
        for (const e of events) next = applyHistory(next ?? current, e) ?? next;
        return next ?? current;
      });
      // A rerun deletes the rows it replays: the snapshot is the only way to forget them.
      if (events.some((e) => e.type === "WORKFLOW_RERUN" || e.type === "WORKFLOW_RESTARTED")) void reload();
      setHistoryVersion((v) => v + 1);
    },
    onTasks(snapshot) {
      setTasks((current) => applySnapshot(current, snapshot));
    },
    onWorkflow(summary) {
      setStatus(summary.status as WorkflowStatus);
      setReason(summary.reasonForIncompletion);
      setEndedAt(summary.endedAt);
    },
  });

  const mutationOptions = {
    onSuccess: async () => {
      setAction(null);
      setNotice("Done. The run's history records it.");
      await reload();
    },
  };
  const pause = useMutation(trpc.executions.pause.mutationOptions(mutationOptions));
  const resume = useMutation(trpc.executions.resume.mutationOptions(mutationOptions));
  const terminate = useMutation(trpc.executions.terminate.mutationOptions(mutationOptions));
  const retry = useMutation(trpc.executions.retry.mutationOptions(mutationOptions));
  const restart = useMutation(trpc.executions.restart.mutationOptions(mutationOptions));
  const mutations = { pause, resume, terminate, retry, restart };
  const pending = action ? mutations[action] : null;

  useEffect(() => {
    if (!notice) return;
    const t = setTimeout(() => setNotice(null), 4000);
    return () => clearTimeout(t);
  }, [notice]);

  const actions = availableActions(status);
  const button = (name: SimpleAction, label: string, icon: React.ReactNode, variant: "secondary" | "danger-soft" = "secondary") =>
    actions.has(name) ? (
      <Button size="sm" variant={variant} onPress={() => setAction(name)}>
        {icon}
        {label}
      </Button>
    ) : null;

  return (
    <RunOverlayContext.Provider value={overlay.current}>
      <div className="fixed inset-0 z-40 flex flex-col bg-background" data-testid="execution-view">
        <header className="flex h-14 shrink-0 items-center gap-2 border-b border-separator bg-surface/70 px-3">
          <Link aria-label="Back to executions" className="flex size-8 items-center justify-center rounded-lg text-muted hover:bg-default hover:text-foreground" href="/executions">
            <ArrowLeft className="size-4" />
          </Link>
          <h1 className="truncate text-sm font-semibold text-foreground">
            <Link className="hover:underline" href={`/workflows/${encodeURIComponent(initial.execution.workflow)}?version=${initial.execution.version}`}>
              {initial.execution.workflow}
            </Link>
          </h1>
          <Chip color="accent" size="sm" variant="soft">
            v{initial.execution.version}
          </Chip>
          <span data-testid="run-status-chip">
            <RunStatusChip status={status} />
          </span>
          <span className="hidden font-mono text-xs text-muted md:inline">{id}</span>
          <span className={`ml-2 text-xs ${stream === "live" ? "text-emerald-600" : "text-muted"}`} data-testid="stream-state">
            {stream === "live" ? "● Live" : stream === "reconnecting" ? "Reconnecting…" : stream === "connecting" ? "Connecting…" : "Offline"}
          </span>
          <div className="ml-auto flex items-center gap-1.5">
            {button("pause", "Pause", <Pause className="size-3.5" />)}
            {button("resume", "Resume", <Play className="size-3.5" />)}
            {button("retry", "Retry", <RotateCcw className="size-3.5" />)}
            {button("restart", "Restart", <RotateCcw className="size-3.5" />)}
            {button("terminate", "Terminate", <Square className="size-3.5" />, "danger-soft")}
          </div>
        </header>
        {reason && status !== "RUNNING" ? (
          <div className="border-b border-separator bg-danger-soft/40 px-4 py-1.5 text-xs text-foreground" role="note">
            {reason}
          </div>
        ) : null}
        <div className="flex min-h-0 flex-1">
          <section aria-label="Diagram" className="relative min-w-0 flex-1">
            <EditorCanvas />
            {notice ? (
              <div className="absolute bottom-4 left-1/2 z-10 -translate-x-1/2 rounded-lg bg-emerald-600 px-4 py-2 text-sm text-white shadow-lg" role="status">
                {notice}
              </div>
            ) : null}
          </section>
          <ExecutionSidePanel
            definition={definition}
            endedAt={endedAt}
            historyVersion={historyVersion}
            initial={initial}
            latestTask={selectedRef ? (model.latestTask.get(selectedRef) ?? null) : null}
            namespace={namespace}
            selectedRef={selectedRef}
            status={status}
            tasks={tasks}
            onChanged={reload}
          />
        </div>
        {action ? (
          <ConfirmDialog
            confirmLabel={ACTION_TEXT[action].confirm}
            error={pending?.error?.message ?? null}
            isOpen
            isPending={pending?.isPending ?? false}
            pendingLabel={ACTION_TEXT[action].pending}
            tone={ACTION_TEXT[action].tone}
            title={ACTION_TEXT[action].title}
            onConfirm={() => (action === "restart" ? restart.mutate({ namespace, id, version: "same" }) : mutations[action].mutate({ namespace, id }))}
            onOpenChange={(open) => {
              if (!open) setAction(null);
            }}
          >
            {ACTION_TEXT[action].body}
          </ConfirmDialog>
        ) : null}
      </div>
    </RunOverlayContext.Provider>
  );
}

/** The loop iterations picked on the diagram (they change what the model shows). */
function useStoreIteration(store: StoreApi<RunOverlayState>): ReadonlyMap<string, number> {
  const [picked, setPicked] = useState(store.getState().iteration);
  useEffect(() => store.subscribe((s) => setPicked(s.iteration)), [store]);
  return picked;
}
