/**
 * The path beyond one Postgres: where every table would live on a Citus
 * cluster, and what in today's schema and hot statements would have to change
 * first. docs/scaling.md explains it; server/store/citus-plan.int.test.ts
 * checks every entry here against the migrated schema and the statements the
 * hot path really sends, so this list cannot drift from the code quietly.
 *
 * Distribution column: "namespaceId". Every hot statement a worker sends (the
 * lease, the report) already names the namespace, every engine row carries it,
 * and a workflow never leaves its namespace, so one namespace's runs, tasks,
 * queues, history and definitions land in one shard group and every step's
 * transaction stays on one node. "workflowId" would spread one namespace
 * wider, but the lease — the hottest statement — picks work by queue, not by
 * workflow, and would fan out to every shard on every poll.
 */

export const DISTRIBUTION_COLUMN = "namespaceId";

export type TablePlacement =
  /** Hash-distributed by "namespaceId", co-located with every other distributed table. */
  | { kind: "distributed"; why: string }
  /** Replicated to every node: small, read across namespaces, written rarely. */
  | { kind: "reference"; rows: string; why: string }
  /** Stays a plain table on the coordinator. */
  | { kind: "local"; why: string };

const distributed = (why: string): TablePlacement => ({ kind: "distributed", why });
const reference = (rows: string, why: string): TablePlacement => ({ kind: "reference", rows, why });
const local = (why: string): TablePlacement => ({ kind: "local", why });

/** Every table of the schema (partitioned parents, not their partitions). */
export const TABLE_PLACEMENT: Readonly<Record<string, TablePlacement>> = {
  // The engine: one namespace's runs live together.
  WorkflowExecutions: distributed("the run row; locked by every evaluation"),
  TaskExecutions: distributed("a run's tasks, read with their run"),
  TaskQueues: distributed("leased by (namespace, queue)"),
  DecideQueues: distributed("claimed with the run it names"),
  WorkflowEvents: distributed("a run's history, appended with its evaluation"),
  Timers: distributed("armed and fired with their run"),
  OutboxEvents: distributed("written in the transaction of the change it announces"),
  IdempotencyKeys: distributed("claimed in the start's transaction"),
  SemaphoreHolders: distributed("taken and released with a lease or a report"),
  Semaphores: distributed("locked by an acquire of the namespace's permits"),
  RateLimitBuckets: distributed("upserted by a gated lease"),
  TaskOutputCache: distributed("read and written with a task of the namespace"),
  TaskLogs: distributed("a task's log lines"),
  HumanTasks: distributed("opened and cancelled by evaluations"),
  HumanTaskSubmissions: distributed("a human task's submissions"),
  // Definitions and triggers: read by the hot path of their own namespace.
  WorkflowDefinitions: distributed("blueprints read by evaluations and starts"),
  TaskDefinitions: distributed("queue gates read by leases and reports"),
  FormTemplates: distributed("forms of the namespace's human tasks"),
  Secrets: distributed("resolved at dispatch in the namespace"),
  EnvironmentVariables: distributed("resolved at dispatch in the namespace"),
  Schedules: distributed("fired into starts of the namespace"),
  ScheduleRuns: distributed("one row per fire, inserted with its start"),
  IncomingWebhooks: distributed("a call starts a run of the namespace"),
  WebhookCallbacks: distributed("one row per call, written with its start"),
  EventHandlers: distributed("read by the status trigger of the namespace's runs"),
  EventExecutions: distributed("one row per handled event"),
  StatusListeners: distributed("read by the status trigger of the namespace's runs"),
  AiProviders: distributed("read by the namespace's AI tasks"),
  VectorDocuments: distributed("searched within one namespace"),
  // Identity: read on every request, before or across namespaces.
  Namespaces: reference("one per namespace", "every distributed table's foreign key points here"),
  Users: reference("one per person", "read by sign-in and authorization across namespaces"),
  ApiKeys: reference("one per key", 'found by its globally unique "prefix" before the namespace is known'),
  ServiceAccounts: reference("a few per namespace", "ApiKeys (a reference table) holds a foreign key to it"),
  NamespaceMembers: reference("one per member per namespace", "which namespaces a user may see, across namespaces"),
  Groups: reference("a few per namespace", "authorization reads a user's groups across namespaces"),
  GroupMembers: reference("one per member per group", "has no namespace column; joins Groups and Users"),
  // The coordinator's own.
  Sessions: local("web-only, keyed by token hash; joins Users, whose replica the coordinator holds"),
  SignInThrottles: local("web-only, keyed by email before any user is known"),
  AuditEvents: local('"namespaceId" is null for cluster-level actions; append-only, never on the hot path'),
  SchemaMigrations: local("the migrator's bookkeeping; Citus propagates the DDL it runs"),
};

