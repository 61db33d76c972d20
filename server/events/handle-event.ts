import type { Db } from "@/db/pool";
import type { OutboxEventRow } from "@/db/schema";
import { resolveTemplateIn, scriptResultToBoolean } from "../../engine";
import type { ScriptEvaluator } from "../../engine";
import { completeExternalTask, terminateWorkflow, updateWorkflowVariables } from "../executions/actions";
import type { ActionRefusal } from "../executions/actions";
import { startExecution } from "../executions/start-execution";
import type { BlobStore } from "../lib/blob-store";
import { handlersDueForEvent, recordEventExecution } from "../store/event-handlers";
import type { EventHandlerRow } from "../store/event-handlers";
import { EventActionSchema } from "./event-handler-schema";
import type { EventAction } from "./event-handler-schema";

/**
 * Runs the event handlers of one event (an OutboxEvents row the relay
 * claimed): each active handler of the event's namespace whose `event` is the
 * topic, not yet recorded for this event, has its condition evaluated in the
 * sandbox against the payload (`$`) and, when it holds, its actions run in
 * order with their `${…}` resolved from the payload root.
 *
 * Redelivery is safe: a recorded (handler, event) is not run again, and until
 * it is recorded its actions are idempotent — a start takes the key
 * `event:<event id>:<handler>:<action>`, and completing a task that an
 * earlier attempt completed is refused as no longer open, which counts as
 * done. A failing action (no such workflow, a task not waiting) is recorded
 * as FAILED with why; it does not stop the next action, as in Conductor.
 * Throws only for an outage, so the relay retries the event later.
 */

export interface EventHandlingDeps {
  db: Db;
  blobs: BlobStore;
  scripts: ScriptEvaluator;
}

export interface ActionOutcome {
  action: EventAction["action"];
  ok: boolean;
  workflowId?: string;
  error?: string;
}

const CONDITION_TIMEOUT_MS = 1000;

export async function handleEvent(deps: EventHandlingDeps, event: OutboxEventRow): Promise<number> {
  const handlers = await handlersDueForEvent(deps.db, { namespaceId: event.namespaceId, event: event.topic, eventId: event.id });
  for (const handler of handlers) await runHandler(deps, handler, event);
  return handlers.length;
}

async function runHandler(deps: EventHandlingDeps, handler: EventHandlerRow, event: OutboxEventRow): Promise<void> {
  const payload = (typeof event.payload === "object" && event.payload !== null ? event.payload : { value: event.payload }) as Record<string, unknown>;
  const record = (status: "COMPLETED" | "SKIPPED" | "FAILED", outcomes: unknown) =>
    recordEventExecution(deps.db, { namespaceId: event.namespaceId, handlerId: handler.id, eventId: event.id, event: event.topic, status, outcomes });

  if (handler.condition !== null && handler.condition.trim() !== "") {
    const verdict = deps.scripts.evaluate(handler.condition, { $: payload }, { timeoutMs: CONDITION_TIMEOUT_MS });
    if (!verdict.ok) {
      await record("FAILED", [{ action: "condition", ok: false, error: `the condition failed: ${verdict.error}` }]);
      return;
    }
    if (!scriptResultToBoolean(verdict.value)) {
      await record("SKIPPED", []);
      return;
    }
  }

  const outcomes: ActionOutcome[] = [];
  const actions = Array.isArray(handler.actions) ? (handler.actions as unknown[]) : [];
  for (const [index, raw] of actions.entries()) {
    const parsed = EventActionSchema.safeParse(raw);
    if (!parsed.success) {
      outcomes.push({ action: (raw as { action?: EventAction["action"] } | null)?.action ?? "start_workflow", ok: false, error: "the action is not valid" });
      continue;
    }
    const action = parsed.data;
    const roots = action.expandInlineJSON === true ? expandInlineJson(payload) : payload;
    outcomes.push(await runAction(deps, { handler, event, index, action, roots: roots as Record<string, unknown> }));
  }
  await record(outcomes.every((o) => o.ok) ? "COMPLETED" : "FAILED", outcomes);
}

