import { TASK_STATUSES, isTerminalTaskStatus, parseAgentChildRef } from "@/engine";
import type { TaskStatus, WorkflowDefinition, WorkflowStatus } from "@/engine";
import { edgeKey } from "../editor/graph-edits";
import type { NodeRunState } from "../editor/run-overlay";

/**
 * The run page's model, pure: task rows in, what each node of the diagram
 * shows out. Live messages (stream) are folded into the rows here, so the
 * rules — which attempt a node shows, which iteration, which edges were
 * taken — are unit-tested without a browser.
 */

/** A task row as the page knows it (executions.get's TaskSummary, updated by the stream). */
export interface RunTask {
  id: string;
  ref: string;
  type: string;
  iteration: number;
  attempt: number;
  status: TaskStatus;
  scheduledAt: string;
  startedAt: string | null;
  endedAt: string | null;
  workerId: string | null;
  pollCount: number;
  reasonForIncompletion: string | null;
  subWorkflowId: string | null;
  parentRef: string | null;
  forkIndex: number | null;
}

/** A `history` message of the execution stream. */
export interface HistoryMessage {
  seq: number;
  at: string;
  type: string;
  ref: string | null;
  taskId: string | null;
  status: string | null;
  iteration?: number;
  attempt?: number;
  /** The task's own start and end, when the event carries them (`at` is when the event was written). */
  startedAt?: string;
  endedAt?: string;
}

/** A row of a `tasks` snapshot: the run's in-flight tasks as they are now. */
export type SnapshotTask = Partial<RunTask> & { id: string };

const TASK_STATUS_SET: ReadonlySet<string> = new Set(TASK_STATUSES);

/** A row known only from the stream: what it did not say is empty until the next snapshot or read. */
function blankTask(fields: Pick<RunTask, "id" | "ref" | "status" | "scheduledAt"> & Partial<RunTask>): RunTask {
  return {
    type: "",
    iteration: 0,
    attempt: 0,
    startedAt: null,
    endedAt: null,
    workerId: null,
    pollCount: 0,
    reasonForIncompletion: null,
    subWorkflowId: null,
    parentRef: null,
    forkIndex: null,
    ...fields,
  };
}

/** Folds one history event into the rows: a new row on TASK_SCHEDULED, a status change otherwise. */
export function applyHistory(tasks: ReadonlyMap<string, RunTask>, event: HistoryMessage): Map<string, RunTask> | null {
  if (!event.taskId || !event.ref || !event.status || !TASK_STATUS_SET.has(event.status)) return null;
  const status = event.status as TaskStatus;
  const current = tasks.get(event.taskId);
  const next = new Map(tasks);
  if (!current) {
    next.set(
      event.taskId,
      blankTask({
        id: event.taskId,
        ref: event.ref,
        iteration: event.iteration ?? 0,
        attempt: event.attempt ?? 0,
        status,
        scheduledAt: event.at,
        startedAt: event.startedAt ?? (status === "IN_PROGRESS" ? event.at : null),
        endedAt: isTerminalTaskStatus(status) ? (event.endedAt ?? event.at) : null,
      }),
    );
    return next;
  }
  const times = { startedAt: event.startedAt ?? current.startedAt, endedAt: event.endedAt ?? current.endedAt };
  if (current.status === status && times.startedAt === current.startedAt && times.endedAt === current.endedAt) return null;
  next.set(event.taskId, {
    ...current,
    status,
    // The event's own times win: a snapshot can miss a start (a lease writes no event) and `at` is the recording's time.
    startedAt: times.startedAt ?? (status === "IN_PROGRESS" || isTerminalTaskStatus(status) ? event.at : null),
    endedAt: isTerminalTaskStatus(status) ? (times.endedAt ?? event.at) : null,
  });
  return next;
}

