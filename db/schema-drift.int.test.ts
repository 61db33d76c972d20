import { sql } from "kysely";
import type { InsertType, SelectType, UpdateType } from "kysely";
import { describe, expect, it } from "vitest";
import type { Database } from "./schema";
import { TASK_STATUSES, TERMINAL_TASK_STATUSES, WORKFLOW_STATUSES } from "../engine/statuses";
import { useTestDatabase } from "./testing/test-database";

/**
 * schema.ts is types only, so nothing at run time can compare it with the
 * migrations. This file closes the loop in two halves:
 * - the compiler checks `expected` against schema.ts: every table and column,
 *   no more and no fewer, with the nullability, insert-default and value kind
 *   its Kysely type implies;
 * - the test checks `expected` against the migrated database's catalog.
 * So a column added to one and not the other, a NOT NULL typed as nullable, or
 * a JSONB column typed as a string fails here rather than on some later write.
 */

type Kind<S> = unknown extends S
  ? "json"
  : NonNullable<S> extends Date
    ? "timestamp"
    : NonNullable<S> extends number
      ? "number"
      : NonNullable<S> extends boolean
        ? "boolean"
        : NonNullable<S> extends string[]
          ? "text[]"
          : NonNullable<S> extends number[]
            ? "real[]"
          : NonNullable<S> extends Buffer
            ? "bytea"
            : NonNullable<S> extends string
              ? "text"
              : never;

// Nullability is read from the update type: a JSON column *selects* as
// `unknown`, which includes null, but only NullableJson accepts null on write.
type Shape<C> = null extends UpdateType<C> ? "nullable" : undefined extends InsertType<C> ? "defaulted" : "required";

type ExpectedSchema = {
  [T in keyof Database]: { [K in keyof Database[T]]: `${Shape<Database[T][K]>} ${Kind<SelectType<Database[T][K]>>}` };
};

