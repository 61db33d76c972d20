import { randomBytes } from "node:crypto";
import type { Db } from "../../../db/pool";
import { registerWorkflowDefinition } from "../../definitions/register-workflow-definition";
import { upsertTaskDefinition } from "../../definitions/upsert-task-definition";
import { evaluateBatch } from "../../evaluator/evaluator";
import { startExecution } from "../../executions/start-execution";
import type { BlobStore } from "../../lib/blob-store";
import { createTestKey, createTestNamespace, TEST_INSTANCE_SECRET } from "../../rest/testing/rest-fixtures";
import { putSecret, sealingKeysOf } from "../../secrets/secrets";
import { putEnvironmentVariable } from "../../secrets/environment-variables";
import { saveAiProvider } from "../../ai/ai-providers";
import type { TestNamespace } from "../../rest/testing/rest-fixtures";
import type { ScriptEvaluator } from "../../../engine";
import { completeTaskFromWorker } from "../../store/task-executions";
import { leaseTasks } from "../../store/task-queues";
import { upsertIncomingWebhook } from "../../store/incoming-webhooks";
import { upsertEventHandler } from "../../store/event-handlers";
import { upsertStatusListener } from "../../store/status-listeners";
import { insertSchedule } from "../../store/schedules";

/**
 * One namespace with something of everything the worker-facing APIs and the
 * console act on, made through the same service functions the APIs call (and
 * the real decider): a definition of each kind, a task definition, a run
 * whose worker task is leased, a run waiting on a WAIT signal, a run waiting
 * on a human, a failed run, and admin and worker API keys. For the tests that
 * aim every route at real rows: the bad-input corpus and the cross-namespace
 * matrix (server/web/*.int.test.ts).
 */
export interface ApiFixture {
  namespace: TestNamespace;
  adminKey: string;
  workerKey: string;
  /** Written into this namespace's inputs, outputs, descriptions and titles: a body that holds it leaked this namespace's data. */
  marker: string;
  /** The SIMPLE tasks' queue and the task definition of the same name. */
  queue: string;
  /** Definitions: one SIMPLE node "work"; one signal WAIT node "wait"; one HUMAN node "approve". */
  flow: string;
  waitFlow: string;
  humanFlow: string;
  /** RUNNING, its "work" task IN_PROGRESS and leased to `workerId`. */
  simpleRun: string;
  simpleTaskId: string;
  workerId: string;
  /** RUNNING, its "wait" task IN_PROGRESS until signalled. */
  waitRun: string;
  waitTaskId: string;
  /** RUNNING, its "approve" task waiting in the inbox as `humanTaskId`. */
  humanRun: string;
  humanTaskExecutionId: string;
  humanTaskId: string;
  /** FAILED: its "work" task failed with a terminal error. */
  failedRun: string;
  failedTaskId: string;
  /** A token webhook on `flow`, authenticated by the secret `secretName` (whose value holds the marker). */
  webhook: string;
  secretName: string;
  /** An environment variable whose value and description hold the marker. */
  variable: string;
  /** An AI provider whose key is `secretName` and whose description holds the marker. */
  aiProvider: string;
  /** An active event handler starting `flow` on `conductor:<flow>:ready`. */
  eventHandler: string;
  event: string;
  /** A yearly schedule of `flow`, its input holding the marker. */
  schedule: string;
  /** A status listener on `flow`'s failures, signed with `secretName`, its URL holding the marker. */
  statusListener: string;
}

export interface FixtureDeps {
  db: Db;
  blobs: BlobStore;
  scripts: ScriptEvaluator;
}

const position = { x: 0, y: 0 };

async function register(db: Db, namespaceId: string, definition: Record<string, unknown>): Promise<string> {
  const result = await registerWorkflowDefinition(db, { namespaceId, definition });
  if (!result.ok) throw new Error(`fixture definition refused: ${JSON.stringify(result)}`);
  return result.name;
}

async function start(deps: FixtureDeps, namespaceId: string, name: string, input: Record<string, unknown>): Promise<string> {
  const started = await startExecution(deps, { namespaceId, name, input });
  if (!started.ok) throw new Error(`fixture start refused: ${JSON.stringify(started)}`);
  return started.workflowId;
}

async function decide(deps: FixtureDeps): Promise<void> {
  for (let i = 0; i < 20 && (await evaluateBatch(deps, { limit: 50 })) > 0; i++);
}

async function taskOf(db: Db, workflowId: string, refName: string): Promise<string> {
  const row = await db.selectFrom("TaskExecutions").select("id").where("workflowId", "=", workflowId).where("refName", "=", refName).executeTakeFirstOrThrow();
  return row.id;
}

