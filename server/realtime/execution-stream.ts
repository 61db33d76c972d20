import type { Db } from "../../db/pool";
import type { WorkflowEventRow } from "../../db/schema";
import { isTerminalWorkflowStatus } from "../../engine/statuses";
import { toExecutionSummary } from "../executions/execution-summaries";
import type { Notifier } from "../lib/notifier";
import { WORKFLOW_EVENTS_CHANNEL } from "../lib/notifier";
import { getExecutionSummary, loadFrontierSnapshot } from "../store/execution-views";
import { readWorkflowEvents } from "../store/workflow-events";
import { SSE_HEARTBEAT, Waker, sseMessage } from "./sse";

/**
 * One execution's live stream: its WorkflowEvents as `history` messages (the
 * seq as the SSE id), a `tasks` snapshot of its in-flight task rows, and a
 * `workflow` message with its summary when its status changes.
 *
 * No gap, no duplicate: the stream subscribes to the run's notifications
 * *before* its first read (a commit in between wakes the loop, which then
 * re-reads), and every read is "events after my cursor" from the table, keyset
 * on ("workflowId","seq"), paged. A notification carries nothing but a wake-up,
 * so a dropped one costs latency (the loop also re-reads on an interval:
 * DESIGN.md invariant 7) and a burst of them costs one read.
 *
 * In progress without a WorkflowEvent. A worker's lease turns a task
 * IN_PROGRESS in the poll's own UPDATE and writes no event. Rather than add a
 * NOTIFY (or an event row) to that hot path — each costs the lease statement
 * a trigger or a second write, on a path tuned at thousands of leases a
 * second and being optimised on another branch — the stream re-reads the
 * run's frontier every LIVE_REREAD_MS while the run is live: one probe of
 * "TaskExecutions_pending_idx" (a partial index holding only in-flight rows,
 * in one hash partition), paid only for runs someone is watching, and only
 * when that viewer's stream has room. The snapshot is sent when it differs
 * from the last one sent, so an idle run costs reads, not traffic.
 */

/** How often a live run's frontier and status are re-read while nothing notifies. */
export const LIVE_REREAD_MS = 500;
/** An ended run changes only by an operator action (which writes events); this is the fallback for a lost notification. */
const ENDED_REREAD_MS = 5_000;
export const HEARTBEAT_MS = 15_000;
/** History page size: one page is one chunk of the body, so this bounds what a stream holds in memory. */
const PAGE = 200;
/** Snapshot cap: a dynamic fork with thousands in flight is summarised by its first rows. */
const FRONTIER_LIMIT = 500;
const MAX_REASON_LENGTH = 500;

export interface ExecutionStreamDeps {
  db: Db;
  notifier: Notifier | null;
}

export interface ExecutionStreamOptions {
  namespaceId: string;
  workflowId: string;
  /** Events with seq above this are sent: Last-Event-ID or ?after=, 0 for the whole history. */
  afterSeq: number;
  /** Test hooks. */
  liveRereadMs?: number;
  heartbeatMs?: number;
}

/** A history message's data: status deltas only, never task input or output. */
export function historyMessageData(event: WorkflowEventRow): Record<string, unknown> {
  const data = (event.data ?? {}) as Record<string, unknown>;
  const message: Record<string, unknown> = {
    seq: event.seq,
    at: event.at,
    type: event.type,
    ref: event.refName,
    taskId: event.taskId,
    status: event.status,
  };
  if (typeof data.iteration === "number") message.iteration = data.iteration;
  if (typeof data.attempt === "number") message.attempt = data.attempt;
  // The task's own start and end (the event's `at` is when it was recorded): live and loaded views agree.
  if (typeof data.startedAt === "string") message.startedAt = data.startedAt;
  if (typeof data.endedAt === "string") message.endedAt = data.endedAt;
  if (typeof data.reason === "string") message.reason = data.reason.slice(0, MAX_REASON_LENGTH);
  // SUB_WORKFLOW_STARTED (and the failure workflow's) name the child run: the page links to it.
  if (typeof data.workflowId === "string") message.workflowId = data.workflowId;
  return message;
}

/** The stream's messages, pulled one chunk at a time by sseResponse. */
export async function* executionStream(
  deps: ExecutionStreamDeps,
  options: ExecutionStreamOptions,
  signal: AbortSignal,
): AsyncGenerator<string, void, undefined> {
  const { db } = deps;
  const liveRereadMs = options.liveRereadMs ?? LIVE_REREAD_MS;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const waker = new Waker();
  // Subscribe before the first read (the notifier's rule); a resync after a
  // lost LISTEN connection wakes it too, and the re-read covers the gap.
  const unsubscribe = deps.notifier?.subscribe(WORKFLOW_EVENTS_CHANNEL, options.workflowId, () => waker.wake());
  let cursor = options.afterSeq;
  let sentTasks: string | undefined;
  let sentWorkflow: string | undefined;
  let nextHeartbeat = Date.now() + heartbeatMs;
  try {
    // EventSource's reconnect delay (its default is ~3 s).
    yield "retry: 1000\n\n";
    while (!signal.aborted) {
      for (;;) {
        const rows = await readWorkflowEvents(db, options.workflowId, { afterSeq: cursor, limit: PAGE });
        if (rows.length === 0) break;
        const last = rows.at(-1)!;
        cursor = last.seq;
        yield rows.map((row) => sseMessage("history", historyMessageData(row), row.seq)).join("");
        if (signal.aborted || rows.length < PAGE) break;
      }
      if (signal.aborted) return;

      const summary = await getExecutionSummary(db, options.namespaceId, options.workflowId);
      if (summary === undefined) return; // deleted (partition dropped): nothing more will come
      const workflow = toExecutionSummary(summary);
      const workflowKey = JSON.stringify(workflow);
      if (workflowKey !== sentWorkflow) {
        sentWorkflow = workflowKey;
        yield sseMessage("workflow", workflow);
      }
      const frontier = await loadFrontierSnapshot(db, options.workflowId, FRONTIER_LIMIT);
      const tasks = frontier.map((t) => ({
        id: t.id,
        ref: t.refName,
        iteration: t.iteration,
        attempt: t.attempt,
        status: t.status,
        startedAt: t.startedAt,
        workerId: t.workerId,
        pollCount: t.pollCount,
      }));
      const tasksKey = JSON.stringify(tasks);
      if (tasksKey !== sentTasks) {
        sentTasks = tasksKey;
        yield sseMessage("tasks", { tasks });
      }

      const interval = isTerminalWorkflowStatus(summary.status) ? ENDED_REREAD_MS : liveRereadMs;
      await waker.wait(Math.min(interval, Math.max(0, nextHeartbeat - Date.now())), signal);
      if (signal.aborted) return;
      if (Date.now() >= nextHeartbeat) {
        nextHeartbeat = Date.now() + heartbeatMs;
        yield SSE_HEARTBEAT;
      }
    }
  } finally {
    unsubscribe?.();
  }
}
