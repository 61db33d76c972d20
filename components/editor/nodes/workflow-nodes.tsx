"use client";

import { Handle, Position } from "@xyflow/react";
import type { NodeProps, NodeTypes } from "@xyflow/react";
import { CircleAlert, Plus, TriangleAlert, X } from "lucide-react";
import { memo, useState } from "react";
import type { KeyboardEvent } from "react";
import { DEFAULT_CASE, LAYOUT_DEFAULTS, NODE_TYPES } from "@/engine";
import type { WorkflowNode } from "@/engine";
import { useEditor, useEditorStore } from "../editor-context";
import { useLoopIteration, useNodeRunState } from "../run-overlay";
import type { NodeRunState } from "../run-overlay";
import type { DiffKind } from "../editor-store";
import type { LoopFlowNode, SwitchFlowNode, TaskFlowNode, WorkflowNodeData } from "../flow-mapping";
import { switchWidth } from "../overview-geometry";
import { NodeIconTile } from "./node-icon";

/** One line saying what a node does, under its title. */
export function nodeSummary(node: WorkflowNode): string {
  switch (node.type) {
    case "SIMPLE":
      return node.name;
    case "HTTP":
      return `${node.httpRequest.method ?? "GET"} ${node.httpRequest.uri}`;
    case "HTTP_POLL":
      return `${node.httpRequest.method ?? "GET"} ${node.httpRequest.uri} every ${node.httpRequest.pollingInterval ?? 60}s`;
    case "JDBC":
      return `${node.jdbc.connectionId ?? node.jdbc.integrationName ?? ""}: ${node.jdbc.statement}`;
    case "LIST_MCP_TOOLS":
      return node.mcp.mcpServer;
    case "CALL_MCP_TOOL":
      return `${node.mcp.method} @ ${node.mcp.mcpServer}`;
    case "LLM_CHAT_COMPLETE":
    case "LLM_TEXT_COMPLETE":
    case "LLM_GENERATE_EMBEDDINGS":
      return `${node.llm.llmProvider}/${node.llm.model}`;
    case "LLM_INDEX_TEXT":
    case "LLM_SEARCH_INDEX":
      return `index ${node.llm.index}`;
    case "SUB_WORKFLOW":
      return node.subWorkflowParam?.name ?? (node.workflowDefinition ? `inline: ${node.workflowDefinition.name}` : "");
    case "START_WORKFLOW":
      return node.startWorkflow.name;
    case "WAIT":
      return node.duration ?? node.until ?? (node.signal ? "until signalled" : "");
    case "TERMINATE":
      return node.terminationStatus;
    case "FORK_JOIN_DYNAMIC":
      return node.forkTaskName ?? "";
    case "EVENT":
      return node.sink;
    case "JSON_JQ_TRANSFORM":
      return node.queryExpression;
    default:
      return "";
  }
}

const DIFF_RING: Readonly<Record<DiffKind, string>> = {
  added: "ring-2 ring-emerald-500",
  changed: "ring-2 ring-amber-500",
  removed: "ring-2 ring-danger opacity-60 [border-style:dashed]",
};

const DIFF_LABEL: Readonly<Record<DiffKind, string>> = { added: "Added", changed: "Changed", removed: "Removed" };

/** Errors in danger red; a node whose problems are all warnings (it runs, as Conductor runs it) in warning amber. */
const problemTone = (data: WorkflowNodeData): "danger" | "warning" => (data.warningOnly ? "warning" : "danger");

function frameClass(selected: boolean, data: WorkflowNodeData): string {
  const tone = problemTone(data);
  const ring = data.diff ? DIFF_RING[data.diff] : selected ? "ring-2 ring-accent" : data.problemCount > 0 ? (tone === "warning" ? "ring-1 ring-warning" : "ring-1 ring-danger") : "";
  const border = data.problemCount === 0 ? "border-separator" : tone === "warning" ? "border-warning" : "border-danger";
  return `rounded-xl border bg-surface shadow-sm transition-shadow ${border} ${ring}`;
}

