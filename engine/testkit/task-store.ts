/**
 * An in-memory stand-in for one workflow's rows in Postgres — the
 * WorkflowExecutions row, its TaskExecutions, TaskQueues entries and Timers —
 * that applies decide's commands exactly as the evaluator in server/ does:
 *
 * - task identity `(ref, iteration, attempt)` is unique; inserts are
 *   insert-if-absent (`ON CONFLICT DO NOTHING`), and side-effect commands for
 *   a key whose insert was absorbed are skipped;
 * - updates with `from` are compare-and-set; one that matches no row rolls the
 *   whole evaluation back (every change of the batch is undone);
 * - `aggregateForkOutput` builds a fork's output from its instance rows, one
 *   identity lookup per instance as the SQL probes the identity index, and
 *   writes the fork terminal and unseen (see the command's SQL contract);
 * - the evaluation state is loaded the way the evaluator loads it (invariant 6):
 *   the frontier (non-terminal rows plus terminal rows not yet seen) and, for
 *   each ref `refsToLoad` names, that ref's latest row — nothing else; a
 *   running dynamic fork's row comes without its O(instances) input (see
 *   `EvaluationState.frontier`).
 *
 * The simulator drives it with worker results and timer firings; replay
 * drives it with the events of a recorded history. Both therefore rebuild the
 * same states from the same events. Task ids are `<workflowId>:t<n>` in
 * insertion order, so a replay assigns the ids the recording saw.
 */
import { forkInstanceRef, refsToLoad } from "../compile";
import type { Blueprint } from "../compile";
import type {
  Command,
  EvaluationState,
  FailureWorkflowStart,
  FiredTimer,
  StartSubWorkflowCommand,
  StartWorkflowCommand,
  TaskExecutor,
  TaskKey,
  TaskPolicySnapshot,
  TaskSnapshot,
  TimerKind,
  WorkflowSnapshot,
  AlertCommand,
} from "../decide/types";
import { aggregateForkOutput, isForkInstanceDone } from "../decide/fork-output";
import { isTerminalTaskStatus } from "../statuses";
import type { TaskStatus, WorkflowStatus } from "../statuses";
import type { HistoryWorkflow, TaskUpdatedEvent } from "./history";
import { formatTaskKey } from "./history";

/** One TaskExecutions row (with its TaskQueues entry folded in). */
export interface StoredTask extends TaskSnapshot {
  /** Insertion order. */
  seq: number;
  executor: TaskExecutor;
  queueName?: string;
  /** TaskQueues.visibleAt: a poller may lease it from then on. */
  visibleAt: number;
  /** Has a TaskQueues entry no worker holds a lease on. */
  queued: boolean;
  pollCount: number;
  priority: number;
  policy?: TaskPolicySnapshot;
  cacheKey?: string;
  callbackAfterSeconds?: number;
  workerId?: string;
  /** Deleted by `pruneIterations` (keepLastN); kept here only for the simulation's report. */
  pruned?: boolean;
}

/** A pending Timers row. */
export interface StoredTimer {
  kind: TimerKind;
  key?: TaskKey;
  taskId?: string;
  fireAt: number;
  seq: number;
}

/** Something the shell does besides writing rows, for the simulator to carry out after the evaluation commits. */
export type StoreEffect =
  | { kind: "startSubWorkflow"; command: StartSubWorkflowCommand; taskId: string; childWorkflowId: string }
  | { kind: "startWorkflow"; command: StartWorkflowCommand; taskId: string; workflowId: string }
  | { kind: "terminateSubWorkflow"; taskId: string; childWorkflowId: string }
  | { kind: "failureWorkflow"; start: FailureWorkflowStart }
  | { kind: "alert"; command: AlertCommand };

/** What applying one evaluation's commands did. */
export type ApplyResult =
  | {
      ok: true;
      effects: StoreEffect[];
      /** decide asked for another evaluation, or the shell ended a task (START_WORKFLOW) that decide must react to. */
      needsEvaluation: boolean;
      /** scheduleTask commands whose identity had been scheduled before in this run (absorbed, or re-inserted after a prune). */
      duplicateSchedules: TaskKey[];
    }
  | { ok: false; commandIndex: number; reason: string };

/** A task update as the task-update API receives it. */
export type TaskUpdate = Pick<TaskUpdatedEvent, "status" | "output" | "reasonForIncompletion" | "callbackAfterSeconds">;

