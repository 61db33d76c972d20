/**
 * The decider's contract: what an evaluation reads (`EvaluationState`) and
 * what it asks the I/O shell to do (`Command`). Shaped as Temporal's "state
 * in, commands out" (STYLE.md): `decide()` is a pure function from a
 * blueprint, this state and `now` to a list of commands; the evaluator in
 * server/ loads the state, runs `decide`, and applies the commands in the same
 * transaction that deleted the DecideQueues claim (invariant 2).
 *
 * This file is the stable surface other modules (testkit, server evaluator)
 * build on. Change it only compatibly.
 */
import type { EffectiveTaskPolicy } from "../definition";
import type { ScriptEvaluator } from "../expressions";
import type { TaskStatus, WorkflowStatus } from "../statuses";

// ---------------------------------------------------------------------------
// Task identity

/**
 * A task's identity inside its workflow: `(ref, iteration, attempt)`, which with
 * the workflow id is the TaskExecutions unique index (invariant 5). `decide`
 * has no randomness, so it never invents task ids: commands name new tasks by
 * this key, and the shell assigns the id when it inserts the row (`INSERT … ON
 * CONFLICT DO NOTHING` on the identity index, so re-deciding cannot schedule
 * anything twice). Commands about rows that already exist carry `taskId` too.
 *
 * - `ref`: the node's ref; for a FORK_JOIN_DYNAMIC instance
 *   `forkInstanceRef(forkRef, index)` = `"<forkRef>#<index>"` — `#` cannot occur
 *   in a node ref (REF_PATTERN), so an instance can never collide with a node.
 * - `iteration`: 0 outside loops; inside a DO_WHILE body 1, 2, 3… (Conductor
 *   counts iterations from 1).
 * - `attempt`: 0 for the first attempt, +1 per retry (Conductor's retryCount).
 */
export interface TaskKey {
  ref: string;
  iteration: number;
  attempt: number;
}

/** Who executes a scheduled task. */
export type TaskExecutor =
  /** A remote worker polling `queueName` (SIMPLE, DYNAMIC, dynamic-fork instances). */
  | "worker"
  /** The in-process system-task runner, finding work by TaskQueues.taskType (HTTP, INLINE, JSON_JQ_TRANSFORM, EVENT). */
  | "system"
  /**
   * Nothing polls it: something outside the decider completes it — the WAIT timer
   * (via decide) or an API signal, the HUMAN inbox, a child workflow ending
   * (SUB_WORKFLOW), the shell after starting a workflow (START_WORKFLOW).
   */
  | "external"
  /** Bookkeeping row the decider itself advances and completes (DO_WHILE, FORK_JOIN_DYNAMIC). */
  | "decider";

// ---------------------------------------------------------------------------
// State in

/** The workflow row, as the evaluation read it (locked: invariant 2). */
export interface WorkflowSnapshot {
  id: string;
  namespaceId?: string;
  defName: string;
  defVersion: number;
  status: WorkflowStatus;
  input: Record<string, unknown>;
  variables: Record<string, unknown>;
  correlationId?: string;
  /** Epoch milliseconds. The engine has no clock: times come in with the state. */
  startedAt: number;
  parentWorkflowId?: string;
  parentWorkflowTaskId?: string;
  /** Queue priority given to every task the workflow schedules; 0 when absent. */
  priority?: number;
  /** The optimistic-concurrency counter (WorkflowExecutions.version). Informational for decide. */
  version: number;
}

/** One TaskExecutions row as decide sees it. Times are epoch milliseconds. */
export interface TaskSnapshot {
  taskId: string;
  ref: string;
  iteration: number;
  attempt: number;
  status: TaskStatus;
  /** The node type (SIMPLE, HTTP, SWITCH…); for a dynamic-fork instance the instance's type. */
  taskType: string;
  taskDefName?: string;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  reasonForIncompletion?: string;
  scheduledAt: number;
  /** When a worker first polled it (the start of `timeoutSeconds`). */
  startedAt?: number;
  endedAt?: number;
  /**
   * `deciderSeenAt IS NOT NULL`: an evaluation has already reacted to this row
   * reaching a terminal status (invariant 4). Non-terminal rows are never seen.
   */
  seen: boolean;
  /** The container whose body spawned it (a DO_WHILE, or the FORK_JOIN_DYNAMIC of an instance). */
  parentRef?: string;
  /** Dynamic-fork instance index (0-based). */
  forkIndex?: number;
  /** Snapshotted on the row at schedule time; decide falls back to the blueprint's policy. */
  timeoutSeconds?: number;
  pollTimeoutSeconds?: number;
  subWorkflowId?: string;
}