function ProblemBadge({ data }: { data: WorkflowNodeData }) {
  if (data.problemCount === 0) return null;
  const warning = problemTone(data) === "warning";
  const noun = warning ? "warning" : "problem";
  return (
    <span
      aria-label={`${data.problemCount} ${noun}${data.problemCount === 1 ? "" : "s"}: ${data.firstProblem ?? ""}`}
      className={`absolute -top-2 -right-2 flex h-5 min-w-5 items-center justify-center gap-0.5 rounded-full px-1 text-[11px] font-semibold shadow ${warning ? "bg-warning text-black" : "bg-danger text-white"}`}
      data-severity={warning ? "warning" : "error"}
      data-testid="node-problems"
      role="img"
      title={data.firstProblem ?? undefined}
    >
      {warning ? <TriangleAlert aria-hidden className="size-3" /> : <CircleAlert aria-hidden className="size-3" />}
      {data.problemCount}
    </span>
  );
}

function DiffBadge({ diff }: { diff: DiffKind | null }) {
  if (!diff) return null;
  const tone = diff === "added" ? "bg-emerald-600" : diff === "changed" ? "bg-amber-600" : "bg-danger";
  return <span className={`absolute -top-2 left-3 rounded-full px-1.5 text-[10px] font-semibold text-white ${tone}`}>{DIFF_LABEL[diff]}</span>;
}

function NodeTitle({ node }: { node: WorkflowNode }) {
  const info = NODE_TYPES[node.type];
  const summary = nodeSummary(node);
  return (
    <div className="flex min-w-0 flex-1 flex-col leading-tight">
      <span className="truncate text-sm font-medium text-foreground">{node.label ?? node.ref}</span>
      <span className="truncate text-xs text-muted">
        {info.label}
        {summary ? ` · ${summary}` : ""}
      </span>
    </div>
  );
}

const handleClass = "!size-2.5 !border-2 !border-surface !bg-muted";

const RUN_TONE: Readonly<Record<NodeRunState["status"], string>> = {
  SCHEDULED: "bg-default text-muted",
  IN_PROGRESS: "bg-accent text-white",
  COMPLETED: "bg-emerald-600 text-white",
  COMPLETED_WITH_ERRORS: "bg-amber-600 text-white",
  FAILED: "bg-danger text-white",
  FAILED_WITH_TERMINAL_ERROR: "bg-danger text-white",
  TIMED_OUT: "bg-danger text-white",
  CANCELED: "bg-default text-muted",
  SKIPPED: "bg-default text-muted",
};

const RUN_WORD: Readonly<Record<NodeRunState["status"], string>> = {
  SCHEDULED: "scheduled",
  IN_PROGRESS: "running",
  COMPLETED: "completed",
  COMPLETED_WITH_ERRORS: "completed with errors",
  FAILED: "failed",
  FAILED_WITH_TERMINAL_ERROR: "failed",
  TIMED_OUT: "timed out",
  CANCELED: "cancelled",
  SKIPPED: "skipped",
};

function shortDuration(run: NodeRunState): string | null {
  if (!run.startedAt) return null;
  const ms = (run.endedAt ? Date.parse(run.endedAt) : Date.now()) - Date.parse(run.startedAt);
  if (!Number.isFinite(ms) || ms < 0) return null;
  return ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
}

/** The ring a node gets in a run: its status, pulsing while it runs; grey and faded when the run never reached it. */
function runFrame(run: NodeRunState | null | undefined): string {
  if (run === undefined) return "";
  if (run === null || run.status === "SKIPPED" || run.status === "CANCELED") return "opacity-50 grayscale";
  if (run.status === "IN_PROGRESS") return "ring-2 ring-accent animate-pulse";
  if (run.status === "COMPLETED") return "ring-2 ring-emerald-500";
  if (run.status === "COMPLETED_WITH_ERRORS") return "ring-2 ring-amber-500";
  if (run.status === "SCHEDULED") return "ring-2 ring-default";
  return "ring-2 ring-danger";
}

