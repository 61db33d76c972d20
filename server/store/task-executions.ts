import { sql } from "kysely";
import type { Kysely, RawBuilder } from "kysely";
import { json } from "../../db/json";
import { passIds, passedIds } from "../../db/pipeline";
import { isTerminalTaskStatus } from "../../engine/statuses";
import type { Database, NewTaskExecution, TaskExecutionRow, TaskExecutionUpdate, TaskStatus } from "../../db/schema";
import type { LoopOutputCache } from "../evaluator/loop-output-cache";
import { notifyIfDue } from "./task-queues";

/**
 * TaskExecutions: the decider's reads (frontier, latest row per ref) and writes
 * (identity-keyed inserts, compare-and-set transitions, the seen watermark), and
 * the worker-report path.
 *
 * Every statement carries "workflowId": the table is HASH-partitioned on it, so
 * with it Postgres prunes to one of the 16 partitions; without it every lookup
 * probes all sixteen.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * The frontier (DESIGN.md invariant 6): every non-terminal task, plus every
 * terminal task the decider has not reacted to (invariant 4) — together, every
 * row with "deciderSeenAt" NULL, since only an ended task is ever marked seen
 * (a CHECK on the table). One scan of "TaskExecutions_pending_idx", whose
 * predicate the query spells exactly as 0012 defines it: the planner uses a
 * partial index only for a query that implies its predicate.
 *
 * A running FORK_JOIN_DYNAMIC row comes back with `input` {} and no inputRef:
 * its input holds one entry per instance, decide reads only its output
 * counters (EvaluationState.frontier), and shipping it on every evaluation of a
 * large fork would make each one O(instances).
 */
export async function loadFrontier(db: Executor, workflowId: string): Promise<TaskExecutionRow[]> {
  const { rows } = await frontierStatement(workflowId).execute(db);
  return rows;
}

/**
 * The frontiers of several workflows in one statement, by workflow id (every
 * id has an entry, empty when it has no frontier): an evaluation transaction
 * that claimed several workflows reads them in one round trip.
 */
export async function loadFrontiers(
  db: Executor,
  workflowIds: readonly string[],
  reads?: EvaluationReads,
): Promise<Map<string, TaskExecutionRow[]>> {
  if (workflowIds.length === 0) return new Map();
  const known = reads?.known();
  const { rows } = await frontiersStatement(workflowIds, known).execute(db);
  return frontiersByWorkflow(workflowIds, rows, reads, known);
}

/**
 * The frontiers of the workflows the transaction's claim took, which it names
 * in the transaction-local setting "node_flow.claimed" (decide-queues.ts,
 * claimAndLockWorkflows): a statement that can travel in the claim's round
 * trip (db/pipeline.ts), since it needs nothing from the claim's answer. It
 * still starts after the claim has ended — after every workflow lock is held
 * — with a snapshot of its own, as invariant 2 asks. Take its rows with
 * {@link frontiersByWorkflow}, with the `known` it was built with.
 */
export function claimedFrontiersStatement(known?: KnownPayloads): RawBuilder<TaskExecutionRow> {
  return frontiersOf(passedIds("node_flow.claimed"), known);
}

/** A frontiers statement's rows by workflow, for `workflowIds` (each has an entry; rows of other workflows are dropped). */
export function frontiersByWorkflow(
  workflowIds: readonly string[],
  rows: TaskExecutionRow[],
  reads?: EvaluationReads,
  known?: KnownPayloads,
): Map<string, TaskExecutionRow[]> {
  const byWorkflow = new Map<string, TaskExecutionRow[]>(workflowIds.map((id) => [id, []]));
  for (const row of withKnownPayloads(rows, reads, known)) byWorkflow.get(row.workflowId)?.push(row);
  return byWorkflow;
}