const keyText = (k: TaskKey): string => `${k.iteration}\u0000${k.attempt}\u0000${k.ref}`;
const timerText = (kind: TimerKind, taskId: string | undefined): string => `${kind}\u0000${taskId ?? ""}`;

/** A deep copy, so decide (or a worker) can never mutate a stored row in place. */
function copy<T>(value: T): T {
  return structuredClone(value);
}

/** The in-memory store of one workflow run. */
export class TaskStore {
  readonly blueprint: Blueprint;
  readonly workflow: WorkflowSnapshot & { output: Record<string, unknown>; reasonForIncompletion?: string; failedTaskRef?: string; endedAt?: number };
  private readonly rows = new Map<string, StoredTask>();
  private readonly byKey = new Map<string, string>();
  private readonly byRef = new Map<string, Set<string>>();
  private readonly latest = new Map<string, string>();
  private readonly frontierIds = new Set<string>();
  private readonly timerMap = new Map<string, StoredTimer>();
  private readonly order: string[] = [];
  private readonly prunedRows = new Map<string, StoredTask>();
  private readonly everScheduled = new Set<string>();
  private nextSeq = 1;
  private nextTimerSeq = 1;
  /** Undo log of the batch being applied; null outside a batch. */
  private journal: (() => void)[] | null = null;

  constructor(blueprint: Blueprint, start: HistoryWorkflow) {
    this.blueprint = blueprint;
    this.workflow = {
      id: start.workflowId,
      defName: start.name,
      defVersion: start.version ?? 1,
      status: "RUNNING",
      input: copy(start.input),
      variables: copy(start.variables),
      startedAt: start.startedAt,
      version: 0,
      output: {},
    };
    if (start.correlationId !== undefined) this.workflow.correlationId = start.correlationId;
    if (start.priority !== undefined) this.workflow.priority = start.priority;
    if (start.parentWorkflowId !== undefined) this.workflow.parentWorkflowId = start.parentWorkflowId;
    if (start.parentWorkflowTaskId !== undefined) this.workflow.parentWorkflowTaskId = start.parentWorkflowTaskId;
  }

  // -------------------------------------------------------------------------
  // Reads

  /** A row by id (pruned rows included). */
  task(taskId: string): StoredTask | undefined {
    return this.rows.get(taskId) ?? this.prunedRows.get(taskId);
  }

  /** The live row with this identity. */
  taskByKey(key: TaskKey): StoredTask | undefined {
    const id = this.byKey.get(keyText(key));
    return id === undefined ? undefined : this.rows.get(id);
  }

  /** Every row ever inserted, in insertion order (pruned ones flagged). */
  allTasks(): StoredTask[] {
    return this.order.map((id) => this.task(id)!);
  }

  /** Frontier rows (non-terminal, or terminal and unseen), in insertion order. */
  frontier(): StoredTask[] {
    return [...this.frontierIds].map((id) => this.rows.get(id)!).sort((a, b) => a.seq - b.seq);
  }

  /** Pending timers, by fire time then arming order. */
  timers(): StoredTimer[] {
    return [...this.timerMap.values()].sort((a, b) => a.fireAt - b.fireAt || a.seq - b.seq);
  }

  /**
   * The state one evaluation reads: the frontier plus each `refsToLoad` ref's
   * latest row (invariant 6). Deep copies, in insertion order. `everyRef`
   * loads every ref's latest row instead — the state a naive evaluator would
   * build, for checking that refsToLoad leaves out nothing decide reads.
   */
  evaluationState(firedTimers: readonly FiredTimer[] = [], load: "refsToLoad" | "everyRef" = "refsToLoad"): EvaluationState {
    const frontier = this.frontier();
    const pending: string[] = [];
    const unprocessed: { ref: string; status: TaskStatus }[] = [];
    for (const t of frontier) {
      if (isTerminalTaskStatus(t.status)) unprocessed.push({ ref: t.ref, status: t.status });
      else pending.push(t.ref);
    }
    const loaded: TaskSnapshot[] = [];
    const refs = load === "everyRef" ? [...this.latest.keys()].sort() : refsToLoad(this.blueprint, pending, unprocessed);
    for (const ref of refs) {
      const id = this.latest.get(ref);
      if (id !== undefined) loaded.push(snapshot(this.rows.get(id)!));
    }
    const state: EvaluationState = { workflow: this.workflowSnapshot(), frontier: frontier.map(snapshot), loaded };
    if (firedTimers.length > 0) state.firedTimers = copy([...firedTimers]);
    return state;
  }

