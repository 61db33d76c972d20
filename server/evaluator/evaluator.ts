import { sql } from "kysely";
import type { Kysely, Transaction } from "kysely";
import type { Database, TaskExecutionRow, WorkflowExecutionRow } from "../../db/schema";
import { decide, refsToLoad } from "../../engine";
import type { Blueprint, Command, EvaluationState, FiredTimer, ScriptEvaluator, TaskSnapshot, UnprocessedRef } from "../../engine";
import type { BlobStore } from "../lib/blob-store";
import { LruCache } from "../lib/lru-cache";
import { resolvePayload, resolveTaskPayloads } from "../lib/payload-offload";
import { decodeTimerReason } from "../sidecar/timer-poller";
import { claimAndLockWorkflowsThen } from "../store/decide-queues";
import {
  claimedFrontiersStatement,
  EvaluationReads,
  frontiersByWorkflow,
  insertAndEnqueueTasks,
  insertAndEnqueueTasksStatement,
  loadFrontiers,
  loadLatestByRefsOf,
} from "../store/task-executions";
import type { TaskWithoutPayloads } from "../store/task-executions";
import { finishEvaluations } from "../store/workflow-events";
import type { EvaluationFinish } from "../store/workflow-events";
import { CompareAndSetMiss, createdByKey, opensInboxEntry } from "./command-context";
import type { CommandDeps, EvaluationTail } from "./command-context";
import { applyCommands } from "./command-handlers";
import type { LoopOutputCache } from "./loop-output-cache";

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

/** `blobs` is needed when a row has an inputRef/outputRef (invariant 8); without it such an evaluation fails. */
export interface EvaluatorDeps extends CommandDeps {
  db: Kysely<Database>;
  scripts: ScriptEvaluator;
  /** Epoch ms; Date.now by default. */
  now?: () => number;
  /** Told how long each evaluation took, claim to commit (metrics.ts observeEvaluation). */
  onEvaluation?: (durationMs: number, outcome: "committed" | "conflict" | "failed") => void;
  /** Running loops' outputs already read, kept across evaluations (loop-output-cache.ts); without it every read is whole. */
  loopOutputs?: LoopOutputCache;
  /**
   * Told, after each commit, what the committed evaluations saw and did: the workload metrics and the traces
   * (server/evaluator/observe-evaluations.ts) are built from rows already in hand, at no cost in statements.
   * Never called for a rolled-back transaction, whose ended tasks are seen again by the evaluation that follows.
   */
  onCommitted?: (evaluations: readonly CommittedEvaluation[]) => void;
}

/** One committed evaluation, as {@link EvaluatorDeps.onCommitted} is told of it. */
export interface CommittedEvaluation {
  workflow: WorkflowExecutionRow;
  /** The ended task rows it reacted to (ended by a worker, a system task, an operator), as it loaded them. */
  endedTasks: readonly TaskExecutionRow[];
  /** `ref\u0000iteration` of each task it scheduled a retry of. */
  retried: ReadonlySet<string>;
  /** Set when it ended the run. */
  ending?: { status: string; at: Date; reasonForIncompletion: string | null };
}

export interface EvaluateBatchOptions {
  /** Workflows to evaluate at most, 1 to 1000. */
  limit: number;
  offset?: number;
  /** Told each time a claim came back full: more may be waiting than this batch takes (runners.ts opens another lane). */
  onBacklog?: () => void;
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
      const committed: CommittedEvaluation[] = [];
      claimed = await deps.db.transaction().execute((trx) => evaluateClaims(deps, trx, wanted, offset, deps.onCommitted ? committed : undefined));
      if (claimed > 0) observe("committed", claimed);
      if (committed.length > 0) deps.onCommitted?.(committed);
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
async function evaluateClaims(
  deps: EvaluatorDeps,
  trx: Transaction<Database>,
  limit: number,
  offset: number,
  committed: CommittedEvaluation[] | undefined,
): Promise<number> {
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
  const retried = new Map<string, Set<string>>();
  for (const { workflow: wf, reason } of running) {
    const loaded = { blueprint: blueprints.get(wf.id)!, frontierRows: frontiers.get(wf.id) ?? [], loadedRows: loadedRefs.get(wf.id) ?? [] };
    const { tail, commands } = await attributed(wf.id, () => evaluateClaimed(deps, trx, wf, loaded, decodeTimerReason(reason)));
    tails.push(tail);
    if (committed) retried.set(wf.id, retriesOf(commands));
  }
  // Written for every workflow at once; when it fails with several in hand, no one of them can be named, and the
  // batch goes on one workflow per transaction, where the failure is that workflow's own.
  const finishes =
    tails.length === 1
      ? await attributed(tails[0]!.workflow.id, () => finishTails(trx, tails))
      : await finishTails(trx, tails).catch((error: unknown) => {
          if (error instanceof CompareAndSetMiss) throw error;
          throw new BatchedWriteFailure(error, claims.length);
        });
  if (committed) {
    for (const [i, tail] of tails.entries()) {
      const finish = finishes[i]!;
      const seen = new Set(finish.seenTaskIds);
      committed.push({
        workflow: tail.workflow,
        endedTasks: (frontiers.get(tail.workflow.id) ?? []).filter((row) => row.endedAt !== null && seen.has(row.id)),
        retried: retried.get(tail.workflow.id) ?? new Set(),
        ...(finish.ending ? { ending: { status: finish.ending.status, at: finish.at, reasonForIncompletion: finish.ending.reasonForIncompletion } } : {}),
      });
    }
  }
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
 * The evaluations' last writes for the whole transaction, where each workflow
 * took two round trips: every workflow's last run of scheduled tasks in one
 * insertAndEnqueueTasks, then every finish in one finishEvaluations (the system bench
 * closed loop: docs/performance.md). The finish is the transaction's
 * last statement, and its COMMIT travels with it. The insert
 * travels with them too, unanswered — the tasks' ids are given, and the
 * finish keeps the TASK_SCHEDULED of a row only if it was inserted —
 * unless a task opens an inbox entry, which needs its inserted row first.
 */
async function finishTails(trx: Transaction<Database>, tails: readonly EvaluationTail[]): Promise<EvaluationFinish[]> {
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
  return finishes;
}

/** `ref\u0000iteration` of each task a decision schedules a further attempt of. */
function retriesOf(commands: readonly Command[]): Set<string> {
  const keys = new Set<string>();
  for (const c of commands) if (c.kind === "scheduleTask" && c.key.attempt > 0) keys.add(`${c.key.ref}\u0000${c.key.iteration}`);
  return keys;
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
): Promise<{ tail: EvaluationTail; commands: readonly Command[] }> {
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

  return { tail: await applyCommands(deps, trx, wf, frontierRows, decision.commands, now), commands: decision.commands };
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