const expected: ExpectedSchema = {
  Namespaces: {
    id: "defaulted text",
    name: "required text",
    description: "nullable text",
    createdAt: "defaulted timestamp",
  },
  Users: {
    id: "defaulted text",
    email: "required text",
    displayName: "nullable text",
    passwordHash: "nullable text",
    isAdmin: "defaulted boolean",
    disabledAt: "nullable timestamp",
    lastLoginAt: "nullable timestamp",
    createdAt: "defaulted timestamp",
    updatedAt: "defaulted timestamp",
  },
  Sessions: {
    id: "defaulted text",
    userId: "required text",
    tokenHash: "required text",
    createdAt: "defaulted timestamp",
    expiresAt: "required timestamp",
    lastSeenAt: "nullable timestamp",
    userAgent: "nullable text",
    ipAddress: "nullable text",
  },
  ServiceAccounts: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    description: "nullable text",
    disabledAt: "nullable timestamp",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
  },
  ApiKeys: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    prefix: "required text",
    keyHash: "required text",
    scopes: "defaulted text[]",
    userId: "nullable text",
    serviceAccountId: "nullable text",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    lastUsedAt: "nullable timestamp",
    expiresAt: "nullable timestamp",
    revokedAt: "nullable timestamp",
  },
  Groups: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    description: "nullable text",
    roles: "defaulted text[]",
    createdAt: "defaulted timestamp",
  },
  GroupMembers: {
    groupId: "required text",
    userId: "required text",
    addedAt: "defaulted timestamp",
  },
  NamespaceMembers: {
    namespaceId: "required text",
    userId: "required text",
    role: "required text",
    createdAt: "defaulted timestamp",
  },
  SignInThrottles: {
    email: "required text",
    failures: "required number",
    lastFailedAt: "defaulted timestamp",
  },
  AuditEvents: {
    id: "defaulted text",
    at: "defaulted timestamp",
    namespaceId: "nullable text",
    actorType: "required text",
    actorId: "nullable text",
    action: "required text",
    resourceType: "nullable text",
    resourceId: "nullable text",
    details: "defaulted json",
    ipAddress: "nullable text",
  },
  WorkflowDefinitions: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    version: "required number",
    description: "nullable text",
    graph: "required json",
    blueprint: "required json",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    archivedAt: "nullable timestamp",
    message: "nullable text",
  },
  TaskDefinitions: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    description: "nullable text",
    ownerEmail: "nullable text",
    retryCount: "defaulted number",
    retryLogic: "defaulted text",
    retryDelaySeconds: "defaulted number",
    backoffScaleFactor: "defaulted number",
    timeoutPolicy: "defaulted text",
    timeoutSeconds: "defaulted number",
    totalTimeoutSeconds: "defaulted number",
    responseTimeoutSeconds: "defaulted number",
    pollTimeoutSeconds: "nullable number",
    concurrentExecLimit: "nullable number",
    rateLimitPerFrequency: "nullable number",
    rateLimitFrequencyInSeconds: "nullable number",
    semaphoreName: "nullable text",
    inputKeys: "defaulted text[]",
    outputKeys: "defaulted text[]",
    inputTemplate: "defaulted json",
    inputSchema: "nullable json",
    outputSchema: "nullable json",
    secretOutputFields: "defaulted text[]",
    allowSecrets: "defaulted boolean",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    updatedAt: "defaulted timestamp",
    updatedBy: "nullable text",
  },
  Secrets: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    description: "nullable text",
    sealedValue: "required bytea",
    keyVersion: "defaulted number",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    updatedAt: "defaulted timestamp",
    updatedBy: "nullable text",
  },
  EnvironmentVariables: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    value: "required text",
    description: "nullable text",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    updatedAt: "defaulted timestamp",
    updatedBy: "nullable text",
  },
  AiProviders: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    kind: "required text",
    baseUrl: "required text",
    apiKeySecret: "nullable text",
    models: "required text[]",
    allowPrivateNetwork: "defaulted boolean",
    description: "nullable text",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    updatedAt: "defaulted timestamp",
    updatedBy: "nullable text",
  },
  VectorDocuments: {
    id: "defaulted text",
    namespaceId: "required text",
    indexName: "required text",
    indexNamespace: "defaulted text",
    docId: "required text",
    chunk: "required number",
    text: "required text",
    metadata: "defaulted json",
    embedding: "required real[]",
    embeddingModel: "required text",
    createdAt: "defaulted timestamp",
  },
  Schedules: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    description: "nullable text",
    workflowName: "required text",
    workflowVersion: "nullable number",
    input: "defaulted json",
    correlationIdTemplate: "nullable text",
    priority: "defaulted number",
    cronExpression: "required text",
    zoneId: "defaulted text",
    startAt: "nullable timestamp",
    endAt: "nullable timestamp",
    catchUp: "defaulted text",
    catchUpLimit: "defaulted number",
    overlap: "defaulted text",
    paused: "defaulted boolean",
    pausedReason: "nullable text",
    nextFireAt: "nullable timestamp",
    queuedFireAt: "nullable timestamp",
    lastWorkflowId: "nullable text",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    updatedAt: "defaulted timestamp",
    updatedBy: "nullable text",
  },
  ScheduleRuns: {
    id: "defaulted text",
    scheduleId: "required text",
    namespaceId: "required text",
    fireAt: "required timestamp",
    throughFireAt: "nullable timestamp",
    fireCount: "nullable number",
    outcome: "required text",
    workflowId: "nullable text",
    reason: "nullable text",
    createdAt: "defaulted timestamp",
    startedAt: "nullable timestamp",
  },
  IncomingWebhooks: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    description: "nullable text",
    workflowName: "required text",
    workflowVersion: "nullable number",
    enabled: "defaulted boolean",
    authMode: "required text",
    secretName: "required text",
    authHeader: "required text",
    toleranceSeconds: "defaulted number",
    inputMapping: "required json",
    correlationIdTemplate: "nullable text",
    idempotencyKeyTemplate: "nullable text",
    responseMode: "defaulted text",
    waitSeconds: "defaulted number",
    responseNodeRef: "nullable text",
    allowGet: "defaulted boolean",
    maxBodyBytes: "defaulted number",
    ratePerMinute: "defaulted number",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    updatedAt: "defaulted timestamp",
    updatedBy: "nullable text",
  },
  WebhookCallbacks: {
    id: "defaulted text",
    webhookId: "required text",
    namespaceId: "required text",
    receivedAt: "defaulted timestamp",
    method: "required text",
    status: "required number",
    workflowId: "nullable text",
    refusal: "nullable text",
    signatureDigest: "nullable text",
    idempotencyKey: "nullable text",
    bodyBytes: "defaulted number",
    durationMs: "defaulted number",
  },
  EventHandlers: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    description: "nullable text",
    event: "required text",
    condition: "nullable text",
    evaluatorType: "defaulted text",
    actions: "required json",
    active: "defaulted boolean",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    updatedAt: "defaulted timestamp",
    updatedBy: "nullable text",
  },
  EventExecutions: {
    id: "defaulted text",
    namespaceId: "required text",
    handlerId: "required text",
    eventId: "required number",
    event: "required text",
    status: "required text",
    outcomes: "defaulted json",
    createdAt: "defaulted timestamp",
  },
  StatusListeners: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    workflowName: "nullable text",
    statuses: "defaulted text[]",
    url: "required text",
    secretName: "nullable text",
    enabled: "defaulted boolean",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
    updatedAt: "defaulted timestamp",
    updatedBy: "nullable text",
  },
  FormTemplates: {
    id: "defaulted text",
    namespaceId: "required text",
    name: "required text",
    version: "required number",
    description: "nullable text",
    schema: "required json",
    uiSchema: "defaulted json",
    createdAt: "defaulted timestamp",
    createdBy: "nullable text",
  },
  HumanTasks: {
    id: "defaulted text",
    namespaceId: "required text",
    workflowId: "required text",
    taskId: "required text",
    refName: "required text",
    title: "required text",
    description: "nullable text",
    formTemplateId: "nullable text",
    assigneeUserId: "nullable text",
    assigneeGroupId: "nullable text",
    status: "defaulted text",
    input: "defaulted json",
    response: "nullable json",
    claimedByUserId: "nullable text",
    claimedAt: "nullable timestamp",
    completedByUserId: "nullable text",
    completedAt: "nullable timestamp",
    dueAt: "nullable timestamp",
    createdAt: "defaulted timestamp",
    updatedAt: "defaulted timestamp",
    assigneeKind: "defaulted text",
    assigneeRole: "nullable text",
    assigneeLabel: "defaulted text",
    approvalsRequired: "defaulted number",
    allowSelfApproval: "defaulted boolean",
    starterUserId: "nullable text",
    outcomes: "defaulted json",
    outcome: "nullable text",
    formSchema: "nullable json",
    formUiSchema: "nullable json",
    escalation: "defaulted json",
    escalationLevel: "defaulted number",
  },
  HumanTaskSubmissions: {
    id: "defaulted text",
    humanTaskId: "required text",
    namespaceId: "required text",
    userId: "required text",
    outcome: "nullable text",
    data: "defaulted json",
    at: "defaulted timestamp",
  },
  TaskLogs: {
    id: "defaulted number",
    namespaceId: "required text",
    workflowId: "required text",
    taskId: "required text",
    at: "defaulted timestamp",
    line: "required text",
  },
  WorkflowExecutions: {
    id: "defaulted text",
    namespaceId: "required text",
    defName: "required text",
    defVersion: "required number",
    status: "defaulted text",
    version: "defaulted number",
    correlationId: "nullable text",
    idempotencyKey: "nullable text",
    priority: "defaulted number",
    input: "defaulted json",
    output: "defaulted json",
    variables: "defaulted json",
    inputRef: "nullable text",
    outputRef: "nullable text",
    parentWorkflowId: "nullable text",
    parentTaskId: "nullable text",
    startedAt: "defaulted timestamp",
    endedAt: "nullable timestamp",
    updatedAt: "defaulted timestamp",
    reasonForIncompletion: "nullable text",
    failedTaskRef: "nullable text",
    createdBy: "nullable text",
  },
  IdempotencyKeys: {
    namespaceId: "required text",
    key: "required text",
    workflowId: "required text",
    strategy: "required text",
    createdAt: "defaulted timestamp",
    expiresAt: "nullable timestamp",
  },
  TaskExecutions: {
    id: "defaulted text",
    workflowId: "required text",
    namespaceId: "required text",
    refName: "required text",
    iteration: "defaulted number",
    attempt: "defaulted number",
    taskType: "required text",
    taskDefName: "required text",
    queueName: "nullable text",
    domain: "nullable text",
    status: "defaulted text",
    input: "defaulted json",
    output: "defaulted json",
    inputRef: "nullable text",
    outputRef: "nullable text",
    pollCount: "defaulted number",
    workerId: "nullable text",
    scheduledAt: "defaulted timestamp",
    firstScheduledAt: "nullable timestamp",
    startedAt: "nullable timestamp",
    endedAt: "nullable timestamp",
    updatedAt: "defaulted timestamp",
    callbackAfterSeconds: "defaulted number",
    responseTimeoutSeconds: "nullable number",
    timeoutSeconds: "nullable number",
    pollTimeoutSeconds: "nullable number",
    reasonForIncompletion: "nullable text",
    deciderSeenAt: "nullable timestamp",
    parentRef: "nullable text",
    forkIndex: "nullable number",
    subWorkflowId: "nullable text",
  },
  TaskQueues: {
    queueName: "required text",
    id: "defaulted number",
    taskId: "required text",
    workflowId: "required text",
    namespaceId: "required text",
    taskType: "required text",
    priority: "defaulted number",
    enqueuedAt: "defaulted timestamp",
    visibleAt: "defaulted timestamp",
    leaseExpiresAt: "nullable timestamp",
    leaseOwner: "nullable text",
    leaseReport: "nullable text",
  },
  DecideQueues: {
    workflowId: "required text",
    namespaceId: "required text",
    enqueuedAt: "defaulted timestamp",
    reason: "nullable text",
  },
  Timers: {
    id: "defaulted text",
    fireAt: "required timestamp",
    kind: "required text",
    namespaceId: "required text",
    workflowId: "required text",
    taskId: "nullable text",
    payload: "defaulted json",
    createdAt: "defaulted timestamp",
    claimedAt: "nullable timestamp",
    claimedBy: "nullable text",
  },
  OutboxEvents: {
    id: "defaulted number",
    namespaceId: "required text",
    topic: "required text",
    workflowId: "nullable text",
    payload: "required json",
    createdAt: "defaulted timestamp",
    attempts: "defaulted number",
    nextAttemptAt: "defaulted timestamp",
    lastError: "nullable text",
    publishedAt: "nullable timestamp",
    deadLetteredAt: "nullable timestamp",
  },
  WorkflowEvents: {
    workflowId: "required text",
    seq: "required number",
    at: "defaulted timestamp",
    namespaceId: "required text",
    type: "required text",
    refName: "nullable text",
    taskId: "nullable text",
    status: "nullable text",
    data: "defaulted json",
  },
  Semaphores: {
    namespaceId: "required text",
    name: "required text",
    permits: "required number",
    createdAt: "defaulted timestamp",
    updatedAt: "defaulted timestamp",
  },
  SemaphoreHolders: {
    namespaceId: "required text",
    name: "required text",
    taskId: "required text",
    workflowId: "required text",
    acquiredAt: "defaulted timestamp",
    leaseExpiresAt: "required timestamp",
  },
  RateLimitBuckets: {
    namespaceId: "required text",
    queueName: "required text",
    windowStart: "required timestamp",
    count: "defaulted number",
  },
  TaskOutputCache: {
    namespaceId: "required text",
    taskDefName: "required text",
    key: "required text",
    output: "required json",
    createdAt: "defaulted timestamp",
    expiresAt: "required timestamp",
  },
  SchemaMigrations: {
    name: "required text",
    checksum: "required text",
    appliedAt: "defaulted timestamp",
  },
};