/**
 * loadFrontiers' statement; exported for the plan test. Each workflow's scan
 * runs as a LATERAL over the unnested ids, so Postgres prunes to the
 * workflow's partition on each (run-time pruning on the lateral's parameter).
 * `"workflowId" = ANY($ids)` instead prunes nothing and scanned the partial
 * indexes of all sixteen partitions: 1.0 ms a call in the closed-loop bench,
 * against 0.1 ms for the same pattern here in loadLatestByRefsOf.
 *
 * OFFSET 0 keeps the LATERAL a LATERAL. Without it the planner may flatten
 * the subquery into a plain join, and the generic plan a connection makes
 * while the partitions are small (db/pool.ts: made once, kept until a
 * partition is analyzed or vacuumed) was a hash join over every partition,
 * read whole: auto_explain in the closed-loop bench showed sixteen sequential
 * scans per call, 1.1–2.5 ms a call and growing as the partitions filled
 * (pg_stat_statements, four runs), against 0.19–0.25 ms with OFFSET 0 (one
 * partition probed per workflow).
 */
export function frontiersStatement(workflowIds: readonly string[], known?: KnownPayloads): RawBuilder<TaskExecutionRow> {
  return frontiersOf(sql`${[...workflowIds]}::uuid[]`, known);
}

/** The frontiers of the workflows whose ids `ids` (an expression castable to uuid[]) lists, in the shape above. */
function frontiersOf(ids: RawBuilder<unknown>, known?: KnownPayloads): RawBuilder<TaskExecutionRow> {
  return sql<TaskExecutionRow>`
    SELECT "f".* FROM unnest(${ids}) AS "w"("id")
    CROSS JOIN LATERAL (${frontierWhere(sql`"t"."workflowId" = "w"."id"`, known)} OFFSET 0) AS "f"`;
}

/** loadFrontier's statement; exported for the plan test. */
export function frontierStatement(workflowId: string): RawBuilder<TaskExecutionRow> {
  return frontierWhere(sql`"t"."workflowId" = ${workflowId}::uuid`);
}

function frontierWhere(workflows: RawBuilder<unknown>, known?: KnownPayloads): RawBuilder<TaskExecutionRow> {
  return sql<TaskExecutionRow>`
    SELECT ${taskColumns(known)} FROM "TaskExecutions" AS "t"
    WHERE ${workflows} AND "t"."deciderSeenAt" IS NULL`;
}

/**
 * The latest row of each ref — (iteration DESC, attempt DESC) — as
 * EvaluationState.loaded wants: one LIMIT 1 probe of
 * "TaskExecutions_identity_idx" per ref through LATERAL over unnest, read
 * backwards from the index, so the cost is refs × log(rows) however long the
 * history. Refs without a row are simply absent.
 */
export async function loadLatestByRefs(
  db: Executor,
  workflowId: string,
  refs: readonly string[],
): Promise<TaskExecutionRow[]> {
  return (await loadLatestByRefsOf(db, [{ workflowId, refs }])).get(workflowId) ?? [];
}

/**
 * {@link loadLatestByRefs} for several workflows in one statement, by workflow
 * id (every requested id has an entry): an evaluation transaction that claimed
 * several workflows reads them in one round trip. Each probe's workflow id
 * comes from the unnested pair, so Postgres prunes to its partition as it goes
 * (run-time pruning on the lateral's parameter).
 */
