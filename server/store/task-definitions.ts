import { sql } from "kysely";
import type { Kysely } from "kysely";
import { json } from "../../db/json";
import type { Database, RetryLogic, TaskDefinitionRow, TimeoutPolicy } from "../../db/schema";

/**
 * TaskDefinitions: Conductor's TaskDef per (namespace, name), mutable. Besides
 * retry and timeout defaults it carries a queue's gates (server/tasks/task-gates.ts):
 * the definition whose name is the queue name configures that queue's rate
 * limit, concurrentExecLimit and semaphore.
 */

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * Everything a definition says, as Conductor's TaskDef names it. Omitted fields
 * take Conductor's defaults: an upsert replaces the whole definition (Conductor's
 * PUT /metadata/taskdefs), so a field left out of an update is reset, not kept.
 */
export interface TaskDefinitionInput {
  name: string;
  description?: string | null;
  ownerEmail?: string | null;
  retryCount?: number;
  retryLogic?: RetryLogic;
  retryDelaySeconds?: number;
  backoffScaleFactor?: number;
  timeoutPolicy?: TimeoutPolicy;
  /** 0: no limit. */
  timeoutSeconds?: number;
  /** 0: no limit. */
  totalTimeoutSeconds?: number;
  responseTimeoutSeconds?: number;
  pollTimeoutSeconds?: number | null;
  /** At most this many of the queue's tasks held by workers at once; 0 or null: unlimited. */
  concurrentExecLimit?: number | null;
  /** At most this many leases per window; 0 or null: unlimited. */
  rateLimitPerFrequency?: number | null;
  /** The fixed window rateLimitPerFrequency counts in; null means 1 s. */
  rateLimitFrequencyInSeconds?: number | null;
  /** A named semaphore (see server/store/semaphores.ts); null: none. */
  semaphoreName?: string | null;
  inputKeys?: string[];
  outputKeys?: string[];
  inputTemplate?: Record<string, unknown>;
  inputSchema?: unknown;
  outputSchema?: unknown;
  secretOutputFields?: string[];
  /** Workers of this queue are handed `${workflow.secrets.NAME}` resolved in their input; otherwise `***`. */
  allowSecrets?: boolean;
}

/** The migration's column defaults (0001_platform.sql), which are Conductor's. */
const DEFAULTS = {
  retryCount: 3,
  retryLogic: "FIXED",
  retryDelaySeconds: 60,
  backoffScaleFactor: 1,
  timeoutPolicy: "TIME_OUT_WF",
  timeoutSeconds: 0,
  totalTimeoutSeconds: 0,
  responseTimeoutSeconds: 3600,
} as const;

/**
 * The columns an upsert writes, named one by one, for the insert and for the
 * update alike. Never a spread of the parsed input: a column the API accepts
 * and this list lacks is silently dropped on write (the seed's
 * secretOutputFields bug), and a spread couples the storage layout to the DSL.
 * task-definitions.int.test.ts compares this list with the table's columns.
 */
export const TASK_DEFINITION_COLUMNS = [
  "description",
  "ownerEmail",
  "retryCount",
  "retryLogic",
  "retryDelaySeconds",
  "backoffScaleFactor",
  "timeoutPolicy",
  "timeoutSeconds",
  "totalTimeoutSeconds",
  "responseTimeoutSeconds",
  "pollTimeoutSeconds",
  "concurrentExecLimit",
  "rateLimitPerFrequency",
  "rateLimitFrequencyInSeconds",
  "semaphoreName",
  "inputKeys",
  "outputKeys",
  "inputTemplate",
  "inputSchema",
  "outputSchema",
  "secretOutputFields",
  "allowSecrets",
  "updatedAt",
  "updatedBy",
] as const;

/**
 * Creates or replaces the definition `input.name` in the namespace and returns
 * the stored row. "createdAt"/"createdBy" are kept on a replace.
 *
 * This repository does not know the in-process gate cache (server/tasks/task-gates.ts):
 * a service that changes a definition should call `invalidateQueueGates` there,
 * or this process keeps the old gates for up to the cache's TTL (other
 * processes do regardless).
 */
