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
  /**
   * When the task's first attempt was scheduled (`totalTimeoutSeconds` runs
   * from it, across every attempt). Absent means `scheduledAt`: always so for
   * attempt 0; a retry's row carries the value its scheduleTask command gave
   * (TaskExecutions."firstScheduledAt", NULL for attempt 0).
   */
  firstScheduledAt?: number;
  /** When a worker first polled it (the start of `timeoutSeconds`); for a row nothing polls, when it started. */
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
   * Every non-terminal task, plus every terminal task with `seen: false`
   * (together, `TaskExecutions_pending_idx`):
   * the rows this evaluation must react to.
   *
   * A running (IN_PROGRESS) FORK_JOIN_DYNAMIC row may be given with `input:
   * {}`, here and in `loaded`: its input holds one entry per instance
   * (`forkedTasks`; in the Conductor form also the task list and inputs), and
   * decide reads only its `output` counters — nothing can read a running
   * fork's input (expressions name upstream refs only), and the aggregate is
   * built by the shell (`aggregateForkOutput`). The testkit's store loads it
   * that way, so every simulation checks decide does without it. Once the
   * fork has ended, load it whole: successors may read `${fork.input…}`.
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
 * `wait`, `scheduleToStart`, `taskTimeout` (the `totalTimeoutSeconds` deadline
 * of a queued task, across its attempts) and `retry`/`startDelay` (see below);
 * `startToClose` is the poller's when it first leases a task with a timeout.
 * Retry and start delays of queued (worker/system) tasks are `runAt` on the new
 * attempt (the queue's visibleAt), no timer: the poller finds them. A task
 * nothing polls (executor `external`: SUB_WORKFLOW, WAIT, HUMAN, START_WORKFLOW)
 * with a delay is scheduled SCHEDULED with `runAt` in the future plus a `retry`
 * (attempt > 0) or `startDelay` (attempt 0) timer at `runAt`; the evaluation
 * that timer wakes starts it ({@link StartTaskCommand}).
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
  /** SCHEDULED for queued tasks and for external tasks with a start or retry delay (started later by `startTask`); IN_PROGRESS for other external and decider rows. */
  status: "SCHEDULED" | "IN_PROGRESS";
  input: Record<string, unknown>;
  /** Initial output (decider rows keep their bookkeeping there); `{}` otherwise. */
  output: Record<string, unknown>;
  priority: number;
  /**
   * Epoch ms the task becomes visible to pollers: `now` + startDelay or the
   * retry delay (TaskQueues.visibleAt). For an `external` task with a delay
   * (status SCHEDULED): when decide will start it (a `retry`/`startDelay`
   * timer at this time wakes it); not queued anywhere.
   */
  runAt: number;
  /**
   * Retries only: the first attempt's `scheduledAt`, carried forward so
   * `totalTimeoutSeconds` can be measured across attempts from the latest
   * row alone. The shell writes it to the new row's
   * TaskExecutions."firstScheduledAt" (NULL for attempt 0, which means
   * `scheduledAt`) and loads it into `TaskSnapshot.firstScheduledAt`.
   */
  firstScheduledAt?: number;
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
 * Start a delayed task nothing polls (executor `external`, scheduled SCHEDULED
 * with a start or retry delay; see {@link TimerKind}): compare-and-set
 * `from` (SCHEDULED) → IN_PROGRESS, `startedAt` = now, `input` replaced
 * (a WAIT's duration deadline is computed when it starts). The side-effect
 * commands that follow for the same key (startSubWorkflow, startWorkflow,
 * armTimer `wait`) are the ones the scheduleTask of an undelayed task carries;
 * apply them only when this update matched (otherwise the evaluation rolls
 * back anyway).
 */
export interface StartTaskCommand {
  kind: "startTask";
  key: TaskKey;
  taskId: string;
  from: "SCHEDULED";
  input: Record<string, unknown>;
}

/**
 * Rewrite a non-terminal decider row's bookkeeping (a DO_WHILE's iteration and
 * per-iteration outputs, a dynamic fork's instance counters — see
 * {@link AggregateForkOutputCommand}). Full replacement, so applying it twice
 * is harmless. Compare-and-set on `from`.
 */
export interface UpdateTaskCommand {
  kind: "updateTask";
  key: TaskKey;
  /** Absent when the row is being inserted by this same evaluation. */
  taskId?: string;
  from: TaskStatus;
  output: Record<string, unknown>;
}

/**
 * The shape of a dynamic fork's aggregated output (Conductor's JOIN output for the fork):
 * - `results` (items form): `{ results: [o0, o1, …] }` in instance order, `oK` the
 *   output of instance K's successful attempt, `null` for an instance without one;
 * - `byTaskReferenceName` (Conductor form, `dynamicForkTasksParam`): `{ <label>: oK, … }`,
 *   `label` = the fork row's `input.forkedTasks[K]`, only instances with a successful attempt.
 */
export type ForkOutputShape = "results" | "byTaskReferenceName";

/**
 * End a FORK_JOIN_DYNAMIC row with its aggregated output, built by the shell
 * from the instance rows — decide never holds every instance (invariant 6),
 * and the fork row never accumulates instance outputs while it runs.
 *
 * **Why the fork's row holds only counters while it runs.** Gathering each
 * instance's output into the fork row as it finished made every evaluation
 * O(N) (walk N instances, copy and rewrite an N-entry output: O(N²) CPU and
 * JSONB bytes per fork). Instead the running fork's output is
 * `{ total: N, completed: c }` and an evaluation reacting to k instances
 * writes `completed: c + k` (one `updateTask` of a few bytes): O(k).
 *
 * **Why the counter is exact (idempotent, crash-safe).** `completed` counts
 * the fork's instance rows that reached COMPLETED / COMPLETED_WITH_ERRORS /
 * SKIPPED *and were marked seen while the fork ran*: decide adds exactly the
 * successful instance rows that arrive unseen in this evaluation, and the same
 * evaluation's `markSeen` stamps `deciderSeenAt` on them, in the same
 * transaction as the `updateTask` that writes the new count (invariant 2).
 * Both commit or neither does, so after every commit `completed` = |seen
 * successful instances|: a crash or rollback leaves the rows unseen and the
 * count unchanged, and the next evaluation counts them then; deciding again on
 * the committed state finds them seen and counts nothing (the update is
 * absolute, not an increment, so even re-applying one batch is harmless). A
 * successful attempt is never retried, so an instance counts at most once.
 * (Anything that ever moves a fork row back to IN_PROGRESS — a future
 * workflow retry/rerun — must recompute `completed` with the count below.)
 *
 * **When.** decide emits this once `completed` reaches `total` (status
 * COMPLETED), or when an instance fails for good under an optional fork
 * (COMPLETED_WITH_ERRORS, after the `cancelTask`s of the siblings still
 * running). It comes with a `requestEvaluation`: the row is written terminal
 * but **unseen** (`deciderSeenAt` NULL), so the next evaluation reacts to the
 * fork ending exactly as to a worker's completion — loading the fork row, now
 * holding the aggregated output, so successors' `${fork.output…}` read it.
 * The fork's successors therefore start one evaluation after the last
 * instance's completion, never in the same one. A workflow-ending command in
 * the same evaluation drops it (the fork is canceled instead).
 *
 * **SQL contract** (Postgres evaluator). `$ref`, `$iteration`, `$attempt` from
 * `key` (the fork row, addressed by identity: `taskId` is absent when the row
 * was inserted earlier in the same batch). Each instance is probed on
 * TaskExecutions_identity_idx, so the statement is O(total · log n), once per
 * fork; at most one attempt of an instance can be successful (only failures
 * are retried), so the join yields one row per instance:
 *
 * ```sql
 * WITH fork AS (
 *   SELECT "id", "input" FROM "TaskExecutions"
 *   WHERE "workflowId" = $wf AND "refName" = $ref AND "iteration" = $iteration AND "attempt" = $attempt
 *     AND "status" = $from                          -- compare-and-set
 * ), inst AS (
 *   SELECT g.k, t."output"
 *   FROM generate_series(0, $total - 1) AS g(k)
 *   LEFT JOIN "TaskExecutions" AS t
 *     ON t."workflowId" = $wf AND t."refName" = $ref || '#' || g.k AND t."iteration" = $iteration
 *    AND t."status" IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'SKIPPED')
 * ), agg AS (
 *   SELECT count(inst."output") AS done,
 *          jsonb_build_object('results', coalesce(jsonb_agg(inst."output" ORDER BY inst.k), '[]'::jsonb)) AS results,
 *          coalesce(jsonb_object_agg(coalesce(fork."input" -> 'forkedTasks' ->> inst.k, inst.k::text), inst."output")
 *                     FILTER (WHERE inst."output" IS NOT NULL), '{}'::jsonb) AS by_label
 *   FROM inst CROSS JOIN fork
 *   GROUP BY fork."id"
 * )
 * UPDATE "TaskExecutions" AS f
 * SET "status" = $status,
 *     "output" = CASE $shape WHEN 'results' THEN agg.results ELSE agg.by_label END,
 *     "reasonForIncompletion" = coalesce($reason, f."reasonForIncompletion"),
 *     "endedAt" = $now, "updatedAt" = $now,
 *     "deciderSeenAt" = NULL                         -- the next evaluation reacts to it
 * FROM fork, agg
 * WHERE f."workflowId" = $wf AND f."id" = fork."id"
 *   AND ($status <> 'COMPLETED' OR agg.done = $total)
 * RETURNING f."id";
 * ```
 *
 * No row returned: roll the evaluation back and re-enqueue it, like any
 * compare-and-set — including when `COMPLETED` finds fewer than `total`
 * successful instances (the counter can then only be wrong, and completing
 * would drop outputs). `inst.output` is the instance rows' stored output, so
 * invariant 9 already holds for it; when an instance has an `outputRef` or the
 * aggregate exceeds 256 KB (invariant 8), run the SELECT part, resolve and
 * offload through the blob store, and UPDATE with the same WHERE — same
 * result, same compare-and-set. The in-memory shells (testkit TaskStore, the
 * decider's test harness) apply it with `aggregateForkOutput()` from
 * `engine/decide/fork-output.ts`, which is the reference for this result.
 */
export interface AggregateForkOutputCommand {
  kind: "aggregateForkOutput";
  /** The FORK_JOIN_DYNAMIC row; its instances are `forkInstanceRef(key.ref, 0 … total − 1)` at `key.iteration`. */
  key: TaskKey;
  taskId?: string;
  from: TaskStatus;
  status: "COMPLETED" | "COMPLETED_WITH_ERRORS";
  shape: ForkOutputShape;
  /** Number of instances (the fork row's `output.total`). */
  total: number;
  /** For COMPLETED_WITH_ERRORS: why (the instance that failed for good). */
  reasonForIncompletion?: string;
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
 * with ON CONFLICT DO NOTHING. decide arms `workflowTimeout`, `wait`,
 * `scheduleToStart`, `taskTimeout`, `retry` and `startDelay` (see
 * {@link TimerKind}); the poller arms `startToClose` when it first leases a
 * task with a timeout (only it knows when that happens).
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
  /** 0 to 99; the starting run's priority when absent. */
  priority?: number;
  /** One run per key in the namespace, as a start request's idempotencyKey. */
  idempotencyKey?: string;
  idempotencyStrategy?: "RETURN_EXISTING" | "FAIL" | "FAIL_ON_RUNNING";
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
  | StartTaskCommand
  | UpdateTaskCommand
  | AggregateForkOutputCommand
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