/**
 * A primary key or unique index of a distributed table: Citus enforces
 * uniqueness per shard only, so it refuses one that lacks the distribution
 * column. Each gains "namespaceId" in front. The meaning is unchanged, since an
 * id never belongs to two namespaces — but every ON CONFLICT naming the old
 * columns must name the new ones.
 */
export interface KeyChange {
  table: string;
  index: string;
  /** The key's columns today, in order. */
  today: readonly string[];
}

const key = (table: string, index: string, ...today: string[]): KeyChange => ({ table, index, today });

export const KEY_CHANGES: readonly KeyChange[] = [
  key("AiProviders", "AiProviders_pkey", "id"),
  key("DecideQueues", "DecideQueues_pkey", "workflowId"),
  key("EnvironmentVariables", "EnvironmentVariables_pkey", "id"),
  key("EventExecutions", "EventExecutions_handlerId_eventId_key", "handlerId", "eventId"),
  key("EventExecutions", "EventExecutions_pkey", "id"),
  key("EventHandlers", "EventHandlers_pkey", "id"),
  key("FormTemplates", "FormTemplates_pkey", "id"),
  key("HumanTaskSubmissions", "HumanTaskSubmissions_humanTaskId_userId_key", "humanTaskId", "userId"),
  key("HumanTaskSubmissions", "HumanTaskSubmissions_pkey", "id"),
  key("HumanTasks", "HumanTasks_pkey", "id"),
  key("HumanTasks", "HumanTasks_taskId_key", "taskId"),
  key("IncomingWebhooks", "IncomingWebhooks_pkey", "id"),
  key("OutboxEvents", "OutboxEvents_pkey", "id"),
  key("ScheduleRuns", "ScheduleRuns_pkey", "id"),
  key("ScheduleRuns", "ScheduleRuns_scheduleId_fireAt_key", "scheduleId", "fireAt"),
  key("Schedules", "Schedules_pkey", "id"),
  key("Secrets", "Secrets_pkey", "id"),
  key("StatusListeners", "StatusListeners_pkey", "id"),
  key("TaskDefinitions", "TaskDefinitions_pkey", "id"),
  key("TaskExecutions", "TaskExecutions_identity_idx", "workflowId", "refName", "iteration", "attempt"),
  key("TaskExecutions", "TaskExecutions_pkey", "workflowId", "id"),
  key("TaskLogs", "TaskLogs_pkey", "id"),
  key("TaskQueues", "TaskQueues_pkey", "queueName", "id"),
  key("TaskQueues", "TaskQueues_task_idx", "queueName", "taskId"),
  key("Timers", "Timers_pkey", "id", "fireAt"),
  key("VectorDocuments", "VectorDocuments_pkey", "id"),
  key("WebhookCallbacks", "WebhookCallbacks_pkey", "id"),
  key("WebhookCallbacks", "WebhookCallbacks_signature_idx", "webhookId", "signatureDigest"),
  key("WorkflowDefinitions", "WorkflowDefinitions_pkey", "id"),
  key("WorkflowEvents", "WorkflowEvents_pkey", "workflowId", "seq", "at"),
  key("WorkflowExecutions", "WorkflowExecutions_pkey", "id", "startedAt"),
];

/**
 * A foreign key between two distributed tables: Citus needs it to include the
 * distribution column on both sides (so it is checked within one shard group).
 * Each becomes ("namespaceId", column) → ("namespaceId", id), which needs the
 * referenced table's new primary key above.
 */
export interface ForeignKeyChange {
  table: string;
  columns: readonly string[];
  references: string;
  referencedColumns: readonly string[];
}

const fk = (table: string, column: string, references: string): ForeignKeyChange => ({ table, columns: [column], references, referencedColumns: ["id"] });

export const FOREIGN_KEY_CHANGES: readonly ForeignKeyChange[] = [
  fk("EventExecutions", "handlerId", "EventHandlers"),
  fk("HumanTaskSubmissions", "humanTaskId", "HumanTasks"),
  fk("HumanTasks", "formTemplateId", "FormTemplates"),
  fk("ScheduleRuns", "scheduleId", "Schedules"),
  fk("WebhookCallbacks", "webhookId", "IncomingWebhooks"),
];