const actor = (handler: EventHandlerRow) => ({ type: "system" as const, id: `event-handler:${handler.name}` });

function refusalOf(result: ActionRefusal): string {
  return result.message;
}

async function runAction(
  deps: EventHandlingDeps,
  input: { handler: EventHandlerRow; event: OutboxEventRow; index: number; action: EventAction; roots: Record<string, unknown> },
): Promise<ActionOutcome> {
  const { handler, event, index, action, roots } = input;
  const namespaceId = event.namespaceId;
  const resolve = <T>(template: T): T => resolveTemplateIn(template, roots) as T;
  switch (action.action) {
    case "start_workflow": {
      const params = resolve(action.start_workflow);
      const started = await startExecution(deps, {
        namespaceId,
        name: String(params.name),
        version: params.version ?? undefined,
        input: params.input ?? {},
        correlationId: params.correlationId == null ? null : String(params.correlationId),
        priority: params.priority,
        idempotencyKey: `event:${event.id}:${handler.id}:${index}`,
        createdBy: `event-handler:${handler.name}`,
      });
      if (started.ok) return { action: action.action, ok: true, workflowId: started.workflowId };
      const error = started.reason === "invalid-input" ? started.problems.map((p) => p.message).join("; ") : started.message;
      return { action: action.action, ok: false, error };
    }
    case "complete_task":
    case "fail_task": {
      const target = resolve(action.action === "complete_task" ? action.complete_task : action.fail_task);
      const result = await completeExternalTask(deps, {
        namespaceId,
        workflowId: String(target.workflowId),
        ...(target.taskRefName !== undefined ? { taskRef: String(target.taskRefName) } : { taskId: String(target.taskId) }),
        output: target.output ?? {},
        status: action.action === "complete_task" ? "COMPLETED" : "FAILED",
        reason: `by event handler ${handler.name}`,
        actor: actor(handler),
      });
      // An earlier delivery of this event that completed the task before it could be recorded.
      const done = result.ok || (result.code === "task-not-open" && event.attempts > 0);
      return done ? { action: action.action, ok: true, workflowId: String(target.workflowId) } : { action: action.action, ok: false, workflowId: String(target.workflowId), error: refusalOf(result) };
    }
    case "terminate_workflow": {
      const target = resolve(action.terminate_workflow);
      const result = await terminateWorkflow(deps, {
        namespaceId,
        workflowId: String(target.workflowId),
        reason: target.terminationReason ?? `Terminated by event handler ${handler.name}`,
        actor: actor(handler),
      });
      return result.ok ? { action: action.action, ok: true, workflowId: result.workflowId } : { action: action.action, ok: false, workflowId: String(target.workflowId), error: result.message };
    }
    case "update_workflow_variables": {
      const target = resolve(action.update_workflow_variables);
      const result = await updateWorkflowVariables(deps, {
        namespaceId,
        workflowId: String(target.workflowId),
        variables: target.variables,
        appendArray: target.appendArray ?? false,
        actor: actor(handler),
      });
      return result.ok ? { action: action.action, ok: true, workflowId: result.workflowId } : { action: action.action, ok: false, workflowId: String(target.workflowId), error: result.message };
    }
  }
}

/** Conductor's expandInlineJSON: string values holding a JSON object or array are parsed, at any depth. */
function expandInlineJson(value: unknown, depth = 0): unknown {
  if (depth > 32) return value;
  if (typeof value === "string") {
    const text = value.trim();
    if ((text.startsWith("{") && text.endsWith("}")) || (text.startsWith("[") && text.endsWith("]"))) {
      try {
        return expandInlineJson(JSON.parse(text) as unknown, depth + 1);
      } catch {
        return value;
      }
    }
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => expandInlineJson(v, depth + 1));
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandInlineJson(v, depth + 1)]));
  return value;
}
