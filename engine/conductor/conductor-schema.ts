import { z } from "zod";

/**
 * Netflix Conductor's metadata JSON — `WorkflowDef`, `WorkflowTask`,
 * `TaskDef` — as zod schemas, field for field after conductor-oss
 * (`common/metadata/workflow/WorkflowDef.java`, `WorkflowTask.java`,
 * `tasks/TaskDef.java`, `SubWorkflowParams.java`, `CacheConfig.java`).
 *
 * Permissive on purpose: Conductor clients send every field, often as `null`
 * (Jackson writes nulls), plus audit fields (`createTime`, `updatedBy`, …) and
 * fields of newer or vendor releases. Every known field is type-checked and
 * accepts `null` as "absent"; unknown fields pass through (`looseObject`) and
 * the importer never reads them, so they stay out of the graph.
 */

const int = (min = 0) => z.number().int().min(min);
const JsonObjectSchema = z.record(z.string(), z.unknown());

/** Conductor's built-in task types (`TaskType.java`) plus the newer system tasks node-flow maps. */
export const CONDUCTOR_TASK_TYPES = [
  "SIMPLE",
  "DYNAMIC",
  "FORK_JOIN",
  "FORK_JOIN_DYNAMIC",
  "DECISION",
  "SWITCH",
  "JOIN",
  "DO_WHILE",
  "SUB_WORKFLOW",
  "START_WORKFLOW",
  "EVENT",
  "WAIT",
  "HUMAN",
  "HTTP",
  "HTTP_POLL",
  "JDBC",
  "LIST_MCP_TOOLS",
  "CALL_MCP_TOOL",
  "LLM_CHAT_COMPLETE",
  "LLM_TEXT_COMPLETE",
  "LLM_GENERATE_EMBEDDINGS",
  "LLM_INDEX_TEXT",
  "LLM_SEARCH_INDEX",
  // node-flow's own: Conductor compiles its agents to workflows, so this is what node-flow's export writes.
  "AGENT",
  "USER_TASK",
  "LAMBDA",
  "INLINE",
  "EXCLUSIVE_JOIN",
  "TERMINATE",
  "JSON_JQ_TRANSFORM",
  "SET_VARIABLE",
  "NOOP",
] as const;

/**
 * Task types Conductor has that node-flow refuses at registration, each with
 * why and what it would take. Any other unknown type is refused as unknown.
 */
export const CONDUCTOR_REFUSED_TASK_TYPES: Readonly<Record<string, string>> = Object.freeze({
  KAFKA_PUBLISH:
    "node-flow has no Kafka broker configured, so a KAFKA_PUBLISH would never deliver. Publish from a worker task (SIMPLE) that holds the producer, or use an EVENT task to reach node-flow's event handlers",
  BLOCKING_SYSTEM_TASK: "it is a stub of Conductor's own test harness (it blocks on a latch the test releases) and has no meaning outside it",
  CONTROLLABLE_SYS_TASK: "it is a stub of Conductor's own test harness (its outcome is set by the test through latches) and has no meaning outside it",
});

/** A task type the importer understands. Anything else (KAFKA_PUBLISH, …) is refused by name. */
export type ConductorTaskType = (typeof CONDUCTOR_TASK_TYPES)[number];

/** `TaskDef.RetryLogic`. */
export const CONDUCTOR_RETRY_LOGICS = ["FIXED", "LINEAR_BACKOFF", "EXPONENTIAL_BACKOFF"] as const;
/** `TaskDef.TimeoutPolicy`. */
export const CONDUCTOR_TASK_TIMEOUT_POLICIES = ["RETRY", "TIME_OUT_WF", "ALERT_ONLY"] as const;
/** `WorkflowDef.TimeoutPolicy`. */
export const CONDUCTOR_WORKFLOW_TIMEOUT_POLICIES = ["TIME_OUT_WF", "ALERT_ONLY"] as const;

/** A Conductor `TaskDef`: a task type's retry, timeout and rate-limit policy (registered, or inline on a WorkflowTask). */
export interface ConductorTaskDef {
  name?: string | null;
  description?: string | null;
  retryCount?: number | null;
  retryLogic?: (typeof CONDUCTOR_RETRY_LOGICS)[number] | null;
  retryDelaySeconds?: number | null;
  backoffScaleFactor?: number | null;
  maxRetryDelaySeconds?: number | null;
  timeoutSeconds?: number | null;
  timeoutPolicy?: (typeof CONDUCTOR_TASK_TIMEOUT_POLICIES)[number] | null;
  responseTimeoutSeconds?: number | null;
  pollTimeoutSeconds?: number | null;
  totalTimeoutSeconds?: number | null;
  rateLimitPerFrequency?: number | null;
  rateLimitFrequencyInSeconds?: number | null;
  concurrentExecLimit?: number | null;
  inputKeys?: string[] | null;
  outputKeys?: string[] | null;
  inputTemplate?: Record<string, unknown> | null;
  ownerEmail?: string | null;
  isolationGroupId?: string | null;
  executionNameSpace?: string | null;
  backoffJitterMs?: number | null;
}

