import type { Db } from "../../db/pool";
import type { WorkflowStatus } from "../../db/schema";
import type { BlobStore } from "../lib/blob-store";
import { registerWorkflowDefinition } from "../definitions/register-workflow-definition";
import { startExecution } from "../executions/start-execution";
import { waitUntil } from "./wait-until";

/** Registers `definition` (validated and compiled like any other) and returns its name. */
export async function registerDefinition(db: Db, namespaceId: string, definition: Record<string, unknown>): Promise<string> {
  const registered = await registerWorkflowDefinition(db, { namespaceId, definition });
  if (!registered.ok) throw new Error(`test definition refused: ${JSON.stringify(registered)}`);
  return registered.name;
}

/**
 * Starts `count` executions of `name` the way the API does (a row and a queued
 * decide, nothing evaluated), four at a time, and returns their ids in index
 * order. Input `{ index }` unless `input` says otherwise.
 */
export async function startRuns(
  deps: { db: Db; blobs: BlobStore },
  input: { namespaceId: string; name: string; count: number; input?: (index: number) => unknown },
): Promise<string[]> {
  const ids = new Array<string>(input.count);
  let next = 0;
  const starter = async () => {
    for (let i = next++; i < input.count; i = next++) {
      const started = await startExecution(deps, { namespaceId: input.namespaceId, name: input.name, input: input.input?.(i) ?? { index: i } });
      if (!started.ok) throw new Error(`start failed: ${JSON.stringify(started)}`);
      ids[i] = started.workflowId;
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, input.count) }, starter));
  return ids;
}

/** How many of `ids` are in each status. */
export async function statusCounts(db: Db, ids: readonly string[]): Promise<Partial<Record<WorkflowStatus, number>>> {
  const rows = await db
    .selectFrom("WorkflowExecutions")
    .select(["status", (eb) => eb.fn.countAll<number>().as("count")])
    .where("id", "in", [...ids])
    .groupBy("status")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.count)]));
}

/** Polls until every one of `ids` has left RUNNING; throws with the status counts (and `context`) at the deadline. */
export async function waitForWorkflowsToEnd(db: Db, ids: readonly string[], options: { timeoutMs: number; context?: () => Promise<string> | string }): Promise<void> {
  await waitUntil(async () => ((await statusCounts(db, ids)).RUNNING ?? 0) === 0, {
    what: `${ids.length} workflows to end`,
    timeoutMs: options.timeoutMs,
    describe: async () => `${JSON.stringify(await statusCounts(db, ids))}${options.context ? `\n${await options.context()}` : ""}`,
  });
}

/**
 * What is wrong with the recorded history of `ids`, ended workflows all — an
 * empty list when nothing is:
 * - WorkflowEvents "seq" is 1..n with no gap or repeat, starts with
 *   WORKFLOW_STARTED and ends with the one workflow-end event;
 * - no task identity (workflowId, refName, iteration, attempt) has two rows
 *   (the unique index should make this impossible; checked so a dropped index
 *   cannot pass silently);
 * - every queued task has exactly one TASK_SCHEDULED event, and no identity was
 *   announced as scheduled twice (an evaluation that ran twice and did not see
 *   its own first run would show here even though ON CONFLICT absorbed the row);
 * - no queue row is left behind.
 */
export async function historyProblems(db: Db, ids: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  const events = await db
    .selectFrom("WorkflowEvents")
    .select(["workflowId", "seq", "type", "taskId", "refName", "data"])
    .where("workflowId", "in", [...ids])
    .orderBy("workflowId")
    .orderBy("seq")
    .execute();
  const tasks = await db
    .selectFrom("TaskExecutions")
    .select(["workflowId", "id", "refName", "iteration", "attempt", "queueName"])
    .where("workflowId", "in", [...ids])
    .execute();

  const eventsOf = groupBy(events, (e) => e.workflowId);
  for (const id of ids) {
    const history = eventsOf.get(id) ?? [];
    const seqs = history.map((e) => Number(e.seq));
    if (seqs.some((seq, i) => seq !== i + 1)) problems.push(`${id}: seq is not 1..${seqs.length}: ${seqs.join(",")}`);
    if (history[0]?.type !== "WORKFLOW_STARTED") problems.push(`${id}: the first event is ${history[0]?.type}, not WORKFLOW_STARTED`);
    const ends = history.filter((e) => /^WORKFLOW_(COMPLETED|FAILED|TERMINATED|TIMED_OUT)$/.test(e.type));
    if (ends.length !== 1 || history.at(-1) !== ends[0]) problems.push(`${id}: ${ends.length} workflow-end events, last event ${history.at(-1)?.type}`);
  }

  for (const [key, rows] of groupBy(tasks, (t) => identity(t.workflowId, t.refName, t.iteration, t.attempt))) {
    if (rows.length > 1) problems.push(`${key}: ${rows.length} TaskExecutions rows for one identity`);
  }
  const scheduled = events.filter((e) => e.type === "TASK_SCHEDULED");
  for (const [key, rows] of groupBy(scheduled, (e) => {
    const data = e.data as { iteration?: number; attempt?: number };
    return identity(e.workflowId, e.refName ?? "", data.iteration ?? -1, data.attempt ?? -1);
  })) {
    if (rows.length > 1) problems.push(`${key}: TASK_SCHEDULED ${rows.length} times`);
  }
  const scheduledByTask = groupBy(scheduled, (e) => e.taskId ?? "");
  for (const task of tasks) {
    if (task.queueName === null) continue;
    const count = scheduledByTask.get(task.id)?.length ?? 0;
    if (count !== 1) problems.push(`${identity(task.workflowId, task.refName, task.iteration, task.attempt)}: ${count} TASK_SCHEDULED events for task ${task.id}`);
  }

  const queued = await db.selectFrom("TaskQueues").select(["workflowId", "taskId"]).where("workflowId", "in", [...ids]).execute();
  for (const row of queued) problems.push(`${row.workflowId}: task ${row.taskId} still queued`);
  return problems;
}

function identity(workflowId: string, ref: string, iteration: number, attempt: number): string {
  return `${workflowId}/${ref}[${iteration}.${attempt}]`;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
