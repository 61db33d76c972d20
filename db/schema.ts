import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";
import type { TaskStatus, WorkflowStatus } from "../engine/statuses";

/**
 * The database, as types only: every table created by db/migrations, keyed by
 * its exact (quoted, PascalCase) name, with its exact camelCase columns. No
 * CamelCasePlugin: the columns really are camelCase in Postgres. Drift between
 * this file and the migrations is caught by db/schema-drift.int.test.ts.
 *
 * Typing rules that are not optional (Kysely cannot unwrap `Json | null` or
 * `Generated<Json>`; writes then fail to infer as an unassignable ValueExpression):
 * - JSONB columns read as `unknown` and are written as a serialised string, always
 *   produced by `json()` from ./json, the funnel that strips NUL.
 * - Nullability and defaults of a JSONB column live inside its ColumnType.
 * - `Generated<>` marks defaulted non-JSON columns.
 */

/** JSONB NOT NULL without a default: required on insert. */
export type Json = ColumnType<unknown, string, string>;
/** JSONB NOT NULL DEFAULT …: optional on insert. */
export type JsonDefaulted = ColumnType<unknown, string | undefined, string>;
/** Nullable JSONB. */
// eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- `| null` is redundant to the compiler but tells the reader a read can be null
export type NullableJson = ColumnType<unknown | null, string | null | undefined, string | null>;

/**
 * TIMESTAMPTZ NOT NULL DEFAULT now(). pg reads timestamptz as a Date (millisecond
 * precision: never build a cursor or comparison from it; select the column as
 * text instead). A string write is passed through to Postgres verbatim, which
 * is how microsecond-precise values are written.
 */
export type TimestampDefaulted = ColumnType<Date, Date | string | undefined, Date | string>;
/** TIMESTAMPTZ NOT NULL without a default: required on insert. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** Nullable TIMESTAMPTZ. */
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

// Statuses belong to the engine; the columns store exactly its names.
export type { TaskStatus, WorkflowStatus } from "../engine/statuses";

/** The kinds decide arms and reads back as fired timers (engine/decide/types.ts TimerKind). */
export const ENGINE_TIMER_KINDS = [
  "scheduleToStart",
  "startToClose",
  "taskTimeout",
  "workflowTimeout",
  "wait",
  "retry",
  "startDelay",
] as const;
export type EngineTimerKind = (typeof ENGINE_TIMER_KINDS)[number];
/** Every kind the Timers CHECK allows: the engine's plus a human task's deadline, fired into escalate-human-task, never into decide. */
export const TIMER_KINDS = [...ENGINE_TIMER_KINDS, "humanEscalation"] as const;
export type TimerKind = (typeof TIMER_KINDS)[number];

export type IdempotencyStrategy = "FAIL" | "RETURN_EXISTING" | "FAIL_ON_RUNNING";
export type HumanAssigneeKind = "user" | "group" | "role" | "anyone";
export type HumanTaskStatus = "PENDING" | "CLAIMED" | "COMPLETED" | "CANCELED" | "EXPIRED";
export type AuditActorType = "user" | "serviceAccount" | "apiKey" | "system";
export type RetryLogic = "FIXED" | "EXPONENTIAL_BACKOFF" | "LINEAR_BACKOFF";
export type TimeoutPolicy = "RETRY" | "TIME_OUT_WF" | "ALERT_ONLY";

// ---------------------------------------------------------------------------
// Platform

export interface NamespacesTable {
  id: Generated<string>;
  name: string;
  description: string | null;
  createdAt: TimestampDefaulted;
}

export interface UsersTable {
  id: Generated<string>;
  email: string;
  displayName: string | null;
  passwordHash: string | null;
  isAdmin: Generated<boolean>;
  disabledAt: NullableTimestamp;
  lastLoginAt: NullableTimestamp;
  createdAt: TimestampDefaulted;
  updatedAt: TimestampDefaulted;
}

export interface SessionsTable {
  id: Generated<string>;
  userId: string;
  tokenHash: string;
  createdAt: TimestampDefaulted;
  expiresAt: Timestamp;
  lastSeenAt: NullableTimestamp;
  userAgent: string | null;
  ipAddress: string | null;
}

export interface ServiceAccountsTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  description: string | null;
  disabledAt: NullableTimestamp;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
}

