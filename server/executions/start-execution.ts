import { sql } from "kysely";
import { z } from "zod";
import type { Db } from "@/db/pool";
import type { Kysely, Transaction } from "kysely";
import type { Database, IdempotencyStrategy } from "@/db/schema";
import type { BlobStore } from "../lib/blob-store";
import { LruCache } from "../lib/lru-cache";
import { offloadIfLarge } from "../lib/payload-offload";
import type { OffloadedPayload } from "../lib/payload-offload";
import { enqueueDecidesFrom } from "../store/decide-queues";
import { claimIdempotencyKey, claimIdempotencyKeyQuery } from "../store/idempotency-keys";
import { insertOutboxEventForHandlers } from "../store/outbox-events";
import { getDefinitionToStart } from "../store/workflow-definitions";
import type { DefinitionToStart } from "../store/workflow-definitions";
import { insertWorkflowEventsQuery } from "../store/workflow-events";
import { getWorkflowExecution, insertWorkflowExecutionQuery } from "../store/workflow-executions";
import { uuidv7 } from "../lib/uuidv7";

export interface StartExecutionDeps {
  db: Db;
  blobs: BlobStore;
}

export interface StartExecutionInput {
  namespaceId: string;
  name: string;
  /** Latest unarchived version when omitted. */
  version?: number;
  input?: unknown;
  correlationId?: string | null;
  /** 0 to 99. */
  priority?: number;
  idempotencyKey?: string | null;
  /** How a key that is already held is treated; RETURN_EXISTING when omitted. */
  idempotencyStrategy?: IdempotencyStrategy;
  createdBy?: string | null;
  parentWorkflowId?: string | null;
  parentTaskId?: string | null;
  /**
   * An event announcing the start, written to the outbox in the start's own
   * transaction when the run is created (not when a key returns an existing
   * run) and only if an active event handler listens to `topic`: a webhook
   * call as `webhook:<name>` (server/webhooks/receive-webhook.ts).
   */
  announce?: { topic: string; payload: (workflowId: string) => unknown };
}

/** One reason the input was refused: where in the input, and why. */
export interface InputProblem {
  path: (string | number)[];
  message: string;
}

export type StartExecutionResult =
  /** `created` is false when an idempotency key returned an existing execution (RETURN_EXISTING). */
  | { ok: true; workflowId: string; created: boolean }
  | { ok: false; reason: "not-found"; message: string }
  | { ok: false; reason: "invalid-input"; problems: InputProblem[] }
  /** The idempotency key is held by `existingWorkflowId` and the strategy refuses a second start. */
  | { ok: false; reason: "conflict"; existingWorkflowId: string; message: string };

/** The statuses FAIL_ON_RUNNING treats as "still running": the non-terminal ones. */
const LIVE_STATUSES: ReadonlySet<string> = new Set(["RUNNING", "PAUSED"]);

type Outcome =
  | { kind: "created"; workflowId: string }
  | { kind: "existing"; workflowId: string }
  | { kind: "conflict"; existingWorkflowId: string; message: string };

/**
 * Starts an execution of a stored definition. Writes rows and enqueues a
 * decide; it evaluates nothing (DESIGN.md invariant 1) — the decider schedules
 * the first tasks.
 *
 * Order of work:
 * 1. resolve the definition (latest unarchived when no version is given);
 * 2. validate the input against the definition's inputSchema (JSON Schema,
 *    through zod's fromJSONSchema — zod is a declared dependency; the ajv in
 *    node_modules is only eslint's transitive copy);
 * 3. offload an input over 256 KB to the blob store, BEFORE the transaction
 *    (invariant 8: a rollback leaks a blob, never commits a dangling ref);
 * 4. one transaction: claim the idempotency key and apply the strategy, insert
 *    the execution (RUNNING, the definition's initial variables), append
 *    WORKFLOW_STARTED (seq 1; the insert holds the new row's lock), enqueue a
 *    decide with reason "start".
 */
