import { z } from "zod";
import type { TaskDefinitionRow, TaskExecutionRow, WorkflowExecutionRow } from "../../db/schema";
import { NameSchema, RETRY_LOGICS, TASK_STATUSES, TASK_TIMEOUT_POLICIES, WORKFLOW_STATUSES, WorkflowDefinitionSchema } from "../../engine";
import type { WorkflowExecutionSummary } from "../store/workflow-executions";
import { documentAs } from "./openapi";

/**
 * The wire shapes of the REST API: request schemas and the response DTOs with
 * the mappers from rows. Rows are never sent as they are — a DTO names every
 * field it exposes, so a new column is not published by accident, and dates
 * go out as ISO 8601 strings (what the schema says they are).
 */

export const UuidSchema = z.uuid();
export const TimestampSchema = z.iso.datetime({ offset: true });
const nullableTimestamp = TimestampSchema.nullable();

export function iso(date: Date): string {
  return date.toISOString();
}
export function isoOrNull(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

/** An opaque keyset cursor from a previous page's `nextCursor`. */
export const CursorSchema = z.string().min(1).max(1000).meta({ description: "`nextCursor` of the previous page." });

/** `?limit=` for a page: 1 to `max`, `fallback` when absent. */
export function limitSchema(fallback: number, max: number) {
  return z.coerce.number().int().min(1).max(max).default(fallback).meta({ description: `Page size, 1 to ${max}.` });
}

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last." }) });
}

// ---------------------------------------------------------------------------
// Workflow definitions

/**
 * A definition as submitted: any JSON object here, checked in full by
 * validateDefinition in the handler (every problem at once, each with its path
 * and node ref, answered as a 400 naming each field). Documented as the
 * engine's WorkflowDefinitionSchema, which is what that check applies.
 */
export const WorkflowDefinitionBodySchema = documentAs(z.record(z.string(), z.unknown()), "WorkflowDefinition", WorkflowDefinitionSchema);

export const WorkflowDefinitionSummarySchema = z.object({
  id: UuidSchema,
  name: z.string(),
  latestVersion: z.int(),
  versionCount: z.int(),
  description: z.string().nullable(),
  updatedAt: TimestampSchema,
});

export const WorkflowDefinitionVersionSchema = z.object({
  id: UuidSchema,
  name: z.string(),
  version: z.int(),
  description: z.string().nullable(),
  createdAt: TimestampSchema,
  createdBy: z.string().nullable(),
  archivedAt: nullableTimestamp,
  definition: WorkflowDefinitionBodySchema,
});

// ---------------------------------------------------------------------------
// Task definitions

const nonNegativeInt = z.int().min(0);

/** Conductor's TaskDef without its name (the path names it). Fields left out take Conductor's defaults: PUT replaces. */
export const TaskDefinitionBodySchema = z.strictObject({
  description: z.string().max(5000).nullable().optional(),
  ownerEmail: z.string().max(320).nullable().optional(),
  retryCount: nonNegativeInt.max(1000).optional(),
  retryLogic: z.enum(RETRY_LOGICS).optional(),
  retryDelaySeconds: nonNegativeInt.optional(),
  backoffScaleFactor: z.int().min(1).optional(),
  timeoutPolicy: z.enum(TASK_TIMEOUT_POLICIES).optional(),
  timeoutSeconds: nonNegativeInt.optional().meta({ description: "0: no limit." }),
  totalTimeoutSeconds: nonNegativeInt.optional().meta({ description: "0: no limit." }),
  responseTimeoutSeconds: z.int().min(1).optional().meta({ description: "The heartbeat window: a worker silent for longer loses the task." }),
  pollTimeoutSeconds: nonNegativeInt.nullable().optional(),
  concurrentExecLimit: nonNegativeInt.nullable().optional().meta({ description: "Tasks of this queue held by workers at once; 0 or null: unlimited." }),
  rateLimitPerFrequency: nonNegativeInt.nullable().optional(),
  rateLimitFrequencyInSeconds: z.int().min(1).nullable().optional(),
  semaphoreName: NameSchema.nullable().optional(),
  inputKeys: z.array(z.string().max(400)).max(1000).optional(),
  outputKeys: z.array(z.string().max(400)).max(1000).optional(),
  inputTemplate: z.record(z.string(), z.unknown()).optional(),
  inputSchema: z.record(z.string(), z.unknown()).nullable().optional(),
  outputSchema: z.record(z.string(), z.unknown()).nullable().optional(),
  secretOutputFields: z.array(z.string().max(400)).max(1000).optional(),
  allowSecrets: z
    .boolean()
    .optional()
    .meta({ description: "Hand this queue's workers `${workflow.secrets.NAME}` resolved in their task input; without it they read `***`. Default false." }),
});

