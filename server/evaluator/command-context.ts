import type { Transaction } from "kysely";
import type { Database, TaskExecutionRow, TaskStatus, WorkflowExecutionRow } from "../../db/schema";
import type { ScheduleTaskCommand, TaskKey } from "../../engine";
import { openHumanTask } from "../human-tasks/open-human-task";
import type { BlobStore } from "../lib/blob-store";
import { offloadIfLarge } from "../lib/payload-offload";
import type { OffloadedPayload } from "../lib/payload-offload";
import { uuidv7 } from "../lib/uuidv7";
import type { RunnerLogger } from "../sidecar/background-runner";
import { enqueueDecide } from "../store/decide-queues";
import { releaseTaskGates } from "../store/semaphores";
import { insertAndEnqueueTasks, insertTasks, transitionTask } from "../store/task-executions";
import type { InsertTaskInput, TaskQueueEntry, TaskWithoutPayloads } from "../store/task-executions";
import { removeQueuedTask } from "../store/task-queues";
import type { EvaluationFinish, FinishEvent, WorkflowEnding } from "../store/workflow-events";

/** What the command handlers need of the evaluator's dependencies. */
export interface CommandDeps {
  /** Needed only when a payload is over 256 KB (invariant 8); without it payloads stay inline. */
  blobs?: BlobStore;
  logger?: Pick<RunnerLogger, "info" | "warn" | "error">;
}

/** A compare-and-set matched no row: roll the evaluation back (which restores its claim: the re-enqueue). */
export class CompareAndSetMiss extends Error {
  override name = "CompareAndSetMiss";
}

/**
 * One evaluated workflow's last writes, left by applyCommands to its caller:
 * the last run of scheduled tasks (inserted and queued with every other
 * workflow's of the transaction in one statement), what follows their insert,
 * and the finish (one statement for all: finishEvaluations).
 */
export interface EvaluationTail {
  workflow: WorkflowExecutionRow;
  pending: PendingSchedule;
  /** What follows the insert of `pending`, given the rows it inserted (by identity), or none when the insert is sent with the finish. */
  afterInsert(created: ReadonlyMap<string, TaskWithoutPayloads> | undefined): Promise<void>;
  /** Its decide re-enqueue when it ended something unseen; then what finishEvaluations writes for it. */
  finish(): Promise<EvaluationFinish>;
}

/** A run of scheduleTask commands and the rows they insert, in the same order. */
export interface PendingSchedule {
  batch: { command: ScheduleTaskCommand; input: OffloadedPayload }[];
  rows: (InsertTaskInput & { id: string; enqueue?: TaskQueueEntry })[];
}

/** A HUMAN task scheduled IN_PROGRESS opens its inbox entry once inserted (openHumanTask), which needs the inserted row. */
export const opensInboxEntry = (c: ScheduleTaskCommand): boolean => c.taskType === "HUMAN" && c.status === "IN_PROGRESS";

export function keyText(key: TaskKey): string {
  return `${key.ref}\u0000${key.iteration}\u0000${key.attempt}`;
}

export function describeKey(key: TaskKey): string {
  return `${key.ref}[${key.iteration}.${key.attempt}]`;
}

/** Inserted task rows by identity (ref, iteration, attempt) within one workflow. */
export function createdByKey(rows: readonly TaskWithoutPayloads[]): Map<string, TaskWithoutPayloads> {
  return new Map(rows.map((row) => [keyText({ ref: row.refName, iteration: row.iteration, attempt: row.attempt }), row]));
}

/**
 * The row of a task the decider resolves itself (NOOP, SWITCH, JOIN, a skip…):
 * born terminal and already seen, so the unprocessed index never holds it.
 */
export function endedByDecider(
  c: { key: TaskKey; taskType: string; taskDefName: string; parentRef?: string },
  status: TaskStatus,
  now: Date,
): Omit<InsertTaskInput, "workflowId" | "namespaceId"> {
  return {
    refName: c.key.ref,
    iteration: c.key.iteration,
    attempt: c.key.attempt,
    taskType: c.taskType,
    taskDefName: c.taskDefName,
    queueName: null,
    status,
    scheduledAt: now,
    endedAt: now,
    updatedAt: now,
    deciderSeenAt: now,
    parentRef: c.parentRef ?? null,
  };
}

export const inlineOf = (p: OffloadedPayload): unknown => ("inline" in p ? p.inline : {});
export const refOf = (p: OffloadedPayload): string | null => ("ref" in p ? p.ref : null);