export async function startExecution(deps: StartExecutionDeps, input: StartExecutionInput): Promise<StartExecutionResult> {
  const { db, blobs } = deps;
  const priority = input.priority ?? 0;
  if (!Number.isInteger(priority) || priority < 0 || priority > 99) {
    return { ok: false, reason: "invalid-input", problems: [{ path: ["priority"], message: "priority must be an integer from 0 to 99" }] };
  }
  const strategy = input.idempotencyStrategy ?? "RETURN_EXISTING";
  const key = input.idempotencyKey ?? null;
  if (key !== null && key.length === 0) {
    return { ok: false, reason: "invalid-input", problems: [{ path: ["idempotencyKey"], message: "idempotencyKey must not be empty" }] };
  }

  const resolved = await resolveDefinitionAndInput(db, input);
  if (!resolved.ok) return resolved;
  const { def, workflowInput } = resolved;

  const payload = await offloadIfLarge(blobs, workflowInput);
  const inputRef = "ref" in payload ? payload.ref : null;

  // The id is needed before the insert (the key names it); a v7 like the column default, so ids stay time-ordered.
  const workflowId = uuidv7();
  const rows = { workflowId, def, input, priority, idempotencyKey: key, payload };
  let outcome: Outcome;
  try {
    if (input.announce !== undefined) {
      const announce = input.announce;
      outcome = await db.transaction().execute(async (trx) => {
        const started: Outcome = key === null ? (await insertStartedExecution(trx, rows), { kind: "created", workflowId }) : await startWithKey(trx, rows, { key, strategy });
        if (started.kind === "created") {
          await insertOutboxEventForHandlers(trx, { namespaceId: input.namespaceId, topic: announce.topic, workflowId, payload: announce.payload(workflowId) });
        }
        return started;
      });
    } else if (key === null) {
      // Nothing to be atomic with: the execution's one statement commits on its own, without BEGIN and COMMIT round trips.
      await insertStartedExecution(db, rows);
      outcome = { kind: "created", workflowId };
    } else {
      // A new key (the usual case: the SDK sends one with every start) is claimed in the same one statement; a key
      // that is held takes the transaction that reads its holder and applies the strategy.
      outcome = (await insertStartedExecution(db, rows, { key, strategy }))
        ? { kind: "created", workflowId }
        : await db.transaction().execute((trx) => startWithKey(trx, rows, { key, strategy }));
    }
  } catch (error) {
    if (inputRef !== null) await discardBlob(blobs, inputRef);
    throw error;
  }

  if (outcome.kind !== "created" && inputRef !== null) await discardBlob(blobs, inputRef);
  switch (outcome.kind) {
    case "created":
      return { ok: true, workflowId: outcome.workflowId, created: true };
    case "existing":
      return { ok: true, workflowId: outcome.workflowId, created: false };
    case "conflict":
      return { ok: false, reason: "conflict", existingWorkflowId: outcome.existingWorkflowId, message: outcome.message };
  }
}

/** A start that names an idempotency key: the key's claim (or the existing run it names) and the rows, in one transaction. */
async function startWithKey(
  trx: Transaction<Database>,
  rows: StartedExecutionRows,
  { key, strategy }: { key: string; strategy: IdempotencyStrategy },
): Promise<Outcome> {
  const { workflowId, input } = rows;
  const claim = await claimIdempotencyKey(trx, { namespaceId: input.namespaceId, key, workflowId, strategy });
  if (!claim.claimed) {
    const existingWorkflowId = claim.existingWorkflowId;
    if (strategy === "RETURN_EXISTING") return { kind: "existing", workflowId: existingWorkflowId };
    if (strategy === "FAIL") {
      return { kind: "conflict", existingWorkflowId, message: `Idempotency key "${key}" was already used by ${existingWorkflowId}` };
    }
    // FAIL_ON_RUNNING: refused while the holder runs; otherwise this start takes the key over.
    const existing = await getWorkflowExecution(trx, input.namespaceId, existingWorkflowId);
    if (existing !== undefined && LIVE_STATUSES.has(existing.status)) {
      return { kind: "conflict", existingWorkflowId, message: `Idempotency key "${key}" is held by ${existingWorkflowId}, which is ${existing.status}` };
    }
    // Compare-and-set on the holder: of several starts taking over the same
    // finished holder at once, the first locks the key row and the others
    // re-check this WHERE after it commits, find a new holder, and conflict.
    const taken = await trx
      .updateTable("IdempotencyKeys")
      .set({ workflowId, strategy, createdAt: sql<Date>`now()` })
      .where("namespaceId", "=", input.namespaceId)
      .where("key", "=", key)
      .where("workflowId", "=", existingWorkflowId)
      .executeTakeFirst();
    if (taken.numUpdatedRows === 0n) {
      const holder = await trx
        .selectFrom("IdempotencyKeys")
        .select("workflowId")
        .where("namespaceId", "=", input.namespaceId)
        .where("key", "=", key)
        .executeTakeFirst();
      const current = holder?.workflowId ?? existingWorkflowId;
      return { kind: "conflict", existingWorkflowId: current, message: `Idempotency key "${key}" was just taken by ${current}` };
    }
  }
  await insertStartedExecution(trx, rows);
  return { kind: "created", workflowId };
}

