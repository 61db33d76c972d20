import { sql } from "kysely";
import type { Kysely } from "kysely";
import { json } from "../../db/json";
import type { Database, WorkflowExecutionRow, WorkflowStatus } from "../../db/schema";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

export interface InsertWorkflowExecutionInput {
  /** Normally left to the database's uuidv7(); pass one to know it before the insert. */
  id?: string;
  namespaceId: string;
  defName: string;
  defVersion: number;
  status?: WorkflowStatus;
  correlationId?: string | null;
  idempotencyKey?: string | null;
  priority?: number;
  input?: unknown;
  output?: unknown;
  variables?: unknown;
  inputRef?: string | null;
  outputRef?: string | null;
  parentWorkflowId?: string | null;
  parentTaskId?: string | null;
  /** Defaults to now(). A string is passed to Postgres verbatim, so it may carry microseconds. */
  startedAt?: Date | string;
  createdBy?: string | null;
}

/**
 * Inserts one execution and returns the stored row. Every JSONB value goes
 * through json(), which strips the NUL that jsonb cannot store; the column list
 * is explicit so a field the caller adds is a compile error here, not a silent drop.
 */
export async function insertWorkflowExecution(
  db: Executor,
  row: InsertWorkflowExecutionInput,
): Promise<WorkflowExecutionRow> {
  return insertWorkflowExecutionQuery(db, row).returningAll().executeTakeFirstOrThrow();
}

/** {@link insertWorkflowExecution}'s INSERT, for a statement that does more (a start's, in start-execution.ts). */
export function insertWorkflowExecutionQuery(db: Executor, row: InsertWorkflowExecutionInput) {
  return db
    .insertInto("WorkflowExecutions")
    .values({
      id: row.id,
      namespaceId: row.namespaceId,
      defName: row.defName,
      defVersion: row.defVersion,
      status: row.status,
      correlationId: row.correlationId ?? null,
      idempotencyKey: row.idempotencyKey ?? null,
      priority: row.priority,
      input: json(row.input ?? {}),
      output: json(row.output ?? {}),
      variables: json(row.variables ?? {}),
      inputRef: row.inputRef ?? null,
      outputRef: row.outputRef ?? null,
      parentWorkflowId: row.parentWorkflowId ?? null,
      parentTaskId: row.parentTaskId ?? null,
      startedAt: row.startedAt,
      createdBy: row.createdBy ?? null,
    });
}

/**
 * One execution, only if it belongs to `namespaceId`: repositories filter by
 * namespace themselves, because a check done in a route is one the next non-HTTP
 * caller bypasses. Without "startedAt" this probes the primary key of each
 * monthly partition once — an index lookup per partition, not a scan.
 */
export async function getWorkflowExecution(
  db: Executor,
  namespaceId: string,
  id: string,
): Promise<WorkflowExecutionRow | undefined> {
  return db
    .selectFrom("WorkflowExecutions")
    .selectAll()
    .where("namespaceId", "=", namespaceId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** A listed execution: the row without its payloads (up to 256 KB each, a page of 50 would ship megabytes). */
export type WorkflowExecutionSummary = Omit<WorkflowExecutionRow, "input" | "output" | "variables">;

export interface ListWorkflowExecutionsOptions {
  namespaceId: string;
  status?: WorkflowStatus;
  /** Any of these statuses (ANDed with `status` when both are given). */
  statuses?: readonly WorkflowStatus[];
  defName?: string;
  defVersion?: number;
  /**
   * JSON containment on "input" / "output", one condition per entry, ANDed;
   * an entry matches when the column contains any of its values. Answered by
   * the GIN (jsonb_path_ops) indexes, which serve `@>` and nothing else: a
   * payload offloaded to the blob store (over 256 KB) is stored as {} and is
   * not searchable.
   */
  contains?: readonly { column: "input" | "output"; anyOf: readonly unknown[] }[];
  correlationId?: string;
  /** Runs started at or after this instant. */
  startedFrom?: Date;
  /** Runs started before this instant. */
  startedBefore?: Date;
  /** Page size, 1 to 1000. */
  limit: number;
  /** `nextCursor` of the previous page; omit for the first page. */
  cursor?: string;
}

export interface WorkflowExecutionPage {
  items: WorkflowExecutionSummary[];
  /** Opaque; null on the last page. */
  nextCursor: string | null;
}

export class InvalidCursorError extends Error {
  override name = "InvalidCursorError";
}

interface CursorKey {
  /** "startedAt" as text at full microsecond precision, exactly as Postgres rendered it. */
  startedAt: string;
  id: string;
}

// Produced only by encodeCursor below (to_char … 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"').
const isEmptyObject = (value: unknown): boolean =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

const CURSOR_TIMESTAMP = /^\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.startedAt, key.id]), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): CursorKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new InvalidCursorError("The cursor is not one this API returned");
  }
  // Validated before it reaches SQL: the values are bound parameters either way,
  // but a malformed one should be a 400, not a Postgres cast error (500).
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== "string" ||
    typeof parsed[1] !== "string" ||
    !CURSOR_TIMESTAMP.test(parsed[0]) ||
    !UUID.test(parsed[1])
  ) {
    throw new InvalidCursorError("The cursor is not one this API returned");
  }
  return { startedAt: parsed[0], id: parsed[1] };
}