  /** The workflow row as decide sees it. */
  workflowSnapshot(): WorkflowSnapshot {
    const { output: _output, reasonForIncompletion: _reason, failedTaskRef: _failed, endedAt: _ended, ...rest } = this.workflow;
    return copy(rest);
  }

  /**
   * The commands of a decision that would insert a row no identity in the
   * store has yet — what "deciding again schedules nothing new" forbids.
   */
  newRowsFrom(commands: readonly Command[]): Command[] {
    return commands.filter((c) => {
      switch (c.kind) {
        case "scheduleTask":
        case "skipTask":
          return !this.byKey.has(keyText(c.key));
        case "completeTask":
        case "failTask":
          return c.taskId === undefined && !this.byKey.has(keyText(c.key));
        default:
          return false;
      }
    });
  }

  // -------------------------------------------------------------------------
  // Decisions

  /**
   * Applies one evaluation's commands in order, as one transaction: all of
   * them, or — when a compare-and-set matches no row — none. Bumps the
   * workflow's version on success.
   */
  applyDecision(commands: readonly Command[], now: number): ApplyResult {
    this.journal = [];
    const effects: StoreEffect[] = [];
    const absorbed = new Set<string>();
    const duplicateSchedules: TaskKey[] = [];
    let needsEvaluation = false;
    const fail = (commandIndex: number, reason: string): ApplyResult => {
      const undo = this.journal!;
      this.journal = null;
      for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      return { ok: false, commandIndex, reason };
    };
    const casRow = (taskId: string | undefined, key: TaskKey, from: TaskStatus | undefined): StoredTask | string => {
      const row = taskId === undefined ? this.taskByKey(key) : this.rows.get(taskId);
      if (row === undefined) return `no task ${taskId ?? formatTaskKey(key)}`;
      if (from !== undefined && row.status !== from) return `task ${formatTaskKey(row)} is ${row.status}, not ${from}`;
      return row;
    };
    /** Inserts a row the decider ends itself (completeTask / failTask with no taskId, skipTask), unless its identity already has one. */
    const insertEnded = (
      key: TaskKey,
      ended: {
        status: TaskStatus;
        taskType: string;
        taskDefName: string;
        input: Record<string, unknown>;
        output: Record<string, unknown>;
        /** Whether the row gets a startedAt (a skipped task never started). */
        started: boolean;
        reasonForIncompletion?: string | undefined;
        parentRef?: string | undefined;
      },
    ): void => {
      const k = keyText(key);
      if (this.byKey.has(k)) {
        absorbed.add(k);
        return;
      }
      const row: StoredTask = {
        taskId: this.newTaskId(),
        seq: this.nextSeq - 1,
        ref: key.ref,
        iteration: key.iteration,
        attempt: key.attempt,
        status: ended.status,
        taskType: ended.taskType,
        taskDefName: ended.taskDefName,
        input: ended.input,
        output: ended.output,
        scheduledAt: now,
        ...(ended.started ? { startedAt: now } : {}),
        endedAt: now,
        seen: true,
        executor: "decider",
        visibleAt: now,
        queued: false,
        pollCount: 0,
        priority: this.workflow.priority ?? 0,
      };
      if (ended.reasonForIncompletion !== undefined) row.reasonForIncompletion = ended.reasonForIncompletion;
      if (ended.parentRef !== undefined) row.parentRef = ended.parentRef;
      this.insert(row);
    };

    for (let i = 0; i < commands.length; i++) {
      const c = commands[i]!;
      switch (c.kind) {
        case "scheduleTask": {
          const k = keyText(c.key);
          if (this.everScheduled.has(k)) duplicateSchedules.push(copy(c.key));
          this.markScheduled(k);
          if (this.byKey.has(k)) {
            absorbed.add(k);
            break;
          }
          const queued = c.executor === "worker" || c.executor === "system";
          const row: StoredTask = {
            taskId: this.newTaskId(),
            seq: 0,
            ref: c.key.ref,
            iteration: c.key.iteration,
            attempt: c.key.attempt,
            status: c.status,
            taskType: c.taskType,
            taskDefName: c.taskDefName,
            input: copy(c.input),
            output: copy(c.output),
            scheduledAt: now,
            seen: false,
            executor: c.executor,
            visibleAt: c.runAt,
            queued,
            pollCount: 0,
            priority: c.priority,
            policy: copy(c.policy),
            timeoutSeconds: c.policy.timeoutSeconds,
            pollTimeoutSeconds: c.policy.pollTimeoutSeconds,
          };
          row.seq = this.nextSeq - 1;
          if (c.queueName !== undefined) row.queueName = c.queueName;
          if (c.cacheKey !== undefined) row.cacheKey = c.cacheKey;
          if (c.parentRef !== undefined) row.parentRef = c.parentRef;
          if (c.forkIndex !== undefined) row.forkIndex = c.forkIndex;
          if (c.firstScheduledAt !== undefined) row.firstScheduledAt = c.firstScheduledAt;
          this.insert(row);
          break;
        }
        case "completeTask":
        case "failTask": {
          if (c.taskId === undefined) {
            insertEnded(c.key, {
              status: c.status,
              taskType: c.taskType,
              taskDefName: c.taskDefName,
              input: copy(c.input ?? {}),
              output: copy(c.output ?? {}),
              started: true,
              reasonForIncompletion: c.reasonForIncompletion,
              parentRef: c.parentRef,
            });
            break;
          }
          const row = casRow(c.taskId, c.key, c.from);
          if (typeof row === "string") return fail(i, `${c.kind}: ${row}`);
          const next: StoredTask = { ...row, status: c.status, endedAt: now, seen: true, queued: false };
          if (c.output !== undefined) next.output = copy(c.output);
          if (c.reasonForIncompletion !== undefined) next.reasonForIncompletion = c.reasonForIncompletion;
          this.put(next);
          break;
        }
        case "skipTask": {
          insertEnded(c.key, { status: "SKIPPED", taskType: c.taskType, taskDefName: c.taskDefName, input: {}, output: {}, started: false, parentRef: c.parentRef });
          break;
        }
        case "cancelTask": {
          const row = casRow(c.taskId, c.key, c.from);
          if (typeof row === "string") return fail(i, `cancelTask: ${row}`);
          this.put({ ...row, status: "CANCELED", endedAt: now, seen: true, queued: false, reasonForIncompletion: c.reason });
          if (row.subWorkflowId !== undefined) effects.push({ kind: "terminateSubWorkflow", taskId: row.taskId, childWorkflowId: row.subWorkflowId });
          break;
        }
        case "startTask": {
          // A delayed task nothing polls starts (its retry/startDelay timer woke the decider).
          const row = casRow(c.taskId, c.key, c.from);
          if (typeof row === "string") return fail(i, `startTask: ${row}`);
          this.put({ ...row, status: "IN_PROGRESS", startedAt: now, input: copy(c.input) });
          break;
        }
        case "updateTask": {
          const row = casRow(c.taskId, c.key, c.from);
          if (typeof row === "string") return fail(i, `updateTask: ${row}`);
          this.put({ ...row, output: copy(c.output) });
          break;
        }
        case "aggregateForkOutput": {
          const fork = casRow(c.taskId, c.key, c.from);
          if (typeof fork === "string") return fail(i, `aggregateForkOutput: ${fork}`);
          const outputs: (Record<string, unknown> | undefined)[] = [];
          let done = 0;
          for (let k = 0; k < c.total; k++) {
            const instance = this.doneAttempt(forkInstanceRef(c.key.ref, k), c.key.iteration);
            if (instance !== undefined) done++;
            outputs.push(instance?.output);
          }
          if (c.status === "COMPLETED" && done !== c.total) return fail(i, `aggregateForkOutput: ${done} of ${c.total} instances of ${formatTaskKey(c.key)} are done`);
          const labels = Array.isArray(fork.input.forkedTasks) ? (fork.input.forkedTasks as unknown[]) : [];
          const next: StoredTask = { ...fork, status: c.status, output: copy(aggregateForkOutput(c.shape, labels, outputs)), endedAt: now, seen: false, queued: false };
          if (c.reasonForIncompletion !== undefined) next.reasonForIncompletion = c.reasonForIncompletion;
          this.put(next);
          break;
        }
        case "setVariables":
          this.setWorkflow({ variables: copy(c.variables) });
          break;
        case "armTimer": {
          if (c.key !== undefined && absorbed.has(keyText(c.key))) break;
          const taskId = c.taskId ?? (c.key === undefined ? undefined : this.taskByKey(c.key)?.taskId);
          const t = timerText(c.timer, taskId);
          if (this.timerMap.has(t)) break;
          const timer: StoredTimer = { kind: c.timer, fireAt: c.fireAt, seq: this.nextTimerSeq };
          if (c.key !== undefined) timer.key = copy(c.key);
          if (taskId !== undefined) timer.taskId = taskId;
          this.setTimer(t, timer);
          break;
        }
        case "cancelTimer":
          for (const [t, timer] of [...this.timerMap]) if (timer.taskId === c.taskId) this.setTimer(t, undefined);
          break;
        case "startSubWorkflow": {
          if (absorbed.has(keyText(c.key))) break;
          const row = this.taskByKey(c.key);
          if (row === undefined) return fail(i, `startSubWorkflow: no task ${formatTaskKey(c.key)}`);
          const childWorkflowId = `${this.workflow.id}/${c.key.ref}.${c.key.iteration}.${c.key.attempt}`;
          this.put({ ...row, subWorkflowId: childWorkflowId });
          effects.push({ kind: "startSubWorkflow", command: copy(c), taskId: row.taskId, childWorkflowId });
          break;
        }
        case "startWorkflow": {
          if (absorbed.has(keyText(c.key))) break;
          const row = this.taskByKey(c.key);
          if (row === undefined) return fail(i, `startWorkflow: no task ${formatTaskKey(c.key)}`);
          const workflowId = `${this.workflow.id}/started/${c.key.ref}.${c.key.iteration}.${c.key.attempt}`;
          // The shell completes the task with the new id in the same transaction; decide reacts next time.
          this.put({ ...row, status: "COMPLETED", output: { workflowId }, endedAt: now, seen: false, queued: false });
          effects.push({ kind: "startWorkflow", command: copy(c), taskId: row.taskId, workflowId });
          needsEvaluation = true;
          break;
        }
        case "markSeen":
          for (const id of c.taskIds) {
            const row = this.rows.get(id);
            if (row !== undefined && !row.seen) this.put({ ...row, seen: true });
          }
          break;
        case "pruneIterations":
          for (const ref of c.refs) {
            for (const id of [...(this.byRef.get(ref) ?? [])]) {
              if (this.rows.get(id)!.iteration < c.belowIteration) this.prune(id);
            }
          }
          break;
        case "alert":
          effects.push({ kind: "alert", command: copy(c) });
          break;
        case "requestEvaluation":
          needsEvaluation = true;
          break;
        case "completeWorkflow":
          this.endWorkflow("COMPLETED", now, c.output, undefined);
          break;
        case "failWorkflow":
          this.endWorkflow("FAILED", now, c.output, c.reason, c.failedTaskRef);
          if (c.failureWorkflow !== undefined) effects.push({ kind: "failureWorkflow", start: copy(c.failureWorkflow) });
          break;
        case "terminateWorkflow":
          this.endWorkflow("TERMINATED", now, c.output, c.reason);
          break;
        case "timeOutWorkflow":
          this.endWorkflow("TIMED_OUT", now, c.output, c.reason, c.timedOutTaskRef);
          if (c.failureWorkflow !== undefined) effects.push({ kind: "failureWorkflow", start: copy(c.failureWorkflow) });
          break;
        default: {
          const unknown: never = c;
          return fail(i, `unknown command ${JSON.stringify((unknown as { kind?: unknown }).kind)}`);
        }
      }
    }
    this.setWorkflow({ version: this.workflow.version + 1 });
    this.journal = null;
    return { ok: true, effects, needsEvaluation, duplicateSchedules };
  }