interface StartedExecutionRows {
  workflowId: string;
  def: Pick<DefinitionToStart, "name" | "version" | "variables">;
  input: Pick<StartExecutionInput, "namespaceId" | "correlationId" | "createdBy" | "parentWorkflowId" | "parentTaskId">;
  priority: number;
  idempotencyKey: string | null;
  payload: OffloadedPayload;
}

/**
 * The rows of a new execution in one statement, in the caller's transaction or
 * on its own (two data-modifying CTEs and the decide's INSERT): the execution
 * (RUNNING, the definition's initial variables), WORKFLOW_STARTED (seq 1: the
 * row is new, so its history is empty and invisible to every other
 * transaction until commit — appendWorkflowEvents' `newWorkflow`), and a
 * decide with reason "start". One round trip where there were three.
 *
 * With `claim`, the idempotency key's claim goes in the same statement, and
 * false means another run holds the key: nothing was written. One round trip
 * where a transaction of the claim and the rows took four.
 */
async function insertStartedExecution(
  db: Kysely<Database>,
  rows: StartedExecutionRows,
  claim?: { key: string; strategy: IdempotencyStrategy },
): Promise<boolean> {
  const { workflowId, def, input, priority, idempotencyKey, payload } = rows;
  const execution = insertWorkflowExecutionQuery(db, {
    id: workflowId,
    namespaceId: input.namespaceId,
    defName: def.name,
    defVersion: def.version,
    status: "RUNNING",
    correlationId: input.correlationId ?? null,
    idempotencyKey,
    priority,
    // Offloaded: the JSONB column holds {} and "inputRef" the blob (payload-offload.ts).
    input: "inline" in payload ? payload.inline : {},
    inputRef: "ref" in payload ? payload.ref : null,
    variables: def.variables ?? {},
    parentWorkflowId: input.parentWorkflowId ?? null,
    parentTaskId: input.parentTaskId ?? null,
    createdBy: input.createdBy ?? null,
  });
  const started = insertWorkflowEventsQuery(
    db,
    { workflowId, namespaceId: input.namespaceId },
    [
      {
        type: "WORKFLOW_STARTED",
        status: "RUNNING",
        // No input here: it may be megabytes; the execution row holds it (or its ref).
        data: {
          defName: def.name,
          defVersion: def.version,
          correlationId: input.correlationId ?? null,
          idempotencyKey,
          parentWorkflowId: input.parentWorkflowId ?? null,
          createdBy: input.createdBy ?? null,
        },
      },
    ],
    0,
  );
  const decide = enqueueDecidesFrom(sql`VALUES (${workflowId}::uuid, ${input.namespaceId}::uuid, 'start')`);
  if (claim === undefined) {
    await sql`WITH "execution" AS (${execution}), "started" AS (${started}) ${decide}`.execute(db);
    return true;
  }
  const claimed = claimIdempotencyKeyQuery(db, { namespaceId: input.namespaceId, key: claim.key, workflowId, strategy: claim.strategy });
  try {
    // The claim returns a row only when it won the key; without one the statement refuses itself, rolling the rest back.
    await sql`WITH "claimed" AS (${claimed}), "execution" AS (${execution}), "started" AS (${started}), "decide" AS (${decide})
      SELECT "nf_refuse_unless"(EXISTS (SELECT 1 FROM "claimed"), ${KEY_HELD}, 'the idempotency key is held')`.execute(db);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === KEY_HELD) return false;
    throw error;
  }
}

/** The SQLSTATE a one-statement start raises when its idempotency key is held (migration 0016's nf_refuse_unless). */
const KEY_HELD = "NFKEY";

