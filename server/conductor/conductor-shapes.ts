import type { TaskExecutionRow, TaskLogRow, WorkflowExecutionRow } from "../../db/schema";

/**
 * node-flow rows in Conductor's JSON shapes: `Task`, `Workflow`,
 * `WorkflowSummary`, `TaskExecLog` — field names, status names and times in
 * epoch milliseconds as Conductor's clients deserialise them (0 for a time
 * not reached yet, as Conductor writes it). Payloads are passed in already
 * resolved from the blob store.
 */

type Json = Record<string, unknown>;

const ms = (date: Date | null | undefined): number => (date === null || date === undefined ? 0 : date.getTime());

/** The workflow fields a Task repeats. */
export interface TaskWorkflowHeader {
  defName: string;
  correlationId: string | null;
  priority: number;
}

/** What a Task needs beyond its row: its place in the workflow and whether a later attempt retried it. */
export interface TaskExtras {
  seq: number;
  retriedTaskId?: string | undefined;
  /**
   * A dynamic-fork instance's own taskReferenceName (the one its fork's task
   * list gave it); node-flow's row ref is `<fork>#<index>`.
   */
  instanceRef?: string | undefined;
}

/**
 * A Conductor `Task`. A worker task's `taskType` is its task definition's name
 * (Conductor polls by it), a system task's its type. A loop body task's
 * `referenceTaskName` carries Conductor's `__<iteration>` suffix.
 */
export function toConductorTask(row: TaskExecutionRow & { input: unknown; output: unknown }, workflow: TaskWorkflowHeader, extras: TaskExtras): Json {
  const scheduled = ms(row.scheduledAt);
  const started = ms(row.startedAt);
  return {
    taskId: row.id,
    taskType: row.taskType === "SIMPLE" ? row.taskDefName : row.taskType,
    status: row.status,
    inputData: row.input ?? {},
    outputData: row.output ?? {},
    referenceTaskName: conductorRef(extras.instanceRef ?? row.refName, row.iteration),
    taskDefName: row.taskDefName,
    retryCount: row.attempt,
    seq: extras.seq,
    pollCount: row.pollCount,
    correlationId: workflow.correlationId,
    workflowInstanceId: row.workflowId,
    workflowType: workflow.defName,
    workflowPriority: workflow.priority,
    scheduledTime: scheduled,
    startTime: started,
    endTime: ms(row.endedAt),
    updateTime: ms(row.updatedAt),
    firstStartTime: started,
    queueWaitTime: started > 0 ? Math.max(0, started - scheduled) : 0,
    startDelayInSeconds: 0,
    retried: extras.retriedTaskId !== undefined,
    retriedTaskId: extras.retriedTaskId ?? null,
    // Conductor's "the decider has reacted to this terminal task": node-flow's watermark column.
    executed: row.deciderSeenAt !== null,
    callbackFromWorker: true,
    callbackAfterSeconds: row.callbackAfterSeconds,
    responseTimeoutSeconds: row.responseTimeoutSeconds ?? 0,
    reasonForIncompletion: row.reasonForIncompletion,
    workerId: row.workerId,
    domain: row.domain,
    iteration: row.iteration,
    loopOverTask: row.iteration > 0,
    subWorkflowId: row.subWorkflowId,
    subworkflowChanged: false,
    rateLimitPerFrequency: 0,
    rateLimitFrequencyInSeconds: 0,
    workflowTask: { name: row.taskDefName, taskReferenceName: row.refName, type: row.taskType },
  };
}

/** Conductor's name for a task in a loop body: `<ref>__<iteration>`. */
export function conductorRef(ref: string, iteration: number): string {
  return iteration > 0 ? `${ref}__${iteration}` : ref;
}

/** The labels a dynamic fork gave its instances, by index (its input's `forkedTasks`), or undefined. */
export function forkedTaskLabels(forkInput: unknown): string[] | undefined {
  const labels = (forkInput as { forkedTasks?: unknown } | null)?.forkedTasks;
  return Array.isArray(labels) && labels.every((l) => typeof l === "string") ? labels : undefined;
}

/** A Conductor `Workflow`; `tasks` only when asked for (includeTasks). */
export function toConductorWorkflow(row: Omit<WorkflowExecutionRow, "variables"> & { variables?: unknown; input: unknown; output: unknown }, tasks?: Json[]): Json {
  return {
    workflowId: row.id,
    workflowName: row.defName,
    workflowVersion: row.defVersion,
    status: row.status,
    correlationId: row.correlationId,
    input: row.input ?? {},
    output: row.output ?? {},
    variables: row.variables ?? {},
    priority: row.priority,
    createTime: ms(row.startedAt),
    startTime: ms(row.startedAt),
    updateTime: ms(row.updatedAt),
    endTime: ms(row.endedAt),
    reasonForIncompletion: row.reasonForIncompletion,
    failedReferenceTaskNames: row.failedTaskRef === null ? [] : [row.failedTaskRef],
    failedTaskNames: [],
    parentWorkflowId: row.parentWorkflowId,
    parentWorkflowTaskId: row.parentTaskId,
    idempotencyKey: row.idempotencyKey,
    createdBy: row.createdBy,
    ownerApp: null,
    event: null,
    taskToDomain: {},
    lastRetriedTime: 0,
    tasks: tasks ?? [],
  };
}

/** Conductor's `WorkflowSummary` (search results): times as ISO-8601 strings and input/output as JSON text, as Conductor serialises them. */
export function toConductorWorkflowSummary(row: Omit<WorkflowExecutionRow, "variables"> & { input: unknown; output: unknown }): Json {
  const ended = row.endedAt;
  return {
    workflowId: row.id,
    workflowType: row.defName,
    version: row.defVersion,
    status: row.status,
    correlationId: row.correlationId,
    startTime: row.startedAt.toISOString(),
    updateTime: row.updatedAt.toISOString(),
    endTime: ended === null ? "" : ended.toISOString(),
    executionTime: ended === null ? 0 : ended.getTime() - row.startedAt.getTime(),
    input: JSON.stringify(row.input ?? {}),
    output: JSON.stringify(row.output ?? {}),
    reasonForIncompletion: row.reasonForIncompletion,
    failedReferenceTaskNames: row.failedTaskRef ?? "",
    failedTaskNames: [],
    priority: row.priority,
    createdBy: row.createdBy,
    idempotencyKey: row.idempotencyKey,
    event: null,
  };
}

/** Conductor's `TaskExecLog`. */
export function toConductorTaskLog(row: TaskLogRow): Json {
  return { log: row.line, taskId: row.taskId, createdTime: ms(row.at) };
}