/** `label` prefixes every name, so two fixtures in one database never share one (a name found in the other's answers is a leak). */
export async function createApiFixture(deps: FixtureDeps, label: string): Promise<ApiFixture> {
  const { db } = deps;
  const namespace = await createTestNamespace(db, label.replace(/_/g, "-"));
  const marker = `${label}-secret-${randomBytes(4).toString("hex")}`;
  const queue = `${label}_queue`;
  await upsertTaskDefinition(db, { namespaceId: namespace.id, definition: { name: queue, description: marker, retryCount: 0 } });
  const flow = await register(db, namespace.id, {
    schemaVersion: 1,
    name: `${label}_flow`,
    description: marker,
    nodes: [{ ref: "work", type: "SIMPLE", name: queue, position }],
    edges: [],
  });
  const waitFlow = await register(db, namespace.id, {
    schemaVersion: 1,
    name: `${label}_wait`,
    description: marker,
    nodes: [{ ref: "wait", type: "WAIT", signal: true, position }],
    edges: [],
  });
  const humanFlow = await register(db, namespace.id, {
    schemaVersion: 1,
    name: `${label}_human`,
    description: marker,
    nodes: [{ ref: "approve", type: "HUMAN", title: `Approve ${marker}`, outcomes: ["approve", "reject"], position }],
    edges: [],
  });

  // The failed run first: with both SIMPLE tasks queued, a lease of one could take either.
  const workerId = `${label}-worker`;
  const failedRun = await start(deps, namespace.id, flow, { marker });
  await decide(deps);
  const [failing] = await leaseTasks(db, { namespaceId: namespace.id, queueName: queue, count: 1, leaseSeconds: 3600, owner: workerId });
  if (failing === undefined) throw new Error("fixture: the failed run's task was not queued");
  const failed = await completeTaskFromWorker(db, {
    namespaceId: namespace.id,
    workflowId: failedRun,
    taskId: failing.task.id,
    status: "FAILED_WITH_TERMINAL_ERROR",
    output: { marker },
    reason: `failed on purpose ${marker}`,
    workerId,
  });
  if (!failed.ok) throw new Error(`fixture: the failing report was refused: ${JSON.stringify(failed)}`);

  const simpleRun = await start(deps, namespace.id, flow, { marker });
  const waitRun = await start(deps, namespace.id, waitFlow, { marker });
  const humanRun = await start(deps, namespace.id, humanFlow, { marker });
  await decide(deps);
  const [leased] = await leaseTasks(db, { namespaceId: namespace.id, queueName: queue, count: 1, leaseSeconds: 3600, owner: workerId });
  if (leased?.task.workflowId !== simpleRun) throw new Error("fixture: the simple run's task was not leased");
  const secretName = `${label.toUpperCase().replace(/-/g, "_")}_SECRET`;
  await putSecret(db, sealingKeysOf({ secret: TEST_INSTANCE_SECRET, previousSecrets: [] }), { namespaceId: namespace.id, name: secretName, value: `${marker}-value`, actor: { type: "system", id: "fixture" }, updatedBy: "fixture" });
  const variable = `${label.toUpperCase().replace(/-/g, "_")}_VARIABLE`;
  await putEnvironmentVariable(db, { namespaceId: namespace.id, name: variable, value: `${marker}-variable`, description: marker, actor: { type: "system", id: "fixture" }, updatedBy: "fixture" });
  const aiProvider = `${label.replace(/_/g, "-")}-llm`;
  const savedProvider = await saveAiProvider(db, {
    namespaceId: namespace.id,
    name: aiProvider,
    config: { kind: "openai", baseUrl: "https://llm.example/v1", apiKeySecret: secretName, models: ["fixture-model"], allowPrivateNetwork: false, description: marker },
    actor: { type: "system", id: "fixture" },
    updatedBy: "fixture",
  });
  if (!savedProvider.ok) throw new Error("fixture: the AI provider was refused");
  const webhook = `${label.replace(/_/g, "-")}-hook`;
  await upsertIncomingWebhook(db, {
    namespaceId: namespace.id,
    name: webhook,
    actor: "fixture",
    settings: { workflowName: flow, description: marker, enabled: true, authMode: "token", secretName, authHeader: "x-webhook-token", toleranceSeconds: 300, inputMapping: { marker }, responseMode: "accepted", waitSeconds: 10, allowGet: false, maxBodyBytes: 1024, ratePerMinute: 60 },
  });
  const eventHandler = `${label}_handler`;
  const event = `conductor:${flow}:ready`;
  await upsertEventHandler(db, {
    namespaceId: namespace.id,
    name: eventHandler,
    actor: "fixture",
    settings: { description: marker, event, condition: "$.ok", evaluatorType: "javascript", actions: [{ action: "start_workflow", start_workflow: { name: flow, input: { marker } } }], active: true },
  });
  const schedule = `${label.replace(/_/g, "-")}-schedule`;
  await insertSchedule(db, {
    namespaceId: namespace.id,
    name: schedule,
    actor: "fixture",
    nextFireAt: new Date("2099-01-01T00:00:00Z"),
    settings: { description: marker, workflowName: flow, input: { marker }, priority: 0, cronExpression: "@yearly", zoneId: "UTC", catchUp: "skip", catchUpLimit: 10, overlap: "allow", paused: false },
  });
  const statusListener = `${label.replace(/_/g, "-")}-listener`;
  await upsertStatusListener(db, {
    namespaceId: namespace.id,
    name: statusListener,
    actor: "fixture",
    settings: { workflowName: flow, statuses: ["FAILED"], url: `https://listener.example/${marker}`, secretName, enabled: true },
  });
  const human = await db.selectFrom("HumanTasks").select(["id", "taskId"]).where("workflowId", "=", humanRun).executeTakeFirstOrThrow();

  return {
    namespace,
    adminKey: await createTestKey(db, namespace, ["admin"]),
    workerKey: await createTestKey(db, namespace, ["worker"]),
    marker,
    queue,
    flow,
    waitFlow,
    humanFlow,
    simpleRun,
    simpleTaskId: leased.task.id,
    workerId,
    waitRun,
    waitTaskId: await taskOf(db, waitRun, "wait"),
    humanRun,
    humanTaskExecutionId: human.taskId,
    humanTaskId: human.id,
    failedRun,
    failedTaskId: failing.task.id,
    webhook,
    secretName,
    variable,
    aiProvider,
    eventHandler,
    event,
    schedule,
    statusListener,
  };
}

