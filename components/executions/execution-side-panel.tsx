"use client";

import { Alert, Button, Modal, Skeleton, buttonVariants } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Route } from "next";
import Link from "next/link";
import { useEffect, useMemo, useState } from "react";
import { isTerminalTaskStatus } from "@/engine";
import type { WorkflowDefinition, WorkflowStatus } from "@/engine";
import { CodeEditor } from "../editor/code-editor";
import { useTRPC } from "../trpc";
import type { ExecutionDetail } from "./execution-types";
import { AgentTurns } from "./agent-turns";
import { RunTimeline } from "./run-timeline";
import { TaskStatusChip } from "./run-status-chip";
import { formatDuration, isLiveRunStatus } from "./run-status";
import type { RunTask } from "./run-model";

type Tab = "run" | "task" | "history" | "timeline";

function pretty(value: unknown): string {
  return JSON.stringify(value ?? null, null, 2);
}

function JsonBlock({ label, value, truncated, onLoadAll }: { label: string; value: unknown; truncated?: boolean; onLoadAll?: () => void }) {
  return (
    <div className="flex flex-col gap-1">
      <div className="flex items-center justify-between">
        <h4 className="text-xs font-semibold tracking-wide text-muted uppercase">{label}</h4>
        {truncated && onLoadAll ? (
          <button className="text-xs font-medium text-accent hover:underline" type="button" onClick={onLoadAll}>
            Load all (large)
          </button>
        ) : null}
      </div>
      {truncated && value === null ? (
        <p className="text-xs text-muted">Too large to show inline.</p>
      ) : (
        <div className="overflow-hidden rounded-lg border border-separator">
          <CodeEditor ariaLabel={label} language="json" maxHeight="16rem" readOnly value={pretty(value)} />
        </div>
      )}
    </div>
  );
}

function Times({ startedAt, endedAt }: { startedAt: string | null; endedAt: string | null }) {
  if (!startedAt) return <span className="text-muted">not started</span>;
  const ms = (endedAt ? Date.parse(endedAt) : Date.now()) - Date.parse(startedAt);
  return (
    <span>
      {new Date(startedAt).toLocaleTimeString()} · {formatDuration(ms)}
      {endedAt ? "" : " so far"}
    </span>
  );
}

export function ExecutionSidePanel({
  namespace,
  initial,
  definition,
  tasks,
  status,
  endedAt,
  selectedRef,
  latestTask,
  historyVersion,
  onChanged,
}: {
  namespace: string;
  initial: ExecutionDetail;
  definition: WorkflowDefinition;
  tasks: ReadonlyMap<string, RunTask>;
  status: WorkflowStatus;
  endedAt: string | null;
  selectedRef: string | null;
  latestTask: RunTask | null;
  historyVersion: number;
  onChanged: () => Promise<void>;
}) {
  const [tab, setTab] = useState<Tab>("run");
  useEffect(() => {
    if (selectedRef) setTab("task");
  }, [selectedRef]);
  const tabs: [Tab, string][] = [
    ["run", "Run"],
    ["task", "Task"],
    ["history", "History"],
    ["timeline", "Timeline"],
  ];
  return (
    <div className="flex w-[24rem] shrink-0 flex-col border-l border-separator bg-surface/40">
      <div aria-label="Run panel" className="flex border-b border-separator px-2" role="tablist">
        {tabs.map(([t, label]) => (
          <button
            key={t}
            aria-selected={tab === t}
            className={`-mb-px border-b-2 px-3 py-2 text-sm font-medium ${tab === t ? "border-accent text-foreground" : "border-transparent text-muted hover:text-foreground"}`}
            role="tab"
            type="button"
            onClick={() => setTab(t)}
          >
            {label}
          </button>
        ))}
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto p-4">
        {tab === "run" ? <RunSummaryTab endedAt={endedAt} initial={initial} namespace={namespace} status={status} /> : null}
        {tab === "task" ? (
          latestTask ? (
            <TaskTab key={latestTask.id} tasks={tasks} definition={definition} namespace={namespace} runId={initial.execution.id} runStatus={status} task={latestTask} children={initial.children} onChanged={onChanged} />
          ) : (
            <p className="text-sm text-muted">{selectedRef ? `${selectedRef} has not run in this run.` : "Select a node on the diagram to see its task."}</p>
          )
        ) : null}
        {tab === "history" ? <HistoryTab namespace={namespace} runId={initial.execution.id} version={historyVersion} /> : null}
        {tab === "timeline" ? <RunTimeline tasks={tasks} /> : null}
      </div>
    </div>
  );
}