export interface ApiKeysTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  prefix: string;
  keyHash: string;
  scopes: Generated<string[]>;
  userId: string | null;
  serviceAccountId: string | null;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  lastUsedAt: NullableTimestamp;
  expiresAt: NullableTimestamp;
  revokedAt: NullableTimestamp;
}

export interface GroupsTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  description: string | null;
  roles: Generated<string[]>;
  createdAt: TimestampDefaulted;
}

export interface GroupMembersTable {
  groupId: string;
  userId: string;
  addedAt: TimestampDefaulted;
}

/** A role in a namespace; the same names, weakest first, as NAMESPACE_ROLES in server/auth/principal.ts. */
export type MemberRole = "viewer" | "operator" | "editor" | "admin";

/** A user's direct role in one namespace (0008). */
export interface NamespaceMembersTable {
  namespaceId: string;
  userId: string;
  role: MemberRole;
  createdAt: TimestampDefaulted;
}

/** Failed sign-ins per lower-cased email, known or not (0008). */
export interface SignInThrottlesTable {
  email: string;
  failures: number;
  lastFailedAt: TimestampDefaulted;
}

/** Append-only: a trigger refuses UPDATE and DELETE. */
export interface AuditEventsTable {
  id: Generated<string>;
  at: TimestampDefaulted;
  namespaceId: string | null;
  actorType: AuditActorType;
  actorId: string | null;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  details: JsonDefaulted;
  ipAddress: string | null;
}

/** Immutable per (namespaceId, name, version): a trigger refuses changes to graph, blueprint, name, version, namespaceId. */
export interface WorkflowDefinitionsTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  version: number;
  description: string | null;
  graph: Json;
  blueprint: Json;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  archivedAt: NullableTimestamp;
  /** The optional save message of this version (0009). */
  message: string | null;
}

export interface TaskDefinitionsTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  description: string | null;
  ownerEmail: string | null;
  retryCount: Generated<number>;
  retryLogic: Generated<RetryLogic>;
  retryDelaySeconds: Generated<number>;
  backoffScaleFactor: Generated<number>;
  timeoutPolicy: Generated<TimeoutPolicy>;
  timeoutSeconds: Generated<number>;
  totalTimeoutSeconds: Generated<number>;
  responseTimeoutSeconds: Generated<number>;
  pollTimeoutSeconds: number | null;
  concurrentExecLimit: number | null;
  rateLimitPerFrequency: number | null;
  rateLimitFrequencyInSeconds: number | null;
  /** The named semaphore this queue's leases take a permit of (0006_task_gates); null: none. */
  semaphoreName: string | null;
  inputKeys: Generated<string[]>;
  outputKeys: Generated<string[]>;
  inputTemplate: JsonDefaulted;
  inputSchema: NullableJson;
  outputSchema: NullableJson;
  secretOutputFields: Generated<string[]>;
  /** Workers polling this queue get `${workflow.secrets.NAME}` resolved in their input; otherwise `***` (0021). */
  allowSecrets: Generated<boolean>;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  updatedAt: TimestampDefaulted;
  updatedBy: string | null;
}

export type ScheduleCatchUp = "skip" | "latest" | "all";
export type ScheduleOverlap = "allow" | "skip" | "queue";
export type ScheduleRunOutcome = "started" | "skipped" | "queued" | "failed";

/** A workflow started on a cron expression in a time zone, fired by the poller role (server/schedules). */
export interface SchedulesTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  description: string | null;
  workflowName: string;
  workflowVersion: number | null;
  input: JsonDefaulted;
  correlationIdTemplate: string | null;
  priority: Generated<number>;
  cronExpression: string;
  zoneId: Generated<string>;
  startAt: NullableTimestamp;
  endAt: NullableTimestamp;
  catchUp: Generated<ScheduleCatchUp>;
  catchUpLimit: Generated<number>;
  overlap: Generated<ScheduleOverlap>;
  paused: Generated<boolean>;
  pausedReason: string | null;
  nextFireAt: NullableTimestamp;
  queuedFireAt: NullableTimestamp;
  lastWorkflowId: string | null;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  updatedAt: TimestampDefaulted;
  updatedBy: string | null;
}

/** One fire of a schedule, UNIQUE (scheduleId, fireAt): the run it started, or why none. */
export interface ScheduleRunsTable {
  id: Generated<string>;
  scheduleId: string;
  namespaceId: string;
  fireAt: Timestamp;
  throughFireAt: NullableTimestamp;
  fireCount: number | null;
  outcome: ScheduleRunOutcome;
  workflowId: string | null;
  reason: string | null;
  createdAt: TimestampDefaulted;
  startedAt: NullableTimestamp;
}

