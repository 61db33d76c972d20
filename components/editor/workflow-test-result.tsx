"use client";

import { Button, Chip } from "@heroui/react";
import { FlaskConical, X } from "lucide-react";
import { useMemo } from "react";
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand";
import type { WorkflowDefinition } from "@/engine";
import { overlayModel } from "../executions/run-model";
import type { RunTask } from "../executions/run-model";
import { useEditorStore } from "./editor-context";
import { formatJson } from "./inspector/json-text";
import type { RunOverlayState } from "./run-overlay";
import type { WorkflowTestResult } from "./workflow-test-dialog";

type TestedTask = WorkflowTestResult["tasks"][number];

function runTask(t: TestedTask): RunTask {
  return {
    id: t.id,
    ref: t.ref,
    type: t.type,
    iteration: t.iteration,
    attempt: t.attempt,
    status: t.status,
    scheduledAt: t.scheduledAt,
    // The testkit's clock is virtual: a duration on the badge would be made up.
    startedAt: null,
    endedAt: null,
    workerId: null,
    pollCount: 0,
    reasonForIncompletion: t.reason,
    subWorkflowId: null,
    parentRef: t.parentRef,
    forkIndex: t.forkIndex,
  };
}

/**
 * The test run drawn over the canvas with the live run page's badges: the
 * same overlay store and model (executions/run-model.ts), fed once from the
 * result instead of a stream; pinned nodes say so on their badge.
 */
export function useWorkflowTestOverlay(tested: WorkflowDefinition | null, result: WorkflowTestResult | null): StoreApi<RunOverlayState> | null {
  return useMemo(() => {
    if (!tested || !result) return null;
    const tasks = result.tasks.map(runTask);
    const pinned = new Set(result.tasks.filter((t) => t.pinned).map((t) => t.ref));
    const build = (picked: ReadonlyMap<string, number>) => {
      const model = overlayModel(tested, tasks, picked);
      for (const [ref, state] of model.nodes) if (pinned.has(ref)) state.pinned = true;
      return model;
    };
    const first = build(new Map());
    return createStore<RunOverlayState>()((set, get) => ({
      nodes: first.nodes,
      takenEdges: first.takenEdges,
      iteration: new Map(),
      selected: null,
      setIteration(loop, n) {
        const iteration = new Map(get().iteration).set(loop, n);
        const model = build(iteration);
        set({ iteration, nodes: model.nodes, takenEdges: model.takenEdges });
      },
    }));
  }, [tested, result]);
}

const WORKFLOW_TONE: Record<string, "success" | "danger" | "warning" | "default"> = {
  COMPLETED: "success",
  FAILED: "danger",
  TIMED_OUT: "danger",
  TERMINATED: "warning",
  RUNNING: "warning",
};

function taskTone(status: TestedTask["status"]): "success" | "danger" | "warning" | "default" {
  if (status === "COMPLETED") return "success";
  if (status === "COMPLETED_WITH_ERRORS") return "warning";
  if (status === "FAILED" || status === "FAILED_WITH_TERMINAL_ERROR" || status === "TIMED_OUT") return "danger";
  return "default";
}

/**
 * Beside the canvas after **Test workflow**: the run's status and output, and
 * the path it took — each attempt with its status, whether its pin answered
 * for it, and its output. Clearing it returns the canvas to editing.
 */