/** Folds a snapshot of in-flight rows in (newer facts win; a row the snapshot lacks is left as it is). */
export function applySnapshot(tasks: ReadonlyMap<string, RunTask>, snapshot: readonly SnapshotTask[]): Map<string, RunTask> {
  const next = new Map(tasks);
  for (const row of snapshot) {
    const current = next.get(row.id);
    if (current) next.set(row.id, { ...current, ...stripUndefined(row) });
    else if (row.ref && row.status) {
      next.set(row.id, blankTask({ scheduledAt: row.startedAt ?? new Date(0).toISOString(), ...stripUndefined(row), id: row.id, ref: row.ref, status: row.status }));
    }
  }
  return next;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** What the diagram shows: a state per ref, and the edges the run took. */
export interface OverlayModel {
  nodes: Map<string, NodeRunState>;
  takenEdges: Set<string>;
  /** The newest attempt per ref (in the shown iteration): the task panel opens on it. */
  latestTask: Map<string, RunTask>;
}

/**
 * Per node: the newest attempt of its ref — in the iteration its loop shows
 * (the latest unless one was picked) — with the number of attempts; a loop
 * counts its iterations, a dynamic fork its instances. An edge is taken when
 * its source ended without being skipped and its target was reached.
 */
export function overlayModel(definition: WorkflowDefinition, tasks: Iterable<RunTask>, picked: ReadonlyMap<string, number>): OverlayModel {
  const parentOf = new Map(definition.nodes.map((n) => [n.ref, n.parent]));
  const byRef = new Map<string, RunTask[]>();
  const instances = new Map<string, { total: number; ended: number }>();
  const iterations = new Map<string, number>();
  const turns = new Map<string, number>();
  for (const t of tasks) {
    // An agent's steps (agent-turns-model.ts) are no nodes of the diagram: they count its turns.
    const agentChild = parseAgentChildRef(t.ref);
    if (agentChild !== undefined) {
      turns.set(agentChild.agentRef, Math.max(turns.get(agentChild.agentRef) ?? 0, t.iteration));
      continue;
    }
    if (t.parentRef !== null && t.forkIndex !== null) {
      const counted = instances.get(t.parentRef) ?? { total: 0, ended: 0 };
      counted.total++;
      if (isTerminalTaskStatus(t.status)) counted.ended++;
      instances.set(t.parentRef, counted);
      continue;
    }
    const loop = parentOf.get(t.ref);
    if (loop !== undefined) iterations.set(loop, Math.max(iterations.get(loop) ?? 0, t.iteration));
    const list = byRef.get(t.ref);
    if (list) list.push(t);
    else byRef.set(t.ref, [t]);
  }
  const nodes = new Map<string, NodeRunState>();
  const latestTask = new Map<string, RunTask>();
  for (const [ref, rows] of byRef) {
    const loop = parentOf.get(ref);
    const wanted = loop !== undefined ? (picked.get(loop) ?? iterations.get(loop) ?? 0) : undefined;
    const inIteration = wanted === undefined ? rows : rows.filter((r) => r.iteration === wanted);
    if (inIteration.length === 0) continue;
    const latest = inIteration.reduce((a, b) => (b.iteration > a.iteration || (b.iteration === a.iteration && b.attempt > a.attempt) ? b : a));
    const attempts = inIteration.filter((r) => r.iteration === latest.iteration).length;
    const state: NodeRunState = { status: latest.status, attempts, startedAt: latest.startedAt, endedAt: latest.endedAt };
    const fork = instances.get(ref);
    if (fork) state.instances = fork;
    const iterationCount = iterations.get(ref);
    if (iterationCount !== undefined) state.iterations = iterationCount;
    const turn = turns.get(ref);
    if (turn !== undefined) state.turns = turn;
    nodes.set(ref, state);
    latestTask.set(ref, latest);
  }
  const takenEdges = new Set<string>();
  for (const e of definition.edges) {
    const source = nodes.get(e.source);
    const target = nodes.get(e.target);
    if (!source || !target) continue;
    if (source.status === "SKIPPED" || target.status === "SKIPPED" || !isTerminalTaskStatus(source.status)) continue;
    takenEdges.add(edgeKey(e));
  }
  return { nodes, takenEdges, latestTask };
}

/** Operator actions that make sense for a run in `status`. */
export function availableActions(status: WorkflowStatus): ReadonlySet<"pause" | "resume" | "terminate" | "retry" | "restart" | "rerun"> {
  switch (status) {
    case "RUNNING":
      return new Set(["pause", "terminate"]);
    case "PAUSED":
      return new Set(["resume", "terminate"]);
    case "COMPLETED":
      return new Set(["restart", "rerun"]);
    default:
      return new Set(["retry", "restart", "rerun"]);
  }
}
