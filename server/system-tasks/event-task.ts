import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { insertOutboxEvent } from "../store/outbox-events";
import { getWorkflowExecution } from "../store/workflow-executions";
import { HttpRequestError, assertHostAllowed, parseHttpUrl } from "./guarded-http";
import { completed, failed, failedTerminally } from "./system-task-outcome";
import type { SystemTaskOutcome } from "./system-task-outcome";

/**
 * EVENT: Conductor's Event task, through the outbox. The task writes an
 * OutboxEvents row in the same transaction that completes it (the outcome's
 * `inTransaction`), so the event exists exactly when the completion commits;
 * the relay (server/sidecar/outbox-relay.ts) delivers it afterwards, at least once.
 *
 * Sinks, and the topic each becomes (Conductor's Event.computeQueueName for
 * the conductor forms):
 * - `conductor` → `conductor:<workflow name>:<task ref>`
 * - `conductor:<name>` → `conductor:<workflow name>:<name>`
 * - `webhook:<http(s) url>` → the same text; the relay POSTs the payload to
 *   the URL as JSON, under the same network policy as HTTP tasks.
 * A conductor event is internal: the relay runs the namespace's event
 * handlers of its topic (server/events/handle-event.ts), then marks it
 * published; it stays in the table as a record. Any other sink (sqs:,
 * kafka:, amqp:, nats:…) fails the task terminally: no retry makes a missing
 * integration appear.
 *
 * The payload and the output are Conductor's: the task's input plus
 * workflowInstanceId, workflowType, workflowVersion and correlationId; the
 * output adds `event_produced` (the topic).
 */

export const WEBHOOK_SINK_PREFIX = "webhook:";
export const CONDUCTOR_SINK = "conductor";

export type EventTopic = { kind: "conductor"; topic: string } | { kind: "webhook"; topic: string; url: URL };

/** The topic a sink names, or why it names none. `allowPrivateNetworks` refuses a webhook to a private IP literal up front. */
export function eventTopicForSink(
  sink: unknown,
  context: { workflowName: string; taskRef: string; allowPrivateNetworks: boolean },
): EventTopic | { error: string } {
  if (typeof sink !== "string" || sink.trim() === "") return { error: "the input has no sink" };
  if (sink === CONDUCTOR_SINK) return { kind: "conductor", topic: `conductor:${context.workflowName}:${context.taskRef}` };
  if (sink.startsWith(`${CONDUCTOR_SINK}:`)) {
    const name = sink.slice(CONDUCTOR_SINK.length + 1);
    if (name === "") return { error: `sink "${sink}" names no queue` };
    return { kind: "conductor", topic: `conductor:${context.workflowName}:${name}` };
  }
  if (sink.startsWith(WEBHOOK_SINK_PREFIX)) {
    try {
      const url = parseHttpUrl(sink.slice(WEBHOOK_SINK_PREFIX.length));
      // A hostname is checked at delivery, on the address it resolves to then;
      // an IP literal cannot change, so refusing it now saves ten doomed attempts.
      assertHostAllowed(url, context.allowPrivateNetworks);
      return { kind: "webhook", topic: sink, url };
    } catch (error) {
      if (error instanceof HttpRequestError) return { error: `sink "${sink}": ${error.message}` };
      throw error;
    }
  }
  const scheme = sink.includes(":") ? sink.slice(0, sink.indexOf(":")) : sink;
  return {
    error: `unsupported sink "${scheme}" in "${sink}": use "conductor", "conductor:<name>" or "webhook:<http(s) url>"`,
  };
}

export interface EventTaskDeps {
  db: Kysely<Database>;
  allowPrivateNetworks: boolean;
}

export interface EventTaskInput {
  namespaceId: string;
  workflowId: string;
  refName: string;
  /** The resolved input; `sink` is in it (the decider puts it there). */
  input: Record<string, unknown>;
}

/** Prepares an EVENT task's outcome; the outbox row is written when the outcome is reported. */
export async function runEventTask(task: EventTaskInput, deps: EventTaskDeps): Promise<SystemTaskOutcome> {
  const workflow = await getWorkflowExecution(deps.db, task.namespaceId, task.workflowId);
  if (!workflow) return failed(`EVENT: workflow ${task.workflowId} not found`);
  const topic = eventTopicForSink(task.input.sink, {
    workflowName: workflow.defName,
    taskRef: task.refName,
    allowPrivateNetworks: deps.allowPrivateNetworks,
  });
  if ("error" in topic) return failedTerminally(`EVENT: ${topic.error}`);
  const payload = {
    ...task.input,
    workflowInstanceId: workflow.id,
    workflowType: workflow.defName,
    workflowVersion: workflow.defVersion,
    correlationId: workflow.correlationId,
  };
  return {
    ...completed({ ...payload, event_produced: topic.topic }),
    inTransaction: async (trx) => {
      await insertOutboxEvent(trx, { namespaceId: task.namespaceId, topic: topic.topic, workflowId: task.workflowId, payload });
    },
  };
}