/** A timer the timer poller claimed for this evaluation (decide re-checks state; this only tells it why it runs). */
export interface FiredTimer {
  kind: TimerKind;
  /** The task the timer was armed for; absent for workflow-level timers. */
  taskId?: string;
  key?: TaskKey;
  fireAt: number;
}

/**
 * Everything one evaluation reads. There is deliberately **no field that
 * could hold every task of a workflow** (invariant 6): `frontier` is bounded
 * by in-flight work, and `loaded` by the refs `refsToLoad` named — a
 * 30,000-task workflow evaluates from the same handful of rows as a 5-task one.
 * Do not add a `tasks` list.
 */
export interface EvaluationState {
  workflow: WorkflowSnapshot;
  /**
   * Every non-terminal task (`TaskExecutions_frontier_idx`), plus every
   * terminal task with `seen: false` (`TaskExecutions_unprocessed_idx`):
   * the rows this evaluation must react to.
   */
  frontier: readonly TaskSnapshot[];
  /**
   * For each ref `refsToLoad(blueprint, …)` returned: that ref's latest row by
   * `(iteration DESC, attempt DESC)` — one indexed point lookup per ref. Rows
   * may also appear in `frontier`; decide dedupes by taskId (frontier wins).
   * Older iterations and attempts are never needed.
   */
  loaded: readonly TaskSnapshot[];
  /** Timers claimed for this evaluation, if any. Only ALERT_ONLY alerts use them; deadlines are re-checked against `now`. */
  firedTimers?: readonly FiredTimer[];
}

// ---------------------------------------------------------------------------
// Commands out

/**
 * What a timer is for (the Timers table's kinds). decide arms `workflowTimeout`,
 * `wait` and `scheduleToStart`; `startToClose`/`taskTimeout` are the poller's
 * when it first leases a task with a timeout. Retry and start delays are
 * `runAt` on the new attempt, not timers: `retry` and `startDelay` exist for
 * shells that want them and decide never arms them.
 */
export type TimerKind = "scheduleToStart" | "startToClose" | "taskTimeout" | "workflowTimeout" | "wait" | "retry" | "startDelay";

/** The policy fields the shell snapshots onto the task row and queue (inputTemplate is already applied). */
export type TaskPolicySnapshot = Omit<EffectiveTaskPolicy, "inputTemplate">;

/**
 * Insert a new task row (`ON CONFLICT DO NOTHING` on its identity) and, for
 * `worker`/`system` executors, enqueue it on `queueName` visible from `runAt`.
 * Side-effect commands for the same key (startSubWorkflow, startWorkflow,
 * armTimer) must be applied only when this insert actually inserted. Write the
 * row's `scheduledAt` as the `now` decide was given: poll deadlines are derived
 * from it (`scheduledAt` + startDelay or retry delay + pollTimeoutSeconds).
 */
export interface ScheduleTaskCommand {
  kind: "scheduleTask";
  key: TaskKey;
  taskType: string;
  taskDefName: string;
  /** Set for `worker` and `system` executors. */
  queueName?: string;
  executor: TaskExecutor;
  /** SCHEDULED for queued tasks; IN_PROGRESS for external and decider rows. */
  status: "SCHEDULED" | "IN_PROGRESS";
  input: Record<string, unknown>;
  /** Initial output (decider rows keep their bookkeeping there); `{}` otherwise. */
  output: Record<string, unknown>;
  priority: number;
  /** Epoch ms the task becomes visible to pollers: `now` + startDelay or the retry delay (TaskQueues.visibleAt). */
  runAt: number;
  policy: TaskPolicySnapshot;
  /** Resolved output-cache key when the policy has a cache. */
  cacheKey?: string;
  parentRef?: string;
  forkIndex?: number;
  /** Human-readable reason, e.g. "retry of attempt 0: <reason>". */
  reason?: string;
}

