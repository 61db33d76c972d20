import { sql } from "kysely";
import type { Kysely, Transaction } from "kysely";
import { json } from "../../db/json";
import type { Database, TaskExecutionRow, TaskStatus, WorkflowExecutionRow } from "../../db/schema";
import { decide, refsToLoad } from "../../engine";
import type {
  Blueprint,
  Command,
  EvaluationState,
  ScheduleTaskCommand,
  FiredTimer,
  ScriptEvaluator,
  TaskKey,
  TaskSnapshot,
  UnprocessedRef,
  WorkflowEndCommand,
  WorkflowEndStatus,
} from "../../engine";
import type { BlobStore } from "../lib/blob-store";
import type { LoopOutputCache } from "./loop-output-cache";
import { LruCache } from "../lib/lru-cache";
import type { RunnerLogger } from "../sidecar/background-runner";
import { offloadIfLarge, resolvePayload, resolveTaskPayloads } from "../lib/payload-offload";
import type { OffloadedPayload } from "../lib/payload-offload";
import { startNestedExecution } from "../executions/start-execution";
import type { StartExecutionResult } from "../executions/start-execution";
import { uuidv7 } from "../lib/uuidv7";
import { openHumanTask } from "../human-tasks/open-human-task";
import { cancelOpenHumanTasks } from "../store/human-tasks";
import { decodeTimerReason } from "../sidecar/timer-poller";
import { afterWorkflowEnded, terminateWorkflowTree } from "../executions/workflow-lifecycle";
import { claimAndLockWorkflowsThen, enqueueDecide } from "../store/decide-queues";
import { releaseTaskGates } from "../store/semaphores";
import { removeQueuedTask } from "../store/task-queues";
import {
  claimedFrontiersStatement,
  EvaluationReads,
  frontiersByWorkflow,
  insertAndEnqueueTasks,
  insertAndEnqueueTasksStatement,
  insertTasks,
  loadFrontiers,
  loadLatestByRefsOf,
  transitionTask,
} from "../store/task-executions";
import type { InsertTaskInput, TaskQueueEntry, TaskWithoutPayloads } from "../store/task-executions";
import { armTimer, cancelTimers } from "../store/timers";
import { finishEvaluations } from "../store/workflow-events";
import type { EvaluationFinish, FinishEvent, WorkflowEnding } from "../store/workflow-events";

/**
 * The decider's I/O shell (DESIGN.md "Engine invariants"): claim → lock → load
 * → decide → apply → commit.
 *
 * One transaction evaluates up to {@link WORKFLOWS_PER_TRANSACTION} workflows:
 * it claims and locks them in one statement, reads their frontiers in one and
 * the rows their expressions reference in one, then decides and applies each
 * in turn, and commits once. Every statement is a round trip, and on these
 * machines a round trip — a socket write that wakes the other process, both
 * ways — is most of what an evaluation costs (a quarter of the sidecar's and
 * the web process's CPU profile was `writev`). When the queue is short, as at
 * low load, a transaction holds one workflow, exactly as before.
 *
 * What it costs: the claimed workflows' row locks are held until the last one
 * is applied, and one error or compare-and-set miss rolls back the whole
 * transaction — every claim comes back, and the others are simply evaluated
 * again (deciding twice from the same state writes the same thing once,
 * invariant 5). Invariant 2 holds per workflow: every claim is deleted by the
 * transaction's first statement, before any state is read.
 */

/**
 * Workflows claimed per evaluation transaction at most. the system bench (--web) node,
 * closed loop, 16 workers, alternated against one per transaction: 37.5 and
 * 41.7 runs/s against 29.1 and 35.1; statements per run 61-62 against 75,
 * write transactions 5.1 against 8.2-8.4, Postgres CPU 17-19 against 20-22 ms
 * per run. Larger batches hold more row locks for longer and lose more work
 * to a rollback; at the queue depths the bench reaches (30-60) eight already
 * leaves the claim and loads a small share of a transaction.
 */
const WORKFLOWS_PER_TRANSACTION = 8;

export interface EvaluatorDeps {
  db: Kysely<Database>;
  scripts: ScriptEvaluator;
  /** Needed only when a row has an inputRef/outputRef (invariant 8); without it such an evaluation fails. */
  blobs?: BlobStore;
  logger?: Pick<RunnerLogger, "info" | "warn" | "error">;
  /** Epoch ms; Date.now by default. */
  now?: () => number;
  /** Told how long each evaluation took, claim to commit (metrics.ts observeEvaluation). */
  onEvaluation?: (durationMs: number, outcome: "committed" | "conflict" | "failed") => void;
  /** Running loops' outputs already read, kept across evaluations (loop-output-cache.ts); without it every read is whole. */
  loopOutputs?: LoopOutputCache;
}

export interface EvaluateBatchOptions {
  /** Workflows to evaluate at most, 1 to 1000. */
  limit: number;
  offset?: number;
  /** Told each time a claim came back full: more may be waiting than this batch takes (runners.ts opens another lane). */
  onBacklog?: () => void;
}

/** A compare-and-set matched no row: roll the evaluation back (which restores its claim: the re-enqueue). */
export class CompareAndSetMiss extends Error {
  override name = "CompareAndSetMiss";
}

/**
 * Evaluates up to `limit` workflows waiting in DecideQueues, in transactions of
 * up to {@link WORKFLOWS_PER_TRANSACTION}, and returns how many it evaluated
 * (terminal or paused workflows whose claim was merely dropped count too: the
 * queue moved). Stops early when a claim comes back short (the queue is
 * empty), or after a compare-and-set miss (the state moved under it; the
 * restored claims are picked up by the next batch). Any other error in an
 * evaluation re-queues that workflow at the back and rejects with
 * {@link EvaluationError} (see evaluateClaims); transactions committed before
 * it stay committed.
 */
