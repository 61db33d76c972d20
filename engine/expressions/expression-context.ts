/**
 * What a template can read: the workflow and, by reference name, its tasks.
 *
 * The shapes mirror the document Conductor builds for every task input
 * (ParametersUtils.getTaskInputV2 in conductor-oss/conductor): `workflow` holds
 * the run's fields, and each task reference name holds that task's fields.
 */
import type { TaskStatus, WorkflowStatus } from "../statuses";

/** The workflow as templates see it under `${workflow.…}`. */
export interface WorkflowView {
  workflowId: string;
  /** The definition's name; Conductor calls it `workflowType` in expressions. */
  workflowType: string;
  version: number;
  status: WorkflowStatus;
  input: Record<string, unknown>;
  /** The workflow's output so far; `{}` while it runs, as in Conductor. */
  output?: Record<string, unknown>;
  variables: Record<string, unknown>;
  /** Start of the run in epoch milliseconds. It comes in with the state: the engine has no clock. */
  startTime: number;
  correlationId?: string;
  parentWorkflowId?: string;
  parentWorkflowTaskId?: string;
  reasonForIncompletion?: string;
}

/** One task as templates see it under `${ref.…}`. */
export interface TaskView {
  taskId: string;
  /** The reference name as stored; inside a DO_WHILE Conductor suffixes it with `__<iteration>`. */
  referenceTaskName: string;
  taskType: string;
  status: TaskStatus;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  iteration: number;
  retryCount: number;
  reasonForIncompletion?: string;
  taskDefName?: string;
  correlationId?: string;
  workerId?: string;
  pollCount?: number;
  callbackAfterSeconds?: number;
  /** Epoch milliseconds. */
  scheduledTime?: number;
  /** Epoch milliseconds. */
  startTime?: number;
  /** Epoch milliseconds. */
  endTime?: number;
  workflowInstanceId?: string;
}

/**
 * Everything a template may read. There is deliberately no process
 * environment, clock or secret store here: Conductor's environment-variable
 * lookups (`${HOME}`) resolve to null, and `${workflow.secrets.X}` and
 * `${workflow.env.X}` to their placeholders (`***`, the reference's text)
 * unless the dispatcher resolves them (ResolveOptions.dispatch; see
 * dispatch-references.ts).
 */
export interface ExpressionContext {
  workflow: WorkflowView;
  /**
   * The task a reference name denotes, or undefined. A lookup rather than a
   * map because an evaluation loads only the tasks the blueprint says its
   * expressions read (see `referencedRefs`).
   *
   * Conductor's semantics, which the implementation must keep: the latest
   * attempt of the latest iteration; inside a DO_WHILE the name is looked up
   * without its `__<iteration>` suffix (TaskUtils.removeIterationFromTaskRefName).
   * The name `workflow` is never passed: it always means the workflow.
   */
  task(ref: string): TaskView | undefined;
  /**
   * The id of the task whose input is being resolved, if any. Conductor
   * substitutes it for `${CPEWF_TASK_ID}` (EnvUtils.getSystemParametersValue);
   * without it that expression is null.
   */
  taskId?: string;
}

/** The name Conductor substitutes with the id of the task being scheduled (EnvUtils.SystemParameters). */
export const TASK_ID_SYSTEM_PARAMETER = "CPEWF_TASK_ID";

/** The `workflow` object of Conductor's expression document. Absent optional fields read as null there. */
export function workflowDocument(w: WorkflowView): Record<string, unknown> {
  return {
    input: w.input,
    output: w.output ?? {},
    status: w.status,
    workflowId: w.workflowId,
    parentWorkflowId: w.parentWorkflowId ?? null,
    parentWorkflowTaskId: w.parentWorkflowTaskId ?? null,
    workflowType: w.workflowType,
    version: w.version,
    correlationId: w.correlationId ?? null,
    reasonForIncompletion: w.reasonForIncompletion ?? null,
    // Only schema version 2 definitions exist in node-flow (Conductor's V1 resolution is deprecated).
    schemaVersion: 2,
    variables: w.variables,
    // Not in Conductor's document; node-flow adds it because the engine has no other clock to offer.
    startTime: w.startTime,
  };
}

/**
 * A task's object in Conductor's expression document. Absent optional fields
 * read as Conductor's TaskModel defaults: 0 for its primitive counters and
 * times, null for its strings.
 */
export function taskDocument(t: TaskView): Record<string, unknown> {
  return {
    input: t.input,
    output: t.output,
    taskType: t.taskType,
    status: t.status,
    referenceTaskName: t.referenceTaskName,
    retryCount: t.retryCount,
    correlationId: t.correlationId ?? null,
    pollCount: t.pollCount ?? 0,
    taskDefName: t.taskDefName ?? null,
    scheduledTime: t.scheduledTime ?? 0,
    startTime: t.startTime ?? 0,
    endTime: t.endTime ?? 0,
    workflowInstanceId: t.workflowInstanceId ?? null,
    taskId: t.taskId,
    reasonForIncompletion: t.reasonForIncompletion ?? null,
    callbackAfterSeconds: t.callbackAfterSeconds ?? 0,
    workerId: t.workerId ?? null,
    iteration: t.iteration,
  };
}