/**
 * A task ends successfully. Without `taskId`: insert the row already terminal
 * (tasks the decider resolves itself: NOOP, SWITCH, JOIN, EXCLUSIVE_JOIN,
 * SET_VARIABLE, TERMINATE, an empty DO_WHILE or dynamic fork). With `taskId`:
 * update that row, only if its status is still `from` (compare-and-set; if it
 * matched no row, roll the evaluation back and re-enqueue it). Either way the
 * row is written with `deciderSeenAt` set: decide has reacted to it.
 */
export interface CompleteTaskCommand {
  kind: "completeTask";
  key: TaskKey;
  taskId?: string;
  from?: TaskStatus;
  status: "COMPLETED" | "COMPLETED_WITH_ERRORS";
  taskType: string;
  taskDefName: string;
  /** For inserted rows: the resolved input. */
  input?: Record<string, unknown>;
  output: Record<string, unknown>;
  reasonForIncompletion?: string;
  parentRef?: string;
}

/** A task ends unsuccessfully (same insert/update rules as {@link CompleteTaskCommand}). */
export interface FailTaskCommand {
  kind: "failTask";
  key: TaskKey;
  taskId?: string;
  from?: TaskStatus;
  status: "FAILED" | "FAILED_WITH_TERMINAL_ERROR" | "TIMED_OUT";
  taskType: string;
  taskDefName: string;
  input?: Record<string, unknown>;
  output?: Record<string, unknown>;
  reasonForIncompletion: string;
  parentRef?: string;
}

/**
 * Dead-path elimination: insert a SKIPPED row (seen) for a node none of whose
 * incoming edges was taken, so every reached node has a row and joins
 * downstream can tell "resolved, not taken" from "not yet resolved".
 */
export interface SkipTaskCommand {
  kind: "skipTask";
  key: TaskKey;
  taskType: string;
  taskDefName: string;
  parentRef?: string;
}

/**
 * Cancel a non-terminal task (workflow ending, or a failed dynamic fork's
 * siblings): status CANCELED, seen, dequeued; for SUB_WORKFLOW also terminate
 * the child. Compare-and-set on `from`.
 */
export interface CancelTaskCommand {
  kind: "cancelTask";
  key: TaskKey;
  taskId: string;
  from: TaskStatus;
  reason: string;
}

/**
 * Rewrite a non-terminal decider row's bookkeeping (a DO_WHILE's iteration and
 * per-iteration outputs, a dynamic fork's collected outputs). Full replacement,
 * so applying it twice is harmless. Compare-and-set on `from`.
 */
export interface UpdateTaskCommand {
  kind: "updateTask";
  key: TaskKey;
  /** Absent when the row is being inserted by this same evaluation. */
  taskId?: string;
  from: TaskStatus;
  output: Record<string, unknown>;
}

/** Replace the workflow's variables with this map (SET_VARIABLE merges into the previous map before emitting). */
export interface SetVariablesCommand {
  kind: "setVariables";
  variables: Record<string, unknown>;
}

/**
 * Arm a wake-up: at `fireAt` the timer poller enqueues a decide (and passes the
 * timer in `firedTimers`). Timers only wake the decider; it re-checks deadlines
 * against the state, so a stale timer is harmless. Key by (workflow, task, kind)
 * with ON CONFLICT DO NOTHING. decide arms `workflowTimeout`, `wait` and
 * `scheduleToStart`; the poller arms `startToClose` when it first leases a task
 * with a timeout (only it knows when that happens).
 */
export interface ArmTimerCommand {
  kind: "armTimer";
  timer: TimerKind;
  /** The task it is for; absent for `workflowTimeout`. */
  key?: TaskKey;
  taskId?: string;
  fireAt: number;
}

/** Drop the pending timers of a task that has ended (all kinds). Workflow-ending commands drop all of the workflow's timers implicitly. */
export interface CancelTimerCommand {
  kind: "cancelTimer";
  key: TaskKey;
  taskId: string;
}

/** Start a child workflow for the SUB_WORKFLOW task `key` (or dynamic-fork instance); its end completes or fails that task. */
export interface StartSubWorkflowCommand {
  kind: "startSubWorkflow";
  key: TaskKey;
  name: string;
  /** Latest when absent. */
  version?: number;
  /** An inline definition (SUB_WORKFLOW `workflowDefinition`), to validate, compile and run. */
  workflowDefinition?: unknown;
  input: Record<string, unknown>;
  correlationId?: string;
  priority: number;
}

