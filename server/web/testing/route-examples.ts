import { z } from "zod";
import { ConductorTaskDefSchema } from "../../../engine";
import type { AnyConductorRoute } from "../../conductor/define-conductor-route";
import { keyPair } from "../../conductor/testing/conductor-harness";
import type { AnyRoute } from "../../rest/define-route";
import type { ApiFixture } from "./api-fixtures";
import type { RouteExample } from "./bad-input";
import { EventHandlerSchema } from "../../events/event-handler-schema";
import { ConductorScheduleSchema } from "../../conductor/routes/scheduler-routes";

/**
 * A valid request to every REST and Conductor route, aimed at an
 * ApiFixture's rows: what the bad-input corpus changes one thing of, and
 * what the cross-namespace matrix sends with another namespace's key.
 */

const position = { x: 0, y: 0 };

/** A valid request to each route, aimed at the fixture's rows; a route missing here is still covered, with made-up ids. */
export function restExample(route: AnyRoute, fx: ApiFixture): RouteExample {
  const definition = { schemaVersion: 1, name: "corpus_new", nodes: [{ ref: "work", type: "SIMPLE", name: fx.queue, position }], edges: [] };
  const worker = { workflowId: fx.simpleRun, workerId: fx.workerId };
  const examples: Record<string, RouteExample> = {
    createWorkflowDefinition: { body: definition, checkedByHandler: true },
    validateWorkflowDefinition: { body: definition, checkedByHandler: true, readOnly: true },
    listWorkflowDefinitions: { query: { search: "corpus" } },
    getWorkflowDefinition: { params: { name: fx.flow }, query: { version: "1" } },
    putTaskDefinition: { params: { name: fx.queue }, body: { retryCount: 1, description: "corpus" }, createsAtPath: true },
    getTaskDefinition: { params: { name: fx.queue } },
    listTaskDefinitions: { query: { limit: "10" } },
    startRun: { body: { name: fx.flow, input: {}, correlationId: "corpus", priority: 1 } },
    searchRuns: { query: { status: "RUNNING", workflow: fx.flow, limit: "5" } },
    getRun: { params: { runId: fx.simpleRun }, query: { taskLimit: "10" } },
    getRunHistory: { params: { runId: fx.simpleRun }, query: { after: "0", limit: "10" } },
    pauseRun: { params: { runId: fx.simpleRun }, body: { reason: "corpus" } },
    resumeRun: { params: { runId: fx.simpleRun } },
    terminateRun: { params: { runId: fx.waitRun }, body: { reason: "corpus" } },
    retryRun: { params: { runId: fx.failedRun } },
    rerunRun: { params: { runId: fx.failedRun }, body: { fromRef: "work", input: {} } },
    restartRun: { params: { runId: fx.failedRun }, body: { version: 1, input: {} } },
    skipRunTask: { params: { runId: fx.simpleRun }, body: { taskRef: "work", output: {}, reason: "corpus" } },
    completeRunTask: { params: { runId: fx.waitRun, ref: "wait" }, body: { output: {}, status: "COMPLETED", reason: "corpus" } },
    pollTasks: { body: { queue: fx.queue, count: 1, timeoutMs: 0, workerId: "corpus-poller", leaseSeconds: 60 } },
    heartbeatTask: { params: { taskId: fx.simpleTaskId }, body: { ...worker, leaseSeconds: 60 } },
    releaseTask: { params: { taskId: fx.simpleTaskId }, body: worker },
    completeTask: { params: { taskId: fx.simpleTaskId }, body: { ...worker, output: {}, next: { count: 1, leaseSeconds: 60, timeoutMs: 0 } } },
    failTask: { params: { taskId: fx.simpleTaskId }, body: { ...worker, retryable: true, reason: "corpus", output: {} } },
    appendTaskLogs: { params: { taskId: fx.simpleTaskId }, body: { workflowId: fx.simpleRun, lines: ["corpus"] } },
    listTaskLogs: { params: { taskId: fx.simpleTaskId }, query: { after: "0", limit: "10" } },
    listHumanTasks: { query: { view: "all", state: "open", limit: "10" } },
    getHumanTask: { params: { id: fx.humanTaskId } },
    claimHumanTask: { params: { id: fx.humanTaskId } },
    releaseHumanTask: { params: { id: fx.humanTaskId } },
    completeHumanTask: { params: { id: fx.humanTaskId }, body: { outcome: "approve", data: {} } },
    reassignHumanTask: { params: { id: fx.humanTaskId }, body: { assignee: "anyone" } },
    putWebhook: { params: { name: fx.webhook }, body: { workflowName: fx.flow, authMode: "token", secretName: fx.secretName, inputMapping: { id: "${body.id}" }, ratePerMinute: 60 }, createsAtPath: true },
    listWebhooks: { query: { workflow: fx.flow } },
    getWebhook: { params: { name: fx.webhook } },
    deleteWebhook: { params: { name: fx.webhook } },
    listWebhookCalls: { params: { name: fx.webhook }, query: { limit: "10" } },
    putEventHandler: { params: { name: fx.eventHandler }, body: { event: fx.event, condition: "$.ok", actions: [{ action: "start_workflow", start_workflow: { name: fx.flow, input: {} } }], active: true }, createsAtPath: true },
    listEventHandlers: { query: { event: fx.event, activeOnly: "true" } },
    getEventHandler: { params: { name: fx.eventHandler } },
    deleteEventHandler: { params: { name: fx.eventHandler } },
    listEventExecutions: { params: { name: fx.eventHandler }, query: { limit: "10" } },
    putStatusListener: { params: { name: "corpus-listener" }, body: { url: "https://example.com/hook", statuses: ["COMPLETED"], secretName: fx.secretName }, createsAtPath: true },
    listStatusListeners: {},
    getStatusListener: { params: { name: fx.statusListener } },
    deleteStatusListener: { params: { name: fx.statusListener } },
    putSecret: { params: { name: fx.secretName }, body: { value: "corpus-value", description: "corpus" }, createsAtPath: true },
    getSecret: { params: { name: fx.secretName } },
    deleteSecret: { params: { name: fx.secretName } },
    putVariable: { params: { name: fx.variable }, body: { value: "https://corpus.example", description: "corpus" }, createsAtPath: true },
    getVariable: { params: { name: fx.variable } },
    deleteVariable: { params: { name: fx.variable } },
    putAiProvider: { params: { name: fx.aiProvider }, body: { kind: "openai", baseUrl: "https://llm.example/v1", apiKeySecret: fx.secretName, models: ["corpus-model"], allowPrivateNetwork: false, description: "corpus" }, createsAtPath: true },
    getAiProvider: { params: { name: fx.aiProvider } },
    deleteAiProvider: { params: { name: fx.aiProvider } },
    putSchedule: { params: { name: fx.schedule }, body: { workflowName: fx.flow, cronExpression: "0 30 2 * * *", zoneId: "Europe/Berlin", input: { day: "${schedule.fireTime}" }, catchUp: "latest", overlap: "skip" }, createsAtPath: true },
    listSchedules: { query: { workflow: fx.flow } },
    getSchedule: { params: { name: fx.schedule } },
    deleteSchedule: { params: { name: fx.schedule } },
    pauseSchedule: { params: { name: fx.schedule }, body: { reason: "corpus" } },
    resumeSchedule: { params: { name: fx.schedule } },
    listScheduleRuns: { params: { name: fx.schedule }, query: { limit: "10" } },
    previewSchedule: { body: { cronExpression: "*/15 * * * *", zoneId: "America/New_York", count: 5 }, readOnly: true },
    previewWebhook: { body: { inputMapping: { id: "${body.id}" }, call: { body: { id: 1 }, headers: { "x-event": "paid" }, query: {} } }, readOnly: true },
  };
  return examples[route.operationId] ?? {};
}

