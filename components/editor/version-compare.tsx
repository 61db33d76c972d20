"use client";

import { ReactFlowProvider } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { ArrowLeft } from "lucide-react";
import Link from "next/link";
import { useEffect, useMemo } from "react";
import type { WorkflowDefinition } from "@/engine";
import { EditorCanvas } from "./editor-canvas";
import { EditorStoreProvider, useEditorStore } from "./editor-context";
import { diffDefinitions } from "./version-diff";
import type { VersionDiff } from "./version-diff";

interface Side {
  version: number;
  definition: WorkflowDefinition;
}

const KIND_STYLE = { added: "text-emerald-600", changed: "text-amber-600", removed: "text-danger" } as const;

/**
 * Two versions on one read-only canvas: the newer one, with what it added and
 * changed ringed and what it removed drawn ghosted where it was; the list
 * beside it names every changed field.
 */
export function VersionCompare({ name, from, to }: { name: string; from: Side; to: Side }) {
  const diff = useMemo(() => diffDefinitions(from.definition, to.definition), [from.definition, to.definition]);
  return (
    <EditorStoreProvider definition={diff.merged} readOnly>
      <ReactFlowProvider>
        <div className="fixed inset-0 z-40 flex flex-col bg-background" data-testid="version-compare">
          <header className="flex h-14 shrink-0 items-center gap-3 border-b border-separator bg-surface/70 px-3">
            <Link aria-label="Back to the workflow" className="flex size-8 items-center justify-center rounded-lg text-muted hover:bg-default hover:text-foreground" href={`/workflows/${encodeURIComponent(name)}`}>
              <ArrowLeft className="size-4" />
            </Link>
            <h1 className="text-sm font-semibold text-foreground">
              {name}: v{from.version} → v{to.version}
            </h1>
            <span className="text-xs text-muted">
              <span className="text-emerald-600">added</span> · <span className="text-amber-600">changed</span> · <span className="text-danger">removed</span>
            </span>
          </header>
          <div className="flex min-h-0 flex-1">
            <section aria-label="Diagram" className="relative min-w-0 flex-1">
              <DiffMarks diff={diff} />
              <EditorCanvas />
            </section>
            <ChangeList diff={diff} />
          </div>
        </div>
      </ReactFlowProvider>
    </EditorStoreProvider>
  );
}

function DiffMarks({ diff }: { diff: VersionDiff }) {
  const store = useEditorStore();
  useEffect(() => store.getState().setDiff(diff.marks), [diff, store]);
  return null;
}

function ChangeList({ diff }: { diff: VersionDiff }) {
  const nothing = diff.nodes.length === 0 && diff.edgesAdded.length === 0 && diff.edgesRemoved.length === 0 && diff.workflowFields.length === 0;
  return (
    <aside aria-label="Changes" className="w-[22rem] shrink-0 overflow-y-auto border-l border-separator bg-surface/40 p-4 text-sm">
      <h2 className="pb-2 font-semibold text-foreground">Changes</h2>
      {nothing ? <p className="text-muted">No change in what runs{diff.moved.length > 0 ? `; ${diff.moved.length} node(s) moved` : ""}.</p> : null}
      <ul className="flex flex-col gap-2">
        {diff.nodes.map((n) => (
          <li key={n.ref} data-kind={n.kind}>
            <span className={`font-medium ${KIND_STYLE[n.kind]}`}>{n.kind}</span> <code className="font-mono">{n.ref}</code>
            {n.fields.length > 0 ? (
              <ul className="mt-0.5 pl-4 text-xs text-muted">
                {n.fields.map((f) => (
                  <li key={f}>
                    <code className="font-mono">{f}</code>
                  </li>
                ))}
              </ul>
            ) : null}
          </li>
        ))}
        {diff.edgesAdded.map((e) => (
          <li key={`+${e.source}-${e.target}-${e.case ?? ""}`}>
            <span className="font-medium text-emerald-600">added edge</span> <code className="font-mono">{e.source} → {e.target}{e.case ? ` (${e.case})` : ""}</code>
          </li>
        ))}
        {diff.edgesRemoved.map((e) => (
          <li key={`-${e.source}-${e.target}-${e.case ?? ""}`}>
            <span className="font-medium text-danger">removed edge</span> <code className="font-mono">{e.source} → {e.target}{e.case ? ` (${e.case})` : ""}</code>
          </li>
        ))}
        {diff.workflowFields.length > 0 ? (
          <li>
            <span className="font-medium text-amber-600">workflow settings</span>
            <ul className="mt-0.5 pl-4 text-xs text-muted">
              {diff.workflowFields.map((f) => (
                <li key={f}>
                  <code className="font-mono">{f}</code>
                </li>
              ))}
            </ul>
          </li>
        ) : null}
      </ul>
      {diff.moved.length > 0 && !nothing ? <p className="mt-3 text-xs text-muted">{diff.moved.length} node(s) only moved.</p> : null}
    </aside>
  );
}
