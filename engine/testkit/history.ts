/**
 * The recorded history of one workflow run: what `simulate` writes and what
 * `replay` re-runs through today's decider (Temporal's replay tests, STYLE.md).
 *
 * ## Format (version 1)
 *
 * Event-sourced, not state snapshots. A history holds the run's start and
 * then, in the order they happened, the *external* events — a worker polled a
 * task, a task reported a result, a timer fired — interleaved with every
 * *evaluation*: the timers it was woken by and the commands `decide` returned.
 * The evaluation states are not stored: replay rebuilds each one by applying
 * the recorded events to the same in-memory store the simulator uses
 * (`TaskStore`), which loads state exactly as the Postgres evaluator does
 * (frontier + `refsToLoad` rows). So a replay checks today's decide *and*
 * today's state loading against the recording, and a history stays small (it
 * grows with events, not with events × frontier size) and survives additions
 * to `EvaluationState`.
 *
 * Everything is plain JSON (`JSON.parse(JSON.stringify(h))` is `h`): store it
 * as a fixture, diff it in review. Times are epoch milliseconds on the
 * simulator's virtual clock. Task ids are assigned by the store in insertion
 * order (`<workflowId>:t<n>`), so a replay assigns the same ones.
 *
 * Compatibility: `version` is bumped whenever an event's meaning changes;
 * {@link parseHistory} refuses versions it does not know rather than
 * misreading them. Commands inside `evaluated` events are whatever decide
 * returned at recording time — a change to the Command union is exactly what
 * replay is there to catch.
 */
import type { Command, FiredTimer, TaskKey, TimerKind } from "../decide/types";
import type { TaskStatus, WorkflowStatus } from "../statuses";

/** The `format` tag of a history document. */
export const HISTORY_FORMAT = "node-flow.workflow-history";

/** The history format version this module writes and reads. */
export const HISTORY_VERSION = 1;

/** The run a history belongs to: what the start wrote into the workflow row. */
export interface HistoryWorkflow {
  workflowId: string;
  /** The definition's name and version (null when it had none) at recording time. */
  name: string;
  version: number | null;
  input: Record<string, unknown>;
  /** Initial variables (the definition's `variables`): the blueprint does not carry them. */
  variables: Record<string, unknown>;
  /** Epoch ms: the virtual clock at the start. */
  startedAt: number;
  correlationId?: string;
  priority?: number;
  parentWorkflowId?: string;
  parentWorkflowTaskId?: string;
}

/**
 * One evaluation: decide ran on the state the store held at `at`, woken by
 * `firedTimers`, and returned `commands`. `outcome` is what applying them did:
 * `applied`, or `rolledBack` when a compare-and-set matched no row (the
 * evaluator rolls the transaction back; the simulator then stops).
 */
export interface EvaluatedEvent {
  type: "evaluated";
  at: number;
  /** 1-based ordinal of this evaluation in the run. */
  evaluation: number;
  firedTimers: FiredTimer[];
  commands: Command[];
  outcome: "applied" | "rolledBack";
}

/** A worker (or the system-task runner) leased a queued task: it becomes IN_PROGRESS. */
export interface TaskPolledEvent {
  type: "taskPolled";
  at: number;
  taskId: string;
  key: TaskKey;
  workerId: string;
}

/** Who reported a task update. */
export type TaskUpdateSource = "worker" | "system" | "signal" | "human" | "subWorkflow" | "cache";

/**
 * A task update arrived, as through the task-update API: a terminal status
 * (the row ends, unseen, and a decide is enqueued) or IN_PROGRESS with a
 * callback (the row is re-queued). An update for a row that is no longer
 * IN_PROGRESS — timed out or canceled meanwhile — is recorded but changes nothing,
 * as the API would reject it.
 */
export interface TaskUpdatedEvent {
  type: "taskUpdated";
  at: number;
  taskId: string;
  key: TaskKey;
  source: TaskUpdateSource;
  status: Extract<TaskStatus, "IN_PROGRESS" | "COMPLETED" | "FAILED" | "FAILED_WITH_TERMINAL_ERROR" | "TIMED_OUT">;
  output: Record<string, unknown>;
  reasonForIncompletion?: string;
  callbackAfterSeconds?: number;
}

/** A timer reached its `fireAt`: it is claimed (deleted) and a decide is enqueued with it. */
export interface TimerFiredEvent {
  type: "timerFired";
  at: number;
  timer: TimerKind;
  key?: TaskKey;
  taskId?: string;
  fireAt: number;
}

/** One entry of a history. */
export type HistoryEvent = EvaluatedEvent | TaskPolledEvent | TaskUpdatedEvent | TimerFiredEvent;