/**
 * START_WORKFLOW: start a workflow and do not wait for it. The shell then
 * completes task `key` with `{ workflowId }` (or fails it when the start fails).
 */
export interface StartWorkflowCommand {
  kind: "startWorkflow";
  key: TaskKey;
  name: string;
  version?: number;
  input: Record<string, unknown>;
  correlationId?: string;
}

/** Set `deciderSeenAt` on terminal rows this evaluation reacted to (invariant 4). */
export interface MarkSeenCommand {
  kind: "markSeen";
  taskIds: string[];
}

/**
 * keepLastN: delete the rows of `refs` (a loop's body) with `iteration < belowIteration`.
 * decide never needs them: it reads only each ref's latest row.
 */
export interface PruneIterationsCommand {
  kind: "pruneIterations";
  loopRef: string;
  refs: string[];
  belowIteration: number;
}

/** Something happened that only needs recording (ALERT_ONLY timeouts): emit a metric/event, change nothing. */
export interface AlertCommand {
  kind: "alert";
  alert: "taskTimeout" | "workflowTimeout";
  key?: TaskKey;
  taskId?: string;
  message: string;
}

/** Ask for another evaluation soon (decide bounds the work of one evaluation, e.g. synchronous loop iterations). */
export interface RequestEvaluationCommand {
  kind: "requestEvaluation";
  reason: string;
}

/** The failure workflow to start when this one fails (Conductor's `failureWorkflow`), with Conductor's input. */
export interface FailureWorkflowStart {
  name: string;
  /** `{ workflowId, reason, failureStatus, failureTaskId? }`; the shell may add `failedWorkflow`. */
  input: Record<string, unknown>;
}

/** The workflow completed (its outputParameters resolved, or TERMINATE with COMPLETED). */
export interface CompleteWorkflowCommand {
  kind: "completeWorkflow";
  output: Record<string, unknown>;
}

/** The workflow failed: a non-optional task failed with no retries left, or TERMINATE with FAILED. */
export interface FailWorkflowCommand {
  kind: "failWorkflow";
  reason: string;
  failedTaskRef?: string;
  failedTaskId?: string;
  output: Record<string, unknown>;
  failureWorkflow?: FailureWorkflowStart;
}

/** TERMINATE with status TERMINATED. */
export interface TerminateWorkflowCommand {
  kind: "terminateWorkflow";
  reason: string;
  output: Record<string, unknown>;
}

/** The workflow's timeout (TIME_OUT_WF), or a task timeout with TIME_OUT_WF. */
export interface TimeOutWorkflowCommand {
  kind: "timeOutWorkflow";
  reason: string;
  timedOutTaskRef?: string;
  output: Record<string, unknown>;
  failureWorkflow?: FailureWorkflowStart;
}

/**
 * What decide asks the shell to do, a discriminated union on `kind`. Commands
 * are in a deterministic order and meant to be applied in it, in one
 * transaction. A workflow-ending command, when present, is last, and every
 * task still running has a `cancelTask` before it.
 */
export type Command =
  | ScheduleTaskCommand
  | CompleteTaskCommand
  | FailTaskCommand
  | SkipTaskCommand
  | CancelTaskCommand
  | UpdateTaskCommand
  | SetVariablesCommand
  | ArmTimerCommand
  | CancelTimerCommand
  | StartSubWorkflowCommand
  | StartWorkflowCommand
  | MarkSeenCommand
  | PruneIterationsCommand
  | AlertCommand
  | RequestEvaluationCommand
  | CompleteWorkflowCommand
  | FailWorkflowCommand
  | TerminateWorkflowCommand
  | TimeOutWorkflowCommand;

/** A command's `kind`. */
export type CommandKind = Command["kind"];

/** Commands that end the workflow. */
export type WorkflowEndCommand = CompleteWorkflowCommand | FailWorkflowCommand | TerminateWorkflowCommand | TimeOutWorkflowCommand;

/** Something decide noticed that changes nothing but is worth logging (an expression that read a ref not loaded, a bad SWITCH value…). */
export interface Diagnostic {
  level: "info" | "warn";
  code: string;
  message: string;
  ref?: string;
}

/** The result of `decide`. */
export interface Decision {
  commands: Command[];
  diagnostics: Diagnostic[];
}

/** Everything decide needs that is not data: today only the script sandbox. */
export interface DecideDeps {
  scripts: ScriptEvaluator;
}