/** A run a trigger started names it (start-execution's createdBy: `schedule:<name>`, `webhook:<name>`), linked to the workflow's Triggers. */
function StartedBy({ startedBy, workflow }: { startedBy: string | null; workflow: string }) {
  const trigger = /^(schedule|webhook):(.+)$/.exec(startedBy ?? "");
  if (trigger === null) return null;
  return (
    <>
      <dt className="text-muted">Started by</dt>
      <dd data-testid="run-started-by">
        {trigger[1]}{" "}
        <Link className="font-medium text-accent hover:underline" href={`/workflows/${encodeURIComponent(workflow)}`}>
          {trigger[2]}
        </Link>
      </dd>
    </>
  );
}

function RunSummaryTab({ namespace, initial, status, endedAt }: { namespace: string; initial: ExecutionDetail; status: WorkflowStatus; endedAt: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const e = initial.execution;
  const [full, setFull] = useState<{ input?: unknown; output?: unknown }>({});
  // The output is written when the run ends: read it again once it has.
  const fresh = useQuery({ ...trpc.executions.get.queryOptions({ namespace, id: e.id }), enabled: !isLiveRunStatus(status) && status !== e.status });
  const output = fresh.data?.execution.output ?? e.output;
  const variables = fresh.data?.execution.variables ?? e.variables;
  const loadAll = async (kind: "input" | "output") => {
    const { value } = await queryClient.fetchQuery(trpc.executions.payload.queryOptions({ namespace, id: e.id, kind }));
    setFull((f) => ({ ...f, [kind]: value }));
  };
  return (
    <div className="flex flex-col gap-4 text-sm">
      <dl className="grid grid-cols-[7rem_1fr] gap-x-3 gap-y-1.5">
        <dt className="text-muted">Started</dt>
        <dd>{new Date(e.startedAt).toLocaleString()}</dd>
        <dt className="text-muted">Duration</dt>
        <dd>
          <Times endedAt={endedAt} startedAt={e.startedAt} />
        </dd>
        <StartedBy startedBy={e.startedBy} workflow={e.workflow} />
        {e.correlationId ? (
          <>
            <dt className="text-muted">Correlation id</dt>
            <dd className="font-mono text-xs">{e.correlationId}</dd>
          </>
        ) : null}
        {initial.parent ? (
          <>
            <dt className="text-muted">Parent run</dt>
            <dd>
              <Link className="text-accent hover:underline" href={`/executions/${initial.parent.id}`}>
                {initial.parent.workflow}
              </Link>
            </dd>
          </>
        ) : null}
      </dl>
      {initial.children.length > 0 ? (
        <div>
          <h4 className="pb-1 text-xs font-semibold tracking-wide text-muted uppercase">Child runs</h4>
          <ul className="flex flex-col gap-1">
            {initial.children.map((c) => (
              <li key={c.id}>
                <Link className="text-accent hover:underline" href={`/executions/${c.id}`}>
                  {c.workflow}
                </Link>{" "}
                <span className="text-xs text-muted">{c.status.toLowerCase()}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <JsonBlock label="Input" truncated={e.inputTruncated && full.input === undefined} value={full.input ?? e.input} onLoadAll={() => void loadAll("input")} />
      <JsonBlock label="Output" truncated={e.outputTruncated && full.output === undefined} value={full.output ?? output} onLoadAll={() => void loadAll("output")} />
      <JsonBlock label="Variables" value={variables} />
    </div>
  );
}

function TaskTab({
  namespace,
  runId,
  runStatus,
  task,
  definition,
  children,
  tasks,
  onChanged,
}: {
  namespace: string;
  runId: string;
  runStatus: WorkflowStatus;
  task: RunTask;
  tasks: ReadonlyMap<string, RunTask>;
  definition: WorkflowDefinition;
  children: ExecutionDetail["children"];
  onChanged: () => Promise<void>;
}) {
  const trpc = useTRPC();
  const detail = useQuery(trpc.executions.task.queryOptions({ namespace, id: runId, taskId: task.id }));
  const { refetch: refetchDetail } = detail;
  // A task that moved on is read again (its output, its new attempt).
  useEffect(() => {
    void refetchDetail();
  }, [task.status, refetchDetail]);
  const running = !isTerminalTaskStatus(task.status);
  const logs = useQuery({ ...trpc.executions.logs.queryOptions({ namespace, id: runId, taskId: task.id }), refetchInterval: running ? 2000 : false });
  const [dialog, setDialog] = useState<"rerun" | "skip" | "complete" | null>(null);
  const node = definition.nodes.find((n) => n.ref === task.ref);
  const child = children.find((c) => c.parentTaskId === task.id);
  // A HUMAN task is completed in the inbox, under its rules (assignee, outcomes, form, self-approval); a WAIT here.
  const canComplete = running && node?.type === "WAIT";
  const inboxItem = running ? (detail.data?.humanTaskId ?? null) : null;

  return (
    <div className="flex flex-col gap-4 text-sm" data-testid="task-panel">
      <div className="flex items-center gap-2">
        <code className="font-mono font-semibold text-foreground">{task.ref}</code>
        <TaskStatusChip status={task.status} />
        {task.iteration > 0 ? <span className="text-xs text-muted">iteration {task.iteration}</span> : null}
      </div>
      <dl className="grid grid-cols-[7rem_1fr] gap-x-3 gap-y-1.5">
        <dt className="text-muted">Type</dt>
        <dd>{node?.type ?? task.type}</dd>
        <dt className="text-muted">Timing</dt>
        <dd>
          <Times endedAt={task.endedAt} startedAt={task.startedAt} />
        </dd>
        <dt className="text-muted">Worker</dt>
        <dd className="font-mono text-xs">{task.workerId ?? "—"}</dd>
        <dt className="text-muted">Polls</dt>
        <dd>{task.pollCount}</dd>
        {task.subWorkflowId || child ? (
          <>
            <dt className="text-muted">Child run</dt>
            <dd>
              <Link className="text-accent hover:underline" href={`/executions/${task.subWorkflowId ?? child!.id}`}>
                open
              </Link>
            </dd>
          </>
        ) : null}
      </dl>
      {node?.type === "AGENT" ? <AgentTurns agentRef={task.ref} tasks={tasks.values()} /> : null}
      {runStatus !== "RUNNING" || canComplete || running || inboxItem !== null ? (
        <div className="flex flex-wrap gap-2">
          {runStatus !== "RUNNING" && runStatus !== "PAUSED" ? (
            <Button size="sm" variant="secondary" onPress={() => setDialog("rerun")}>
              Rerun from here
            </Button>
          ) : null}
          {running ? (
            <Button size="sm" variant="secondary" onPress={() => setDialog("skip")}>
              Skip
            </Button>
          ) : null}
          {canComplete ? (
            <Button size="sm" onPress={() => setDialog("complete")}>
              Complete by hand
            </Button>
          ) : null}
          {inboxItem !== null ? (
            <Link className={buttonVariants({ size: "sm" })} href={`/inbox?task=${encodeURIComponent(inboxItem)}` as Route}>
              Open in inbox
            </Link>
          ) : null}
        </div>
      ) : null}

      {detail.isPending ? <Skeleton className="h-24 rounded-lg" /> : null}
      {detail.isError ? <p className="text-danger">{detail.error.message}</p> : null}
      {detail.data ? (
        <>
          <div>
            <h4 className="pb-1 text-xs font-semibold tracking-wide text-muted uppercase">Attempts</h4>
            <ol className="flex flex-col gap-1" aria-label="Attempts">
              {detail.data.attempts.map((a) => (
                <li key={a.id} className="rounded-md border border-separator px-2 py-1.5">
                  <div className="flex items-center gap-2">
                    <span className="text-xs text-muted">#{a.attempt + 1}</span>
                    <TaskStatusChip status={a.status} />
                    <span className="ml-auto text-xs text-muted">
                      <Times endedAt={a.endedAt} startedAt={a.startedAt} />
                    </span>
                  </div>
                  {a.reasonForIncompletion ? <p className="mt-1 text-xs text-danger">{a.reasonForIncompletion}</p> : null}
                  {a.workerId ? <p className="text-xs text-muted">worker {a.workerId}</p> : null}
                </li>
              ))}
            </ol>
          </div>
          <JsonBlock label="Task input" truncated={detail.data.task.inputTruncated} value={detail.data.task.input} />
          <JsonBlock label="Task output" truncated={detail.data.task.outputTruncated} value={detail.data.task.output} />
        </>
      ) : null}
      <div>
        <h4 className="pb-1 text-xs font-semibold tracking-wide text-muted uppercase">Logs{running ? " (live)" : ""}</h4>
        {logs.data && logs.data.lines.length > 0 ? (
          <pre className="max-h-48 overflow-auto rounded-lg bg-default/50 p-2 font-mono text-xs" data-testid="task-logs">
            {logs.data.lines.map((l) => `${new Date(l.at).toLocaleTimeString()}  ${l.message}`).join("\n")}
          </pre>
        ) : (
          <p className="text-xs text-muted">No log lines.</p>
        )}
      </div>
      {dialog ? (
        <TaskActionDialog kind={dialog} namespace={namespace} runId={runId} task={task} onClose={() => setDialog(null)} onDone={onChanged} />
      ) : null}
    </div>
  );
}

const TASK_ACTION_TEXT = {
  rerun: { title: "Rerun from this node", confirm: "Rerun", help: "Everything from this node on runs again; what ran before it is kept. Edit the node's input if you like." },
  skip: { title: "Skip this task", confirm: "Skip", help: "The task is marked skipped and the run carries on past it." },
  complete: { title: "Complete this task by hand", confirm: "Complete", help: "The output below becomes the task's output and the run carries on." },
} as const;

function TaskActionDialog({
  kind,
  namespace,
  runId,
  task,
  onClose,
  onDone,
}: {
  kind: "rerun" | "skip" | "complete";
  namespace: string;
  runId: string;
  task: RunTask;
  onClose: () => void;
  onDone: () => Promise<void>;
}) {
  const trpc = useTRPC();
  const [text, setText] = useState("{}");
  const parsed = useMemo(() => {
    try {
      const value: unknown = JSON.parse(text);
      return typeof value === "object" && value !== null && !Array.isArray(value) ? { ok: true as const, value: value as Record<string, unknown> } : { ok: false as const, message: "Expected a JSON object." };
    } catch (error) {
      return { ok: false as const, message: (error as Error).message };
    }
  }, [text]);
  const options = { onSuccess: async () => {
    onClose();
    await onDone();
  } };
  const rerun = useMutation(trpc.executions.rerun.mutationOptions(options));
  const skip = useMutation(trpc.executions.skipTask.mutationOptions(options));
  const complete = useMutation(trpc.executions.completeTask.mutationOptions(options));
  const m = kind === "rerun" ? rerun : kind === "skip" ? skip : complete;
  const text_ = TASK_ACTION_TEXT[kind];
  const submit = () => {
    if (kind === "skip") skip.mutate({ namespace, id: runId, ref: task.ref });
    else if (!parsed.ok) return;
    else if (kind === "rerun") rerun.mutate({ namespace, id: runId, fromRef: task.ref, ...(Object.keys(parsed.value).length > 0 ? { input: parsed.value } : {}) });
    else complete.mutate({ namespace, id: runId, taskId: task.id, output: parsed.value });
  };
  return (
    <Modal.Backdrop isOpen onOpenChange={(open) => (open || m.isPending ? undefined : onClose())}>
      <Modal.Container placement="center" size="md">
        <Modal.Dialog aria-label={text_.title}>
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>{text_.title}</Modal.Heading>
            <p className="text-sm text-muted">{text_.help}</p>
          </Modal.Header>
          <Modal.Body className="flex flex-col gap-3">
            {m.error ? (
              <Alert role="alert" status="danger">
                <Alert.Indicator />
                <Alert.Content>
                  <Alert.Description>{m.error.message}</Alert.Description>
                </Alert.Content>
              </Alert>
            ) : null}
            {kind === "skip" ? null : (
              <>
                <div className="overflow-hidden rounded-lg border border-separator">
                  <CodeEditor ariaLabel={kind === "rerun" ? "New input" : "Output"} language="json" minHeight="6rem" value={text} onChange={setText} />
                </div>
                {!parsed.ok ? <p className="text-xs text-danger">{parsed.message}</p> : null}
              </>
            )}
          </Modal.Body>
          <Modal.Footer>
            <Button slot="close" variant="secondary">
              Cancel
            </Button>
            <Button isDisabled={kind !== "skip" && !parsed.ok} isPending={m.isPending} onPress={submit}>
              {text_.confirm}
            </Button>
          </Modal.Footer>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

function HistoryTab({ namespace, runId, version }: { namespace: string; runId: string; version: number }) {
  const trpc = useTRPC();
  const history = useQuery(trpc.executions.history.queryOptions({ namespace, id: runId, limit: 1000 }));
  const { refetch } = history;
  // Every event the stream applied: the history has grown.
  useEffect(() => {
    void refetch();
  }, [version, refetch]);
  if (history.isPending) return <Skeleton className="h-24 rounded-lg" />;
  if (history.isError) return <p className="text-sm text-danger">{history.error.message}</p>;
  return (
    <ol aria-label="History" className="flex flex-col gap-1 text-xs">
      {history.data.map((e) => (
        <li key={e.seq} className="flex gap-2 border-b border-separator py-1 last:border-0">
          <span className="w-8 shrink-0 text-right text-muted">{e.seq}</span>
          <span className="w-20 shrink-0 text-muted">{new Date(e.at).toLocaleTimeString()}</span>
          <span className="font-medium text-foreground">{e.type}</span>
          {e.ref ? <code className="font-mono text-muted">{e.ref}</code> : null}
        </li>
      ))}
    </ol>
  );
}