export async function evaluateBatch(deps: EvaluatorDeps, options: EvaluateBatchOptions): Promise<number> {
  const { limit, offset = 0 } = options;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${limit}`);
  }
  let evaluated = 0;
  // Set once an evaluation failed in a transaction that held others: from
  // then on one workflow per transaction, so the others commit without it.
  let failure: EvaluationError | undefined;
  // Set when the writes of a transaction of several workflows failed (BatchedWriteFailure): the same, with no one
  // workflow to blame yet.
  let alone = false;
  while (evaluated < limit) {
    const wanted = failure || alone ? 1 : Math.min(WORKFLOWS_PER_TRANSACTION, limit - evaluated);
    let claimed: number;
    const startedAt = performance.now();
    // Each evaluation's share of its transaction, claim to commit.
    const observe = (result: "committed" | "conflict" | "failed", count: number) => {
      const share = (performance.now() - startedAt) / count;
      for (let i = 0; i < count; i++) deps.onEvaluation?.(share, result);
    };
    try {
      claimed = await deps.db.transaction().execute((trx) => evaluateClaims(deps, trx, wanted, offset));
      if (claimed > 0) observe("committed", claimed);
    } catch (error) {
      observe(error instanceof CompareAndSetMiss ? "conflict" : "failed", 1);
      if (error instanceof CompareAndSetMiss) {
        deps.logger?.warn({ err: error.message }, "decider: compare-and-set missed; evaluation rolled back and stays queued");
        break;
      }
      if (error instanceof BatchedWriteFailure) {
        // Every claim came back with the rollback; one per transaction now finds whose the failure is.
        alone = true;
        continue;
      }
      if (!(error instanceof ClaimedEvaluationFailure)) throw error;
      await requeueAtBack(deps, error.workflowId, error.cause);
      const failed = new EvaluationError(error.workflowId, error.cause);
      // Alone in its transaction: nothing else was lost; stop, as before batching.
      if (error.claims === 1) throw failed;
      // Its transaction's other workflows were rolled back with it and are at
      // the head of the queue again: evaluate them one by one, then report it.
      failure = failed;
      continue;
    }
    evaluated += claimed;
    if (claimed === WORKFLOWS_PER_TRANSACTION) options.onBacklog?.();
    // Fewer than asked for: the queue is drained (or the rest is another
    // lane's), and one more claim would only find that out at the price of a
    // transaction.
    if (claimed < wanted) break;
  }
  if (failure) throw failure;
  return evaluated;
}

/** An evaluation threw; the workflow was re-queued at the back of the decide queue (see evaluateClaims). */
export class EvaluationError extends Error {
  override name = "EvaluationError";
  constructor(
    readonly workflowId: string,
    cause: unknown,
  ) {
    super(`evaluation of workflow ${workflowId} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** An evaluation of a claimed workflow threw (not a compare-and-set miss): its transaction rolls back whole. */
class ClaimedEvaluationFailure extends Error {
  override name = "ClaimedEvaluationFailure";
  constructor(
    readonly workflowId: string,
    override readonly cause: unknown,
    /** Workflows its transaction had claimed, itself included: all rolled back. */
    readonly claims: number,
  ) {
    super(`evaluation of workflow ${workflowId} failed`, { cause });
  }
}

/**
 * Up to `limit` workflows, in the caller's transaction; returns how many
 * claims it took (0: the queue was empty). No savepoint: an error rolls the
 * whole transaction back, claims included, and evaluateBatch then pushes the
 * failed workflow's restored claim to the back of the queue in a statement of
 * its own ({@link requeueAtBack}); the others' claims are back where they were.
 * A SAVEPOINT on every evaluation cost a round trip and, once the evaluation
 * wrote, a subtransaction xid of its own — 4 of the 15 write transactions of a
 * 3-task run — to serve only the failure path.
 */
async function evaluateClaims(deps: EvaluatorDeps, trx: Transaction<Database>, limit: number, offset: number): Promise<number> {
  // What the frontiers and the references read share, so neither payload of a row is read twice (task-executions.ts).
  const reads = new EvaluationReads(deps.loopOutputs);
  const known = reads.known();
  // Invariant 2: the claims are deleted first, in this transaction, before any read; the same statement locks the
  // workflows. The frontiers travel in the claim's round trip, read by a statement of their own that starts once the
  // claim has ended (claimAndLockWorkflowsThen).
  const { claims, thenRows: frontierRows } = await claimAndLockWorkflowsThen(trx, { limit, offset, then: claimedFrontiersStatement(known) });
  /** Runs one workflow's part; what it throws is that workflow's failure. */
  const attributed = async <T>(workflowId: string, part: () => Promise<T> | T): Promise<T> => {
    try {
      return await part();
    } catch (error) {
      if (error instanceof CompareAndSetMiss) throw error; // The claims come back as they were and are retried as they are.
      throw new ClaimedEvaluationFailure(workflowId, error, claims.length);
    }
  };
  // Terminal or paused: decide would do nothing; resume re-enqueues.
  const running = claims.filter((c) => c.workflow.status === "RUNNING");
  const blueprints = new Map<string, Blueprint>();
  for (const { workflow: wf } of running) {
    blueprints.set(wf.id, await attributed(wf.id, () => loadBlueprint(trx, wf.namespaceId, wf.defName, wf.defVersion)));
  }
  const runningIds = running.map((c) => c.workflow.id);
  const frontiers =
    frontierRows === undefined ? await loadFrontiers(trx, runningIds, reads) : frontiersByWorkflow(runningIds, frontierRows, reads, known);
  const refRequests = [];
  for (const { workflow: wf } of running) {
    const rows = frontiers.get(wf.id) ?? [];
    const frontierRefs = rows.filter((r) => r.endedAt === null).map((r) => r.refName);
    const unprocessed: UnprocessedRef[] = rows.filter((r) => r.endedAt !== null).map((r) => ({ ref: r.refName, status: r.status }));
    refRequests.push({ workflowId: wf.id, refs: await attributed(wf.id, () => refsToLoad(blueprints.get(wf.id)!, frontierRefs, unprocessed)) });
  }
  const loadedRefs = await loadLatestByRefsOf(trx, refRequests, reads);
  const tails: EvaluationTail[] = [];
  for (const { workflow: wf, reason } of running) {
    const loaded = { blueprint: blueprints.get(wf.id)!, frontierRows: frontiers.get(wf.id) ?? [], loadedRows: loadedRefs.get(wf.id) ?? [] };
    tails.push(await attributed(wf.id, () => evaluateClaimed(deps, trx, wf, loaded, decodeTimerReason(reason))));
  }
  // Written for every workflow at once; when it fails with several in hand, no one of them can be named, and the
  // batch goes on one workflow per transaction, where the failure is that workflow's own.
  if (tails.length === 1) await attributed(tails[0]!.workflow.id, () => finishTails(trx, tails));
  else await finishTails(trx, tails).catch((error: unknown) => {
    if (error instanceof CompareAndSetMiss) throw error;
    throw new BatchedWriteFailure(error, claims.length);
  });
  return claims.length;
}

/** The batched last writes of a transaction of several workflows failed (finishTails); every claim was rolled back. */
class BatchedWriteFailure extends Error {
  override name = "BatchedWriteFailure";
  constructor(
    override readonly cause: unknown,
    /** Workflows its transaction had claimed: all rolled back. */
    readonly claims: number,
  ) {
    super(`the last writes of ${claims} evaluations failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * One evaluated workflow's last writes, left by applyCommands to its caller:
 * the last run of scheduled tasks (inserted and queued with every other
 * workflow's of the transaction in one statement), what follows their insert,
 * and the finish (one statement for all: finishEvaluations).
 */
interface EvaluationTail {
  workflow: WorkflowExecutionRow;
  pending: PendingSchedule;
  /** What follows the insert of `pending`, given the rows it inserted (by identity), or none when the insert is sent with the finish. */
  afterInsert(created: ReadonlyMap<string, TaskWithoutPayloads> | undefined): Promise<void>;
  /** Its decide re-enqueue when it ended something unseen; then what finishEvaluations writes for it. */
  finish(): Promise<EvaluationFinish>;
}

/** A run of scheduleTask commands and the rows they insert, in the same order. */
interface PendingSchedule {
  batch: { command: ScheduleTaskCommand; input: OffloadedPayload }[];
  rows: (InsertTaskInput & { id: string; enqueue?: TaskQueueEntry })[];
}

/** A HUMAN task scheduled IN_PROGRESS opens its inbox entry once inserted (openHumanTask), which needs the inserted row. */
const opensInboxEntry = (c: ScheduleTaskCommand): boolean => c.taskType === "HUMAN" && c.status === "IN_PROGRESS";

/**
 * The evaluations' last writes for the whole transaction, where each workflow
 * took two round trips: every workflow's last run of scheduled tasks in one
 * insertAndEnqueueTasks, then every finish in one finishEvaluations (the system bench
 * closed loop: docs/performance.md, item 29). The finish is the transaction's
 * last statement, and its COMMIT travels with it (item 53). The insert
 * travels with them too, unanswered — the tasks' ids are given, and the
 * finish keeps the TASK_SCHEDULED of a row only if it was inserted (item 56) —
 * unless a task opens an inbox entry, which needs its inserted row first.
 */
async function finishTails(trx: Transaction<Database>, tails: readonly EvaluationTail[]): Promise<void> {
  const rows = tails.flatMap((tail) => tail.pending.rows);
  const unanswered = rows.length > 0 && !tails.some((tail) => tail.pending.batch.some(({ command }) => opensInboxEntry(command)));
  const byWorkflow = new Map<string, TaskWithoutPayloads[]>();
  for (const row of unanswered ? [] : await insertAndEnqueueTasks(trx, rows)) {
    const rowsOfWorkflow = byWorkflow.get(row.workflowId);
    if (rowsOfWorkflow) rowsOfWorkflow.push(row);
    else byWorkflow.set(row.workflowId, [row]);
  }
  const finishes: EvaluationFinish[] = [];
  for (const tail of tails) {
    await tail.afterInsert(unanswered ? undefined : createdByKey(byWorkflow.get(tail.workflow.id) ?? []));
    finishes.push(await tail.finish());
  }
  await finishEvaluations(trx, finishes, { commit: true, ...(unanswered ? { before: insertAndEnqueueTasksStatement(trx, rows) } : {}) });
}

/** Inserted task rows by identity (ref, iteration, attempt) within one workflow. */
function createdByKey(rows: readonly TaskWithoutPayloads[]): Map<string, TaskWithoutPayloads> {
  return new Map(rows.map((row) => [keyText({ ref: row.refName, iteration: row.iteration, attempt: row.attempt }), row]));
}

/**
 * After a failed evaluation's rollback its claim is back with its old
 * "enqueuedAt", at the head of the queue, where a workflow that fails every
 * time (a poison pill) would be claimed first by every decider forever. A
 * fresh "enqueuedAt" puts it behind the work already waiting; the batch then
 * stops with an {@link EvaluationError}, so the background runner counts it
 * and backs off. A decider that claimed it in between evaluates it again (and
 * fails and moves it back itself); a crash before this statement leaves the
 * claim at the head, retried at once — never lost, which is what matters.
 */
async function requeueAtBack(deps: EvaluatorDeps, workflowId: string, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  await deps.db
    .updateTable("DecideQueues")
    .set({ enqueuedAt: sql<string>`clock_timestamp()`, reason: `evaluation failed: ${message}`.slice(0, 500) })
    .where("workflowId", "=", workflowId)
    .execute();
  deps.logger?.error({ workflowId, err: error }, "decider: evaluation failed; re-queued at the back");
}

/**
 * `firedTimer`: the timer whose firing enqueued this evaluation, when the
 * claim's reason says so (timer-poller.ts). Deadlines are re-checked against
 * `now` whatever it says; only ALERT_ONLY alerts need to know a timer fired,
 * and a reason overwritten by a later enqueue costs at most one alert.
 */
async function evaluateClaimed(
  deps: EvaluatorDeps,
  trx: Transaction<Database>,
  wf: WorkflowExecutionRow,
  { blueprint, frontierRows, loadedRows }: { blueprint: Blueprint; frontierRows: TaskExecutionRow[]; loadedRows: TaskExecutionRow[] },
  firedTimer: FiredTimer | undefined,
): Promise<EvaluationTail> {
  const workflowId = wf.id;

  // Invariant 8: every payload resolved before decide sees it.
  const [frontier, loaded, input] = await Promise.all([
    resolveRows(deps, frontierRows),
    resolveRows(deps, loadedRows),
    wf.inputRef === null ? wf.input : resolvePayload(requireBlobs(deps), { inline: wf.input, ref: wf.inputRef }, "the workflow input"),
  ]);

  const state: EvaluationState = {
    workflow: {
      id: wf.id,
      namespaceId: wf.namespaceId,
      defName: wf.defName,
      defVersion: wf.defVersion,
      status: wf.status,
      input: asObject(input),
      variables: asObject(wf.variables),
      ...(wf.correlationId !== null ? { correlationId: wf.correlationId } : {}),
      startedAt: wf.startedAt.getTime(),
      ...(wf.parentWorkflowId !== null ? { parentWorkflowId: wf.parentWorkflowId } : {}),
      ...(wf.parentTaskId !== null ? { parentWorkflowTaskId: wf.parentTaskId } : {}),
      priority: wf.priority,
      version: wf.version,
    },
    frontier: frontier.map(toSnapshot),
    loaded: loaded.map(toSnapshot),
    ...(firedTimer !== undefined ? { firedTimers: [firedTimer] } : {}),
  };
  const now = deps.now?.() ?? Date.now();
  const decision = decide(blueprint, state, now, { scripts: deps.scripts });
  for (const d of decision.diagnostics) {
    deps.logger?.[d.level]({ workflowId, code: d.code, ref: d.ref }, `decide: ${d.message}`);
  }

  return applyCommands(deps, trx, wf, frontierRows, decision.commands, now);
}

function requireBlobs(deps: EvaluatorDeps): BlobStore {
  if (!deps.blobs) throw new Error("evaluator: a payload is offloaded to the blob store but no blob store was configured");
  return deps.blobs;
}

async function resolveRows(deps: EvaluatorDeps, rows: TaskExecutionRow[]): Promise<TaskExecutionRow[]> {
  if (!rows.some((r) => r.inputRef !== null || r.outputRef !== null)) return rows;
  return resolveTaskPayloads(requireBlobs(deps), rows);
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function toSnapshot(r: TaskExecutionRow): TaskSnapshot {
  const s: TaskSnapshot = {
    taskId: r.id,
    ref: r.refName,
    iteration: r.iteration,
    attempt: r.attempt,
    status: r.status,
    taskType: r.taskType,
    taskDefName: r.taskDefName,
    input: asObject(r.input),
    output: asObject(r.output),
    scheduledAt: r.scheduledAt.getTime(),
    seen: r.deciderSeenAt !== null,
  };
  if (r.reasonForIncompletion !== null) s.reasonForIncompletion = r.reasonForIncompletion;
  if (r.firstScheduledAt !== null) s.firstScheduledAt = r.firstScheduledAt.getTime();
  if (r.startedAt !== null) s.startedAt = r.startedAt.getTime();
  if (r.endedAt !== null) s.endedAt = r.endedAt.getTime();
  if (r.parentRef !== null) s.parentRef = r.parentRef;
  if (r.forkIndex !== null) s.forkIndex = r.forkIndex;
  if (r.timeoutSeconds !== null) s.timeoutSeconds = r.timeoutSeconds;
  if (r.pollTimeoutSeconds !== null) s.pollTimeoutSeconds = r.pollTimeoutSeconds;
  if (r.subWorkflowId !== null) s.subWorkflowId = r.subWorkflowId;
  return s;
}

// ---------------------------------------------------------------------------
// Blueprints: immutable per (namespaceId, name, version) — a trigger refuses
// changes — so a small in-process LRU never needs invalidating.

const blueprints = new LruCache<string, Blueprint>(256);

async function loadBlueprint(db: Kysely<Database>, namespaceId: string, name: string, version: number): Promise<Blueprint> {
  const cacheKey = `${namespaceId}\u0000${name}\u0000${version}`;
  const hit = blueprints.get(cacheKey);
  if (hit !== undefined) return hit;
  const row = await db
    .selectFrom("WorkflowDefinitions")
    .select("blueprint")
    .where("namespaceId", "=", namespaceId)
    .where("name", "=", name)
    .where("version", "=", version)
    .executeTakeFirst();
  if (!row) throw new Error(`evaluator: no workflow definition ${name} v${version} in namespace ${namespaceId}`);
  const blueprint = row.blueprint as Blueprint;
  blueprints.set(cacheKey, blueprint);
  return blueprint;
}

// ---------------------------------------------------------------------------
// Applying a decision

/**
 * The row of a task the decider resolves itself (NOOP, SWITCH, JOIN, a skip…):
 * born terminal and already seen, so the unprocessed index never holds it.
 */
function endedByDecider(
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

function keyText(key: TaskKey): string {
  return `${key.ref}\u0000${key.iteration}\u0000${key.attempt}`;
}

function describe(key: TaskKey): string {
  return `${key.ref}[${key.iteration}.${key.attempt}]`;
}

const WORKFLOW_END_STATUS = {
  completeWorkflow: "COMPLETED",
  failWorkflow: "FAILED",
  terminateWorkflow: "TERMINATED",
  timeOutWorkflow: "TIMED_OUT",
} as const satisfies Record<WorkflowEndCommand["kind"], WorkflowEndStatus>;

/**
 * The workflow row is addressed by "id" alone: a "startedAt" read back into a
 * JS Date has lost its microseconds, so equality on it would miss the row (see
 * lockWorkflow). The row is locked already; the partition probes are cheap.
 *
 * Applies `commands` in order inside the evaluation's transaction. Every
 * compare-and-set that matches no row throws {@link CompareAndSetMiss}, which
 * rolls everything back — the claim included, so the workflow stays queued.
 */
async function applyCommands(
  deps: EvaluatorDeps,
  trx: Transaction<Database>,
  wf: WorkflowExecutionRow,
  frontier: readonly TaskExecutionRow[],
  commands: readonly Command[],
  nowMs: number,
): Promise<EvaluationTail> {
  const now = new Date(nowMs);
  const workflowId = wf.id;
  const namespaceId = wf.namespaceId;
  const events: FinishEvent[] = [];
  /** Ended tasks this evaluation reacted to (decide's markSeen), stamped seen by finishEvaluations (finishTails). */
  const seen: string[] = [];
  /** Task id by identity, for rows inserted or started in this evaluation (later commands address them by key). */
  const inserted = new Map<string, string>();
  /** Something this evaluation ended unseen (a child start failed, START_WORKFLOW done): the next evaluation reacts. */
  let evaluateAgain: string | undefined;
  /** The workflow's end, when this evaluation ended it. */
  let ending: WorkflowEnding | undefined;
  /** Identities a scheduleTask found already present: their side effects were applied when they were inserted. */
  const absorbed = new Set<string>();
  const byId = new Map(frontier.map((r) => [r.id, r]));
  const miss = (what: string): never => {
    throw new CompareAndSetMiss(`workflow ${workflowId}: ${what}`);
  };
  const dequeue = async (taskId: string): Promise<void> => {
    // Lock order: the queue row before the task row (task-queues.ts).
    const queueName = byId.get(taskId)?.queueName;
    if (!queueName) return; // Never queued, so never leased: it holds no permit either.
    await removeQueuedTask(trx, { namespaceId, queueName, taskId });
    await releaseTaskGates(trx, { namespaceId, taskId, queueName });
  };
  const insertOne = async (row: Omit<InsertTaskInput, "workflowId" | "namespaceId">): Promise<TaskExecutionRow | undefined> => {
    const [created] = await insertTasks(trx, [{ ...row, workflowId, namespaceId }]);
    const k = keyText({ ref: row.refName, iteration: row.iteration, attempt: row.attempt });
    if (created) inserted.set(k, created.id);
    else absorbed.add(k);
    return created;
  };
  const taskIdOf = (key: TaskKey, taskId?: string): string | undefined => taskId ?? inserted.get(keyText(key));
  // Invariant 8: a payload over 256 KB goes to the blob store, written before this transaction commits.
  const store = async (value: unknown): Promise<OffloadedPayload> => (deps.blobs ? offloadIfLarge(deps.blobs, value) : { inline: value });
  const inlineOf = (p: OffloadedPayload): unknown => ("inline" in p ? p.inline : {});
  const refOf = (p: OffloadedPayload): string | null => ("ref" in p ? p.ref : null);
  /** Ends a task this shell started (a child start that failed, a START_WORKFLOW that started) unseen, like a worker's report. */
  const endStartedTask = async (key: TaskKey, taskId: string, status: "COMPLETED" | "FAILED", output: Record<string, unknown>, reason: string | null): Promise<void> => {
    const row = await transitionTask(
      trx,
      { workflowId, taskId, from: "IN_PROGRESS" },
      { status, output, reasonForIncompletion: reason, endedAt: now, deciderSeenAt: null, updatedAt: now },
    );
    if (!row) miss(`end ${describe(key)} after starting a workflow`);
    // Left unseen like a worker's report, so the next evaluation's markSeen records the end in the history.
    evaluateAgain = `${key.ref} ${status}`;
  };

  /**
   * A run of consecutive scheduleTask commands, inserted and queued in one
   * statement when the next other command comes (or at the end), with their
   * side effects then applied in order: later commands see them exactly as
   * if each had been inserted on its own.
   */
  const scheduled: { command: ScheduleTaskCommand; input: OffloadedPayload }[] = [];
  /** The run of scheduleTask commands in hand, taken as the rows to insert (and queue). */
  const takeScheduled = (): PendingSchedule => {
    const batch = scheduled.splice(0);
    const rows = batch.map(({ command: c, input }) => {
      const started = c.status === "IN_PROGRESS";
      const queued = c.executor === "worker" || c.executor === "system";
      if (queued && c.queueName === undefined) throw new Error(`scheduleTask ${describe(c.key)}: a ${c.executor} task without queueName`);
      return {
        // Given here rather than by the column's default, so that the finish can name the task without waiting for
        // the insert's answer (finishTails).
        id: uuidv7(),
        workflowId,
        namespaceId,
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
        scheduledAt: now,
        firstScheduledAt: c.firstScheduledAt === undefined ? null : new Date(c.firstScheduledAt),
        startedAt: started ? now : null,
        updatedAt: now,
        responseTimeoutSeconds: c.policy.responseTimeoutSeconds,
        timeoutSeconds: c.policy.timeoutSeconds,
        pollTimeoutSeconds: c.policy.pollTimeoutSeconds,
        parentRef: c.parentRef ?? null,
        forkIndex: c.forkIndex ?? null,
        // Visible now: the column's default now() — the transaction's start —
        // is what the enqueue compares to decide whether to NOTIFY; an
        // app-clock "now" read after BEGIN is always a little later, so no
        // parked worker would ever be woken (found by runtime.int.test.ts).
        ...(queued ? { enqueue: { priority: c.priority, ...(c.runAt > nowMs ? { visibleAt: new Date(c.runAt) } : {}) } } : {}),
      };
    });
    return { batch, rows };
  };
  /**
   * What follows the insert for each command of the run: its task id, a HUMAN task's inbox entry, TASK_SCHEDULED.
   * Without `created`, the insert travels with the finish, unanswered (finishTails; never for a run that opens inbox
   * entries): each row is taken as inserted under the id it was given, and its TASK_SCHEDULED is kept only if it was.
   */
  const afterInsert = async ({ batch, rows }: PendingSchedule, created: ReadonlyMap<string, TaskWithoutPayloads> | undefined): Promise<void> => {
    for (const [i, { command: c }] of batch.entries()) {
      const k = keyText(c.key);
      const row = created?.get(k);
      const id = created === undefined ? rows[i]!.id : row?.id;
      // Scheduled by an earlier evaluation (invariant 5): nothing twice.
      if (id === undefined) {
        absorbed.add(k);
        continue;
      }
      inserted.set(k, id);
      if (opensInboxEntry(c)) {
        if (row === undefined) throw new Error(`scheduleTask ${describe(c.key)}: an inbox entry needs the inserted row`);
        await openHumanTask(trx, row, c.input, now);
      }
      events.push({
        type: "TASK_SCHEDULED",
        refName: c.key.ref,
        taskId: id,
        status: c.status,
        data: { iteration: c.key.iteration, attempt: c.key.attempt, ...(c.reason ? { reason: c.reason } : {}) },
        ...(created === undefined ? { ifInserted: true } : {}),
      });
    }
  };
  const flushScheduled = async (): Promise<void> => {
    if (scheduled.length === 0) return;
    const pending = takeScheduled();
    await afterInsert(pending, createdByKey(await insertAndEnqueueTasks(trx, pending.rows)));
  };

  for (const c of commands) {
    // A command that writes may read or name a row just scheduled, so the run of
    // scheduled tasks before it is inserted first. markSeen writes nothing and
    // reads only the frontier as loaded; decide emits it after every schedule of
    // the evaluation, so flushing for it inserted each chain step's next task in
    // a statement of its own instead of the transaction's one (finishTails):
    // 4,162–4,620 inserts against ~1,400 in a 20-second closed loop of ~2,100
    // transactions (docs/performance.md, item 49).
    if (c.kind !== "scheduleTask" && c.kind !== "markSeen") await flushScheduled();
    switch (c.kind) {
      case "scheduleTask":
        scheduled.push({ command: c, input: await store(c.input) });
        break;
      case "completeTask":
      case "failTask": {
        const type = c.kind === "completeTask" ? "TASK_COMPLETED" : "TASK_FAILED";
        if (c.taskId === undefined) {
          const output = await store(c.output ?? {});
          const created = await insertOne({
            ...endedByDecider(c, c.status, now),
            input: c.input ?? {},
            output: inlineOf(output),
            outputRef: refOf(output),
            reasonForIncompletion: c.reasonForIncompletion ?? null,
            startedAt: now,
          });
          if (created) events.push({ type, refName: c.key.ref, taskId: created.id, status: c.status });
          break;
        }
        await dequeue(c.taskId);
        const row = await transitionTask(
          trx,
          { workflowId, taskId: c.taskId, from: c.from ?? byId.get(c.taskId)?.status ?? "IN_PROGRESS" },
          {
            status: c.status,
            ...(c.output !== undefined ? { output: c.output } : {}),
            ...(c.reasonForIncompletion !== undefined ? { reasonForIncompletion: c.reasonForIncompletion } : {}),
            endedAt: now,
            deciderSeenAt: now,
            updatedAt: now,
          },
        );
        if (!row) miss(`${c.kind} ${describe(c.key)} from ${c.from}`);
        // A HUMAN attempt the decider ended (its timeoutSeconds ran out) leaves no item open in anyone's inbox.
        if (row?.taskType === "HUMAN") await cancelOpenHumanTasks(trx, workflowId, { taskId: c.taskId, now, status: c.status === "TIMED_OUT" ? "EXPIRED" : "CANCELED" });
        events.push({ type, refName: c.key.ref, taskId: c.taskId, status: c.status, data: c.reasonForIncompletion ? { reason: c.reasonForIncompletion } : {} });
        break;
      }
      case "skipTask": {
        const created = await insertOne(endedByDecider(c, "SKIPPED", now));
        if (created) events.push({ type: "TASK_SKIPPED", refName: c.key.ref, taskId: created.id, status: "SKIPPED" });
        break;
      }
      case "cancelTask": {
        const childId = byId.get(c.taskId)?.subWorkflowId;
        if (childId) {
          // Lock order parent → child: this evaluation holds the parent; a child
          // evaluation holds the child and touches only this task row, which the
          // compare-and-set below then finds moved on (a miss, retried).
          await terminateWorkflowTree(trx, { workflowId: childId, namespaceId, reason: `Parent workflow ${workflowId}: ${c.reason}`, notifyParent: false, now });
        }
        await dequeue(c.taskId);
        const row = await transitionTask(
          trx,
          { workflowId, taskId: c.taskId, from: c.from },
          { status: "CANCELED", reasonForIncompletion: c.reason, endedAt: now, deciderSeenAt: now, updatedAt: now },
        );
        if (!row) miss(`cancelTask ${describe(c.key)} from ${c.from}`);
        if (row?.taskType === "HUMAN") await cancelOpenHumanTasks(trx, workflowId, { taskId: c.taskId, now });
        events.push({ type: "TASK_CANCELED", refName: c.key.ref, taskId: c.taskId, status: "CANCELED", data: { reason: c.reason } });
        break;
      }
      case "startTask": {
        const row = await transitionTask(
          trx,
          { workflowId, taskId: c.taskId, from: c.from },
          { status: "IN_PROGRESS", input: c.input, startedAt: now, updatedAt: now },
        );
        if (!row) miss(`startTask ${describe(c.key)} from ${c.from}`);
        inserted.set(keyText(c.key), c.taskId);
        if (row!.taskType === "HUMAN") await openHumanTask(trx, row!, c.input, now);
        events.push({ type: "TASK_STARTED", refName: c.key.ref, taskId: c.taskId, status: "IN_PROGRESS" });
        break;
      }
      case "updateTask": {
        const taskId = taskIdOf(c.key, c.taskId);
        const row = await transitionTask(
          trx,
          taskId !== undefined ? { workflowId, taskId, from: c.from } : { workflowId, key: c.key, from: c.from },
          { output: c.output, updatedAt: now },
        );
        if (!row) miss(`updateTask ${describe(c.key)} from ${c.from}`);
        events.push({ type: "TASK_UPDATED", refName: c.key.ref, taskId: row!.id, status: row!.status });
        break;
      }
      case "aggregateForkOutput": {
        const id = await aggregateForkOutput(trx, workflowId, c, now);
        if (id === undefined) miss(`aggregateForkOutput ${describe(c.key)} (${c.status}, ${c.total} instances)`);
        events.push({ type: c.status === "COMPLETED" ? "TASK_COMPLETED" : "TASK_FAILED", refName: c.key.ref, taskId: id ?? null, status: c.status });
        break;
      }
      case "setVariables":
        await trx
          .updateTable("WorkflowExecutions")
          .set({ variables: json(c.variables) })
          .where("id", "=", workflowId)
          .execute();
        events.push({ type: "VARIABLES_SET", data: { variables: c.variables } });
        break;
      case "armTimer": {
        // Side effects of a scheduleTask whose insert was absorbed were applied by the evaluation that inserted it.
        if (c.key !== undefined && absorbed.has(keyText(c.key))) break;
        const taskId = c.key === undefined ? undefined : taskIdOf(c.key, c.taskId);
        await armTimer(trx, {
          kind: c.timer,
          fireAt: new Date(c.fireAt),
          namespaceId,
          workflowId,
          taskId: taskId ?? null,
          payload: c.key === undefined ? {} : { key: c.key },
        });
        break;
      }
      case "cancelTimer":
        await cancelTimers(trx, { workflowId, taskId: c.taskId });
        break;
      case "markSeen": {
        // Stamped in the transaction's last statement (finishEvaluations, via finishTails).
        seen.push(...c.taskIds);
        // A worker's report (and an operator's completion) ends a task without
        // writing history: the row lock is the decider's. The decider records
        // the end here, when it first sees it, so the run's history — and the
        // live view that follows it — shows every task ending, once: a row is
        // seen once (deciderSeenAt), and rows this evaluation ended itself are
        // born seen or recorded where they end.
        const byId = new Map(frontier.map((r) => [r.id, r]));
        for (const taskId of c.taskIds) {
          const row = byId.get(taskId);
          if (!row || row.endedAt === null) continue;
          events.push({
            type: `TASK_${row.status}`,
            refName: row.refName,
            taskId,
            status: row.status,
            data: {
              iteration: row.iteration,
              attempt: row.attempt,
              ...(row.reasonForIncompletion ? { reason: row.reasonForIncompletion.slice(0, 500) } : {}),
            },
          });
        }
        break;
      }
      case "pruneIterations":
        await trx
          .deleteFrom("TaskExecutions")
          .where("workflowId", "=", workflowId)
          .where("refName", "in", c.refs.length > 0 ? c.refs : ["\u0000none"])
          .where("iteration", "<", c.belowIteration)
          .where("endedAt", "is not", null)
          .execute();
        break;
      case "alert":
        deps.logger?.warn({ workflowId, alert: c.alert, taskId: c.taskId }, c.message);
        events.push({ type: "ALERT", refName: c.key?.ref ?? null, taskId: c.taskId ?? null, data: { alert: c.alert, message: c.message } });
        break;
      case "requestEvaluation":
        await enqueueDecide(trx, { workflowId, namespaceId, reason: c.reason });
        break;
      case "completeWorkflow":
      case "failWorkflow":
      case "terminateWorkflow":
      case "timeOutWorkflow": {
        const status = WORKFLOW_END_STATUS[c.kind];
        const reason = c.kind === "completeWorkflow" ? null : c.reason;
        const failedTaskRef = c.kind === "failWorkflow" ? c.failedTaskRef : c.kind === "timeOutWorkflow" ? c.timedOutTaskRef : undefined;
        const output = await store(c.output);
        // Written with the version bump, and the run's open inbox rows canceled, in the
        // transaction's finish (finishEvaluations): one UPDATE of the run row, not two.
        ending = { status, output: inlineOf(output), outputRef: refOf(output), reasonForIncompletion: reason, failedTaskRef: failedTaskRef ?? null };
        // Its timers are left to fire: the poller drops a timer whose workflow
        // has ended (timer-poller.ts). Deleting them here cost every run a
        // statement that scans every "Timers" partition, which has no index on
        // "workflowId" (timers.ts): O(pending timers) per completed run.
        // Terminating a workflow still deletes them (workflow-lifecycle.ts).
        events.push({ type: `WORKFLOW_${status}`, status, data: reason ? { reason } : {} });
        await afterWorkflowEnded(
          trx,
          { id: workflowId, namespaceId, status, output: c.output, reasonForIncompletion: reason, parentWorkflowId: wf.parentWorkflowId, parentTaskId: wf.parentTaskId },
          now,
        );
        if ((c.kind === "failWorkflow" || c.kind === "timeOutWorkflow") && c.failureWorkflow !== undefined) {
          const started = await startNestedExecution(trx, deps.blobs, {
            namespaceId,
            name: c.failureWorkflow.name,
            input: { ...c.failureWorkflow.input, failedWorkflow: { workflowId, defName: wf.defName, defVersion: wf.defVersion, status, reason } },
            ...(wf.correlationId !== null ? { correlationId: wf.correlationId } : {}),
            priority: wf.priority,
          });
          if (started.ok) {
            events.push({ type: "FAILURE_WORKFLOW_STARTED", data: { name: c.failureWorkflow.name, workflowId: started.workflowId } });
          } else {
            // The failure is already decided; a failure workflow that cannot start is recorded, never silently dropped.
            deps.logger?.error({ workflowId, failureWorkflow: c.failureWorkflow.name, reason: startFailure(started) }, "decider: failureWorkflow not started");
            events.push({ type: "FAILURE_WORKFLOW_NOT_STARTED", data: { name: c.failureWorkflow.name, reason: startFailure(started) } });
          }
        }
        break;
      }
      case "startSubWorkflow":
      case "startWorkflow": {
        // Side effects of a scheduleTask whose insert was absorbed were applied by the evaluation that inserted it.
        if (absorbed.has(keyText(c.key))) break;
        const taskId = taskIdOf(c.key);
        if (taskId === undefined) throw new Error(`${c.kind} ${describe(c.key)}: no task row was inserted or started for it`);
        const started: StartExecutionResult =
          c.kind === "startSubWorkflow" && c.workflowDefinition !== undefined
            ? { ok: false, reason: "not-found", message: "an inline workflowDefinition is not supported yet: register the workflow and reference it by name" }
            : await startNestedExecution(trx, deps.blobs, {
                namespaceId,
                name: c.name,
                ...(c.version !== undefined ? { version: c.version } : {}),
                input: c.input,
                ...(c.correlationId !== undefined ? { correlationId: c.correlationId } : {}),
                priority: c.kind === "startSubWorkflow" ? c.priority : wf.priority,
                ...(c.kind === "startSubWorkflow" ? { parentWorkflowId: workflowId, parentTaskId: taskId } : {}),
              });
        if (!started.ok) {
          // Failed like a worker's failure, unseen: the next evaluation applies the retry policy.
          await endStartedTask(c.key, taskId, "FAILED", {}, `Could not start workflow "${c.name}": ${startFailure(started)}`);
        } else if (c.kind === "startSubWorkflow") {
          await trx.updateTable("TaskExecutions").set({ subWorkflowId: started.workflowId, updatedAt: now }).where("workflowId", "=", workflowId).where("id", "=", taskId).execute();
          events.push({ type: "SUB_WORKFLOW_STARTED", refName: c.key.ref, taskId, data: { workflowId: started.workflowId, name: c.name } });
        } else {
          await endStartedTask(c.key, taskId, "COMPLETED", { workflowId: started.workflowId }, null);
        }
        break;
      }
      default: {
        const unknown: never = c;
        throw new Error(`evaluator: unknown command ${JSON.stringify((unknown as { kind?: unknown }).kind)}`);
      }
    }
  }
  // The last run of scheduled tasks and the finish are left to the caller, which writes them for every workflow of
  // the transaction at once (finishTails): nothing after them here reads what they write.
  const pending = takeScheduled();
  return {
    workflow: wf,
    pending,
    afterInsert: (created) => afterInsert(pending, created),
    finish: async () => {
      if (evaluateAgain !== undefined) await enqueueDecide(trx, { workflowId, namespaceId, reason: evaluateAgain });
      // `wf` is the row this evaluation locked: the seen marks, the version bump and the history append.
      return { locked: wf, seenTaskIds: seen, events, at: now, ...(ending ? { ending } : {}) };
    },
  };
}

function startFailure(result: Extract<StartExecutionResult, { ok: false }>): string {
  if (result.reason === "invalid-input") {
    return `invalid input: ${result.problems.map((p) => `${p.path.length > 0 ? p.path.join(".") : "(input)"}: ${p.message}`).join("; ")}`;
  }
  return result.message;
}

/** The documented statement (engine/decide/types.ts, AggregateForkOutputCommand), verbatim in shape. */
async function aggregateForkOutput(
  trx: Transaction<Database>,
  workflowId: string,
  c: Extract<Command, { kind: "aggregateForkOutput" }>,
  now: Date,
): Promise<string | undefined> {
  const { rows } = await sql<{ id: string }>`
    WITH fork AS (
      SELECT "id", "input" FROM "TaskExecutions"
      WHERE "workflowId" = ${workflowId}::uuid AND "refName" = ${c.key.ref} AND "iteration" = ${c.key.iteration}
        AND "attempt" = ${c.key.attempt} AND "status" = ${c.from}
    ), inst AS (
      SELECT g.k, t."output"
      FROM generate_series(0, ${c.total}::int - 1) AS g(k)
      LEFT JOIN "TaskExecutions" AS t
        ON t."workflowId" = ${workflowId}::uuid AND t."refName" = ${c.key.ref} || '#' || g.k AND t."iteration" = ${c.key.iteration}
       AND t."status" IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'SKIPPED')
    ), agg AS (
      SELECT count(inst."output") AS done,
             jsonb_build_object('results', coalesce(jsonb_agg(inst."output" ORDER BY inst.k), '[]'::jsonb)) AS results,
             coalesce(jsonb_object_agg(coalesce(fork."input" -> 'forkedTasks' ->> inst.k, inst.k::text), inst."output")
                        FILTER (WHERE inst."output" IS NOT NULL), '{}'::jsonb) AS by_label
      FROM inst CROSS JOIN fork
      GROUP BY fork."id"
    )
    UPDATE "TaskExecutions" AS f
    SET "status" = ${c.status},
        "output" = CASE ${c.shape}::text WHEN 'results' THEN agg.results ELSE agg.by_label END,
        "reasonForIncompletion" = coalesce(${c.reasonForIncompletion ?? null}::text, f."reasonForIncompletion"),
        "endedAt" = ${now}, "updatedAt" = ${now},
        "deciderSeenAt" = NULL
    FROM fork, agg
    WHERE f."workflowId" = ${workflowId}::uuid AND f."id" = fork."id"
      AND (${c.status}::text <> 'COMPLETED' OR agg.done = ${c.total}::int)
    RETURNING f."id"`.execute(trx);
  return rows[0]?.id;
}