/** A valid request to each route, aimed at the fixture's rows; a route missing here is still covered, with made-up ids. */
export function conductorExample(route: AnyConductorRoute, fx: ApiFixture): RouteExample {
  const workflowDef = { name: "cdcorpus_new", version: 1, schemaVersion: 2, tasks: [{ name: fx.queue, taskReferenceName: "work", type: "SIMPLE" }] };
  const taskResult = { workflowInstanceId: fx.simpleRun, taskId: fx.simpleTaskId, status: "IN_PROGRESS", workerId: fx.workerId, outputData: {}, callbackAfterSeconds: 0 };
  const examples: Record<string, RouteExample> = {
    "POST /token": { body: keyPair(fx.adminKey) },
    "GET /tasks/poll/{taskType}": { params: { taskType: fx.queue }, query: { workerid: "cdcorpus-poller" } },
    "GET /tasks/poll/batch/{taskType}": { params: { taskType: fx.queue }, query: { workerid: "cdcorpus-poller", count: "1", timeout: "0" } },
    "POST /tasks": { body: taskResult },
    "POST /tasks/update-v2": { body: taskResult },
    "POST /tasks/{workflowId}/{taskRefName}/{status}": { params: { workflowId: fx.simpleRun, taskRefName: "work", status: "IN_PROGRESS" }, query: { workerid: fx.workerId }, body: {} },
    "GET /tasks/{taskId}": { params: { taskId: fx.simpleTaskId } },
    "POST /tasks/{taskId}/log": { params: { taskId: fx.simpleTaskId }, body: "cdcorpus line" },
    "GET /tasks/{taskId}/log": { params: { taskId: fx.simpleTaskId } },
    "GET /tasks/queue/sizes": { query: { taskType: fx.queue } },
    "GET /tasks/queue/size": { query: { taskType: fx.queue } },
    "POST /metadata/workflow": { query: { overwrite: "false" }, body: workflowDef, checkedByHandler: true },
    "PUT /metadata/workflow": { body: [workflowDef], checkedByHandler: true },
    "GET /metadata/workflow/{name}": { params: { name: fx.flow }, query: { version: "1" } },
    "POST /metadata/taskdefs": { body: [{ name: fx.queue, retryCount: 1, timeoutSeconds: 0 }], checkedWith: z.array(ConductorTaskDefSchema) },
    "PUT /metadata/taskdefs": { body: { name: fx.queue, retryCount: 1, timeoutSeconds: 0 }, checkedWith: ConductorTaskDefSchema },
    "GET /metadata/taskdefs/{taskType}": { params: { taskType: fx.queue } },
    "POST /workflow": { body: { name: fx.flow, version: 1, input: {}, correlationId: "cdcorpus", priority: 1 } },
    "POST /workflow/{name}": { params: { name: fx.flow }, query: { version: "1", correlationId: "cdcorpus", priority: "1" }, body: {} },
    "POST /workflow/execute/{name}/{version}": { params: { name: fx.flow, version: "1" }, query: { waitForSeconds: "0" }, body: { input: {} } },
    "GET /workflow/search": { query: { start: "0", size: "10", sort: "startTime:DESC", freeText: "cdcorpus", query: "status IN (RUNNING)" } },
    "GET /workflow/running/{name}": { params: { name: fx.flow }, query: { version: "1" } },
    "GET /workflow/{workflowId}": { params: { workflowId: fx.simpleRun }, query: { includeTasks: "true" } },
    "GET /workflow/{workflowId}/status": { params: { workflowId: fx.simpleRun }, query: { includeOutput: "true", includeVariables: "true" } },
    "PUT /workflow/{workflowId}/pause": { params: { workflowId: fx.simpleRun } },
    "PUT /workflow/{workflowId}/resume": { params: { workflowId: fx.simpleRun } },
    "DELETE /workflow/{workflowId}": { params: { workflowId: fx.waitRun }, query: { reason: "cdcorpus" } },
    "POST /workflow/{workflowId}/restart": { params: { workflowId: fx.failedRun }, query: { useLatestDefinitions: "false" } },
    "POST /workflow/{workflowId}/retry": { params: { workflowId: fx.failedRun }, query: { resumeSubworkflowTasks: "false" } },
    "POST /workflow/{workflowId}/rerun": { params: { workflowId: fx.failedRun }, body: { reRunFromTaskId: fx.failedTaskId, workflowInput: {}, correlationId: "cdcorpus" } },
    "PUT /secrets/{key}": { params: { key: fx.secretName }, body: "corpus-value", createsAtPath: true },
    "GET /secrets/{key}": { params: { key: fx.secretName } },
    "GET /secrets/{key}/exists": { params: { key: fx.secretName } },
    "DELETE /secrets/{key}": { params: { key: fx.secretName } },
    "POST /event": { body: { name: "cdcorpus_handler_new", event: fx.event, actions: [{ action: "start_workflow", start_workflow: { name: fx.flow } }], active: true }, checkedWith: EventHandlerSchema },
    "PUT /event": { body: { name: fx.eventHandler, event: fx.event, actions: [{ action: "start_workflow", start_workflow: { name: fx.flow } }], active: true }, checkedWith: EventHandlerSchema },
    "POST /scheduler/schedules": {
      body: { name: fx.schedule, cronExpression: "0 0 9 * * MON-FRI", zoneId: "America/New_York", startWorkflowRequest: { name: fx.flow, version: 1, input: {}, correlationId: "cd-${scheduledTime}" }, runCatchupScheduleInstances: false, paused: false },
      checkedWith: ConductorScheduleSchema,
    },
    "GET /scheduler/schedules": { query: { workflowName: fx.flow } },
    "GET /scheduler/schedules/{name}": { params: { name: fx.schedule } },
    "DELETE /scheduler/schedules/{name}": { params: { name: fx.schedule } },
    // Conductor's clients pause and resume with a GET; it writes, so its valid variants are not sent.
    "GET /scheduler/schedules/{name}/pause": { params: { name: fx.schedule }, query: { reason: "cdcorpus" }, readOnly: false },
    "PUT /scheduler/schedules/{name}/pause": { params: { name: fx.schedule }, query: { reason: "cdcorpus" } },
    "GET /scheduler/schedules/{name}/resume": { params: { name: fx.schedule }, readOnly: false },
    "PUT /scheduler/schedules/{name}/resume": { params: { name: fx.schedule } },
    "GET /scheduler/nextFewSchedules": { query: { cronExpression: "0 0/15 * * * ?", limit: "5" } },
    "GET /event": {},
    "GET /event/{event}": { params: { event: fx.event }, query: { activeOnly: "true" } },
    "DELETE /event/{name}": { params: { name: fx.eventHandler } },
    "PUT /workflow/{workflowId}/skiptask/{taskReferenceName}": { params: { workflowId: fx.simpleRun, taskReferenceName: "work" }, body: { taskOutput: {} } },
  };
  return examples[`${route.method} ${route.path}`] ?? {};
}