const t = useTestDatabase();

// Postgres types onto the kinds node-postgres parses them into (pool.ts makes int8 a number).
const KINDS: Record<string, string> = {
  jsonb: "json",
  timestamptz: "timestamp",
  int4: "number",
  int8: "number",
  bool: "boolean",
  text: "text",
  uuid: "text",
  _text: "text[]",
  _float4: "real[]",
  bytea: "bytea",
};

describe("schema.ts matches the migrated database", () => {
  it("has the same tables and columns, with matching nullability, defaults and kinds", async () => {
    const { rows } = await sql<{ table: string; column: string; nullable: boolean; hasDefault: boolean; type: string }>`
      SELECT c.relname AS "table", a.attname AS "column", NOT a.attnotnull AS "nullable",
             a.atthasdef AS "hasDefault", ty.typname AS "type"
      FROM pg_class c
      JOIN pg_namespace n ON n."oid" = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c."oid"
      JOIN pg_type ty ON ty."oid" = a.atttypid
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`.execute(t.db);

    const actual: Record<string, Record<string, string>> = {};
    for (const r of rows) {
      const shape = r.nullable ? "nullable" : r.hasDefault ? "defaulted" : "required";
      (actual[r.table] ??= {})[r.column] = `${shape} ${KINDS[r.type] ?? `unmapped:${r.type}`}`;
    }
    // Compared as sorted objects so a failure diff names the table and column.
    const sorted = (o: Record<string, Record<string, string>>) =>
      Object.fromEntries(
        Object.keys(o)
          .sort()
          .map((k) => [k, Object.fromEntries(Object.entries(o[k] ?? {}).sort(([a], [b]) => a.localeCompare(b)))]),
      );
    expect(sorted(actual)).toEqual(sorted(expected));
  });
});