export function WorkflowTestPanel({ result, stale, onClear, onTestAgain }: { result: WorkflowTestResult; stale: boolean; onClear: () => void; onTestAgain: () => void }) {
  const store = useEditorStore();
  const ran = result.tasks.filter((t) => t.status !== "SKIPPED" && t.status !== "CANCELED");
  const skipped = result.tasks.filter((t) => t.status === "SKIPPED").map((t) => t.ref);
  return (
    <aside aria-label="Test run" className="flex w-[22rem] shrink-0 flex-col overflow-y-auto border-l border-separator bg-surface/40" data-testid="workflow-test-panel">
      <div className="flex items-center gap-2 border-b border-separator px-4 py-2">
        <FlaskConical aria-hidden className="size-4 text-accent" />
        <h2 className="text-sm font-semibold text-foreground">Test run</h2>
        <Chip color={WORKFLOW_TONE[result.status] ?? "default"} data-testid="workflow-test-status" size="sm" variant="soft">
          {result.status.toLowerCase().replaceAll("_", " ")}
        </Chip>
        <div className="ml-auto flex items-center gap-1">
          <Button size="sm" variant="ghost" onPress={onTestAgain}>
            Test again
          </Button>
          <Button aria-label="Clear test run" isIconOnly size="sm" variant="ghost" onPress={onClear}>
            <X className="size-4" />
          </Button>
        </div>
      </div>
      <div className="flex flex-col gap-3 p-4 text-sm">
        {stale ? <p className="text-xs text-warning">The draft has changed since this test: test again to see the change.</p> : null}
        {result.reason ? (
          <p className="text-xs text-danger" data-testid="workflow-test-reason">
            {result.reason}
          </p>
        ) : null}
        {result.stopped ? <p className="text-xs text-danger">Stopped: {result.stopped.message}</p> : null}
        {result.missingPins.length > 0 ? (
          <p className="text-xs text-muted">
            No pin for {result.missingPins.join(", ")}: pin an output for each (in its inspector) or test it alone.
          </p>
        ) : null}
        {result.ignoredPins.length > 0 ? <p className="text-xs text-muted">Not used: the pins of {result.ignoredPins.join(", ")} (the engine decides those nodes itself, or they are gone).</p> : null}

        <section aria-label="Run output" className="flex flex-col gap-1">
          <h3 className="text-xs font-semibold tracking-wide text-muted uppercase">Output</h3>
          <pre className="max-h-48 overflow-auto rounded bg-default/40 p-2 font-mono text-xs" data-testid="workflow-test-output">
            {result.output === null ? "(too large to show)" : formatJson(result.output)}
          </pre>
        </section>

        <section aria-label="Path" className="flex flex-col gap-1">
          <h3 className="text-xs font-semibold tracking-wide text-muted uppercase">Path</h3>
          <ol className="flex flex-col gap-2">
            {ran.map((t) => (
              <li key={t.id} className="rounded-lg border border-separator p-2" data-ref={t.ref} data-testid="workflow-test-step">
                <div className="flex flex-wrap items-center gap-1.5">
                  <button className="font-mono text-xs font-medium text-foreground hover:underline" type="button" onClick={() => store.getState().select([t.ref])}>
                    {t.ref}
                  </button>
                  <span className="text-[11px] text-muted">{t.type}</span>
                  {t.iteration > 0 ? <span className="text-[11px] text-muted">iteration {t.iteration}</span> : null}
                  {t.attempt > 0 ? <span className="text-[11px] text-muted">attempt {t.attempt + 1}</span> : null}
                  <Chip className="ml-auto" color={taskTone(t.status)} size="sm" variant="soft">
                    {t.status === "FAILED_WITH_TERMINAL_ERROR" ? "failed" : t.status.toLowerCase().replaceAll("_", " ")}
                  </Chip>
                  {t.pinned ? (
                    <Chip color="accent" size="sm" variant="soft">
                      pinned
                    </Chip>
                  ) : null}
                </div>
                {t.reason ? <p className="mt-1 text-xs text-danger">{t.reason}</p> : null}
                <pre className="mt-1 max-h-40 overflow-auto rounded bg-default/40 p-2 font-mono text-[11px]" data-testid="workflow-test-step-output">
                  {t.truncated && t.output === null ? "(too large to show)" : formatJson(t.output)}
                </pre>
              </li>
            ))}
          </ol>
          {skipped.length > 0 ? <p className="text-xs text-muted">Skipped: {[...new Set(skipped)].join(", ")}</p> : null}
        </section>
      </div>
    </aside>
  );
}