/**
 * The state one workflow's evaluation builds up while its commands are
 * applied, and the writes the command handlers share. One per evaluated
 * workflow, inside the evaluation's transaction; the handlers
 * (command-handlers.ts) each read and extend it.
 *
 * The workflow row is addressed by "id" alone: a "startedAt" read back into a
 * JS Date has lost its microseconds, so equality on it would miss the row (see
 * lockWorkflow). The row is locked already; the partition probes are cheap.
 */
export class CommandContext {
  readonly now: Date;
  readonly workflowId: string;
  readonly namespaceId: string;
  /** The history this evaluation appends, in the finish. */
  readonly events: FinishEvent[] = [];
  /** Ended tasks this evaluation reacted to (decide's markSeen), stamped seen by finishEvaluations (finishTails). */
  readonly seen: string[] = [];
  /** Task id by identity, for rows inserted or started in this evaluation (later commands address them by key). */
  readonly inserted = new Map<string, string>();
  /** Identities a scheduleTask found already present: their side effects were applied when they were inserted. */
  readonly absorbed = new Set<string>();
  /** The frontier as loaded, by task id. */
  readonly byId: ReadonlyMap<string, TaskExecutionRow>;
  /** Something this evaluation ended unseen (a child start failed, START_WORKFLOW done): the next evaluation reacts. */
  evaluateAgain: string | undefined;
  /** The workflow's end, when this evaluation ended it. */
  ending: WorkflowEnding | undefined;
  /**
   * A run of consecutive scheduleTask commands, inserted and queued in one
   * statement when the next other command comes (or at the end), with their
   * side effects then applied in order: later commands see them exactly as
   * if each had been inserted on its own.
   */
  private readonly scheduled: { command: ScheduleTaskCommand; input: OffloadedPayload }[] = [];

  constructor(
    readonly deps: CommandDeps,
    readonly trx: Transaction<Database>,
    readonly wf: WorkflowExecutionRow,
    frontier: readonly TaskExecutionRow[],
    readonly nowMs: number,
  ) {
    this.now = new Date(nowMs);
    this.workflowId = wf.id;
    this.namespaceId = wf.namespaceId;
    this.byId = new Map(frontier.map((r) => [r.id, r]));
  }

  /** Every compare-and-set that matches no row throws, which rolls everything back — the claim included, so the workflow stays queued. */
  miss(what: string): never {
    throw new CompareAndSetMiss(`workflow ${this.workflowId}: ${what}`);
  }

  /** Frees a frontier task's queue row and its concurrency permits. */
  async dequeue(taskId: string): Promise<void> {
    // Lock order: the queue row before the task row (task-queues.ts).
    const queueName = this.byId.get(taskId)?.queueName;
    if (!queueName) return; // Never queued, so never leased: it holds no permit either.
    await removeQueuedTask(this.trx, { namespaceId: this.namespaceId, queueName, taskId });
    await releaseTaskGates(this.trx, { namespaceId: this.namespaceId, taskId, queueName });
  }

  /** Inserts one row at once (not batched), noting it as inserted or absorbed. */
  async insertOne(row: Omit<InsertTaskInput, "workflowId" | "namespaceId">): Promise<TaskExecutionRow | undefined> {
    const [created] = await insertTasks(this.trx, [{ ...row, workflowId: this.workflowId, namespaceId: this.namespaceId }]);
    const k = keyText({ ref: row.refName, iteration: row.iteration, attempt: row.attempt });
    if (created) this.inserted.set(k, created.id);
    else this.absorbed.add(k);
    return created;
  }

  taskIdOf(key: TaskKey, taskId?: string): string | undefined {
    return taskId ?? this.inserted.get(keyText(key));
  }

  /** Invariant 8: a payload over 256 KB goes to the blob store, written before this transaction commits. */
  async store(value: unknown): Promise<OffloadedPayload> {
    return this.deps.blobs ? offloadIfLarge(this.deps.blobs, value) : { inline: value };
  }

  /** Ends a task this shell started (a child start that failed, a START_WORKFLOW that started) unseen, like a worker's report. */
  async endStartedTask(key: TaskKey, taskId: string, status: "COMPLETED" | "FAILED", output: Record<string, unknown>, reason: string | null): Promise<void> {
    const row = await transitionTask(
      this.trx,
      { workflowId: this.workflowId, taskId, from: "IN_PROGRESS" },
      { status, output, reasonForIncompletion: reason, endedAt: this.now, deciderSeenAt: null, updatedAt: this.now },
    );
    if (!row) this.miss(`end ${describeKey(key)} after starting a workflow`);
    // Left unseen like a worker's report, so the next evaluation's markSeen records the end in the history.
    this.evaluateAgain = `${key.ref} ${status}`;
  }

  schedule(command: ScheduleTaskCommand, input: OffloadedPayload): void {
    this.scheduled.push({ command, input });
  }