/**
 * A statement of the hot path — start, evaluate, lease, report — as the test
 * captures it from a real run. `lacks`: the distributed tables it reads or
 * writes without binding "namespaceId" (Citus would send it to every shard,
 * and refuses FOR UPDATE there); `onConflict`: the tables whose ON CONFLICT
 * target lacks it; `calls`: the SQL functions it calls.
 */
export interface HotStatement {
  name: string;
  /** Where it is built. */
  source: string;
  /** Picks the statement out of the captured texts. */
  match: RegExp;
  lacks: readonly string[];
  onConflict: readonly string[];
  calls: readonly string[];
  /** What it becomes on Citus. */
  change: string;
}

export const HOT_STATEMENTS: readonly HotStatement[] = [
  {
    name: "start: latest definition",
    source: "server/store/workflow-definitions.ts",
    match: /from "WorkflowDefinitions" where "namespaceId" = \$1 and "name" = \$2 and "archivedAt" is null/,
    lacks: [],
    onConflict: [],
    calls: [],
    change: "none",
  },
  {
    name: "start: run, first event and decide request in one statement",
    source: "server/executions/start-execution.ts",
    match: /^WITH "execution" AS \(insert into "WorkflowExecutions"/,
    lacks: [],
    onConflict: ["DecideQueues"],
    calls: [],
    change: 'ON CONFLICT ("namespaceId", "workflowId")',
  },
  {
    name: "evaluate: claim decide requests and lock their runs",
    source: "server/store/decide-queues.ts (claimAndLockWorkflowsThen)",
    match: /"claimable" AS \(\s*SELECT "workflowId" FROM "DecideQueues"/,
    lacks: ["DecideQueues", "WorkflowExecutions"],
    onConflict: [],
    calls: [],
    change: 'claim one namespace at a time (WHERE "namespaceId" = $1, the namespaces with requests read first); lock the runs by ("namespaceId", "id")',
  },
  {
    name: "evaluate: the claimed runs' frontiers",
    source: "server/store/task-executions.ts (claimedFrontiersStatement)",
    match: /FROM unnest\(coalesce\(nullif\(current_setting\('node_flow\.claimed', true\)/,
    lacks: ["TaskExecutions"],
    onConflict: [],
    calls: [],
    change: 'add "t"."namespaceId" = the claim\'s namespace',
  },
  {
    name: "evaluate: blueprint",
    source: "server/evaluator/evaluator.ts",
    match: /select "blueprint" from "WorkflowDefinitions" where "namespaceId" = \$1/,
    lacks: [],
    onConflict: [],
    calls: [],
    change: "none",
  },
  {
    name: "evaluate: terminal rows the expressions read",
    source: "server/store/task-executions.ts (loadLatestByRefsOf)",
    match: /FROM unnest\(\$1::uuid\[\], \$2::text\[\]\) AS "r"\("workflowId", "ref"\)/,
    lacks: ["TaskExecutions"],
    onConflict: [],
    calls: [],
    change: 'add "t"."namespaceId" = the batch\'s namespace',
  },
  {
    name: "evaluate: schedule tasks and enqueue them",
    source: "server/store/task-executions.ts (insertAndEnqueueTasksStatement)",
    match: /^\s*WITH "inserted" AS \(insert into "TaskExecutions"/,
    lacks: [],
    onConflict: ["TaskExecutions", "TaskQueues"],
    calls: [],
    change: 'ON CONFLICT ("namespaceId", "workflowId", "refName", "iteration", "attempt") and ("namespaceId", "queueName", "taskId")',
  },
  {
    name: "evaluate: finish (seen marks, version bumps, events)",
    source: "server/store/workflow-events.ts → nf_finish_evaluations",
    match: /^SELECT "nf_finish_evaluations"\(/,
    lacks: [],
    onConflict: [],
    calls: ["nf_finish_evaluations"],
    change: "one call per namespace, with the namespace as its first argument (see FUNCTIONS)",
  },
  {
    name: "lease: the queue's gates",
    source: "server/store/task-definitions.ts (getQueueGates)",
    match: /from "TaskDefinitions" where "namespaceId" = \$1 and "name" = \$2/,
    lacks: [],
    onConflict: [],
    calls: [],
    change: "none",
  },
  {
    name: "lease",
    source: "server/store/task-queues.ts (leaseTasks) → nf_lease_tasks",
    match: /FROM "nf_lease_tasks"\(/,
    lacks: [],
    onConflict: [],
    calls: ["nf_lease_tasks"],
    change: "delegated whole to the namespace's node (create_distributed_function on p_namespace)",
  },
  {
    name: "report (and lease the next)",
    source: "server/tasks/report-task-result.ts → nf_report_task",
    match: /FROM "nf_report_task"\(/,
    lacks: [],
    onConflict: [],
    calls: ["nf_report_task"],
    change: "delegated whole to the namespace's node (create_distributed_function on p_namespace)",
  },
];

/**
 * The SQL functions that touch distributed tables. `delegable`: it takes the
 * namespace as an argument (p_namespace), so Citus can run the whole call on
 * the node that holds the namespace in one round trip; `lacks`: the tables its
 * statements touch without binding "namespaceId".
 */
export interface FunctionPlan {
  delegable: boolean;
  lacks: readonly string[];
  onConflict: readonly string[];
  change: string;
}

export const FUNCTIONS: Readonly<Record<string, FunctionPlan>> = {
  nf_lease_tasks: {
    delegable: true,
    lacks: ["TaskQueues"],
    onConflict: [],
    change: 'the stamp of the lease and the delete of a row whose task has ended also bind "q"."namespaceId" = p_namespace',
  },
  nf_complete_task: {
    delegable: true,
    lacks: ["TaskExecutions"],
    onConflict: ["DecideQueues"],
    change: 'the refusal\'s re-read of the task ("why not") also binds p_namespace; ON CONFLICT ("namespaceId", "workflowId")',
  },
  nf_report_task: { delegable: true, lacks: [], onConflict: [], change: "none beyond the delegation" },
  nf_finish_evaluations: {
    delegable: false,
    lacks: ["HumanTasks", "TaskExecutions", "WorkflowEvents", "WorkflowExecutions"],
    onConflict: [],
    change: 'take p_namespace first and bind it in the seen marks, the inbox cancel, the version bump and the history\'s max("seq")',
  },
  WorkflowExecutions_status_events: {
    delegable: false,
    lacks: [],
    onConflict: [],
    change: "a row trigger on a distributed table (see TRIGGERS); its statements bind NEW.\"namespaceId\", so each stays on the run's shard group",
  },
};

/** User triggers on distributed and reference tables; Citus runs them on the worker that holds the shard. */
export interface TriggerPlan {
  table: string;
  level: "row" | "statement";
  change: string;
}

const NOTIFY_FROM_APP = "its NOTIFY would fire on the worker, where no one listens: the writer sends it on the coordinator after its statement";

export const TRIGGERS: Readonly<Record<string, TriggerPlan>> = {
  DecideQueues_notify: { table: "DecideQueues", level: "row", change: NOTIFY_FROM_APP },
  HumanTasks_notify: { table: "HumanTasks", level: "row", change: NOTIFY_FROM_APP },
  WorkflowEvents_notify: {
    table: "WorkflowEvents",
    level: "statement",
    change: `Citus refuses statement-level triggers on distributed tables; ${NOTIFY_FROM_APP}`,
  },
  WorkflowExecutions_started: { table: "WorkflowExecutions", level: "row", change: "kept (citus.enable_unsafe_triggers): reads and writes only the run's shard group" },
  WorkflowExecutions_status_changed: {
    table: "WorkflowExecutions",
    level: "row",
    change: "kept (citus.enable_unsafe_triggers): reads and writes only the run's shard group",
  },
  WorkflowDefinitions_immutable: { table: "WorkflowDefinitions", level: "row", change: "kept (citus.enable_unsafe_triggers): reads only OLD and NEW" },
  FormTemplates_immutable: { table: "FormTemplates", level: "row", change: "kept (citus.enable_unsafe_triggers): reads only OLD and NEW" },
  ApiKeys_credentials_changed: { table: "ApiKeys", level: "row", change: "fires on every replica: the web processes listen on the coordinator, which holds one" },
  ApiKeys_credentials_deleted: { table: "ApiKeys", level: "row", change: "fires on every replica: the web processes listen on the coordinator, which holds one" },
  Users_credentials_changed: { table: "Users", level: "row", change: "fires on every replica: the web processes listen on the coordinator, which holds one" },
  Users_credentials_deleted: { table: "Users", level: "row", change: "fires on every replica: the web processes listen on the coordinator, which holds one" },
  ServiceAccounts_credentials_changed: {
    table: "ServiceAccounts",
    level: "row",
    change: "fires on every replica: the web processes listen on the coordinator, which holds one",
  },
  ServiceAccounts_credentials_deleted: {
    table: "ServiceAccounts",
    level: "row",
    change: "fires on every replica: the web processes listen on the coordinator, which holds one",
  },
};
