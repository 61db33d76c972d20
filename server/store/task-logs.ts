import type { Kysely } from "kysely";
import type { Database, TaskLogRow } from "../../db/schema";

/**
 * TaskLogs: lines a worker appends to a task it runs (Conductor's
 * POST /tasks/{taskId}/log). Append-only: there is no update, and deletion is
 * retention's alone (by "at", through the BRIN index).
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/** Longest line kept; a longer one is cut, not refused (a log is best effort, the task's work is not). */
export const MAX_TASK_LOG_LINE_LENGTH = 64 * 1024;

/**
 * Postgres TEXT cannot hold NUL (as jsonb cannot; db/json.ts): a line quoting
 * binary output would fail the whole insert. It is stripped, as json() strips it.
 */
function storable(line: string): string {
  const cut = line.length > MAX_TASK_LOG_LINE_LENGTH ? line.slice(0, MAX_TASK_LOG_LINE_LENGTH) : line;
  return cut.includes("\u0000") ? cut.replaceAll("\u0000", "") : cut;
}

/**
 * Appends `lines` to a task's log, in order, in one statement. The caller
 * checks the task exists in `namespaceId` first; the rows carry the namespace
 * so every read filters by it. Returns how many lines were stored.
 */
export async function appendTaskLogs(
  db: Executor,
  input: { namespaceId: string; workflowId: string; taskId: string; lines: readonly string[]; at?: Date },
): Promise<number> {
  if (input.lines.length === 0) return 0;
  // One multi-row INSERT: BIGSERIAL allocates ids in VALUES order, so the
  // task's log reads back in the order the worker sent it.
  const rows = await db
    .insertInto("TaskLogs")
    .values(
      input.lines.map((line) => ({
        namespaceId: input.namespaceId,
        workflowId: input.workflowId,
        taskId: input.taskId,
        line: storable(line),
        ...(input.at === undefined ? {} : { at: input.at }),
      })),
    )
    .returning("id")
    .execute();
  return rows.length;
}

/**
 * A task's log lines in the order they were appended, after `afterId`
 * (keyset on "TaskLogs_task_idx" ("taskId","id"), never OFFSET), at most `limit`.
 */
export async function listTaskLogs(
  db: Executor,
  input: { namespaceId: string; taskId: string; afterId?: number; limit: number },
): Promise<TaskLogRow[]> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > 10_000) {
    throw new RangeError(`limit must be an integer from 1 to 10000, got ${input.limit}`);
  }
  let query = db
    .selectFrom("TaskLogs")
    .selectAll()
    .where("taskId", "=", input.taskId)
    .where("namespaceId", "=", input.namespaceId);
  if (input.afterId !== undefined) query = query.where("id", ">", input.afterId);
  return query.orderBy("id").limit(input.limit).execute();
}