/**
 * Newest first, keyset-paged on ("startedAt" DESC, "id" DESC) — never OFFSET,
 * which re-reads every skipped row and, on a table taking continuous inserts,
 * skips and duplicates rows as they shift between requests. Each filter
 * narrows the same ordered scan: status and name have indexes leading
 * ("namespaceId", <filter>, "startedAt" DESC, "id" DESC); the time range
 * bounds "startedAt", which also prunes the monthly partitions outside it; a
 * correlation id matches few rows (its partial index), which are then sorted.
 */
export async function listWorkflowExecutions(
  db: Executor,
  options: ListWorkflowExecutionsOptions,
): Promise<WorkflowExecutionPage> {
  const { namespaceId, status, defName, limit, cursor } = options;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${limit}`);
  }
  const after = cursor === undefined ? undefined : decodeCursor(cursor);

  let query = db
    .selectFrom("WorkflowExecutions")
    .select([
      "id",
      "namespaceId",
      "defName",
      "defVersion",
      "status",
      "version",
      "correlationId",
      "idempotencyKey",
      "priority",
      "inputRef",
      "outputRef",
      "parentWorkflowId",
      "parentTaskId",
      "startedAt",
      "endedAt",
      "updatedAt",
      "reasonForIncompletion",
      "failedTaskRef",
      "createdBy",
      // The cursor key, rendered by Postgres. pg parses timestamptz into a JS Date,
      // which keeps milliseconds only: a cursor built from it sorts *before* its
      // own row, and `<` then skips every row sharing that millisecond (12 rows
      // paged as 9). to_char in UTC rather than ::text, so the string does not
      // depend on the session's DateStyle or TimeZone.
      sql<string>`to_char("startedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as("cursorStartedAt"),
    ])
    .where("namespaceId", "=", namespaceId);
  if (status !== undefined) query = query.where("status", "=", status);
  if (options.statuses !== undefined && options.statuses.length > 0) query = query.where("status", "in", [...options.statuses]);
  if (defName !== undefined) query = query.where("defName", "=", defName);
  if (options.defVersion !== undefined) query = query.where("defVersion", "=", options.defVersion);
  for (const term of options.contains ?? []) {
    if (term.anyOf.length === 0) continue;
    // Column names come from the closed union above, never from the caller's text.
    const column = sql.ref(term.column);
    query = query.where(sql<boolean>`(${sql.join(term.anyOf.map((value) => sql`${column} @> ${json(value)}::jsonb`), sql` OR `)})`);
    // The output index leaves out {} (every run's output until it ends). Only the value {} is contained in {}, so
    // for any other values this changes no answer and lets the planner use that partial index.
    if (term.column === "output" && !term.anyOf.some(isEmptyObject)) query = query.where(sql<boolean>`"output" <> '{}'::jsonb`);
  }
  if (options.correlationId !== undefined) query = query.where("correlationId", "=", options.correlationId);
  if (options.startedFrom !== undefined) query = query.where("startedAt", ">=", options.startedFrom);
  if (options.startedBefore !== undefined) query = query.where("startedAt", "<", options.startedBefore);
  if (after !== undefined) {
    // A row comparison, which btree uses as one index condition on
    // ("namespaceId","startedAt" DESC,"id" DESC) and which prunes partitions on
    // its leading column. Both sides cast explicitly: left to inference a bound
    // parameter can be typed text, and text orders UUIDs lexically, quietly
    // returning the wrong page.
    query = query.where(
      sql<boolean>`("startedAt", "id") < (${after.startedAt}::timestamptz, ${after.id}::uuid)`,
    );
  }
  // One extra row says whether there is a next page without a COUNT.
  const rows = await query
    .orderBy("startedAt", "desc")
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();

  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const nextCursor =
    rows.length > limit && last !== undefined ? encodeCursor({ startedAt: last.cursorStartedAt, id: last.id }) : null;
  return { items: page.map(({ cursorStartedAt: _cursor, ...item }) => item), nextCursor };
}

// ---------------------------------------------------------------------------
// State changes outside an evaluation: the workflow lifecycle and operator
// actions. Each PRECONDITION: the caller holds the row's lock (lockWorkflow in
// decide-queues.ts) in this transaction, taken before it read the status it
// decided on. The row is addressed by "id" alone: a "startedAt" read back into
// a JS Date has lost its microseconds, so equality on it would miss the row.
// Every change bumps "version", the optimistic-concurrency counter, as an
// evaluation does: a reader comparing versions must see an operator's change.

/** The statuses a workflow can still move out of on its own or by pause/resume. */
export const LIVE_WORKFLOW_STATUSES = ["RUNNING", "PAUSED"] as const satisfies readonly WorkflowStatus[];

