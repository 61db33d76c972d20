import type { TaskStatus, WorkflowDefinition, WorkflowStatus } from "../engine";

/**
 * The wire shapes of REST v1 (`/api/v1/ns/{ns}/…`), as the client sends and
 * receives them. The server's zod schemas (server/rest) are the source of
 * truth and `/api/v1/openapi.json` is generated from them; the SDK cannot
 * import server code, so these mirror them by hand, and the SDK's integration
 * test runs every call against the real routes. Timestamps are ISO 8601
 * strings, as they travel.
 */

/** A JSON object: what task outputs and run inputs must be. */
export type JsonObject = Record<string, unknown>;

/** A task leased by a poll: IN_PROGRESS and held by the polling worker until `leaseExpiresAt`. */
export interface PolledTask<I = JsonObject> {
  taskId: string;
  /** The run it belongs to; every report about the task names it. */
  workflowId: string;
  /** The node's ref in the definition. */
  refName: string;
  taskType: string;
  taskDefName: string;
  /** The queue it was polled from. */
  queue: string;
  /** The DO_WHILE iteration, 0 outside loops. */
  iteration: number;
  /** 0 for the first attempt; each retry is a new task with attempt + 1. */
  attempt: number;
  /** Resolved: an input offloaded to the blob store is read back. */
  input: I;
  /** How often this task has been leased (more than 1: an earlier lease expired). */
  pollCount: number;
  startedAt: string;
  /** Heartbeat before this, or the task goes to another worker. */
  leaseExpiresAt: string;
  /** The heartbeat window the task's definition sets, or null (the poll's `leaseSeconds` applies). */
  responseTimeoutSeconds: number | null;
  timeoutSeconds: number | null;
  /** The task attempt's W3C trace context, when the server exports traces (also on the handler's context). */
  traceparent?: string;
}

/** Body of a poll. */
export interface PollTasksInput {
  /** The queue: a SIMPLE node's task name. */
  queue: string;
  /** Tasks to lease at most, 1 to 100. Default 1. */
  count?: number;
  /** How long to wait for a task, 0 to 30,000 ms; 0 answers at once. Default 0. */
  timeoutMs?: number;
  /** Names this worker; only it can heartbeat and report the tasks it leases. */
  workerId: string;
  /** The lease for tasks whose definition sets no responseTimeoutSeconds. Default 300 (server side). */
  leaseSeconds?: number;
}

/** Identifies a held task: its id and its run's. */
export interface TaskRef {
  taskId: string;
  workflowId: string;
}

/** The answer to a heartbeat. */
export interface HeartbeatResult {
  taskId: string;
  /** How long the lease now runs from the heartbeat. */
  leaseSeconds: number;
}

/** The answer to a release: the task is back in its queue. */
export interface ReleaseResult {
  taskId: string;
  workflowId: string;
}

/** The final status a worker reports. */
export type WorkerReportStatus = "COMPLETED" | "FAILED" | "FAILED_WITH_TERMINAL_ERROR";

/** The answer to a completion or failure report. */
export interface ReportResult<I = JsonObject> {
  taskId: string;
  workflowId: string;
  status: WorkerReportStatus;
  /** With `next` in the report: the tasks leased to this worker with it ([] when none was waiting). */
  next?: PolledTask<I>[];
}

/** Ask a report to lease more tasks of the same queue in its own transaction: a busy worker's next poll, saved. */
export interface ReportNext {
  count: number;
  /** As a poll's `leaseSeconds`. */
  leaseSeconds?: number;
  /** When the queue has nothing for the report's lease, wait up to this long for a task as a poll would (0, the default: answer at once). */
  timeoutMs?: number;
}

/** A page of a task's log. */
export interface TaskLogPage {
  items: { id: number; at: string; line: string }[];
  /** Pass as `after` for the next page; null when this page was not full. */
  nextAfter: number | null;
}

/** A saved definition version. */
export interface RegisteredDefinition {
  id: string;
  name: string;
  version: number;
}

/** A definition problem as the validation answer lists it. */
export interface DefinitionProblem {
  pointer: string;
  message: string;
  code?: string;
  ref?: string;
}

/** The answer to a validation. */
export interface DefinitionValidation {
  valid: boolean;
  problems: DefinitionProblem[];
}

/** One stored version of a definition. */
export interface DefinitionVersion {
  id: string;
  name: string;
  version: number;
  description: string | null;
  createdAt: string;
  createdBy: string | null;
  archivedAt: string | null;
  definition: WorkflowDefinition;
}