export async function upsertTaskDefinition(
  db: Executor,
  input: { namespaceId: string; definition: TaskDefinitionInput; actor?: string | null; now?: Date },
): Promise<TaskDefinitionRow> {
  const d = input.definition;
  const now = input.now ?? new Date();
  const actor = input.actor ?? null;
  // Every column of TASK_DEFINITION_COLUMNS, spelled out: `satisfies` makes a
  // missing one a compile error.
  const row = {
    description: d.description ?? null,
    ownerEmail: d.ownerEmail ?? null,
    retryCount: d.retryCount ?? DEFAULTS.retryCount,
    retryLogic: d.retryLogic ?? DEFAULTS.retryLogic,
    retryDelaySeconds: d.retryDelaySeconds ?? DEFAULTS.retryDelaySeconds,
    backoffScaleFactor: d.backoffScaleFactor ?? DEFAULTS.backoffScaleFactor,
    timeoutPolicy: d.timeoutPolicy ?? DEFAULTS.timeoutPolicy,
    timeoutSeconds: d.timeoutSeconds ?? DEFAULTS.timeoutSeconds,
    totalTimeoutSeconds: d.totalTimeoutSeconds ?? DEFAULTS.totalTimeoutSeconds,
    responseTimeoutSeconds: d.responseTimeoutSeconds ?? DEFAULTS.responseTimeoutSeconds,
    pollTimeoutSeconds: d.pollTimeoutSeconds ?? null,
    concurrentExecLimit: d.concurrentExecLimit ?? null,
    rateLimitPerFrequency: d.rateLimitPerFrequency ?? null,
    rateLimitFrequencyInSeconds: d.rateLimitFrequencyInSeconds ?? null,
    semaphoreName: d.semaphoreName ?? null,
    inputKeys: d.inputKeys ?? [],
    outputKeys: d.outputKeys ?? [],
    inputTemplate: json(d.inputTemplate ?? {}),
    inputSchema: d.inputSchema === undefined || d.inputSchema === null ? null : json(d.inputSchema),
    outputSchema: d.outputSchema === undefined || d.outputSchema === null ? null : json(d.outputSchema),
    secretOutputFields: d.secretOutputFields ?? [],
    allowSecrets: d.allowSecrets ?? false,
    updatedAt: now,
    updatedBy: actor,
  } satisfies Record<(typeof TASK_DEFINITION_COLUMNS)[number], unknown>;
  return db
    .insertInto("TaskDefinitions")
    .values({ namespaceId: input.namespaceId, name: d.name, createdAt: now, createdBy: actor, ...row })
    .onConflict((oc) =>
      oc.columns(["namespaceId", "name"]).doUpdateSet((eb) =>
        Object.fromEntries(TASK_DEFINITION_COLUMNS.map((column) => [column, eb.ref(`excluded.${column}`)])),
      ),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function getTaskDefinition(
  db: Executor,
  namespaceId: string,
  name: string,
): Promise<TaskDefinitionRow | undefined> {
  return db
    .selectFrom("TaskDefinitions")
    .selectAll()
    .where("namespaceId", "=", namespaceId)
    .where("name", "=", name)
    .executeTakeFirst();
}

/** A queue's gates, as configured; at least one is set (an ungated queue has none: null). */
export interface QueueGates {
  /** At most `perFrequency` leases per fixed window of `frequencySeconds`. */
  rateLimit: { perFrequency: number; frequencySeconds: number } | null;
  /** At most this many of the queue's tasks held by workers at once. */
  concurrentExecLimit: number | null;
  /** Leases take a permit of this semaphore; one without a "Semaphores" row does not gate. */
  semaphoreName: string | null;
}

/**
 * The gates of one queue, from the definition named like the queue; null when
 * there is no such definition or it sets none (0 and null both mean
 * unlimited, as in Conductor). One primary-key-sized lookup on the
 * ("namespaceId","name") unique index, reading four columns: cheap, and cached
 * in process by server/tasks/task-gates.ts so most ungated polls do not run it at all.
 */
export async function getQueueGates(db: Executor, namespaceId: string, queueName: string): Promise<QueueGates | null> {
  const row = await db
    .selectFrom("TaskDefinitions")
    .select(["rateLimitPerFrequency", "rateLimitFrequencyInSeconds", "concurrentExecLimit", "semaphoreName"])
    .where("namespaceId", "=", namespaceId)
    .where("name", "=", queueName)
    .executeTakeFirst();
  if (!row) return null;
  const gates: QueueGates = {
    rateLimit:
      row.rateLimitPerFrequency !== null && row.rateLimitPerFrequency > 0
        ? { perFrequency: row.rateLimitPerFrequency, frequencySeconds: row.rateLimitFrequencyInSeconds ?? 1 }
        : null,
    concurrentExecLimit: row.concurrentExecLimit !== null && row.concurrentExecLimit > 0 ? row.concurrentExecLimit : null,
    semaphoreName: row.semaphoreName,
  };
  return gates.rateLimit === null && gates.concurrentExecLimit === null && gates.semaphoreName === null ? null : gates;
}

/** The names of the namespace's definitions that take permits of `semaphoreName` (the queues it gates). */
export async function queuesUsingSemaphore(db: Executor, namespaceId: string, semaphoreName: string): Promise<string[]> {
  const rows = await db
    .selectFrom("TaskDefinitions")
    .select("name")
    .where("namespaceId", "=", namespaceId)
    .where("semaphoreName", "=", semaphoreName)
    // Repeats "TaskDefinitions_semaphore_idx"'s predicate so the planner can use it.
    .where(sql<boolean>`"semaphoreName" IS NOT NULL`)
    .orderBy("name")
    .execute();
  return rows.map((r) => r.name);
}

/**
 * A namespace's task definitions by name, keyset-paged on the
 * ("namespaceId","name") unique index.
 */


export interface TaskDefinitionPage {
  items: TaskDefinitionRow[];
  /** The name to continue after; null on the last page. */
  nextCursor: string | null;
}

export async function listTaskDefinitions(
  db: Executor,
  input: { namespaceId: string; limit: number; cursor?: string },
): Promise<TaskDefinitionPage> {
  const { limit } = input;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`limit must be an integer from 1 to 1000, got ${limit}`);
  }
  let query = db.selectFrom("TaskDefinitions").selectAll().where("namespaceId", "=", input.namespaceId);
  // The cursor is the last name itself (base64url so any name survives a query string).
  if (input.cursor !== undefined) query = query.where("name", ">", Buffer.from(input.cursor, "base64url").toString("utf8"));
  const rows = await query.orderBy("name").limit(limit + 1).execute();
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last !== undefined ? Buffer.from(last.name, "utf8").toString("base64url") : null };
}
