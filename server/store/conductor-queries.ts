import { sql } from "kysely";
import type { Kysely, Transaction } from "kysely";
import { json } from "../../db/json";
import type { Database, TaskExecutionRow, WorkflowDefinitionRow, WorkflowExecutionRow, WorkflowStatus } from "../../db/schema";

/**
 * The statements only Conductor's API needs. Conductor names a task by its id
 * alone (`GET /tasks/{taskId}`, `POST /tasks/{taskId}/log`), pages searches by
 * offset with a total, and registers a definition at the version the caller
 * chose; node-flow's own API never does any of these, so they live here rather
 * than bending the shared repositories. Every statement carries "namespaceId".
 */

type Executor = Kysely<Database>;

/**
 * One task by id in `namespaceId`. Without the workflow id (the hash-partition
 * key) this probes all sixteen "TaskExecutions" partitions by primary key —
 * sixteen index probes, not a scan; Conductor's task-id-only routes are rare
 * next to polls and updates, which carry the workflow id.
 */
export async function findTaskById(db: Executor, input: { namespaceId: string; taskId: string }): Promise<TaskExecutionRow | undefined> {
  return db.selectFrom("TaskExecutions").selectAll().where("id", "=", input.taskId).where("namespaceId", "=", input.namespaceId).executeTakeFirst();
}

/**
 * Conductor's `seq` of each of `taskIds`: its 1-based place in the workflow's
 * tasks in scheduling order (ids are uuidv7, so id order is insertion order).
 * The workflow id is a constant in both the outer query and the count, so
 * Postgres prunes both to the one partition at plan time; each count is a
 * range scan of the ("workflowId","id") primary key.
 */
export async function taskSequenceNumbers(db: Executor, input: { workflowId: string; taskIds: readonly string[] }): Promise<Map<string, number>> {
  if (input.taskIds.length === 0) return new Map();
  const { rows } = await sql<{ id: string; seq: number }>`
    SELECT "x"."id", (SELECT count(*) FROM "TaskExecutions" AS "y"
                      WHERE "y"."workflowId" = ${input.workflowId}::uuid AND "y"."id" <= "x"."id")::int AS "seq"
    FROM "TaskExecutions" AS "x"
    WHERE "x"."workflowId" = ${input.workflowId}::uuid AND "x"."id" IN (${sql.join(input.taskIds.map((id) => sql`${id}::uuid`))})`.execute(db);
  return new Map(rows.map((r) => [r.id, Number(r.seq)]));
}

/** The id of the attempt that retried `task` (the next attempt of its ref and iteration), or undefined. */
export async function findRetryOf(db: Executor, task: Pick<TaskExecutionRow, "workflowId" | "namespaceId" | "refName" | "iteration" | "attempt">): Promise<string | undefined> {
  const row = await db
    .selectFrom("TaskExecutions")
    .select("id")
    .where("workflowId", "=", task.workflowId)
    .where("namespaceId", "=", task.namespaceId)
    .where("refName", "=", task.refName)
    .where("iteration", "=", task.iteration)
    .where("attempt", "=", task.attempt + 1)
    .executeTakeFirst();
  return row?.id;
}

/**
 * The latest task of `refName` in a workflow (highest iteration, then attempt;
 * or of one iteration when given): what Conductor's update-by-reference-name
 * means by "the task".
 */
export async function findLatestTaskByRef(
  db: Executor,
  input: { namespaceId: string; workflowId: string; refName: string; iteration?: number },
): Promise<TaskExecutionRow | undefined> {
  let query = db
    .selectFrom("TaskExecutions")
    .selectAll()
    .where("workflowId", "=", input.workflowId)
    .where("namespaceId", "=", input.namespaceId)
    .where("refName", "=", input.refName);
  if (input.iteration !== undefined) query = query.where("iteration", "=", input.iteration);
  return query.orderBy("iteration", "desc").orderBy("attempt", "desc").limit(1).executeTakeFirst();
}