/** An inbound webhook endpoint: POST /api/hooks/{namespace}/{name} starts `workflowName` (server/webhooks). */
export interface IncomingWebhooksTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  description: string | null;
  workflowName: string;
  workflowVersion: number | null;
  enabled: Generated<boolean>;
  authMode: WebhookAuthMode;
  secretName: string;
  authHeader: string;
  toleranceSeconds: Generated<number>;
  inputMapping: Json;
  correlationIdTemplate: string | null;
  idempotencyKeyTemplate: string | null;
  responseMode: Generated<WebhookResponseMode>;
  waitSeconds: Generated<number>;
  responseNodeRef: string | null;
  allowGet: Generated<boolean>;
  maxBodyBytes: Generated<number>;
  ratePerMinute: Generated<number>;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  updatedAt: TimestampDefaulted;
  updatedBy: string | null;
}

export type WebhookAuthMode = "token" | "hmac-sha256" | "hmac-sha256-timestamped";
export type WebhookResponseMode = "accepted" | "wait";

/** One call to a webhook, accepted or refused; never its secret, auth header or body. */
export interface WebhookCallbacksTable {
  id: Generated<string>;
  webhookId: string;
  namespaceId: string;
  receivedAt: TimestampDefaulted;
  method: string;
  status: number;
  workflowId: string | null;
  refusal: string | null;
  signatureDigest: string | null;
  idempotencyKey: string | null;
  bodyBytes: Generated<number>;
  durationMs: Generated<number>;
}

/** Conductor's event handler: on `event`, when `condition` holds, run `actions` (server/events). */
export interface EventHandlersTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  description: string | null;
  event: string;
  condition: string | null;
  evaluatorType: Generated<string>;
  actions: Json;
  active: Generated<boolean>;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  updatedAt: TimestampDefaulted;
  updatedBy: string | null;
}

export type EventExecutionStatus = "COMPLETED" | "SKIPPED" | "FAILED";

/** What one handler did with one event; UNIQUE (handlerId, eventId). */
export interface EventExecutionsTable {
  id: Generated<string>;
  namespaceId: string;
  handlerId: string;
  eventId: number;
  event: string;
  status: EventExecutionStatus;
  outcomes: JsonDefaulted;
  createdAt: TimestampDefaulted;
}

/** Calls `url` on a workflow's status change (server/sidecar/outbox-relay.ts), signed with `secretName` when set. */
export interface StatusListenersTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  workflowName: string | null;
  statuses: Generated<string[]>;
  url: string;
  secretName: string | null;
  enabled: Generated<boolean>;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  updatedAt: TimestampDefaulted;
  updatedBy: string | null;
}

export interface SecretsTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  description: string | null;
  sealedValue: Buffer;
  keyVersion: Generated<number>;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  updatedAt: TimestampDefaulted;
  updatedBy: string | null;
}

/** A namespace's plain configuration, read in task input as `${workflow.env.NAME}` when the task is dispatched (0021). */
export interface EnvironmentVariablesTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  value: string;
  description: string | null;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  updatedAt: TimestampDefaulted;
  updatedBy: string | null;
}

/** A namespace's named model provider for the AI tasks; its key is the namespace secret `apiKeySecret` names (0032). */
export interface AiProvidersTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  kind: "openai" | "anthropic";
  baseUrl: string;
  apiKeySecret: string | null;
  models: string[];
  allowPrivateNetwork: Generated<boolean>;
  description: string | null;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
  updatedAt: TimestampDefaulted;
  updatedBy: string | null;
}

/** One chunk of a document indexed by LLM_INDEX_TEXT, its embedding as real[] (0032). */
export interface VectorDocumentsTable {
  id: Generated<string>;
  namespaceId: string;
  indexName: string;
  indexNamespace: Generated<string>;
  docId: string;
  chunk: number;
  text: string;
  metadata: JsonDefaulted;
  embedding: number[];
  embeddingModel: string;
  createdAt: TimestampDefaulted;
}

/** Immutable per (namespaceId, name, version), like workflow definitions. */
export interface FormTemplatesTable {
  id: Generated<string>;
  namespaceId: string;
  name: string;
  version: number;
  description: string | null;
  schema: Json;
  uiSchema: JsonDefaulted;
  createdAt: TimestampDefaulted;
  createdBy: string | null;
}