/** Status, attempts and duration on a node of a run. */
function RunPill({ run }: { run: NodeRunState | null | undefined }) {
  if (!run) return null;
  const duration = shortDuration(run);
  return (
    <span
      className={`absolute -bottom-2.5 right-2 flex items-center gap-1 rounded-full px-1.5 py-px text-[10px] font-semibold shadow ${RUN_TONE[run.status]}`}
      data-testid="run-status"
    >
      {RUN_WORD[run.status]}
      {run.attempts > 1 ? <span title={`${run.attempts} attempts`}>· ×{run.attempts}</span> : null}
      {run.instances ? <span>· {run.instances.ended}/{run.instances.total}</span> : null}
      {run.turns ? <span title={`Turn ${run.turns}`}>· turn {run.turns}</span> : null}
      {run.pinned ? <span>· pinned</span> : null}
      {duration ? <span className="font-normal opacity-90">· {duration}</span> : null}
    </span>
  );
}

/** undefined in the editor (no run on screen), null for a node the run has not reached. */
function useRun(ref: string): NodeRunState | null | undefined {
  const inRun = useLoopIteration(ref) !== null;
  const run = useNodeRunState(ref);
  return inRun ? run : undefined;
}

/** Every node type but SWITCH and DO_WHILE. */
export const TaskNode = memo(function TaskNode({ data, selected }: NodeProps<TaskFlowNode>) {
  const { node } = data;
  const run = useRun(node.ref);
  return (
    <div
      className={`relative flex items-center gap-2.5 px-3 ${frameClass(selected, data)} ${runFrame(run)}`}
      data-node-type={node.type}
      data-run-status={run === undefined ? undefined : (run?.status ?? "NOT_RUN")}
      style={{ width: LAYOUT_DEFAULTS.nodeWidth, height: LAYOUT_DEFAULTS.nodeHeight }}
    >
      <Handle className={handleClass} position={Position.Top} type="target" />
      <NodeIconTile type={node.type} />
      <NodeTitle node={node} />
      <ProblemBadge data={data} />
      <DiffBadge diff={data.diff} />
      <RunPill run={run} />
      {/* Nothing runs after a TERMINATE, so it offers nothing to connect from. */}
      {node.type === "TERMINATE" ? null : <Handle className={handleClass} position={Position.Bottom} type="source" />}
    </div>
  );
});

/** A SWITCH: one output handle per case plus default, labelled on the node, labels editable in place. */
export const SwitchNode = memo(function SwitchNode({ data, selected }: NodeProps<SwitchFlowNode>) {
  const node = data.node;
  const cases = node.type === "SWITCH" ? node.cases : [];
  const handles = [...cases, DEFAULT_CASE];
  const readOnly = useEditor((s) => s.readOnly);
  const store = useEditorStore();
  const width = switchWidth(cases.length);
  const run = useRun(node.ref);
  return (
    <div
      className={`relative flex flex-col ${frameClass(selected, data)} ${runFrame(run)}`}
      data-node-type="SWITCH"
      data-run-status={run === undefined ? undefined : (run?.status ?? "NOT_RUN")}
      style={{ width }}
    >
      <Handle className={handleClass} position={Position.Top} type="target" />
      <div className="flex items-center gap-2.5 px-3 pt-2.5 pb-1.5">
        <NodeIconTile type="SWITCH" />
        <NodeTitle node={node} />
        {readOnly ? null : (
          <button
            aria-label={`Add a case to ${node.ref}`}
            className="nodrag flex size-6 items-center justify-center rounded-md text-muted hover:bg-default hover:text-foreground"
            title="Add a case"
            type="button"
            onClick={(e) => {
              e.stopPropagation();
              store.getState().addCase(node.ref);
            }}
          >
            <Plus className="size-3.5" />
          </button>
        )}
      </div>
      <div className="flex border-t border-separator">
        {handles.map((label) => (
          <CaseSlot key={label} label={label} readOnly={readOnly || label === DEFAULT_CASE} switchRef={node.ref} />
        ))}
      </div>
      <ProblemBadge data={data} />
      <DiffBadge diff={data.diff} />
      <RunPill run={run} />
    </div>
  );
});