export async function loadLatestByRefsOf(
  db: Executor,
  requests: ReadonlyArray<{ workflowId: string; refs: readonly string[] }>,
  reads?: EvaluationReads,
): Promise<Map<string, TaskExecutionRow[]>> {
  const byWorkflow = new Map<string, TaskExecutionRow[]>(requests.map((r) => [r.workflowId, []]));
  const pairs = requests.flatMap((r) => r.refs.map((ref) => [r.workflowId, ref] as const));
  if (pairs.length === 0) return byWorkflow;
  const known = reads?.known();
  const { rows } = await sql<TaskExecutionRow>`
    SELECT "l".* FROM unnest(${pairs.map((p) => p[0])}::uuid[], ${pairs.map((p) => p[1])}::text[]) AS "r"("workflowId", "ref")
    CROSS JOIN LATERAL (
      SELECT ${taskColumns(known)} FROM "TaskExecutions" AS "t"
      WHERE "t"."workflowId" = "r"."workflowId" AND "t"."refName" = "r"."ref"
      ORDER BY "t"."iteration" DESC, "t"."attempt" DESC
      LIMIT 1
    ) AS "l"`.execute(db);
  for (const row of withKnownPayloads(rows, reads, known)) byWorkflow.get(row.workflowId)?.push(row);
  return byWorkflow;
}

/**
 * What an evaluation transaction's reads share (loadFrontiers, then
 * loadLatestByRefsOf), so that no payload is read twice:
 * - the rows it has read, by version (`"<task id>:<xmin>"`: every UPDATE
 *   writes a tuple with a new xmin, so one version is one content). A later
 *   read gets the row's columns but leaves its input and output to the copy in
 *   hand — the refs an evaluation reads usually include the task that just
 *   ended, already in its frontier with the same output;
 * - running loops' outputs, kept across evaluations (LoopOutputCache).
 */
export class EvaluationReads {
  private readonly rows = new Map<string, TaskExecutionRow>();
  constructor(readonly loopOutputs?: LoopOutputCache) {}

  /** The versions a read may leave payloads out for, fixed for that one read. */
  known(): KnownPayloads {
    return { rows: new Map(this.rows), loops: this.loopOutputs?.snapshot() ?? new Map() };
  }

  /** A row read (its payloads in place). */
  read(version: string, row: TaskExecutionRow): void {
    this.rows.set(version, row);
  }
}

interface KnownPayloads {
  /** Rows in hand: both payloads left out. */
  rows: ReadonlyMap<string, TaskExecutionRow>;
  /** Running loops' outputs in a LoopOutputCache: the output left out. */
  loops: ReadonlyMap<string, Record<string, unknown>>;
}

/**
 * Every column, with a running dynamic fork's input elided (see loadFrontier).
 * Given what an evaluation's reads know (`known`), also each row's version
 * ("rowVersion", `"<id>:<xmin>"`), and NULL for the payloads it has in hand
 * (EvaluationReads): {@link withKnownPayloads} fills them in. The version is the
 * last column, so deleting it from the row is V8's fast path (back to the
 * shape before it); any other property's delete leaves every row a slow
 * dictionary object for the rest of the evaluation.
 */
function taskColumns(known?: KnownPayloads) {
  const version = sql`("t"."id"::text || ':' || "t"."xmin"::text)`;
  const input = sql`CASE WHEN "t"."taskType" = 'FORK_JOIN_DYNAMIC' AND "t"."endedAt" IS NULL THEN '{}'::jsonb ELSE "t"."input" END`;
  let payloads = sql`${input} AS "input", "t"."output"`;
  if (known !== undefined) {
    const inHand = sql`${version} = ANY(${[...known.rows.keys()]}::text[])`;
    payloads = sql`CASE WHEN ${inHand} THEN NULL ELSE ${input} END AS "input",
      CASE WHEN ${inHand} THEN NULL
           WHEN "t"."taskType" = 'DO_WHILE' AND "t"."endedAt" IS NULL AND "t"."outputRef" IS NULL
             AND ${version} = ANY(${[...known.loops.keys()]}::text[]) THEN NULL
           ELSE "t"."output" END AS "output"`;
  }
  return sql`"t"."id", "t"."workflowId", "t"."namespaceId", "t"."refName", "t"."iteration", "t"."attempt",
    "t"."taskType", "t"."taskDefName", "t"."queueName", "t"."domain", "t"."status",
    ${payloads},
    CASE WHEN "t"."taskType" = 'FORK_JOIN_DYNAMIC' AND "t"."endedAt" IS NULL THEN NULL ELSE "t"."inputRef" END AS "inputRef",
    "t"."outputRef", "t"."pollCount", "t"."workerId", "t"."scheduledAt", "t"."firstScheduledAt", "t"."startedAt",
    "t"."endedAt", "t"."updatedAt", "t"."callbackAfterSeconds", "t"."responseTimeoutSeconds", "t"."timeoutSeconds",
    "t"."pollTimeoutSeconds", "t"."reasonForIncompletion", "t"."deciderSeenAt", "t"."parentRef", "t"."forkIndex",
    "t"."subWorkflowId"${known === undefined ? sql`` : sql`, ${version} AS "rowVersion"`}`;
}

