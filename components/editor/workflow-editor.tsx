"use client";

import { Button, Chip, Dropdown, Label, Tooltip } from "@heroui/react";
import { useQueryClient } from "@tanstack/react-query";
import { useMutation } from "@tanstack/react-query";
import { ReactFlowProvider, useReactFlow } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { ArrowLeft, Braces, Download, FlaskConical, History, Keyboard, LayoutDashboard, Maximize, Play, Redo2, Save, StickyNote, Undo2, Webhook, Workflow as WorkflowIcon } from "lucide-react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useMemo, useState } from "react";
import type { ReactNode } from "react";
import { LAYOUT_DEFAULTS, NOTE_SIZE_LIMITS, exportConductorWorkflow } from "@/engine";
import type { NodeType, Problem, WorkflowDefinition } from "@/engine";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { autoLayout } from "./auto-layout";
import { EditorCanvas, FIT_WHOLE_DIAGRAM } from "./editor-canvas";
import { EditorStoreProvider, useEditor, useEditorStore } from "./editor-context";
import { SaveDialog, ShortcutsDialog } from "./editor-dialogs";
import { EditorSidePanel } from "./editor-side-panel";
import { JsonView } from "./json-view";
import { drawnSize } from "./overview-geometry";
import { Palette } from "./palette";
import { RunDialog } from "./run-dialog";
import { RunOverlayContext } from "./run-overlay";
import { isMac, useEditorKeys } from "./use-editor-keys";
import { useLeaveGuard } from "./use-leave-guard";
import { StartTriggers } from "./start-triggers";
import { TriggersDrawer } from "./triggers-drawer";
import { VersionsDrawer } from "./versions-drawer";
import { WorkflowTestDialog } from "./workflow-test-dialog";
import type { WorkflowTestResult } from "./workflow-test-dialog";
import { WorkflowTestPanel, useWorkflowTestOverlay } from "./workflow-test-result";

/** What the page loaded: the definition and where it sits in the version history. */
export interface EditorInitial {
  definition: WorkflowDefinition;
  /** The saved version shown, or null for a workflow never saved. */
  version: number | null;
  latestVersion: number | null;
  /** An older version (or a deleted workflow): shown, never edited. */
  readOnly: boolean;
  message: string | null;
}

/** The visual editor of one workflow: palette, canvas or JSON, inspector, problems, versions, run. */
export function WorkflowEditor({ namespace, initial }: { namespace: string; initial: EditorInitial }) {
  return (
    <EditorStoreProvider definition={initial.definition} readOnly={initial.readOnly}>
      <ReactFlowProvider>
        <EditorLayout initial={initial} namespace={namespace} />
      </ReactFlowProvider>
    </EditorStoreProvider>
  );
}

const FIT_VIEW = { ...FIT_WHOLE_DIAGRAM, padding: 0.2, duration: 200 };