/** A recorded run (JSON). */
export interface WorkflowHistory {
  format: typeof HISTORY_FORMAT;
  version: typeof HISTORY_VERSION;
  workflow: HistoryWorkflow;
  events: HistoryEvent[];
  /** How the recording ended (informational; replay does not read it). */
  final?: { status: WorkflowStatus; at: number };
}

/** A history document that cannot be read: wrong format, unknown version, malformed event. */
export class HistoryFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HistoryFormatError";
  }
}

const EVENT_TYPES: ReadonlySet<string> = new Set(["evaluated", "taskPolled", "taskUpdated", "timerFired"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Reads a history from JSON text or a parsed value, checking its envelope and
 * every event's shape (not the commands' contents: replay compares those).
 *
 * @throws HistoryFormatError naming the first problem and where it is.
 */
export function parseHistory(json: unknown): WorkflowHistory {
  let value: unknown = json;
  if (typeof json === "string") {
    try {
      value = JSON.parse(json);
    } catch (e) {
      throw new HistoryFormatError(`not JSON: ${(e as Error).message}`);
    }
  }
  if (!isObject(value)) throw new HistoryFormatError("a history is a JSON object");
  if (value.format !== HISTORY_FORMAT) throw new HistoryFormatError(`format is ${JSON.stringify(value.format)}, expected ${JSON.stringify(HISTORY_FORMAT)}`);
  if (value.version !== HISTORY_VERSION) {
    throw new HistoryFormatError(`history version ${JSON.stringify(value.version)} is not supported (this testkit reads version ${HISTORY_VERSION})`);
  }
  const w = value.workflow;
  if (!isObject(w) || typeof w.workflowId !== "string" || typeof w.name !== "string" || typeof w.startedAt !== "number" || !isObject(w.input) || !isObject(w.variables)) {
    throw new HistoryFormatError("workflow: expected { workflowId, name, version, input, variables, startedAt }");
  }
  if (!Array.isArray(value.events)) throw new HistoryFormatError("events: expected an array");
  value.events.forEach((e: unknown, i: number) => {
    const where = `events[${i}]`;
    if (!isObject(e) || typeof e.type !== "string" || !EVENT_TYPES.has(e.type)) throw new HistoryFormatError(`${where}: unknown event ${JSON.stringify(isObject(e) ? e.type : e)}`);
    if (typeof e.at !== "number" || !Number.isFinite(e.at)) throw new HistoryFormatError(`${where}.at: expected epoch milliseconds`);
    switch (e.type) {
      case "evaluated":
        if (!Array.isArray(e.commands) || !Array.isArray(e.firedTimers) || typeof e.evaluation !== "number") {
          throw new HistoryFormatError(`${where}: an evaluated event has evaluation, firedTimers[] and commands[]`);
        }
        break;
      case "taskPolled":
      case "taskUpdated":
        if (typeof e.taskId !== "string" || !isObject(e.key)) throw new HistoryFormatError(`${where}: expected taskId and key`);
        if (e.type === "taskUpdated" && (typeof e.status !== "string" || !isObject(e.output))) throw new HistoryFormatError(`${where}: expected status and output`);
        break;
      case "timerFired":
        if (typeof e.timer !== "string" || typeof e.fireAt !== "number") throw new HistoryFormatError(`${where}: expected timer and fireAt`);
        break;
    }
  });
  return value as unknown as WorkflowHistory;
}

/** `ref[iteration.attempt]`, the way the testkit names a task identity in messages. */
export function formatTaskKey(key: TaskKey): string {
  return `${key.ref}[${key.iteration}.${key.attempt}]`;
}

/** One command in a line, for messages. */
export function describeCommand(c: Command | undefined): string {
  if (c === undefined) return "(none)";
  switch (c.kind) {
    case "scheduleTask":
      return `scheduleTask ${formatTaskKey(c.key)} ${c.taskType}`;
    case "completeTask":
    case "failTask":
      return `${c.kind} ${formatTaskKey(c.key)} ${c.status}`;
    case "skipTask":
    case "cancelTask":
    case "startTask":
    case "updateTask":
    case "cancelTimer":
    case "startSubWorkflow":
    case "startWorkflow":
      return `${c.kind} ${formatTaskKey(c.key)}`;
    case "armTimer":
      return `armTimer ${c.timer}${c.key === undefined ? "" : ` ${formatTaskKey(c.key)}`} at ${c.fireAt}`;
    case "aggregateForkOutput":
      return `aggregateForkOutput ${formatTaskKey(c.key)} ${c.status} (${c.total} instances)`;
    case "markSeen":
      return `markSeen ${c.taskIds.length} task(s)`;
    case "pruneIterations":
      return `pruneIterations ${c.loopRef} below ${c.belowIteration}`;
    case "setVariables":
      return `setVariables ${Object.keys(c.variables).join(",")}`;
    default:
      return c.kind;
  }
}