function CaseSlot({ switchRef, label, readOnly }: { switchRef: string; label: string; readOnly: boolean }) {
  const store = useEditorStore();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(label);
  const [error, setError] = useState<string | null>(null);
  const finish = (save: boolean) => {
    if (save) {
      const problem = store.getState().renameCase(switchRef, label, draft);
      if (problem) {
        setError(problem);
        return;
      }
    }
    setError(null);
    setEditing(false);
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    e.stopPropagation();
    if (e.key === "Enter") finish(true);
    if (e.key === "Escape") finish(false);
  };
  return (
    <div className="relative flex min-w-0 flex-1 flex-col items-center px-1 pt-1 pb-3" data-case={label}>
      {editing ? (
        <input
          aria-invalid={error ? true : undefined}
          aria-label={`Case label ${label}`}
          autoFocus
          className="nodrag w-full rounded border border-accent bg-background px-1 text-center text-xs outline-none"
          title={error ?? undefined}
          value={draft}
          onBlur={() => finish(true)}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKey}
        />
      ) : (
        <span className="group flex max-w-full items-center gap-0.5">
          <button
            aria-label={readOnly ? `Case ${label}` : `Rename case ${label}`}
            className={`nodrag truncate rounded px-1 text-xs ${label === DEFAULT_CASE ? "text-muted italic" : "text-foreground"} ${readOnly ? "cursor-default" : "hover:bg-default"}`}
            disabled={readOnly}
            title={readOnly ? label : "Double-click to rename"}
            type="button"
            onDoubleClick={(e) => {
              e.stopPropagation();
              setDraft(label);
              setEditing(true);
            }}
          >
            {label}
          </button>
          {readOnly ? null : (
            <button
              aria-label={`Remove case ${label}`}
              className="nodrag hidden rounded text-muted group-hover:block hover:text-danger"
              type="button"
              onClick={(e) => {
                e.stopPropagation();
                store.getState().removeCase(switchRef, label);
              }}
            >
              <X className="size-3" />
            </button>
          )}
        </span>
      )}
      {error ? <span className="absolute top-full z-10 mt-1 w-40 rounded bg-danger px-1.5 py-0.5 text-[11px] text-white">{error}</span> : null}
      <Handle className={handleClass} id={label} position={Position.Bottom} type="source" />
    </div>
  );
}

/** A DO_WHILE: a container whose children are its body. Its size follows the body (flow-mapping's loopSize). */
export const LoopNode = memo(function LoopNode({ data, selected }: NodeProps<LoopFlowNode>) {
  const node = data.node;
  const detail = node.type === "DO_WHILE" ? (node.items !== undefined ? "once per item" : "while the condition holds") : "";
  const run = useRun(node.ref);
  const iteration = useLoopIteration(node.ref);
  return (
    <div
      className={`relative h-full w-full rounded-2xl border-2 border-dashed bg-accent-soft/30 ${data.problemCount === 0 ? "border-accent/40" : problemTone(data) === "warning" ? "border-warning" : "border-danger"} ${
        data.diff ? DIFF_RING[data.diff] : selected ? "ring-2 ring-accent" : ""
      } ${runFrame(run)}`}
      data-node-type="DO_WHILE"
      data-run-status={run === undefined ? undefined : (run?.status ?? "NOT_RUN")}
    >
      <Handle className={handleClass} position={Position.Top} type="target" />
      <div className="flex items-center gap-2.5 px-3 pt-2.5">
        <NodeIconTile size="sm" type="DO_WHILE" />
        <div className="flex min-w-0 flex-col leading-tight">
          <span className="truncate text-sm font-medium text-foreground">{node.label ?? node.ref}</span>
          <span className="truncate text-xs text-muted">Loop · {detail}</span>
        </div>
        {iteration && iteration.total > 0 ? (
          <label className="nodrag ml-auto flex items-center gap-1 text-xs text-muted">
            Iteration
            <select
              aria-label={`Iteration of ${node.ref}`}
              className="rounded border border-separator bg-surface px-1 py-0.5 text-xs text-foreground"
              value={iteration.current ?? iteration.total}
              onChange={(e) => iteration.pick(Number(e.target.value))}
            >
              {Array.from({ length: iteration.total }, (_, i) => i + 1).map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        ) : null}
      </div>
      <ProblemBadge data={data} />
      <DiffBadge diff={data.diff} />
      <RunPill run={run} />
      <Handle className={handleClass} position={Position.Bottom} type="source" />
    </div>
  );
});

/** Module-level, as React Flow asks: a new object per render would remount every node. */
export const NODE_COMPONENTS: NodeTypes = { task: TaskNode, switch: SwitchNode, loop: LoopNode };