  // -------------------------------------------------------------------------
  // External events (each its own transaction; none can fail half-way)

  /**
   * A worker leases a queued task: IN_PROGRESS, polled once more, started on
   * the first poll. The poller arms the `startToClose` timer then (decide
   * cannot: only the poller knows when the task starts). False when the task
   * is not leasable (no longer queued, ended).
   */
  poll(taskId: string, now: number, workerId: string): boolean {
    const row = this.rows.get(taskId);
    if (row === undefined || !row.queued || isTerminalTaskStatus(row.status)) return false;
    const first = row.startedAt === undefined;
    this.put({ ...row, status: "IN_PROGRESS", queued: false, pollCount: row.pollCount + 1, workerId, startedAt: row.startedAt ?? now });
    const timeout = row.timeoutSeconds ?? 0;
    if (first && timeout > 0) {
      const t = timerText("startToClose", taskId);
      if (!this.timerMap.has(t)) this.setTimer(t, { kind: "startToClose", key: { ref: row.ref, iteration: row.iteration, attempt: row.attempt }, taskId, fireAt: now + timeout * 1000, seq: this.nextTimerSeq });
    }
    return true;
  }

  /**
   * A task update, as the task-update API applies it: only to a row that has
   * not ended (a late report for a task that timed out or was canceled is
   * rejected, as Conductor rejects it). A terminal status leaves the row
   * unseen for the decider; IN_PROGRESS re-queues it after the callback.
   * True when applied; the caller then enqueues a decide for terminal ones.
   */
  update(taskId: string, update: TaskUpdate, now: number): boolean {
    const row = this.rows.get(taskId);
    if (row === undefined || isTerminalTaskStatus(row.status)) return false;
    if (update.status === "IN_PROGRESS") {
      const callback = update.callbackAfterSeconds ?? 0;
      const queued = row.executor === "worker" || row.executor === "system";
      this.put({ ...row, status: "IN_PROGRESS", output: copy(update.output), callbackAfterSeconds: callback, visibleAt: now + callback * 1000, queued });
      return true;
    }
    const next: StoredTask = { ...row, status: update.status, output: copy(update.output), endedAt: now, seen: false, queued: false };
    if (update.reasonForIncompletion !== undefined) next.reasonForIncompletion = update.reasonForIncompletion;
    this.put(next);
    return true;
  }