export interface HumanTasksTable {
  id: Generated<string>;
  namespaceId: string;
  workflowId: string;
  taskId: string;
  refName: string;
  title: string;
  description: string | null;
  formTemplateId: string | null;
  assigneeUserId: string | null;
  assigneeGroupId: string | null;
  status: Generated<HumanTaskStatus>;
  input: JsonDefaulted;
  response: NullableJson;
  claimedByUserId: string | null;
  claimedAt: NullableTimestamp;
  completedByUserId: string | null;
  completedAt: NullableTimestamp;
  dueAt: NullableTimestamp;
  createdAt: TimestampDefaulted;
  updatedAt: TimestampDefaulted;
  assigneeKind: Generated<HumanAssigneeKind>;
  assigneeRole: MemberRole | null;
  assigneeLabel: Generated<string>;
  approvalsRequired: Generated<number>;
  allowSelfApproval: Generated<boolean>;
  starterUserId: string | null;
  outcomes: JsonDefaulted;
  outcome: string | null;
  formSchema: NullableJson;
  formUiSchema: NullableJson;
  escalation: JsonDefaulted;
  escalationLevel: Generated<number>;
}

/** One row per distinct person who submitted a human task; UNIQUE (humanTaskId, userId). */
export interface HumanTaskSubmissionsTable {
  id: Generated<string>;
  humanTaskId: string;
  namespaceId: string;
  userId: string;
  outcome: string | null;
  data: JsonDefaulted;
  at: TimestampDefaulted;
}

export interface TaskLogsTable {
  id: Generated<number>;
  namespaceId: string;
  workflowId: string;
  taskId: string;
  at: TimestampDefaulted;
  line: string;
}

// ---------------------------------------------------------------------------
// Engine

/** RANGE-partitioned monthly on startedAt; PRIMARY KEY (id, startedAt). */
export interface WorkflowExecutionsTable {
  id: Generated<string>;
  namespaceId: string;
  defName: string;
  defVersion: number;
  status: Generated<WorkflowStatus>;
  /** Optimistic-concurrency counter, bumped on every committed evaluation. */
  version: Generated<number>;
  correlationId: string | null;
  idempotencyKey: string | null;
  priority: Generated<number>;
  input: JsonDefaulted;
  output: JsonDefaulted;
  variables: JsonDefaulted;
  inputRef: string | null;
  outputRef: string | null;
  parentWorkflowId: string | null;
  parentTaskId: string | null;
  startedAt: TimestampDefaulted;
  endedAt: NullableTimestamp;
  updatedAt: TimestampDefaulted;
  reasonForIncompletion: string | null;
  failedTaskRef: string | null;
  createdBy: string | null;
}

/** Unpartitioned, so PRIMARY KEY (namespaceId, key) really constrains. */
export interface IdempotencyKeysTable {
  namespaceId: string;
  key: string;
  workflowId: string;
  strategy: IdempotencyStrategy;
  createdAt: TimestampDefaulted;
  expiresAt: NullableTimestamp;
}

/** HASH-partitioned 16 ways on workflowId; PRIMARY KEY (workflowId, id); identity (workflowId, refName, iteration, attempt). */
export interface TaskExecutionsTable {
  id: Generated<string>;
  workflowId: string;
  namespaceId: string;
  refName: string;
  iteration: Generated<number>;
  /** 0 for the first attempt; Conductor's retryCount. */
  attempt: Generated<number>;
  taskType: string;
  taskDefName: string;
  queueName: string | null;
  domain: string | null;
  status: Generated<TaskStatus>;
  input: JsonDefaulted;
  output: JsonDefaulted;
  inputRef: string | null;
  outputRef: string | null;
  pollCount: Generated<number>;
  workerId: string | null;
  scheduledAt: TimestampDefaulted;
  /** The first attempt's scheduledAt, carried by retries for totalTimeoutSeconds; null means this row's own. */
  firstScheduledAt: NullableTimestamp;
  startedAt: NullableTimestamp;
  /** Set on every terminal status; the unprocessed index keys on it. */
  endedAt: NullableTimestamp;
  updatedAt: TimestampDefaulted;
  callbackAfterSeconds: Generated<number>;
  responseTimeoutSeconds: number | null;
  timeoutSeconds: number | null;
  pollTimeoutSeconds: number | null;
  reasonForIncompletion: string | null;
  /** The decider's watermark: null until an evaluation reacted to this terminal task. */
  deciderSeenAt: NullableTimestamp;
  parentRef: string | null;
  forkIndex: number | null;
  subWorkflowId: string | null;
}