/** Zod schema of {@link ConductorTaskDef}. */
export const ConductorTaskDefSchema: z.ZodType<ConductorTaskDef> = z.looseObject({
  name: z.string().nullish(),
  description: z.string().nullish(),
  retryCount: int().nullish(),
  retryLogic: z.enum(CONDUCTOR_RETRY_LOGICS).nullish(),
  retryDelaySeconds: int().nullish(),
  backoffScaleFactor: int(1).nullish(),
  maxRetryDelaySeconds: int().nullish(),
  timeoutSeconds: int().nullish(),
  timeoutPolicy: z.enum(CONDUCTOR_TASK_TIMEOUT_POLICIES).nullish(),
  responseTimeoutSeconds: int(1).nullish(),
  pollTimeoutSeconds: int().nullish(),
  totalTimeoutSeconds: int().nullish(),
  rateLimitPerFrequency: int().nullish(),
  rateLimitFrequencyInSeconds: int().nullish(),
  concurrentExecLimit: int().nullish(),
  inputKeys: z.array(z.string()).nullish(),
  outputKeys: z.array(z.string()).nullish(),
  inputTemplate: JsonObjectSchema.nullish(),
  ownerEmail: z.string().nullish(),
  isolationGroupId: z.string().nullish(),
  executionNameSpace: z.string().nullish(),
  backoffJitterMs: int().nullish(),
});

/** `CacheConfig`: a task's output is reused for the same key for `ttlInSecond`. */
export interface ConductorCacheConfig {
  key?: string | null;
  ttlInSecond?: number | null;
}

/** `SubWorkflowParams`: the workflow a SUB_WORKFLOW runs — registered by name (and version), or inline. */
export interface ConductorSubWorkflowParams {
  name?: string | null;
  /** A number, or an expression producing one (Conductor resolves it when the task is scheduled). */
  version?: number | string | null;
  taskToDomain?: Record<string, string> | null;
  /** An inline WorkflowDef. Conductor also accepts an expression string here; node-flow does not. */
  workflowDefinition?: ConductorWorkflowDef | string | null;
}

/**
 * node-flow configuration Conductor has no field for, carried on a
 * WorkflowTask under `nodeFlow` so an export imports back losslessly.
 * Conductor ignores unknown fields, so the key is harmless there.
 */
export interface NodeFlowTaskExtension {
  label?: string | null;
  /** HUMAN */
  assignee?: string | null;
  /** HUMAN */
  form?: Record<string, unknown> | null;
  /** HUMAN */
  outcomes?: string[] | null;
  /** HUMAN */
  dueIn?: string | null;
  /** HUMAN */
  title?: string | null;
  /** HUMAN */
  approvals?: number | null;
  /** HUMAN */
  allowSelfApproval?: boolean | null;
  /** HUMAN */
  escalation?: Record<string, unknown>[] | null;
}