  /** The timer poller claims a due timer (deletes it). Returns it as decide's `firedTimers` entry, or undefined if no such timer is pending. */
  fireTimer(kind: TimerKind, taskId: string | undefined): FiredTimer | undefined {
    const t = timerText(kind, taskId);
    const timer = this.timerMap.get(t);
    if (timer === undefined) return undefined;
    this.setTimer(t, undefined);
    const fired: FiredTimer = { kind: timer.kind, fireAt: timer.fireAt };
    if (timer.taskId !== undefined) fired.taskId = timer.taskId;
    if (timer.key !== undefined) fired.key = copy(timer.key);
    return fired;
  }

  /** The attempt of `ref` at `iteration` that ended successfully (at most one can: only failures are retried). */
  private doneAttempt(ref: string, iteration: number): StoredTask | undefined {
    for (const id of this.byRef.get(ref) ?? []) {
      const row = this.rows.get(id)!;
      if (row.iteration === iteration && isForkInstanceDone(row.status)) return row;
    }
    return undefined;
  }

  // -------------------------------------------------------------------------
  // Row bookkeeping, journaled while a batch is open

  private newTaskId(): string {
    const n = this.nextSeq++;
    this.journal?.push(() => {
      this.nextSeq = n;
    });
    return `${this.workflow.id}:t${n}`;
  }