/** HASH-partitioned 8 ways on queueName; PRIMARY KEY (queueName, id); UNIQUE (queueName, taskId). */
export interface TaskQueuesTable {
  queueName: string;
  id: Generated<number>;
  taskId: string;
  workflowId: string;
  namespaceId: string;
  taskType: string;
  priority: Generated<number>;
  enqueuedAt: TimestampDefaulted;
  visibleAt: TimestampDefaulted;
  leaseExpiresAt: NullableTimestamp;
  leaseOwner: string | null;
  /** The task whose report leased this row (its `next`, migration 0015); null for any other lease. */
  leaseReport: string | null;
}

/** The primary key is the dedupe; enqueue with ON CONFLICT DO UPDATE SET "reason", never DO NOTHING. */
export interface DecideQueuesTable {
  workflowId: string;
  namespaceId: string;
  enqueuedAt: TimestampDefaulted;
  reason: string | null;
}

/** RANGE-partitioned hourly on fireAt; PRIMARY KEY (id, fireAt). */
export interface TimersTable {
  id: Generated<string>;
  fireAt: Timestamp;
  kind: TimerKind;
  namespaceId: string;
  workflowId: string;
  taskId: string | null;
  payload: JsonDefaulted;
  createdAt: TimestampDefaulted;
  claimedAt: NullableTimestamp;
  claimedBy: string | null;
}

export interface OutboxEventsTable {
  id: Generated<number>;
  namespaceId: string;
  topic: string;
  workflowId: string | null;
  payload: Json;
  createdAt: TimestampDefaulted;
  attempts: Generated<number>;
  nextAttemptAt: TimestampDefaulted;
  lastError: string | null;
  publishedAt: NullableTimestamp;
  deadLetteredAt: NullableTimestamp;
}

/** RANGE-partitioned monthly on at; PRIMARY KEY (workflowId, seq, at); an AFTER INSERT trigger NOTIFYs "workflowId:seq". */
export interface WorkflowEventsTable {
  workflowId: string;
  /** Gap-free per workflow, allocated as max + 1 under the workflow's row lock. */
  seq: number;
  at: TimestampDefaulted;
  namespaceId: string;
  type: string;
  refName: string | null;
  taskId: string | null;
  status: string | null;
  data: JsonDefaulted;
}

export interface SemaphoresTable {
  namespaceId: string;
  name: string;
  permits: number;
  createdAt: TimestampDefaulted;
  updatedAt: TimestampDefaulted;
}

export interface SemaphoreHoldersTable {
  namespaceId: string;
  name: string;
  taskId: string;
  workflowId: string;
  acquiredAt: TimestampDefaulted;
  leaseExpiresAt: Timestamp;
}

export interface RateLimitBucketsTable {
  namespaceId: string;
  queueName: string;
  windowStart: Timestamp;
  count: Generated<number>;
}

export interface TaskOutputCacheTable {
  namespaceId: string;
  taskDefName: string;
  key: string;
  output: Json;
  createdAt: TimestampDefaulted;
  expiresAt: Timestamp;
}

/** Owned by db/migrator.ts, which creates it on first migrate. */
export interface SchemaMigrationsTable {
  name: string;
  checksum: string;
  appliedAt: TimestampDefaulted;
}