/** A Conductor `WorkflowTask`: one task of a WorkflowDef, possibly holding nested task lists. */
export interface ConductorWorkflowTask {
  name?: string | null;
  taskReferenceName: string;
  description?: string | null;
  /** Defaults to SIMPLE, as in Conductor. */
  type?: string | null;
  inputParameters?: Record<string, unknown> | null;
  optional?: boolean | null;
  startDelay?: number | null;
  retryCount?: number | null;
  asyncComplete?: boolean | null;
  rateLimited?: boolean | null;
  permissive?: boolean | null;
  taskDefinition?: ConductorTaskDef | null;
  cacheConfig?: ConductorCacheConfig | null;
  /** SWITCH */
  evaluatorType?: string | null;
  /** SWITCH */
  expression?: string | null;
  /** SWITCH / DECISION */
  decisionCases?: Record<string, ConductorWorkflowTask[]> | null;
  /** SWITCH / DECISION */
  defaultCase?: ConductorWorkflowTask[] | null;
  /** DECISION (deprecated) */
  caseValueParam?: string | null;
  /** DECISION (deprecated) */
  caseExpression?: string | null;
  /** LAMBDA (deprecated; usually in inputParameters) */
  scriptExpression?: string | null;
  /** FORK_JOIN */
  forkTasks?: ConductorWorkflowTask[][] | null;
  /** JOIN / EXCLUSIVE_JOIN */
  joinOn?: string[] | null;
  /** EXCLUSIVE_JOIN */
  defaultExclusiveJoinTask?: string[] | null;
  /** DO_WHILE */
  loopCondition?: string | null;
  /** DO_WHILE */
  loopOver?: ConductorWorkflowTask[] | null;
  /** DO_WHILE, items form: an array or an expression producing one. */
  items?: unknown;
  /** FORK_JOIN_DYNAMIC */
  dynamicForkTasksParam?: string | null;
  /** FORK_JOIN_DYNAMIC */
  dynamicForkTasksInputParamName?: string | null;
  /** FORK_JOIN_DYNAMIC (deprecated form; not supported) */
  dynamicForkJoinTasksParam?: string | null;
  /** DYNAMIC */
  dynamicTaskNameParam?: string | null;
  /** SUB_WORKFLOW */
  subWorkflowParam?: ConductorSubWorkflowParams | null;
  /** EVENT */
  sink?: string | null;
  onStateChange?: Record<string, unknown> | null;
  joinStatus?: string | null;
  /** node-flow's own configuration (see {@link NodeFlowTaskExtension}). */
  nodeFlow?: NodeFlowTaskExtension | null;
}

/** Conductor's `SchemaDef`, as WorkflowDef's `inputSchema` holds it. */
export interface ConductorSchemaDef {
  name?: string | null;
  version?: number | null;
  type?: string | null;
  data?: Record<string, unknown> | null;
  externalRef?: string | null;
}

/** A Conductor `WorkflowDef`. */
export interface ConductorWorkflowDef {
  name: string;
  description?: string | null;
  version?: number | null;
  tasks: ConductorWorkflowTask[];
  /** Documentation only in Conductor: the names of the inputs the workflow expects. */
  inputParameters?: string[] | null;
  outputParameters?: Record<string, unknown> | null;
  failureWorkflow?: string | null;
  failureWorkflowVersion?: number | null;
  /** Conductor only accepts 2. */
  schemaVersion?: number | null;
  restartable?: boolean | null;
  workflowStatusListenerEnabled?: boolean | null;
  workflowStatusListenerSink?: string | null;
  ownerEmail?: string | null;
  timeoutPolicy?: (typeof CONDUCTOR_WORKFLOW_TIMEOUT_POLICIES)[number] | null;
  timeoutSeconds?: number | null;
  variables?: Record<string, unknown> | null;
  inputTemplate?: Record<string, unknown> | null;
  inputSchema?: ConductorSchemaDef | null;
  outputSchema?: ConductorSchemaDef | null;
  enforceSchema?: boolean | null;
  rateLimitConfig?: Record<string, unknown> | null;
  cacheConfig?: ConductorCacheConfig | null;
  maskedFields?: string[] | null;
  metadata?: Record<string, unknown> | null;
  tags?: { key: string; value: string; type?: string | null }[] | null;
  ownerApp?: string | null;
  createTime?: number | null;
  updateTime?: number | null;
  createdBy?: string | null;
  updatedBy?: string | null;
}

/**
 * The key of a WorkflowDef's `metadata` under which node-flow keeps what
 * Conductor has no field for at the workflow level: `{ notes: WorkflowNote[] }`,
 * the canvas's sticky notes. Conductor keeps `metadata` as given; import reads
 * the notes back, and drops them with a warning when they are not valid notes.
 */
export const NOTES_METADATA_KEY = "nodeFlow";

/** Zod schema of {@link ConductorCacheConfig}. */
export const ConductorCacheConfigSchema: z.ZodType<ConductorCacheConfig> = z.looseObject({
  key: z.string().nullish(),
  ttlInSecond: int().nullish(),
});

/** Zod schema of {@link NodeFlowTaskExtension}: shapes only; the node schema checks the values. */
export const NodeFlowTaskExtensionSchema: z.ZodType<NodeFlowTaskExtension> = z.looseObject({
  label: z.string().nullish(),
  assignee: z.string().nullish(),
  form: JsonObjectSchema.nullish(),
  outcomes: z.array(z.string()).nullish(),
  dueIn: z.string().nullish(),
  title: z.string().nullish(),
  approvals: z.number().nullish(),
  allowSelfApproval: z.boolean().nullish(),
  escalation: z.array(JsonObjectSchema).nullish(),
});

/** Zod schema of {@link ConductorSchemaDef}. */
export const ConductorSchemaDefSchema: z.ZodType<ConductorSchemaDef> = z.looseObject({
  name: z.string().nullish(),
  version: int().nullish(),
  type: z.string().nullish(),
  data: JsonObjectSchema.nullish(),
  externalRef: z.string().nullish(),
});