export const TaskDefinitionSchema = z.object({
  name: z.string(),
  description: z.string().nullable(),
  ownerEmail: z.string().nullable(),
  retryCount: z.int(),
  retryLogic: z.enum(RETRY_LOGICS),
  retryDelaySeconds: z.int(),
  backoffScaleFactor: z.number(),
  timeoutPolicy: z.enum(TASK_TIMEOUT_POLICIES),
  timeoutSeconds: z.int(),
  totalTimeoutSeconds: z.int(),
  responseTimeoutSeconds: z.int(),
  pollTimeoutSeconds: z.int().nullable(),
  concurrentExecLimit: z.int().nullable(),
  rateLimitPerFrequency: z.int().nullable(),
  rateLimitFrequencyInSeconds: z.int().nullable(),
  semaphoreName: z.string().nullable(),
  inputKeys: z.array(z.string()),
  outputKeys: z.array(z.string()),
  inputTemplate: z.record(z.string(), z.unknown()),
  inputSchema: z.record(z.string(), z.unknown()).nullable(),
  outputSchema: z.record(z.string(), z.unknown()).nullable(),
  secretOutputFields: z.array(z.string()),
  allowSecrets: z.boolean(),
  createdAt: TimestampSchema,
  createdBy: z.string().nullable(),
  updatedAt: TimestampSchema,
  updatedBy: z.string().nullable(),
});
export type TaskDefinitionDto = z.input<typeof TaskDefinitionSchema>;

function objectOr<T>(value: unknown, fallback: T): Record<string, unknown> | T {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : fallback;
}

export function toTaskDefinitionDto(row: TaskDefinitionRow): TaskDefinitionDto {
  return {
    name: row.name,
    description: row.description,
    ownerEmail: row.ownerEmail,
    retryCount: row.retryCount,
    retryLogic: row.retryLogic,
    retryDelaySeconds: row.retryDelaySeconds,
    backoffScaleFactor: Number(row.backoffScaleFactor),
    timeoutPolicy: row.timeoutPolicy,
    timeoutSeconds: row.timeoutSeconds,
    totalTimeoutSeconds: row.totalTimeoutSeconds,
    responseTimeoutSeconds: row.responseTimeoutSeconds,
    pollTimeoutSeconds: row.pollTimeoutSeconds,
    concurrentExecLimit: row.concurrentExecLimit,
    rateLimitPerFrequency: row.rateLimitPerFrequency,
    rateLimitFrequencyInSeconds: row.rateLimitFrequencyInSeconds,
    semaphoreName: row.semaphoreName,
    inputKeys: row.inputKeys,
    outputKeys: row.outputKeys,
    inputTemplate: objectOr(row.inputTemplate, {}),
    inputSchema: objectOr(row.inputSchema, null),
    outputSchema: objectOr(row.outputSchema, null),
    secretOutputFields: row.secretOutputFields,
    allowSecrets: row.allowSecrets,
    createdAt: iso(row.createdAt),
    createdBy: row.createdBy,
    updatedAt: iso(row.updatedAt),
    updatedBy: row.updatedBy,
  };
}

// ---------------------------------------------------------------------------
// Runs