export interface Database {
  Namespaces: NamespacesTable;
  Users: UsersTable;
  Sessions: SessionsTable;
  ServiceAccounts: ServiceAccountsTable;
  ApiKeys: ApiKeysTable;
  Groups: GroupsTable;
  GroupMembers: GroupMembersTable;
  NamespaceMembers: NamespaceMembersTable;
  SignInThrottles: SignInThrottlesTable;
  AuditEvents: AuditEventsTable;
  WorkflowDefinitions: WorkflowDefinitionsTable;
  TaskDefinitions: TaskDefinitionsTable;
  Secrets: SecretsTable;
  EnvironmentVariables: EnvironmentVariablesTable;
  AiProviders: AiProvidersTable;
  VectorDocuments: VectorDocumentsTable;
  Schedules: SchedulesTable;
  ScheduleRuns: ScheduleRunsTable;
  IncomingWebhooks: IncomingWebhooksTable;
  WebhookCallbacks: WebhookCallbacksTable;
  EventHandlers: EventHandlersTable;
  EventExecutions: EventExecutionsTable;
  StatusListeners: StatusListenersTable;
  FormTemplates: FormTemplatesTable;
  HumanTasks: HumanTasksTable;
  HumanTaskSubmissions: HumanTaskSubmissionsTable;
  TaskLogs: TaskLogsTable;
  WorkflowExecutions: WorkflowExecutionsTable;
  IdempotencyKeys: IdempotencyKeysTable;
  TaskExecutions: TaskExecutionsTable;
  TaskQueues: TaskQueuesTable;
  DecideQueues: DecideQueuesTable;
  Timers: TimersTable;
  OutboxEvents: OutboxEventsTable;
  WorkflowEvents: WorkflowEventsTable;
  Semaphores: SemaphoresTable;
  SemaphoreHolders: SemaphoreHoldersTable;
  RateLimitBuckets: RateLimitBucketsTable;
  TaskOutputCache: TaskOutputCacheTable;
  SchemaMigrations: SchemaMigrationsTable;
}

// Row types: what a SELECT returns (Selectable), what an INSERT takes
// (Insertable, JSONB as json() strings), what an UPDATE takes (Updateable).
// Kept apart from domain types on purpose: repositories map between the two.

export type NamespaceRow = Selectable<NamespacesTable>;
export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;
export type NewSession = Insertable<SessionsTable>;
export type ServiceAccountRow = Selectable<ServiceAccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type GroupRow = Selectable<GroupsTable>;
export type NamespaceMemberRow = Selectable<NamespaceMembersTable>;
export type AuditEventRow = Selectable<AuditEventsTable>;
export type NewAuditEvent = Insertable<AuditEventsTable>;
export type WorkflowDefinitionRow = Selectable<WorkflowDefinitionsTable>;
export type NewWorkflowDefinition = Insertable<WorkflowDefinitionsTable>;
export type TaskDefinitionRow = Selectable<TaskDefinitionsTable>;
export type NewTaskDefinition = Insertable<TaskDefinitionsTable>;
export type TaskDefinitionUpdate = Updateable<TaskDefinitionsTable>;
export type SecretRow = Selectable<SecretsTable>;
export type EnvironmentVariableRow = Selectable<EnvironmentVariablesTable>;
export type AiProviderRow = Selectable<AiProvidersTable>;
export type VectorDocumentRow = Selectable<VectorDocumentsTable>;
export type FormTemplateRow = Selectable<FormTemplatesTable>;
export type HumanTaskRow = Selectable<HumanTasksTable>;
export type NewHumanTask = Insertable<HumanTasksTable>;
export type HumanTaskSubmissionRow = Selectable<HumanTaskSubmissionsTable>;
export type TaskLogRow = Selectable<TaskLogsTable>;

export type WorkflowExecutionRow = Selectable<WorkflowExecutionsTable>;
export type NewWorkflowExecution = Insertable<WorkflowExecutionsTable>;
export type WorkflowExecutionUpdate = Updateable<WorkflowExecutionsTable>;
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;
export type TaskExecutionRow = Selectable<TaskExecutionsTable>;
export type NewTaskExecution = Insertable<TaskExecutionsTable>;
export type TaskExecutionUpdate = Updateable<TaskExecutionsTable>;
export type TaskQueueRow = Selectable<TaskQueuesTable>;
export type NewTaskQueueEntry = Insertable<TaskQueuesTable>;
export type DecideQueueRow = Selectable<DecideQueuesTable>;
export type TimerRow = Selectable<TimersTable>;
export type NewTimer = Insertable<TimersTable>;
export type OutboxEventRow = Selectable<OutboxEventsTable>;
export type NewOutboxEvent = Insertable<OutboxEventsTable>;
export type WorkflowEventRow = Selectable<WorkflowEventsTable>;
export type NewWorkflowEvent = Insertable<WorkflowEventsTable>;
export type SemaphoreRow = Selectable<SemaphoresTable>;
export type SemaphoreHolderRow = Selectable<SemaphoreHoldersTable>;
export type RateLimitBucketRow = Selectable<RateLimitBucketsTable>;
export type TaskOutputCacheRow = Selectable<TaskOutputCacheTable>;