/** The FORK_JOIN_DYNAMIC row a fork instance belongs to (its latest attempt), for the labels its input lists. */
export async function findForkTask(
  db: Executor,
  input: { namespaceId: string; workflowId: string; refName: string; iteration: number },
): Promise<Pick<TaskExecutionRow, "input" | "inputRef"> | undefined> {
  return db
    .selectFrom("TaskExecutions")
    .select(["input", "inputRef"])
    .where("workflowId", "=", input.workflowId)
    .where("namespaceId", "=", input.namespaceId)
    .where("refName", "=", input.refName)
    .where("iteration", "=", input.iteration)
    .where("taskType", "=", "FORK_JOIN_DYNAMIC")
    .orderBy("attempt", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** The workflow fields a Conductor Task carries (workflowType, correlationId, priority), for several workflows at once. */
export async function workflowHeaders(
  db: Executor,
  input: { namespaceId: string; workflowIds: readonly string[] },
): Promise<Map<string, Pick<WorkflowExecutionRow, "id" | "defName" | "defVersion" | "correlationId" | "priority">>> {
  if (input.workflowIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("WorkflowExecutions")
    .select(["id", "defName", "defVersion", "correlationId", "priority"])
    .where("namespaceId", "=", input.namespaceId)
    .where("id", "in", [...new Set(input.workflowIds)])
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * A worker's IN_PROGRESS update (Conductor's TaskResult with status
 * IN_PROGRESS): the output is replaced and "callbackAfterSeconds" recorded,
 * the task stays IN_PROGRESS. Compare-and-set on the status, so an update
 * racing a cancel or a timeout changes nothing. Returns the row, or undefined
 * when the task is not in progress (or not in this namespace).
 */
export async function recordTaskProgress(
  db: Executor,
  input: {
    namespaceId: string;
    workflowId: string;
    taskId: string;
    /** Replaces the output when given; absent keeps it. */
    output?: { value: Record<string, unknown>; ref: string | null };
    callbackAfterSeconds: number;
    now?: Date;
  },
): Promise<TaskExecutionRow | undefined> {
  const now = input.now ?? new Date();
  return db
    .updateTable("TaskExecutions")
    .set({
      ...(input.output === undefined ? {} : { output: json(input.output.value), outputRef: input.output.ref }),
      callbackAfterSeconds: input.callbackAfterSeconds,
      updatedAt: now,
    })
    .where("workflowId", "=", input.workflowId)
    .where("id", "=", input.taskId)
    .where("namespaceId", "=", input.namespaceId)
    .where("status", "=", "IN_PROGRESS")
    .returningAll()
    .executeTakeFirst();
}

/**
 * Tasks waiting in each of `queueNames` (not held by a worker: ready now or
 * deferred by a callbackAfterSeconds), as Conductor's queue sizes count them.
 * A queue with nothing in it is absent from the map.
 */
export async function waitingTaskCounts(db: Executor, input: { namespaceId: string; queueNames?: readonly string[] }): Promise<Map<string, number>> {
  if (input.queueNames !== undefined && input.queueNames.length === 0) return new Map();
  let query = db
    .selectFrom("TaskQueues")
    .select(["queueName", (eb) => eb.fn.countAll<string>().as("count")])
    .where("namespaceId", "=", input.namespaceId)
    .where("leaseExpiresAt", "is", null);
  if (input.queueNames !== undefined) query = query.where("queueName", "in", [...input.queueNames]);
  const rows = await query.groupBy("queueName").execute();
  return new Map(rows.map((r) => [r.queueName, Number(r.count)]));
}

/**
 * Takes the lock `insertNextWorkflowDefinitionVersion` takes on (namespace,
 * name), so a Conductor registration at a chosen version and a node-flow save
 * of the next version serialise instead of racing for the same number.
 */
export async function lockWorkflowDefinitionName(trx: Transaction<Database>, input: { namespaceId: string; name: string }): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('WorkflowDefinitions'), hashtext(${input.namespaceId}::text || '/' || ${input.name}::text))`.execute(trx);
}

/** The highest stored version of `name` (archived or not), or undefined when there is none. */
export async function latestWorkflowDefinitionVersion(db: Executor, input: { namespaceId: string; name: string }): Promise<WorkflowDefinitionRow | undefined> {
  return db
    .selectFrom("WorkflowDefinitions")
    .selectAll()
    .where("namespaceId", "=", input.namespaceId)
    .where("name", "=", input.name)
    .orderBy("version", "desc")
    .limit(1)
    .executeTakeFirst();
}

/**
 * Inserts a definition at exactly `version` — Conductor's WorkflowDef names
 * its own version — and returns the row, or undefined when that version
 * exists (ON CONFLICT DO NOTHING on the ("namespaceId","name","version")
 * unique constraint, which stays the arbiter). Call under
 * {@link lockWorkflowDefinitionName}.
 */
export async function insertWorkflowDefinitionAtVersion(
  trx: Transaction<Database>,
  input: { namespaceId: string; name: string; version: number; description: string | null; graph: unknown; blueprint: unknown; createdBy: string | null },
): Promise<WorkflowDefinitionRow | undefined> {
  return trx
    .insertInto("WorkflowDefinitions")
    .values({
      namespaceId: input.namespaceId,
      name: input.name,
      version: input.version,
      description: input.description,
      graph: json(input.graph),
      blueprint: json(input.blueprint),
      createdBy: input.createdBy,
    })
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst();
}

export interface WorkflowSearchFilter {
  namespaceId: string;
  defNames?: readonly string[];
  statuses?: readonly WorkflowStatus[];
  correlationIds?: readonly string[];
  workflowIds?: readonly string[];
  startedFrom?: Date;
  startedBefore?: Date;
  /** Case-insensitive substring of the definition name or the correlation id (Conductor's freeText, minus full-text search). */
  freeText?: string;
  /** Newest first unless "ASC". */
  order: "ASC" | "DESC";
  offset: number;
  limit: number;
}

export type WorkflowSearchRow = Omit<WorkflowExecutionRow, "variables">;

function escapeLike(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Conductor's workflow search: a page by offset plus the total. OFFSET here,
 * unlike node-flow's keyset-paged search, because Conductor's `start` is an
 * offset and clients page with it; the count is a separate statement over the
 * same filter. Rows leave out "variables" (search results do not carry them).
 */
export async function searchWorkflowExecutions(db: Executor, filter: WorkflowSearchFilter): Promise<{ totalHits: number; rows: WorkflowSearchRow[] }> {
  let base = db.selectFrom("WorkflowExecutions").where("namespaceId", "=", filter.namespaceId);
  if (filter.defNames !== undefined) base = base.where("defName", "in", [...filter.defNames]);
  if (filter.statuses !== undefined) base = base.where("status", "in", [...filter.statuses]);
  if (filter.correlationIds !== undefined) base = base.where("correlationId", "in", [...filter.correlationIds]);
  if (filter.workflowIds !== undefined) base = base.where("id", "in", [...filter.workflowIds]);
  if (filter.startedFrom !== undefined) base = base.where("startedAt", ">=", filter.startedFrom);
  if (filter.startedBefore !== undefined) base = base.where("startedAt", "<", filter.startedBefore);
  const text = filter.freeText?.trim() ?? "";
  if (text !== "" && text !== "*") {
    base = base.where((eb) => eb.or([eb("defName", "ilike", escapeLike(text)), eb("correlationId", "ilike", escapeLike(text))]));
  }
  const total = await base.select((eb) => eb.fn.countAll<string>().as("count")).executeTakeFirstOrThrow();
  const rows = await base
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
      "input",
      "output",
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
    ])
    .orderBy("startedAt", filter.order === "ASC" ? "asc" : "desc")
    .orderBy("id", filter.order === "ASC" ? "asc" : "desc")
    .offset(filter.offset)
    .limit(filter.limit)
    .execute();
  return { totalHits: Number(total.count), rows };
}