const runFields = {
  id: UuidSchema,
  workflowName: z.string(),
  workflowVersion: z.int(),
  status: z.enum(WORKFLOW_STATUSES),
  correlationId: z.string().nullable(),
  idempotencyKey: z.string().nullable(),
  priority: z.int(),
  parentWorkflowId: UuidSchema.nullable(),
  parentTaskId: UuidSchema.nullable(),
  startedAt: TimestampSchema,
  endedAt: nullableTimestamp,
  updatedAt: TimestampSchema,
  reasonForIncompletion: z.string().nullable(),
  failedTaskRef: z.string().nullable(),
  createdBy: z.string().nullable(),
};

export const RunSummarySchema = z.object(runFields);
export type RunSummaryDto = z.input<typeof RunSummarySchema>;

export const RunSchema = z.object({
  ...runFields,
  input: z.unknown().meta({ description: "Resolved: an input offloaded to the blob store is read back." }),
  output: z.unknown().meta({ description: "Resolved, like input." }),
  variables: z.unknown(),
});
export type RunDto = z.input<typeof RunSchema>;

export function toRunSummaryDto(row: WorkflowExecutionSummary): RunSummaryDto {
  return {
    id: row.id,
    workflowName: row.defName,
    workflowVersion: row.defVersion,
    status: row.status,
    correlationId: row.correlationId,
    idempotencyKey: row.idempotencyKey,
    priority: row.priority,
    parentWorkflowId: row.parentWorkflowId,
    parentTaskId: row.parentTaskId,
    startedAt: iso(row.startedAt),
    endedAt: isoOrNull(row.endedAt),
    updatedAt: iso(row.updatedAt),
    reasonForIncompletion: row.reasonForIncompletion,
    failedTaskRef: row.failedTaskRef,
    createdBy: row.createdBy,
  };
}

/** `row` with its payloads already resolved. */
export function toRunDto(row: WorkflowExecutionRow): RunDto {
  return { ...toRunSummaryDto(row), input: row.input, output: row.output, variables: row.variables };
}

export const TaskSchema = z.object({
  id: UuidSchema,
  workflowId: UuidSchema,
  refName: z.string(),
  iteration: z.int(),
  attempt: z.int(),
  taskType: z.string(),
  taskDefName: z.string(),
  queueName: z.string().nullable(),
  status: z.enum(TASK_STATUSES),
  input: z.unknown().meta({ description: "Resolved: an input offloaded to the blob store is read back." }),
  output: z.unknown().meta({ description: "Resolved, like input." }),
  workerId: z.string().nullable(),
  pollCount: z.int(),
  scheduledAt: TimestampSchema,
  startedAt: nullableTimestamp,
  endedAt: nullableTimestamp,
  updatedAt: TimestampSchema,
  reasonForIncompletion: z.string().nullable(),
  callbackAfterSeconds: z.int(),
  responseTimeoutSeconds: z.int().nullable(),
  timeoutSeconds: z.int().nullable(),
  parentRef: z.string().nullable(),
  forkIndex: z.int().nullable(),
  subWorkflowId: UuidSchema.nullable(),
});
export type TaskDto = z.input<typeof TaskSchema>;

/** `row` with its payloads already resolved. */
export function toTaskDto(row: TaskExecutionRow): TaskDto {
  return {
    id: row.id,
    workflowId: row.workflowId,
    refName: row.refName,
    iteration: row.iteration,
    attempt: row.attempt,
    taskType: row.taskType,
    taskDefName: row.taskDefName,
    queueName: row.queueName,
    status: row.status,
    input: row.input,
    output: row.output,
    workerId: row.workerId,
    pollCount: row.pollCount,
    scheduledAt: iso(row.scheduledAt),
    startedAt: isoOrNull(row.startedAt),
    endedAt: isoOrNull(row.endedAt),
    updatedAt: iso(row.updatedAt),
    reasonForIncompletion: row.reasonForIncompletion,
    callbackAfterSeconds: row.callbackAfterSeconds,
    responseTimeoutSeconds: row.responseTimeoutSeconds,
    timeoutSeconds: row.timeoutSeconds,
    parentRef: row.parentRef,
    forkIndex: row.forkIndex,
    subWorkflowId: row.subWorkflowId,
  };
}