  private markScheduled(k: string): void {
    if (this.everScheduled.has(k)) return;
    this.everScheduled.add(k);
    this.journal?.push(() => this.everScheduled.delete(k));
  }

  private insert(row: StoredTask): void {
    this.order.push(row.taskId);
    this.journal?.push(() => this.order.pop());
    this.put(row);
  }

  private put(row: StoredTask): void {
    const prev = this.rows.get(row.taskId);
    this.journal?.push(() => (prev === undefined ? this.unindex(row.taskId) : this.index(prev)));
    this.index(row);
  }

  private prune(taskId: string): void {
    const row = this.rows.get(taskId)!;
    this.unindex(taskId);
    this.prunedRows.set(taskId, { ...row, pruned: true });
    this.journal?.push(() => {
      this.prunedRows.delete(taskId);
      this.index(row);
    });
  }

  private index(row: StoredTask): void {
    this.rows.set(row.taskId, row);
    this.byKey.set(keyText(row), row.taskId);
    let ids = this.byRef.get(row.ref);
    if (ids === undefined) this.byRef.set(row.ref, (ids = new Set()));
    ids.add(row.taskId);
    const latestId = this.latest.get(row.ref);
    const cur = latestId === undefined ? undefined : this.rows.get(latestId);
    if (cur === undefined || row.iteration > cur.iteration || (row.iteration === cur.iteration && row.attempt >= cur.attempt)) this.latest.set(row.ref, row.taskId);
    if (!isTerminalTaskStatus(row.status) || !row.seen) this.frontierIds.add(row.taskId);
    else this.frontierIds.delete(row.taskId);
  }