/**
 * Rows read through taskColumns(known): the payloads Postgres left out come
 * from the rows in hand or the LoopOutputCache; a running inline DO_WHILE
 * row's output read in full is remembered there (loop-output-cache.ts says
 * why); every row becomes one in hand. The row versions go.
 */
function withKnownPayloads(rows: TaskExecutionRow[], reads: EvaluationReads | undefined, known: KnownPayloads | undefined): TaskExecutionRow[] {
  if (reads === undefined || known === undefined) return rows;
  const cache = reads.loopOutputs;
  for (const row of rows as (TaskExecutionRow & { rowVersion?: string })[]) {
    const version = row.rowVersion!;
    delete row.rowVersion;
    const inHand = known.rows.get(version);
    const loopOutput = known.loops.get(version);
    if (inHand !== undefined) {
      row.input = inHand.input;
      row.output = inHand.output;
    } else if (row.output === null && loopOutput !== undefined) {
      row.output = loopOutput;
      cache?.used(version);
    } else if (cache !== undefined && row.taskType === "DO_WHILE" && row.endedAt === null && row.outputRef === null && isRecord(row.output)) {
      cache.remember(version, row.output);
    }
    reads.read(version, row);
  }
  return rows;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A row to insert; JSONB fields are plain values here and pass through json() (invariant 9). */
export type InsertTaskInput = Omit<NewTaskExecution, "input" | "output"> & {
  workflowId: string;
  refName: string;
  iteration: number;
  attempt: number;
  input?: unknown;
  output?: unknown;
};

/**
 * Inserts tasks ON CONFLICT DO NOTHING on their identity (invariant 5) and
 * returns the rows actually inserted — a row whose identity already existed is
 * absent, so the caller applies the side effects (queue row, timers) only for
 * what it really created.
 */
export async function insertTasks(db: Executor, rows: readonly InsertTaskInput[]): Promise<TaskExecutionRow[]> {
  if (rows.length === 0) return [];
  return insertTasksStatement(db, rows).returningAll().execute();
}

function insertTasksStatement(db: Executor, rows: readonly InsertTaskInput[]) {
  for (const row of rows) {
    if (row.status !== undefined && isTerminalTaskStatus(row.status) && row.endedAt == null) {
      throw new Error(`insertTasks: terminal status ${row.status} for "${row.refName}" needs endedAt`);
    }
  }
  return db
    .insertInto("TaskExecutions")
    .values(rows.map((row) => ({ ...row, input: json(row.input ?? {}), output: json(row.output ?? {}) })))
    .onConflict((oc) => oc.columns(["workflowId", "refName", "iteration", "attempt"]).doNothing());
}

/** Where a task {@link insertAndEnqueueTasks} inserts is queued: its own "queueName" and "taskType", with these. */
export interface TaskQueueEntry {
  /** Higher leases first (Conductor's 0..99). */
  priority: number;
  /** Not deliverable before this; now() (the transaction's start) when omitted. */
  visibleAt?: Date;
}

/**
 * {@link insertTasks}, and in the same statement a TaskQueues row for each task
 * actually inserted whose input names an `enqueue` (ON CONFLICT DO NOTHING, as
 * enqueueTasks), notifying parked pollers of every queue that got a row due
 * now: the evaluator schedules a step's tasks — one, or a whole fork of them —
 * in one round trip, where a statement per task and another per queue row was
 * two hundred for a 100-task fork.
 *
 * The rows come back without their input and output: the caller has them, and
 * a fork's instances can carry a large input each.
 */
export async function insertAndEnqueueTasks(
  db: Executor,
  rows: ReadonlyArray<InsertTaskInput & { enqueue?: TaskQueueEntry }>,
): Promise<TaskWithoutPayloads[]> {
  if (rows.length === 0) return [];
  const { rows: created } = await insertAndEnqueueTasksStatement(db, rows).execute(db);
  return created.map(({ notified: _notified, marked: _marked, ...row }) => row);
}

/**
 * {@link insertAndEnqueueTasks}'s statement, not sent: for a caller that sends
 * it with others in one round trip (db/pipeline.ts), which it can when it
 * needs nothing of its answer — the rows' ids given, say. `rows` not empty.
 * The ids of the rows it inserts are left in the transaction-local setting
 * "node_flow.inserted" (unchanged when it inserts none), where the finish sent
 * behind it reads them (nf_finish_evaluations, migration 0020).
 */
export function insertAndEnqueueTasksStatement(
  db: Executor,
  rows: ReadonlyArray<InsertTaskInput & { enqueue?: TaskQueueEntry }>,
): RawBuilder<TaskWithoutPayloads & { notified?: unknown; marked: unknown }> {
  if (rows.length === 0) throw new RangeError("insertAndEnqueueTasksStatement: no rows");
  const queued = rows.filter((row): row is InsertTaskInput & { enqueue: TaskQueueEntry } => row.enqueue !== undefined);
  const insert = insertTasksStatement(db, rows.map(({ enqueue: _enqueue, ...row }) => row)).returning(TASK_COLUMNS_WITHOUT_PAYLOADS);
  const marked = passIds("node_flow.inserted", "inserted", "id");
  if (queued.length === 0) return sql<TaskWithoutPayloads & { marked: unknown }>`WITH "inserted" AS (${insert}) SELECT "inserted".*, ${marked} AS "marked" FROM "inserted"`;
  for (const { refName, queueName, enqueue } of queued) {
    if (!queueName) throw new Error(`insertAndEnqueueTasks: "${refName}" is to be queued but has no queueName`);
    if (!Number.isInteger(enqueue.priority)) throw new RangeError(`priority must be an integer, got ${enqueue.priority}`);
  }
  return sql<TaskWithoutPayloads & { notified: unknown; marked: unknown }>`
    WITH "inserted" AS (${insert}), "queued" AS (
      INSERT INTO "TaskQueues" ("queueName", "taskId", "workflowId", "namespaceId", "taskType", "priority", "visibleAt")
      SELECT "i"."queueName", "i"."id", "i"."workflowId", "i"."namespaceId", "i"."taskType", "e"."priority", COALESCE("e"."visibleAt", now())
      FROM "inserted" AS "i"
      JOIN unnest(${queued.map((r) => r.workflowId)}::uuid[], ${queued.map((r) => r.refName)}::text[],
                  ${queued.map((r) => r.iteration)}::int[], ${queued.map((r) => r.attempt)}::int[],
                  ${queued.map((r) => r.enqueue.priority)}::int[], ${queued.map((r) => r.enqueue.visibleAt ?? null)}::timestamptz[])
        AS "e"("workflowId", "refName", "iteration", "attempt", "priority", "visibleAt")
        ON "e"."workflowId" = "i"."workflowId" AND "e"."refName" = "i"."refName"
       AND "e"."iteration" = "i"."iteration" AND "e"."attempt" = "i"."attempt"
      ON CONFLICT ("queueName", "taskId") DO NOTHING
      RETURNING "namespaceId", "queueName", "taskType", "visibleAt"
    )
    -- Uncorrelated scalar subqueries, so each runs once, and only when
    -- something was inserted.
    SELECT "inserted".*, (SELECT count(${notifyIfDue}) FROM "queued") AS "notified", ${marked} AS "marked"
    FROM "inserted"`;
}

/** What a compare-and-set transition writes. JSONB values are plain here and pass through json(). */
export interface TaskTransition {
  status?: TaskStatus;
  input?: unknown;
  output?: unknown;
  reasonForIncompletion?: string | null;
  startedAt?: Date;
  endedAt?: Date;
  /** Date to stamp it; null to clear it (the next evaluation reacts); undefined to leave it. */
  deciderSeenAt?: Date | null;
  updatedAt: Date;
}

/**
 * Compare-and-set: updates the task only while its status is still `from`, and
 * returns the updated row, or undefined when the row is gone or has moved on —
 * the caller then rolls back (the decider re-enqueues itself). Addressed by id,
 * or by identity for a row inserted earlier in the same transaction.
 *
 * The row comes back without its input and output: the caller wrote what
 * changed of them, and a running loop's output is the whole loop's history
 * (loop-output-cache.ts), which every iteration's update sent back to be parsed.
 */
export async function transitionTask(
  db: Executor,
  target: { workflowId: string; from: TaskStatus } & ({ taskId: string } | { key: { ref: string; iteration: number; attempt: number } }),
  change: TaskTransition,
): Promise<TaskWithoutPayloads | undefined> {
  if (change.status !== undefined && isTerminalTaskStatus(change.status) && change.endedAt === undefined) {
    throw new Error(`transitionTask: terminal status ${change.status} needs endedAt`);
  }
  const set: TaskExecutionUpdate = { updatedAt: change.updatedAt };
  if (change.status !== undefined) set.status = change.status;
  if (change.input !== undefined) set.input = json(change.input);
  if (change.output !== undefined) set.output = json(change.output);
  if (change.reasonForIncompletion !== undefined) set.reasonForIncompletion = change.reasonForIncompletion;
  if (change.startedAt !== undefined) set.startedAt = change.startedAt;
  if (change.endedAt !== undefined) set.endedAt = change.endedAt;
  if (change.deciderSeenAt !== undefined) set.deciderSeenAt = change.deciderSeenAt;
  let query = db
    .updateTable("TaskExecutions")
    .set(set)
    .where("workflowId", "=", target.workflowId)
    .where("status", "=", target.from);
  query =
    "taskId" in target
      ? query.where("id", "=", target.taskId)
      : query
          .where("refName", "=", target.key.ref)
          .where("iteration", "=", target.key.iteration)
          .where("attempt", "=", target.key.attempt);
  return query.returning(TASK_COLUMNS_WITHOUT_PAYLOADS).executeTakeFirst();
}

/**
 * A task row without its input and output, as {@link transitionTask} and a
 * worker's report return it: the caller has what it wrote of them, and they
 * can be hundreds of KB each. Return types built from
 * {@link TASK_COLUMNS_WITHOUT_PAYLOADS} fail to compile when a column is missing there.
 */
export type TaskWithoutPayloads = Omit<TaskExecutionRow, "input" | "output">;

export const TASK_COLUMNS_WITHOUT_PAYLOADS = [
  "id", "workflowId", "namespaceId", "refName", "iteration", "attempt", "taskType", "taskDefName", "queueName", "domain", "status",
  "inputRef", "outputRef", "pollCount", "workerId", "scheduledAt", "firstScheduledAt", "startedAt", "endedAt", "updatedAt",
  "callbackAfterSeconds", "responseTimeoutSeconds", "timeoutSeconds", "pollTimeoutSeconds", "reasonForIncompletion",
  "deciderSeenAt", "parentRef", "forkIndex", "subWorkflowId",
] as const satisfies readonly Exclude<keyof TaskExecutionRow, "input" | "output">[];

/** The statuses a worker may report as final. */
export type WorkerFinalStatus = "COMPLETED" | "FAILED" | "FAILED_WITH_TERMINAL_ERROR";

export interface CompleteTaskFromWorkerInput {
  namespaceId: string;
  workflowId: string;
  taskId: string;
  status: WorkerFinalStatus;
  output?: unknown;
  /**
   * The blob holding an offloaded output (payload-offload.ts), written before
   * this transaction; `output` is then {}. Absent means the output is inline,
   * and any earlier ref is cleared with it.
   */
  outputRef?: string | null;
  reason?: string | null;
  /** When given, the task must be held by this worker (its lease owner). */
  workerId?: string;
  now?: Date;
}

export type CompleteTaskFromWorkerResult =
  | { ok: true; task: TaskExecutionRow }
  | { ok: false; error: "not_found" | "not_in_progress" | "not_held"; status?: TaskStatus };

/**
 * A refused report inside a caller's transaction: "nf_complete_task" raised,
 * which aborted the transaction, so it must roll back. Called without a
 * transaction, completeTaskFromWorker returns the refusal instead.
 */
export class TaskReportRefusedError extends Error {
  override name = "TaskReportRefusedError";
  constructor(readonly result: Extract<CompleteTaskFromWorkerResult, { ok: false }>) {
    super(`task report refused: ${result.error}${result.status ? ` (task is ${result.status})` : ""}`);
  }
}

/**
 * A worker's final report: ends the task (compare-and-set from IN_PROGRESS, so
 * a second completion of the same task is refused, not applied twice), deletes
 * its queue row, gives back its gates, and enqueues a decide — one
 * transaction, so the decide cannot be lost nor announce a change that rolled
 * back (invariants 2 and 3).
 *
 * One statement: the SQL function "nf_complete_task" (migration 0014), which
 * deletes the queue row first — the order a lease locks them (task-queues.ts),
 * or a concurrent lease of the same task (after the sweeper requeued it) and
 * this report could deadlock — then ends the task and, only when that matched,
 * releases its gates and enqueues the decide. A refusal is raised there
 * (SQLSTATE NFREF), which rolls the queue-row delete back. The row is left with
 * "deciderSeenAt" NULL: the next evaluation finds it in
 * "TaskExecutions_pending_idx" and reacts.
 */
export async function completeTaskFromWorker(
  db: Executor,
  input: CompleteTaskFromWorkerInput,
): Promise<CompleteTaskFromWorkerResult> {
  try {
    const { rows } = await sql<TaskExecutionRow>`
      SELECT * FROM "nf_complete_task"(${input.namespaceId}::uuid, ${input.workflowId}::uuid, ${input.taskId}::uuid,
        ${input.status}, ${json(input.output ?? {})}::jsonb, ${input.outputRef ?? null}, ${input.reason ?? null},
        ${input.workerId ?? null}, ${input.now ?? null}::timestamptz) `.execute(db);
    return { ok: true, task: rows[0]! };
  } catch (error) {
    const refusal = reportRefusal(error);
    if (refusal === undefined) throw error;
    // In a caller's transaction the error has aborted it: throw, so it rolls back.
    if (db.isTransaction) throw new TaskReportRefusedError(refusal);
    return refusal;
  }
}

/**
 * The task as a worker's earlier report left it, when that report is the one
 * `input` repeats: ended with the same status and reason, by the same worker,
 * with the same inline output (or an offloaded one on both sides — the retry's
 * own blob has a new ref). A retried report whose first answer was lost is
 * refused as "not_in_progress"; this is how report-task-result.ts tells it
 * from a report that really came too late. Undefined otherwise.
 */
export async function findAppliedReport(
  db: Executor,
  input: CompleteTaskFromWorkerInput & { workerId: string },
): Promise<TaskExecutionRow | undefined> {
  const offloaded = input.outputRef !== undefined && input.outputRef !== null;
  return taskInNamespace(db, input)
    .where("status", "=", input.status)
    .where("workerId", "=", input.workerId)
    .where(sql<boolean>`"reasonForIncompletion" IS NOT DISTINCT FROM ${input.reason ?? null}`)
    .where(offloaded ? sql<boolean>`"outputRef" IS NOT NULL` : sql<boolean>`"outputRef" IS NULL AND "output" = ${json(input.output ?? {})}::jsonb`)
    .executeTakeFirst();
}

/** The refusal "nf_complete_task" raised (SQLSTATE NFREF; migration 0014), or undefined for any other error. */
export function reportRefusal(error: unknown): Extract<CompleteTaskFromWorkerResult, { ok: false }> | undefined {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== "NFREF") return undefined;
  const detail = (error as { detail?: unknown }).detail;
  const status = typeof detail === "string" && detail !== "" ? (detail as TaskStatus) : undefined;
  return { ok: false, error: error.message as "not_found" | "not_in_progress" | "not_held", status };
}