/**
 * Starts an execution inside the caller's transaction — the decider starting a
 * SUB_WORKFLOW child, a START_WORKFLOW target or a failureWorkflow, so the
 * start commits or rolls back with the evaluation that asked for it. Same
 * checks as {@link startExecution} (definition, input schema, offload). The
 * task's identity already makes the request happen once (the evaluator starts
 * a child only when it inserted the task row); an idempotency key — a
 * START_WORKFLOW's own — makes the target run once across tasks and runs.
 *
 * An offloaded input's blob is written before the evaluation commits
 * (invariant 8); a rollback leaks it to orphan collection.
 */
export async function startNestedExecution(
  trx: Transaction<Database>,
  blobs: BlobStore | undefined,
  input: StartExecutionInput,
): Promise<StartExecutionResult> {
  const priority = input.priority ?? 0;
  const resolved = await resolveDefinitionAndInput(trx, input);
  if (!resolved.ok) return resolved;
  const { def, workflowInput } = resolved;
  let payload: OffloadedPayload = { inline: workflowInput };
  if (blobs !== undefined) payload = await offloadIfLarge(blobs, workflowInput);
  const workflowId = uuidv7();
  const key = input.idempotencyKey ?? null;
  const rows = { workflowId, def, input, priority: Math.min(99, Math.max(0, Math.trunc(priority))), idempotencyKey: key, payload };
  if (key === null) {
    await insertStartedExecution(trx, rows);
    return { ok: true, workflowId, created: true };
  }
  const outcome = await startWithKey(trx, rows, { key, strategy: input.idempotencyStrategy ?? "RETURN_EXISTING" });
  switch (outcome.kind) {
    case "created":
      return { ok: true, workflowId, created: true };
    case "existing":
      return { ok: true, workflowId: outcome.workflowId, created: false };
    case "conflict":
      return { ok: false, reason: "conflict", existingWorkflowId: outcome.existingWorkflowId, message: outcome.message };
  }
}

/** The definition to run (latest unarchived when no version is given) and the input, checked against its inputSchema. */
async function resolveDefinitionAndInput(
  db: Db,
  input: Pick<StartExecutionInput, "namespaceId" | "name" | "version" | "input">,
): Promise<
  | { ok: true; def: DefinitionToStart; workflowInput: unknown }
  | Extract<StartExecutionResult, { reason: "not-found" | "invalid-input" }>
> {
  const def = await getDefinitionToStart(db, input.namespaceId, input.name, input.version);
  if (def === undefined) {
    const which = input.version === undefined ? "" : ` version ${input.version}`;
    return { ok: false, reason: "not-found", message: `Workflow definition "${input.name}"${which} not found` };
  }
  const workflowInput = input.input === undefined ? {} : input.input;
  const problems = validateInput(def.inputSchemaText, workflowInput);
  if (problems.length > 0) return { ok: false, reason: "invalid-input", problems };
  return { ok: true, def, workflowInput };
}

/**
 * Validators by their schema's stored JSON text: converting a JSON Schema to
 * zod on every start cost more than checking the input with it. Keyed by the
 * text itself, so a definition deleted and saved again under the same name and
 * version can never meet another's validator. A string is why the schema
 * cannot be applied.
 */
const validators = new LruCache<string, z.ZodType | string>(256);

function inputValidator(schemaText: string): z.ZodType | string {
  let validator = validators.get(schemaText);
  if (validator === undefined) {
    try {
      validator = z.fromJSONSchema(JSON.parse(schemaText) as Record<string, unknown>);
    } catch (error) {
      validator = error instanceof Error ? error.message : String(error);
    }
    validators.set(schemaText, validator);
  }
  return validator;
}

/** Best effort: a blob no committed row references. Failing to delete only leaks it to orphan collection. */
async function discardBlob(blobs: BlobStore, ref: string): Promise<void> {
  try {
    await blobs.delete(ref);
  } catch {
    // Orphan collection will find it.
  }
}

/**
 * The input's problems against the inputSchema stored as `schemaText` (none
 * when there is no schema). A schema that zod cannot convert (an unresolvable
 * $ref, say) is reported as a problem rather than skipped: a check that
 * silently passes is worse than none.
 */
function validateInput(schemaText: string | null, value: unknown): InputProblem[] {
  if (schemaText === null) return [];
  const validator = inputValidator(schemaText);
  if (typeof validator === "string") return [{ path: [], message: `The workflow's inputSchema cannot be applied: ${validator}` }];
  const result = validator.safeParse(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => ({
    path: issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
    message: issue.message,
  }));
}