  private unindex(taskId: string): void {
    const row = this.rows.get(taskId);
    if (row === undefined) return;
    this.rows.delete(taskId);
    this.byKey.delete(keyText(row));
    this.frontierIds.delete(taskId);
    const ids = this.byRef.get(row.ref);
    ids?.delete(taskId);
    if (this.latest.get(row.ref) === taskId) {
      this.latest.delete(row.ref);
      let best: StoredTask | undefined;
      for (const id of ids ?? []) {
        const r = this.rows.get(id)!;
        if (best === undefined || r.iteration > best.iteration || (r.iteration === best.iteration && r.attempt > best.attempt)) best = r;
      }
      if (best !== undefined) this.latest.set(row.ref, best.taskId);
    }
  }

  private setTimer(t: string, timer: StoredTimer | undefined): void {
    const prev = this.timerMap.get(t);
    this.journal?.push(() => (prev === undefined ? this.timerMap.delete(t) : this.timerMap.set(t, prev)));
    if (timer === undefined) {
      this.timerMap.delete(t);
      return;
    }
    this.timerMap.set(t, timer);
    this.nextTimerSeq++;
  }

  private setWorkflow(changes: Partial<TaskStore["workflow"]>): void {
    const prev = { ...this.workflow };
    this.journal?.push(() => {
      for (const key of Object.keys(this.workflow)) delete (this.workflow as unknown as Record<string, unknown>)[key];
      Object.assign(this.workflow, prev);
    });
    Object.assign(this.workflow, changes);
  }

  /** Ends the workflow and drops all its timers, as the workflow-ending commands do implicitly. */
  private endWorkflow(status: WorkflowStatus, now: number, output: Record<string, unknown>, reason: string | undefined, failedTaskRef?: string): void {
    const changes: Partial<TaskStore["workflow"]> = { status, output: copy(output), endedAt: now };
    if (reason !== undefined) changes.reasonForIncompletion = reason;
    if (failedTaskRef !== undefined) changes.failedTaskRef = failedTaskRef;
    this.setWorkflow(changes);
    for (const t of [...this.timerMap.keys()]) this.setTimer(t, undefined);
  }
}

/**
 * A row as decide sees it: the TaskSnapshot fields only, deep-copied. A
 * running dynamic fork's input (one entry per instance) is left out, as the
 * evaluator leaves it out: decide must not need it (EvaluationState.frontier).
 */
function snapshot(r: StoredTask): TaskSnapshot {
  const s: TaskSnapshot = {
    taskId: r.taskId,
    ref: r.ref,
    iteration: r.iteration,
    attempt: r.attempt,
    status: r.status,
    taskType: r.taskType,
    input: r.taskType === "FORK_JOIN_DYNAMIC" && r.status === "IN_PROGRESS" ? {} : r.input,
    output: r.output,
    scheduledAt: r.scheduledAt,
    seen: r.seen,
  };
  if (r.firstScheduledAt !== undefined) s.firstScheduledAt = r.firstScheduledAt;
  if (r.taskDefName !== undefined) s.taskDefName = r.taskDefName;
  if (r.reasonForIncompletion !== undefined) s.reasonForIncompletion = r.reasonForIncompletion;
  if (r.startedAt !== undefined) s.startedAt = r.startedAt;
  if (r.endedAt !== undefined) s.endedAt = r.endedAt;
  if (r.parentRef !== undefined) s.parentRef = r.parentRef;
  if (r.forkIndex !== undefined) s.forkIndex = r.forkIndex;
  if (r.timeoutSeconds !== undefined) s.timeoutSeconds = r.timeoutSeconds;
  if (r.pollTimeoutSeconds !== undefined) s.pollTimeoutSeconds = r.pollTimeoutSeconds;
  if (r.subWorkflowId !== undefined) s.subWorkflowId = r.subWorkflowId;
  return copy(s);
}