/**
 * Reads of TaskExecutions for the API: one task as a caller names it, and a
 * workflow's tasks a page at a time. Every statement carries "workflowId" (the
 * hash-partition key, so one of sixteen partitions is probed) and
 * "namespaceId" (checked here as well as at the route: a filter applied only
 * in a route is one the next non-HTTP caller bypasses).
 */


/** One task of a workflow in `namespaceId`, or undefined. */
export async function getTaskInNamespace(
  db: Executor,
  input: { namespaceId: string; workflowId: string; taskId: string },
): Promise<TaskExecutionRow | undefined> {
  return taskInNamespace(db, input).executeTakeFirst();
}

/** The select of one task by its full address: the partition key, the id, and the namespace it must be in. */
function taskInNamespace(db: Executor, input: { namespaceId: string; workflowId: string; taskId: string }) {
  return db
    .selectFrom("TaskExecutions")
    .selectAll()
    .where("workflowId", "=", input.workflowId)
    .where("id", "=", input.taskId)
    .where("namespaceId", "=", input.namespaceId);
}

export class InvalidTaskCursorError extends Error {
  override name = "InvalidTaskCursorError";
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function encodeCursor(id: string): string {
  return Buffer.from(id, "utf8").toString("base64url");
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  // Checked before it reaches SQL: a malformed one is the caller's 400, not a cast error's 500.
  if (!UUID.test(id)) throw new InvalidTaskCursorError("The task cursor is not one this API returned");
  return id;
}

export interface WorkflowTaskPage {
  items: TaskExecutionRow[];
  /** Opaque; null on the last page. */
  nextCursor: string | null;
}

/**
 * A workflow's tasks in the order they were scheduled, keyset-paged — never
 * OFFSET, which re-reads every skipped row and, while the workflow runs and
 * inserts tasks, skips and repeats rows between pages. Ids are uuidv7, so id
 * order is insertion order, and ("workflowId","id") is the primary key: each
 * page is one range scan of it, as cheap on page 500 as on page 1. Tasks
 * scheduled after a page was read appear on a later page, never twice.
 */
export async function listWorkflowTasks(
  db: Executor,
  input: { namespaceId: string; workflowId: string; limit: number; cursor?: string },
): Promise<WorkflowTaskPage> {
  const { limit } = input;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${limit}`);
  }
  let query = db
    .selectFrom("TaskExecutions")
    .selectAll()
    .where("workflowId", "=", input.workflowId)
    .where("namespaceId", "=", input.namespaceId);
  if (input.cursor !== undefined) query = query.where("id", ">", decodeCursor(input.cursor));
  // One extra row says whether there is a next page without a COUNT.
  const rows = await query.orderBy("id").limit(limit + 1).execute();
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last.id) : null };
}
