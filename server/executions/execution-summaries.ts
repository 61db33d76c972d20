import type { ExecutionSummaryRow, TaskSummaryRow } from "../store/execution-views";

/**
 * The shapes the execution list, the execution page and their live streams
 * share, built from rows. Dates stay Dates here: the tRPC output schemas and
 * JSON.stringify (the SSE streams) both render them as ISO strings.
 */

export interface ExecutionSummary {
  id: string;
  workflow: string;
  version: number;
  status: ExecutionSummaryRow["status"];
  correlationId: string | null;
  startedAt: Date;
  endedAt: Date | null;
  /** endedAt − startedAt; null while the run has not ended (the page counts it up itself). */
  durationMs: number | null;
  parentWorkflowId: string | null;
  reasonForIncompletion: string | null;
}

export function toExecutionSummary(
  row: Pick<ExecutionSummaryRow, "id" | "defName" | "defVersion" | "status" | "correlationId" | "startedAt" | "endedAt" | "parentWorkflowId" | "reasonForIncompletion">,
): ExecutionSummary {
  return {
    id: row.id,
    workflow: row.defName,
    version: row.defVersion,
    status: row.status,
    correlationId: row.correlationId,
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    durationMs: row.endedAt === null ? null : Math.max(0, row.endedAt.getTime() - row.startedAt.getTime()),
    parentWorkflowId: row.parentWorkflowId,
    reasonForIncompletion: row.reasonForIncompletion,
  };
}

export interface TaskSummary {
  id: string;
  ref: string;
  type: string;
  iteration: number;
  attempt: number;
  status: TaskSummaryRow["status"];
  scheduledAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  workerId: string | null;
  pollCount: number;
  reasonForIncompletion: string | null;
  subWorkflowId: string | null;
  /** The DO_WHILE or FORK_JOIN_DYNAMIC container the row runs under, if any. */
  parentRef: string | null;
  /** A dynamic fork instance's index. */
  forkIndex: number | null;
}

export function toTaskSummary(row: TaskSummaryRow): TaskSummary {
  return {
    id: row.id,
    ref: row.refName,
    type: row.taskType,
    iteration: row.iteration,
    attempt: row.attempt,
    status: row.status,
    scheduledAt: row.scheduledAt,
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    workerId: row.workerId,
    pollCount: row.pollCount,
    reasonForIncompletion: row.reasonForIncompletion,
    subWorkflowId: row.subWorkflowId,
    parentRef: row.parentRef,
    forkIndex: row.forkIndex,
  };
}

/**
 * `value` when its JSON is at most `limitBytes` (UTF-8), else null and
 * truncated: the page loads it on demand through `payload`. An offloaded
 * payload (`ref` set) is over 256 KB by construction and is not even read.
 */
export function capPayload(value: unknown, ref: string | null, limitBytes: number): { value: unknown; truncated: boolean } {
  if (ref !== null) return { value: null, truncated: true };
  const size = Buffer.byteLength(JSON.stringify(value ?? null), "utf8");
  return size <= limitBytes ? { value, truncated: false } : { value: null, truncated: true };
}
