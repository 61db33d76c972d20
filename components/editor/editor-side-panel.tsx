"use client";

import { Button } from "@heroui/react";
import { CircleAlert, CircleCheck, TriangleAlert } from "lucide-react";
import { memo, useCallback } from "react";
import type { Problem, WorkflowDefinition, WorkflowNode } from "@/engine";
import { useEditor, useEditorStore } from "./editor-context";
import { NodeInspector, WorkflowSettings } from "./inspector";
import { StepTestPanel } from "./inspector/step-test-panel";

const NO_PROBLEMS: readonly Problem[] = [];

/**
 * The right-hand panel: the inspector for what is selected (the workflow's
 * own settings when nothing is), and the problems list, each problem a button
 * that takes you to its node.
 */
export function EditorSidePanel({
  panel,
  onPanelChange,
  onFocusProblem,
  nameEditable,
}: {
  panel: "inspector" | "problems";
  onPanelChange: (panel: "inspector" | "problems") => void;
  onFocusProblem: (problem: Problem) => void;
  nameEditable: boolean;
}) {
  const problems = useEditor((s) => s.problems);
  return (
    // A plain box: the inspector inside is the page's complementary landmark (named "Inspector").
    <div className="flex w-[22rem] shrink-0 flex-col border-l border-separator bg-surface/40">
      <div aria-label="Side panel views" className="flex border-b border-separator px-2" role="tablist">
        {(["inspector", "problems"] as const).map((p) => (
          <button
            key={p}
            aria-selected={panel === p}
            className={`-mb-px flex items-center gap-1.5 border-b-2 px-3 py-2 text-sm font-medium ${panel === p ? "border-accent text-foreground" : "border-transparent text-muted hover:text-foreground"}`}
            role="tab"
            type="button"
            onClick={() => onPanelChange(p)}
          >
            {p === "inspector" ? "Inspector" : "Problems"}
            {p === "problems" ? (
              <span
                className={`rounded-full px-1.5 text-[11px] ${problems.length === 0 ? "bg-default text-muted" : problems.every((x) => x.severity === "warning") ? "bg-warning text-black" : "bg-danger text-white"}`}
                data-testid="problem-count"
              >
                {problems.length}
              </span>
            ) : null}
          </button>
        ))}
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto">
        {panel === "inspector" ? <SelectionInspector nameEditable={nameEditable} /> : <ProblemsList problems={problems} onFocus={onFocusProblem} />}
      </div>
    </div>
  );
}

function SelectionInspector({ nameEditable }: { nameEditable: boolean }) {
  const store = useEditorStore();
  const selected = useEditor((s) => s.selectedNodes);
  const definition = useEditor((s) => s.definition);
  const readOnly = useEditor((s) => s.readOnly);
  const problemsByRef = useEditor((s) => s.problemsByRef);
  const problems = useEditor((s) => s.problems);
  const onNodeChange = useCallback((next: WorkflowNode, field: string) => store.getState().updateNode(next, field), [store]);
  const onWorkflowChange = useCallback((next: WorkflowDefinition, field: string) => store.getState().replaceDefinition(next, "Edit settings", `workflow:${field}`), [store]);

  if (selected.size > 1) {
    return (
      <div className="flex flex-col gap-3 p-4 text-sm">
        <p className="font-medium text-foreground">{selected.size} nodes selected</p>
        {readOnly ? null : (
          <div className="flex gap-2">
            <Button size="sm" variant="secondary" onPress={() => store.getState().duplicateSelection()}>
              Duplicate
            </Button>
            <Button size="sm" variant="danger-soft" onPress={() => store.getState().deleteSelection()}>
              Delete
            </Button>
          </div>
        )}
      </div>
    );
  }
  const [ref] = [...selected];
  const node = ref === undefined ? undefined : definition.nodes.find((n) => n.ref === ref);
  if (node) {
    return (
      <>
        <NodeInspector
          key={node.ref}
          definition={definition}
          node={node}
          problems={problemsByRef.get(node.ref) ?? NO_PROBLEMS}
          readOnly={readOnly}
          onChange={onNodeChange}
          onRenameRef={(to) => store.getState().renameRef(node.ref, to)}
        />
        <StepTestPanel key={`test:${node.ref}`} node={node} />
      </>
    );
  }
  return (
    <WorkflowSettings
      definition={definition}
      nameEditable={nameEditable && !readOnly}
      problems={problems.filter((p) => p.ref === undefined)}
      readOnly={readOnly}
      onChange={onWorkflowChange}
    />
  );
}

const ProblemsList = memo(function ProblemsList({ problems, onFocus }: { problems: readonly Problem[]; onFocus: (problem: Problem) => void }) {
  if (problems.length === 0) {
    return (
      <div className="flex flex-col items-center gap-2 p-8 text-center text-sm text-muted">
        <CircleCheck aria-hidden className="size-6 text-emerald-600" />
        No problems: this workflow can be saved.
      </div>
    );
  }
  const errors = problems.filter((p) => p.severity !== "warning").length;
  return (
    <ul aria-label="Problems" className="flex flex-col p-2">
      {errors === 0 ? (
        <li className="px-2 py-1 text-xs text-muted" data-testid="warnings-only">
          Only warnings: this workflow can be saved, and runs as Conductor would run it.
        </li>
      ) : null}
      {problems.map((p, i) => (
        <li key={`${p.code}-${i}`} data-severity={p.severity ?? "error"}>
          <button
            className="flex w-full items-start gap-2 rounded-lg px-2 py-2 text-left text-sm hover:bg-default"
            type="button"
            onClick={() => onFocus(p)}
          >
            {p.severity === "warning" ? (
              <TriangleAlert aria-label="Warning" className="mt-0.5 size-4 shrink-0 text-warning" />
            ) : (
              <CircleAlert aria-label="Error" className="mt-0.5 size-4 shrink-0 text-danger" />
            )}
            <span className="flex min-w-0 flex-col">
              <span className="text-foreground">{p.message}</span>
              <span className="text-xs text-muted">
                {p.ref ? <code className="font-mono">{p.ref}</code> : "Workflow settings"} · {p.severity === "warning" ? "warning · " : ""}
                {p.code}
              </span>
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
});