/** Zod schema of {@link ConductorSubWorkflowParams}. */
export const ConductorSubWorkflowParamsSchema: z.ZodType<ConductorSubWorkflowParams> = z.looseObject({
  name: z.string().nullish(),
  version: z.union([int(), z.string()]).nullish(),
  taskToDomain: z.record(z.string(), z.string()).nullish(),
  get workflowDefinition() {
    return z.union([ConductorWorkflowDefSchema, z.string()]).nullish();
  },
});

/** Zod schema of {@link ConductorWorkflowTask}. */
export const ConductorWorkflowTaskSchema: z.ZodType<ConductorWorkflowTask> = z.looseObject({
  name: z.string().nullish(),
  taskReferenceName: z.string().min(1),
  description: z.string().nullish(),
  type: z.string().nullish(),
  inputParameters: JsonObjectSchema.nullish(),
  optional: z.boolean().nullish(),
  startDelay: int().nullish(),
  retryCount: int().nullish(),
  asyncComplete: z.boolean().nullish(),
  rateLimited: z.boolean().nullish(),
  permissive: z.boolean().nullish(),
  taskDefinition: ConductorTaskDefSchema.nullish(),
  cacheConfig: ConductorCacheConfigSchema.nullish(),
  evaluatorType: z.string().nullish(),
  expression: z.string().nullish(),
  get decisionCases() {
    return z.record(z.string(), z.array(ConductorWorkflowTaskSchema)).nullish();
  },
  get defaultCase() {
    return z.array(ConductorWorkflowTaskSchema).nullish();
  },
  caseValueParam: z.string().nullish(),
  caseExpression: z.string().nullish(),
  scriptExpression: z.string().nullish(),
  get forkTasks() {
    return z.array(z.array(ConductorWorkflowTaskSchema)).nullish();
  },
  joinOn: z.array(z.string()).nullish(),
  defaultExclusiveJoinTask: z.array(z.string()).nullish(),
  loopCondition: z.string().nullish(),
  get loopOver() {
    return z.array(ConductorWorkflowTaskSchema).nullish();
  },
  items: z.unknown().optional(),
  dynamicForkTasksParam: z.string().nullish(),
  dynamicForkTasksInputParamName: z.string().nullish(),
  dynamicForkJoinTasksParam: z.string().nullish(),
  dynamicTaskNameParam: z.string().nullish(),
  subWorkflowParam: ConductorSubWorkflowParamsSchema.nullish(),
  sink: z.string().nullish(),
  onStateChange: JsonObjectSchema.nullish(),
  joinStatus: z.string().nullish(),
  nodeFlow: NodeFlowTaskExtensionSchema.nullish(),
});

/** Zod schema of {@link ConductorWorkflowDef}. */
export const ConductorWorkflowDefSchema: z.ZodType<ConductorWorkflowDef> = z.looseObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  version: int().nullish(),
  tasks: z.array(ConductorWorkflowTaskSchema),
  inputParameters: z.array(z.string()).nullish(),
  outputParameters: JsonObjectSchema.nullish(),
  failureWorkflow: z.string().nullish(),
  failureWorkflowVersion: int().nullish(),
  schemaVersion: int().nullish(),
  restartable: z.boolean().nullish(),
  workflowStatusListenerEnabled: z.boolean().nullish(),
  workflowStatusListenerSink: z.string().nullish(),
  ownerEmail: z.string().nullish(),
  timeoutPolicy: z.enum(CONDUCTOR_WORKFLOW_TIMEOUT_POLICIES).nullish(),
  timeoutSeconds: int().nullish(),
  variables: JsonObjectSchema.nullish(),
  inputTemplate: JsonObjectSchema.nullish(),
  inputSchema: ConductorSchemaDefSchema.nullish(),
  outputSchema: ConductorSchemaDefSchema.nullish(),
  enforceSchema: z.boolean().nullish(),
  rateLimitConfig: JsonObjectSchema.nullish(),
  cacheConfig: ConductorCacheConfigSchema.nullish(),
  maskedFields: z.array(z.string()).nullish(),
  metadata: JsonObjectSchema.nullish(),
  tags: z.array(z.looseObject({ key: z.string(), value: z.string(), type: z.string().nullish() })).nullish(),
  ownerApp: z.string().nullish(),
  createTime: z.number().nullish(),
  updateTime: z.number().nullish(),
  createdBy: z.string().nullish(),
  updatedBy: z.string().nullish(),
});