/** A child of `parentWorkflowId` that has not ended, as found through "WorkflowExecutions_parent_idx". */
export interface LiveChildWorkflow {
  id: string;
  namespaceId: string;
  status: WorkflowStatus;
}

/**
 * The running or paused children of a workflow (SUB_WORKFLOW children, linked
 * by "parentWorkflowId"), in id order so that every caller that locks several
 * of them locks them in the same order.
 */
export async function listLiveChildWorkflows(db: Executor, parentWorkflowId: string): Promise<LiveChildWorkflow[]> {
  return db
    .selectFrom("WorkflowExecutions")
    .select(["id", "namespaceId", "status"])
    .where("parentWorkflowId", "=", parentWorkflowId)
    .where("status", "in", [...LIVE_WORKFLOW_STATUSES])
    .orderBy("id")
    .execute();
}

/**
 * Compare-and-set on the status: moves the workflow from one of `from` to
 * `to` (pause, resume) and returns the row, or undefined when it was in none
 * of them. Under the row lock the compare cannot lose a race; it is there so a
 * caller that forgot the lock changes nothing rather than the wrong thing.
 */
export async function setWorkflowStatus(
  db: Executor,
  input: { workflowId: string; from: readonly WorkflowStatus[]; to: WorkflowStatus; now: Date },
): Promise<WorkflowExecutionRow | undefined> {
  if (input.from.length === 0) return undefined;
  return db
    .updateTable("WorkflowExecutions")
    .set({ status: input.to, updatedAt: input.now, version: sql<number>`"version" + 1` })
    .where("id", "=", input.workflowId)
    .where("status", "in", [...input.from])
    .returningAll()
    .executeTakeFirst();
}

/**
 * Ends a live workflow (terminate): status, reason and "endedAt", only while it
 * is RUNNING or PAUSED. Returns the row, or undefined when it had already ended.
 */
export async function endWorkflowExecution(
  db: Executor,
  input: {
    workflowId: string;
    status: "COMPLETED" | "FAILED" | "TERMINATED" | "TIMED_OUT";
    reasonForIncompletion: string | null;
    failedTaskRef?: string | null;
    now: Date;
  },
): Promise<WorkflowExecutionRow | undefined> {
  return db
    .updateTable("WorkflowExecutions")
    .set({
      status: input.status,
      reasonForIncompletion: input.reasonForIncompletion,
      failedTaskRef: input.failedTaskRef ?? null,
      endedAt: input.now,
      updatedAt: input.now,
      version: sql<number>`"version" + 1`,
    })
    .where("id", "=", input.workflowId)
    .where("status", "in", [...LIVE_WORKFLOW_STATUSES])
    .returningAll()
    .executeTakeFirst();
}

export interface ReopenWorkflowExecutionInput {
  workflowId: string;
  /** The statuses it may be reopened from (compare-and-set). */
  from: readonly WorkflowStatus[];
  now: Date;
  /** A new input (rerun, restart); offloaded inputs pass `inputRef` too. Unchanged when undefined. */
  input?: unknown;
  inputRef?: string | null;
  /** Restart with another definition version. */
  defVersion?: number;
  /** Restart: the variables start over from these. Unchanged when undefined. */
  variables?: unknown;
  /**
   * Restart: the run starts over, so its clock does too ("startedAt" is what
   * the workflow timeout is measured from). "startedAt" is the partition key:
   * when the new value falls in another month Postgres moves the row to that
   * partition, and a transaction waiting on the old row's lock at that moment
   * gets a serialization failure (40001) instead of the row — the evaluator
   * re-queues on it, so the cost is one retried evaluation.
   */
  restartedAt?: Date;
}

/**
 * Makes an ended workflow RUNNING again (retry, rerun, restart): clears
 * "endedAt", the reason, the failed ref and the output. Returns the row, or
 * undefined when its status was not one of `from`.
 */
export async function reopenWorkflowExecution(
  db: Executor,
  input: ReopenWorkflowExecutionInput,
): Promise<WorkflowExecutionRow | undefined> {
  if (input.from.length === 0) return undefined;
  return db
    .updateTable("WorkflowExecutions")
    .set({
      status: "RUNNING",
      endedAt: null,
      reasonForIncompletion: null,
      failedTaskRef: null,
      output: json({}),
      outputRef: null,
      updatedAt: input.now,
      version: sql<number>`"version" + 1`,
      ...(input.input !== undefined ? { input: json(input.input), inputRef: input.inputRef ?? null } : {}),
      ...(input.defVersion !== undefined ? { defVersion: input.defVersion } : {}),
      ...(input.variables !== undefined ? { variables: json(input.variables) } : {}),
      ...(input.restartedAt !== undefined ? { startedAt: input.restartedAt } : {}),
    })
    .where("id", "=", input.workflowId)
    .where("status", "in", [...input.from])
    .returningAll()
    .executeTakeFirst();
}