/**
 * A definition to save: the engine's graph form. Typed loosely on purpose (any
 * JSON object is sent), since the server checks it in full and answers every
 * problem at once; use {@link WorkflowDefinition} for the precise shape.
 */
export type DefinitionInput = WorkflowDefinition | JsonObject;

/** What the Idempotency-Key does when it already names a run. */
export type IdempotencyStrategy = "RETURN_EXISTING" | "FAIL" | "FAIL_ON_RUNNING";

/** Body of a start. */
export interface StartRunInput {
  /** The definition's name. */
  name: string;
  /** The latest unarchived version when absent. */
  version?: number;
  input?: JsonObject;
  correlationId?: string | null;
  /** 0 to 99. */
  priority?: number;
}

/** The answer to a start: the run, and whether this call created it (false: the key named an existing one). */
export interface StartedRun {
  id: string;
  created: boolean;
}

/** A run without its payloads, as searches list it. */
export interface RunSummary {
  id: string;
  workflowName: string;
  workflowVersion: number;
  status: WorkflowStatus;
  correlationId: string | null;
  idempotencyKey: string | null;
  priority: number;
  parentWorkflowId: string | null;
  parentTaskId: string | null;
  startedAt: string;
  endedAt: string | null;
  updatedAt: string;
  reasonForIncompletion: string | null;
  failedTaskRef: string | null;
  createdBy: string | null;
}

/** A task of a run. */
export interface RunTask {
  id: string;
  workflowId: string;
  refName: string;
  iteration: number;
  attempt: number;
  taskType: string;
  taskDefName: string;
  queueName: string | null;
  status: TaskStatus;
  input: unknown;
  output: unknown;
  workerId: string | null;
  pollCount: number;
  scheduledAt: string;
  startedAt: string | null;
  endedAt: string | null;
  updatedAt: string;
  reasonForIncompletion: string | null;
  callbackAfterSeconds: number;
  responseTimeoutSeconds: number | null;
  timeoutSeconds: number | null;
  parentRef: string | null;
  forkIndex: number | null;
  subWorkflowId: string | null;
}

/** A page of items and the cursor of the next one. */
export interface Page<T> {
  items: T[];
  /** Pass as the cursor for the next page; null on the last. */
  nextCursor: string | null;
}

/** A run with its payloads and a page of its tasks, in the order they were scheduled. */
export interface Run extends RunSummary {
  input: unknown;
  output: unknown;
  variables: unknown;
  tasks: Page<RunTask>;
}

/** Filters of a run search; every one optional, and they combine. */
export interface SearchRunsQuery {
  status?: WorkflowStatus;
  /** The definition's name. */
  workflow?: string;
  correlationId?: string;
  /** Runs started at or after this instant (ISO 8601). */
  startedFrom?: string;
  /** Runs started before this instant (ISO 8601). */
  startedBefore?: string;
  /** 1 to 100; 20 by default. */
  limit?: number;
  cursor?: string;
}

/** The answer to an operator action on a run. */
export interface RunActionResult {
  id: string;
  /** The run's status after the action. */
  status: WorkflowStatus;
}

/** The answer to an action on one task of a run. */
export interface RunTaskActionResult {
  id: string;
  taskId: string;
  ref: string;
  /** The task's status after the action. */
  status: TaskStatus;
}

/** A task definition (Conductor's TaskDef) as stored. */
export interface TaskDefinition {
  name: string;
  description: string | null;
  ownerEmail: string | null;
  retryCount: number;
  retryLogic: "FIXED" | "LINEAR_BACKOFF" | "EXPONENTIAL_BACKOFF";
  retryDelaySeconds: number;
  backoffScaleFactor: number;
  timeoutPolicy: "RETRY" | "TIME_OUT_WF" | "ALERT_ONLY";
  timeoutSeconds: number;
  totalTimeoutSeconds: number;
  responseTimeoutSeconds: number;
  pollTimeoutSeconds: number | null;
  concurrentExecLimit: number | null;
  rateLimitPerFrequency: number | null;
  rateLimitFrequencyInSeconds: number | null;
  semaphoreName: string | null;
  inputKeys: string[];
  outputKeys: string[];
  inputTemplate: JsonObject;
  inputSchema: JsonObject | null;
  outputSchema: JsonObject | null;
  secretOutputFields: string[];
  createdAt: string;
  createdBy: string | null;
  updatedAt: string;
  updatedBy: string | null;
}

/** A task definition to save (PUT replaces: fields left out take Conductor's defaults). */
export type TaskDefinitionInput = Partial<Omit<TaskDefinition, "name" | "createdAt" | "createdBy" | "updatedAt" | "updatedBy">>;