function download(filename: string, value: unknown) {
  const blob = new Blob([JSON.stringify(value, null, 2) + "\n"], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function ToolbarButton({ label, shortcut, onPress, isDisabled, children }: { label: string; shortcut?: string; onPress: () => void; isDisabled?: boolean; children: ReactNode }) {
  return (
    <Tooltip delay={400}>
      <Button aria-label={label} isDisabled={isDisabled} isIconOnly size="sm" variant="ghost" onPress={onPress}>
        {children}
      </Button>
      <Tooltip.Content>
        {label}
        {shortcut ? <span className="pl-2 text-muted">{shortcut}</span> : null}
      </Tooltip.Content>
    </Tooltip>
  );
}

function EditorLayout({ namespace, initial }: { namespace: string; initial: EditorInitial }) {
  const store = useEditorStore();
  const rf = useReactFlow();
  const router = useRouter();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const definition = useEditor((s) => s.definition);
  const saved = useEditor((s) => s.saved);
  const readOnly = useEditor((s) => s.readOnly);
  const canUndo = useEditor((s) => s.past.length > 0);
  const canRedo = useEditor((s) => s.future.length > 0);
  const notice = useEditor((s) => s.notice);
  const [view, setView] = useState<"diagram" | "json">("diagram");
  const [panel, setPanel] = useState<"inspector" | "problems">("inspector");
  const [saveOpen, setSaveOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const [versionsOpen, setVersionsOpen] = useState(false);
  const [triggersOpen, setTriggersOpen] = useState(false);
  const [runOpen, setRunOpen] = useState(false);
  const [testOpen, setTestOpen] = useState(false);
  const [test, setTest] = useState<{ result: WorkflowTestResult; tested: WorkflowDefinition } | null>(null);
  const testOverlay = useWorkflowTestOverlay(test?.tested ?? null, test?.result ?? null);
  const [savedVersion, setSavedVersion] = useState(initial.version);
  const [serverProblems, setServerProblems] = useState<Problem[]>([]);
  const dirty = definition !== saved;
  const mac = useMemo(isMac, []);
  const guard = useLeaveGuard(dirty && !readOnly);

  const save = useMutation(
    trpc.workflows.save.mutationOptions({
      onSuccess: async (result, variables) => {
        const stored = { ...(variables.definition as WorkflowDefinition), version: result.version };
        store.getState().markSaved(stored);
        setSavedVersion(result.version);
        setSaveOpen(false);
        setServerProblems([]);
        store.getState().notify(`Saved ${result.name} as version ${result.version}.`, "success");
        await queryClient.invalidateQueries(trpc.workflows.pathFilter());
        if (initial.version === null || result.name !== initial.definition.name) router.replace(`/workflows/${encodeURIComponent(result.name)}`);
      },
      onError: (error) => {
        // The server's validator is the same engine code, so this is rare (a race with another save, a limit); show what it said.
        const data = error.data as { problems?: Problem[] | null } | undefined | null;
        setServerProblems(data?.problems ?? []);
      },
    }),
  );

  const openSave = useCallback(() => {
    if (readOnly) return;
    const s = store.getState();
    // Warnings do not stop a save: they are node-flow's extra checks on what still runs as Conductor runs it.
    const errors = s.problems.filter((p) => p.severity !== "warning");
    if (errors.length > 0) {
      setPanel("problems");
      s.notify(`Fix the ${errors.length === 1 ? "problem" : `${errors.length} problems`} first: a workflow is saved only when it is valid.`, "danger");
      return;
    }
    save.reset();
    setServerProblems([]);
    setSaveOpen(true);
  }, [readOnly, save, store]);

  const doSave = async (message: string) => {
    const current = store.getState().definition;
    if (savedVersion === null) {
      // A new workflow must not silently become the next version of an existing one.
      const existing = await queryClient.fetchQuery(trpc.workflows.versions.queryOptions({ namespace, name: current.name })).catch(() => []);
      if (existing.length > 0) {
        store.getState().notify(`A workflow called “${current.name}” already exists. Pick another name in the workflow settings, or open that workflow.`, "danger");
        setSaveOpen(false);
        store.getState().select([]);
        setPanel("inspector");
        return;
      }
    }
    save.mutate({ namespace, definition: current, message: message || undefined });
  };

  const layout = useCallback(async () => {
    const s = store.getState();
    if (s.readOnly || s.definition.nodes.length === 0) return;
    const positions = await autoLayout(s.definition, (n) => drawnSize(n, s.measured));
    const next = { ...s.definition, nodes: s.definition.nodes.map((n) => (positions.has(n.ref) ? { ...n, position: positions.get(n.ref)! } : n)) };
    store.getState().replaceDefinition(next, "Auto-layout");
    requestAnimationFrame(() => void rf.fitView(FIT_VIEW));
  }, [rf, store]);

  const addAtCentre = useCallback(
    (type: NodeType) => {
      const pane = document.querySelector(".react-flow")?.getBoundingClientRect();
      const centre = pane ? rf.screenToFlowPosition({ x: pane.left + pane.width / 2, y: pane.top + pane.height / 2 }) : { x: 0, y: 0 };
      // Each press lands a little lower, so repeated adds do not stack up invisibly.
      const offset = (store.getState().definition.nodes.length % 6) * 24;
      store.getState().addNode(type, { x: centre.x - LAYOUT_DEFAULTS.nodeWidth / 2 + offset, y: centre.y - LAYOUT_DEFAULTS.nodeHeight / 2 + offset });
      setView("diagram");
    },
    [rf, store],
  );

  const addNoteAtCentre = useCallback(() => {
    const pane = document.querySelector(".react-flow")?.getBoundingClientRect();
    const centre = pane ? rf.screenToFlowPosition({ x: pane.left + pane.width / 2, y: pane.top + pane.height / 2 }) : { x: 0, y: 0 };
    const offset = ((store.getState().definition.notes?.length ?? 0) % 6) * 24;
    setView("diagram");
    store.getState().addNote({ x: centre.x - NOTE_SIZE_LIMITS.defaultWidth / 2 + offset, y: centre.y - NOTE_SIZE_LIMITS.defaultHeight / 2 + offset });
  }, [rf, store]);

  useEditorKeys(store, (action) => {
    if (action === "save") openSave();
    else if (action === "layout") void layout();
    else if (action === "fitView") void rf.fitView(FIT_VIEW);
    else if (action === "toggleJson") setView((v) => (v === "json" ? "diagram" : "json"));
    else if (action === "help") setHelpOpen(true);
  });

  const exportAs = (format: "node-flow" | "conductor") => {
    const s = store.getState();
    if (format === "node-flow") {
      download(`${s.definition.name}${savedVersion ? `.v${savedVersion}` : ""}.json`, s.definition);
      return;
    }
    const result = exportConductorWorkflow(s.definition);
    if (result.ok) download(`${s.definition.name}.conductor.json`, result.workflowDef);
    else s.notify(`Conductor cannot express this workflow: ${result.problems.map((p) => (p.ref ? `${p.ref}: ${p.message}` : p.message)).join(" ")}`, "danger");
  };

  const focusProblem = useCallback(
    (problem: Problem) => {
      setView("diagram");
      if (!problem.ref) {
        store.getState().select([]);
        setPanel("inspector");
        return;
      }
      store.getState().select([problem.ref]);
      setPanel("inspector");
      const node = rf.getInternalNode(problem.ref);
      if (node) {
        const p = node.internals.positionAbsolute;
        void rf.setCenter(p.x + (node.measured.width ?? 0) / 2, p.y + (node.measured.height ?? 0) / 2, { zoom: Math.max(rf.getZoom(), 1), duration: 250 });
      }
    },
    [rf, store],
  );

  useEffect(() => {
    if (!notice) return;
    const timer = setTimeout(() => store.getState().dismissNotice(), notice.tone === "danger" ? 8000 : 4500);
    return () => clearTimeout(timer);
  }, [notice, store]);

  const versionLabel = savedVersion === null ? "new" : `v${savedVersion}`;
  const canRun = savedVersion !== null && !dirty && !initial.readOnly;

  return (
    <div className="fixed inset-0 z-40 flex flex-col bg-background" data-testid="workflow-editor">
      <header className="flex h-14 shrink-0 items-center gap-2 border-b border-separator bg-surface/70 px-3">
        <Link aria-label="Back to workflows" className="flex size-8 items-center justify-center rounded-lg text-muted hover:bg-default hover:text-foreground" href="/workflows">
          <ArrowLeft className="size-4" />
        </Link>
        <WorkflowIcon aria-hidden className="size-4 text-accent" />
        <h1 className="max-w-[16rem] truncate text-sm font-semibold text-foreground" title={definition.name}>
          {definition.name}
        </h1>
        <Chip color="accent" size="sm" variant="soft">
          {versionLabel}
        </Chip>
        {readOnly ? (
          <Chip color="warning" size="sm" variant="soft">
            read-only
          </Chip>
        ) : null}
        {dirty && !readOnly ? (
          <span className="text-xs text-muted" data-testid="unsaved-indicator">
            Unsaved changes
          </span>
        ) : null}

        <div className="mx-auto flex items-center rounded-lg border border-separator p-0.5" role="tablist" aria-label="View">
          {(["diagram", "json"] as const).map((v) => (
            <button
              key={v}
              aria-selected={view === v}
              className={`flex items-center gap-1.5 rounded-md px-2.5 py-1 text-xs font-medium ${view === v ? "bg-default text-foreground" : "text-muted hover:text-foreground"}`}
              role="tab"
              type="button"
              onClick={() => setView(v)}
            >
              {v === "diagram" ? <LayoutDashboard className="size-3.5" /> : <Braces className="size-3.5" />}
              {v === "diagram" ? "Diagram" : "JSON"}
            </button>
          ))}
        </div>

        <div className="flex items-center gap-0.5">
          <ToolbarButton isDisabled={!canUndo || readOnly} label="Undo" shortcut={mac ? "⌘Z" : "Ctrl+Z"} onPress={() => store.getState().undo()}>
            <Undo2 className="size-4" />
          </ToolbarButton>
          <ToolbarButton isDisabled={!canRedo || readOnly} label="Redo" shortcut={mac ? "⇧⌘Z" : "Ctrl+Shift+Z"} onPress={() => store.getState().redo()}>
            <Redo2 className="size-4" />
          </ToolbarButton>
          <ToolbarButton isDisabled={readOnly || definition.nodes.length === 0} label="Auto-layout" shortcut="Shift+L" onPress={() => void layout()}>
            <LayoutDashboard className="size-4" />
          </ToolbarButton>
          <ToolbarButton isDisabled={readOnly} label="Add note" onPress={addNoteAtCentre}>
            <StickyNote className="size-4" />
          </ToolbarButton>
          <ToolbarButton label="Fit view" shortcut="Shift+F" onPress={() => void rf.fitView(FIT_VIEW)}>
            <Maximize className="size-4" />
          </ToolbarButton>
          <ToolbarButton label="Keyboard shortcuts" shortcut="?" onPress={() => setHelpOpen(true)}>
            <Keyboard className="size-4" />
          </ToolbarButton>
          <ToolbarButton isDisabled={savedVersion === null} label="Versions" onPress={() => setVersionsOpen(true)}>
            <History className="size-4" />
          </ToolbarButton>
          <ToolbarButton isDisabled={savedVersion === null} label="Triggers" onPress={() => setTriggersOpen(true)}>
            <Webhook className="size-4" />
          </ToolbarButton>
          <Dropdown>
            <Button aria-label="Export" isIconOnly size="sm" variant="ghost">
              <Download className="size-4" />
            </Button>
            <Dropdown.Popover>
              <Dropdown.Menu aria-label="Export as" onAction={(key) => exportAs(key === "conductor" ? "conductor" : "node-flow")}>
                <Dropdown.Item id="node-flow" textValue="node-flow JSON">
                  <Label>node-flow JSON</Label>
                </Dropdown.Item>
                <Dropdown.Item id="conductor" textValue="Conductor JSON">
                  <Label>Conductor WorkflowDef JSON</Label>
                </Dropdown.Item>
              </Dropdown.Menu>
            </Dropdown.Popover>
          </Dropdown>
          {readOnly ? null : (
            <Tooltip delay={300}>
              <Button className="ml-1" isDisabled={definition.nodes.length === 0} size="sm" variant="ghost" onPress={() => setTestOpen(true)}>
                <FlaskConical className="size-3.5" />
                Test workflow
              </Button>
              <Tooltip.Content>Run the draft on screen in memory, with its pinned outputs; nothing is saved or started</Tooltip.Content>
            </Tooltip>
          )}
          <Tooltip delay={300}>
            <Button className="ml-1" isDisabled={!canRun} size="sm" variant="secondary" onPress={() => setRunOpen(true)}>
              <Play className="size-3.5" />
              Run
            </Button>
            <Tooltip.Content>{canRun ? `Run version ${savedVersion}` : readOnly ? "Open the latest version to run it" : "Save first: a run uses a saved version"}</Tooltip.Content>
          </Tooltip>
          {readOnly ? null : (
            <Button className="ml-1" isDisabled={!dirty && savedVersion !== null} size="sm" onPress={openSave}>
              <Save className="size-3.5" />
              Save
            </Button>
          )}
        </div>
      </header>

      {initial.readOnly && initial.version !== null ? (
        <div className="flex items-center gap-3 border-b border-separator bg-warning-soft/40 px-4 py-1.5 text-xs text-foreground">
          <span>
            Version {initial.version}
            {initial.message ? ` — “${initial.message}”` : ""}. Saved versions never change.
          </span>
          {initial.latestVersion !== null ? (
            <Link className="font-medium text-accent underline-offset-2 hover:underline" href={`/workflows/${encodeURIComponent(definition.name)}`}>
              Open the latest (v{initial.latestVersion})
            </Link>
          ) : (
            <span className="text-muted">This workflow was deleted.</span>
          )}
        </div>
      ) : null}

      <div className="flex min-h-0 flex-1">
        {readOnly ? null : (
          <aside className="hidden w-56 shrink-0 border-r border-separator bg-surface/40 lg:block">
            <Palette disabled={readOnly} onAdd={addAtCentre} />
          </aside>
        )}
        <section aria-label={view === "diagram" ? "Diagram" : "JSON"} className="relative min-w-0 flex-1">
          {view === "diagram" ? (
            // Null (no test on screen) is the context's default: the canvas draws as the editor; one tree either way, so the viewport stays.
            <RunOverlayContext.Provider value={testOverlay}>
              <EditorCanvas />
            </RunOverlayContext.Provider>
          ) : (
            <JsonView />
          )}
          {view === "diagram" && savedVersion !== null ? <StartTriggers namespace={namespace} workflowName={definition.name} onOpen={() => setTriggersOpen(true)} /> : null}
          {notice ? (
            <div
              className={`absolute bottom-4 left-1/2 z-10 max-w-lg -translate-x-1/2 rounded-lg px-4 py-2 text-sm text-white shadow-lg ${
                notice.tone === "danger" ? "bg-danger" : notice.tone === "success" ? "bg-emerald-600" : "bg-amber-600"
              }`}
              data-testid="editor-notice"
              role="status"
            >
              {notice.message}
            </div>
          ) : null}
        </section>
        {test ? <WorkflowTestPanel result={test.result} stale={test.tested !== definition} onClear={() => setTest(null)} onTestAgain={() => setTestOpen(true)} /> : null}
        <EditorSidePanel nameEditable={savedVersion === null} panel={panel} onFocusProblem={focusProblem} onPanelChange={setPanel} />
      </div>

      <SaveDialog
        error={save.error?.message ?? null}
        isOpen={saveOpen}
        isPending={save.isPending}
        name={definition.name}
        nextVersionHint={savedVersion === null ? "This creates version 1." : `This creates a new version after v${savedVersion}.`}
        serverProblems={serverProblems}
        onOpenChange={setSaveOpen}
        onSave={(message) => void doSave(message)}
      />
      <ShortcutsDialog isOpen={helpOpen} mac={mac} onOpenChange={setHelpOpen} />
      {savedVersion !== null ? (
        <VersionsDrawer currentVersion={savedVersion} isOpen={versionsOpen} name={definition.name} namespace={namespace} onOpenChange={setVersionsOpen} />
      ) : null}
      {savedVersion !== null ? (
        <TriggersDrawer isOpen={triggersOpen} name={definition.name} namespace={namespace} nodeRefs={definition.nodes.map((n) => n.ref)} onOpenChange={setTriggersOpen} />
      ) : null}
      {readOnly ? null : (
        <WorkflowTestDialog
          definition={definition}
          isOpen={testOpen}
          namespace={namespace}
          onOpenChange={setTestOpen}
          onResult={(result, tested) => {
            setTest({ result, tested });
            setView("diagram");
          }}
        />
      )}
      {canRun ? <RunDialog definition={definition} isOpen={runOpen} namespace={namespace} onOpenChange={setRunOpen} /> : null}

      <ConfirmDialog
        cancelLabel="Stay"
        confirmLabel="Discard and leave"
        confirmVariant="danger"
        isOpen={guard.pending !== null}
        title="Leave without saving?"
        tone="warning"
        onConfirm={guard.leave}
        onOpenChange={(open) => (open ? undefined : guard.stay())}
      >
        Your changes to {definition.name} are not saved. Leaving discards them.
      </ConfirmDialog>
    </div>
  );
}