  /** The run of scheduleTask commands in hand, taken as the rows to insert (and queue). */
  takeScheduled(): PendingSchedule {
    const batch = this.scheduled.splice(0);
    const rows = batch.map(({ command: c, input }) => {
      const started = c.status === "IN_PROGRESS";
      const queued = c.executor === "worker" || c.executor === "system";
      if (queued && c.queueName === undefined) throw new Error(`scheduleTask ${describeKey(c.key)}: a ${c.executor} task without queueName`);
      return {
        // Given here rather than by the column's default, so that the finish can name the task without waiting for
        // the insert's answer (finishTails).
        id: uuidv7(),
        workflowId: this.workflowId,
        namespaceId: this.namespaceId,
        refName: c.key.ref,
        iteration: c.key.iteration,
        attempt: c.key.attempt,
        taskType: c.taskType,
        taskDefName: c.taskDefName,
        queueName: c.queueName ?? null,
        status: c.status,
        input: inlineOf(input),
        inputRef: refOf(input),
        output: c.output,
        scheduledAt: this.now,
        firstScheduledAt: c.firstScheduledAt === undefined ? null : new Date(c.firstScheduledAt),
        startedAt: started ? this.now : null,
        updatedAt: this.now,
        responseTimeoutSeconds: c.policy.responseTimeoutSeconds,
        timeoutSeconds: c.policy.timeoutSeconds,
        pollTimeoutSeconds: c.policy.pollTimeoutSeconds,
        parentRef: c.parentRef ?? null,
        forkIndex: c.forkIndex ?? null,
        // Visible now: the column's default now() — the transaction's start —
        // is what the enqueue compares to decide whether to NOTIFY; an
        // app-clock "now" read after BEGIN is always a little later, so no
        // parked worker would ever be woken (found by runtime.int.test.ts).
        ...(queued ? { enqueue: { priority: c.priority, ...(c.runAt > this.nowMs ? { visibleAt: new Date(c.runAt) } : {}) } } : {}),
      };
    });
    return { batch, rows };
  }

  /**
   * What follows the insert for each command of the run: its task id, a HUMAN task's inbox entry, TASK_SCHEDULED.
   * Without `created`, the insert travels with the finish, unanswered (finishTails; never for a run that opens inbox
   * entries): each row is taken as inserted under the id it was given, and its TASK_SCHEDULED is kept only if it was.
   */
  async afterInsert({ batch, rows }: PendingSchedule, created: ReadonlyMap<string, TaskWithoutPayloads> | undefined): Promise<void> {
    for (const [i, { command: c }] of batch.entries()) {
      const k = keyText(c.key);
      const row = created?.get(k);
      const id = created === undefined ? rows[i]!.id : row?.id;
      // Scheduled by an earlier evaluation (invariant 5): nothing twice.
      if (id === undefined) {
        this.absorbed.add(k);
        continue;
      }
      this.inserted.set(k, id);
      if (opensInboxEntry(c)) {
        if (row === undefined) throw new Error(`scheduleTask ${describeKey(c.key)}: an inbox entry needs the inserted row`);
        await openHumanTask(this.trx, row, c.input, this.now);
      }
      this.events.push({
        type: "TASK_SCHEDULED",
        refName: c.key.ref,
        taskId: id,
        status: c.status,
        data: { iteration: c.key.iteration, attempt: c.key.attempt, ...(c.reason ? { reason: c.reason } : {}) },
        ...(created === undefined ? { ifInserted: true } : {}),
      });
    }
  }

  /** Inserts the run of scheduled tasks in hand now, for a command that may read or name them. */
  async flushScheduled(): Promise<void> {
    if (this.scheduled.length === 0) return;
    const pending = this.takeScheduled();
    await this.afterInsert(pending, createdByKey(await insertAndEnqueueTasks(this.trx, pending.rows)));
  }

  /**
   * The last run of scheduled tasks and the finish, left to the caller, which writes them for every workflow of the
   * transaction at once (finishTails): nothing after them here reads what they write.
   */
  tail(): EvaluationTail {
    const pending = this.takeScheduled();
    return {
      workflow: this.wf,
      pending,
      afterInsert: (created) => this.afterInsert(pending, created),
      finish: async () => {
        if (this.evaluateAgain !== undefined) await enqueueDecide(this.trx, { workflowId: this.workflowId, namespaceId: this.namespaceId, reason: this.evaluateAgain });
        // `wf` is the row this evaluation locked: the seen marks, the version bump and the history append.
        return { locked: this.wf, seenTaskIds: this.seen, events: this.events, at: this.now, ...(this.ending ? { ending: this.ending } : {}) };
      },
    };
  }
}