/**
 * What the tests compare before and after: every row of the namespace a
 * request could change, by the columns a change would show in (statuses,
 * versions, leases, archive marks, counts of logs and events).
 */
export async function snapshotNamespace(db: Db, namespaceId: string): Promise<unknown> {
  const count = async (table: "TaskLogs" | "AuditEvents" | "Groups" | "ServiceAccounts" | "FormTemplates") =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as("n")).where("namespaceId", "=", namespaceId).executeTakeFirstOrThrow()).n);
  return {
    definitions: await db.selectFrom("WorkflowDefinitions").select(["name", "version", "archivedAt"]).where("namespaceId", "=", namespaceId).orderBy("name").orderBy("version").execute(),
    taskDefinitions: await db.selectFrom("TaskDefinitions").selectAll().where("namespaceId", "=", namespaceId).orderBy("name").execute(),
    runs: await db
      .selectFrom("WorkflowExecutions")
      .select(["id", "status", "defVersion", "updatedAt", "endedAt", "reasonForIncompletion", "correlationId"])
      .where("namespaceId", "=", namespaceId)
      .orderBy("id")
      .execute(),
    tasks: await db
      .selectFrom("TaskExecutions")
      .select(["id", "status", "attempt", "workerId", "pollCount", "updatedAt", "output"])
      .where("namespaceId", "=", namespaceId)
      .orderBy("id")
      .execute(),
    queue: await db.selectFrom("TaskQueues").select(["taskId", "leaseOwner", "leaseExpiresAt", "visibleAt"]).where("namespaceId", "=", namespaceId).orderBy("taskId").execute(),
    humanTasks: await db.selectFrom("HumanTasks").select(["id", "status", "claimedByUserId", "assigneeKind", "assigneeLabel", "response", "updatedAt"]).where("namespaceId", "=", namespaceId).orderBy("id").execute(),
    apiKeys: await db.selectFrom("ApiKeys").select(["id", "revokedAt", "scopes"]).where("namespaceId", "=", namespaceId).orderBy("id").execute(),
    secrets: await db.selectFrom("Secrets").select(["name", "sealedValue", "updatedAt"]).where("namespaceId", "=", namespaceId).orderBy("name").execute(),
    variables: await db.selectFrom("EnvironmentVariables").select(["name", "value", "description", "updatedAt"]).where("namespaceId", "=", namespaceId).orderBy("name").execute(),
    aiProviders: await db.selectFrom("AiProviders").select(["name", "baseUrl", "apiKeySecret", "models", "updatedAt"]).where("namespaceId", "=", namespaceId).orderBy("name").execute(),
    statusListeners: await db.selectFrom("StatusListeners").select(["name", "enabled", "url", "updatedAt"]).where("namespaceId", "=", namespaceId).orderBy("name").execute(),
    eventHandlers: await db.selectFrom("EventHandlers").select(["name", "active", "event", "updatedAt"]).where("namespaceId", "=", namespaceId).orderBy("name").execute(),
    schedules: await db.selectFrom("Schedules").select(["name", "paused", "cronExpression", "nextFireAt", "updatedAt"]).where("namespaceId", "=", namespaceId).orderBy("name").execute(),
    webhooks: await db.selectFrom("IncomingWebhooks").select(["name", "enabled", "workflowName", "secretName", "updatedAt"]).where("namespaceId", "=", namespaceId).orderBy("name").execute(),
    logs: await count("TaskLogs"),
    groups: await count("Groups"),
    serviceAccounts: await count("ServiceAccounts"),
    formTemplates: await count("FormTemplates"),
  };
}