describe("statuses agree with the engine", () => {
  const handle = useTestDatabase();

  function quotedLiterals(definitionSql: string): string[] {
    return [...definitionSql.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1] ?? "").sort();
  }

  it("only a terminal task can be marked seen: the pending index's premise, a CHECK naming exactly the terminal statuses", async () => {
    const { rows } = await sql<{ def: string }>`
      SELECT pg_get_constraintdef(oid) AS "def" FROM pg_constraint
      WHERE conname = 'TaskExecutions_seen_only_when_terminal_check'`.execute(handle.db);
    expect(quotedLiterals(rows[0]?.def ?? "")).toEqual([...TERMINAL_TASK_STATUSES].sort());
    const { rows: index } = await sql<{ def: string }>`
      SELECT pg_get_indexdef('"TaskExecutions_pending_idx"'::regclass) AS "def"`.execute(handle.db);
    expect(index[0]?.def).toMatch(/WHERE \("deciderSeenAt" IS NULL\)$/);
  });

  it("the status CHECK constraints allow exactly the engine's statuses", async () => {
    const { rows } = await sql<{ table: string; def: string }>`
      SELECT c.conrelid::regclass::text AS "table", pg_get_constraintdef(c.oid) AS "def"
      FROM pg_constraint c
      WHERE c.contype = 'c' AND c.conrelid IN ('"WorkflowExecutions"'::regclass, '"TaskExecutions"'::regclass)
        AND pg_get_constraintdef(c.oid) LIKE '%status%' AND c.conname <> 'TaskExecutions_seen_only_when_terminal_check'`.execute(handle.db);
    const byTable = new Map(rows.map((r) => [r.table, r.def]));
    expect(quotedLiterals(byTable.get('"WorkflowExecutions"') ?? "")).toEqual([...WORKFLOW_STATUSES].sort());
    expect(quotedLiterals(byTable.get('"TaskExecutions"') ?? "")).toEqual([...TASK_STATUSES].sort());
  });
});
