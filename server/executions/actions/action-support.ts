import type { Transaction } from "kysely";
import { z } from "zod";
import type { Db } from "../../../db/pool";
import type { Database, TaskExecutionRow, WorkflowExecutionRow, WorkflowStatus } from "../../../db/schema";
import type { Blueprint, WorkflowDefinition } from "../../../engine";
import type { BlobStore } from "../../lib/blob-store";
import { offloadIfLarge } from "../../lib/payload-offload";
import { appendAuditEvent } from "../../store/audit-events";
import { enqueueDecide, lockWorkflow } from "../../store/decide-queues";
import { getTaskRow } from "../../store/operator-rewrites";
import { loadLatestByRefs } from "../../store/task-executions";
import { armTimer } from "../../store/timers";
import { getWorkflowDefinition } from "../../store/workflow-definitions";
import { appendWorkflowEvents } from "../../store/workflow-events";
import type { NewWorkflowEventInput } from "../../store/workflow-events";
import { getWorkflowExecution } from "../../store/workflow-executions";

/**
 * What every operator action shares: its dependencies, who acts, how it
 * refuses, the transaction it runs in, and how it opens and records its
 * workflow. Each action is one verb-noun file beside this one.
 */

export interface WorkflowActionDeps {
  db: Db;
  /** For a new workflow input over 256 KB (rerun, restart); without it such an input is stored inline. */
  blobs?: BlobStore;
  /** Epoch ms; Date.now by default. */
  now?: () => number;
}

/** Who acts: recorded on every WorkflowEvents and AuditEvents row the action writes. */
export const ActorSchema = z.strictObject({
  type: z.enum(["user", "apiKey", "system"]),
  id: z.string().min(1).max(200),
});
export type Actor = z.infer<typeof ActorSchema>;

/** A UUID in any case, as ids arrive from URLs and clients. */
export const UUID = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID");

/** The fields every action's input has. */
export const WorkflowActionBaseSchema = z.strictObject({
  namespaceId: UUID,
  workflowId: UUID,
  actor: ActorSchema,
});

/** Why an action did nothing. Never thrown at the caller: a refusal is a result. */
export interface ActionRefusal<Code extends string = string> {
  ok: false;
  code: Code;
  message: string;
}

/** Codes every action may refuse with. */
export type CommonRefusalCode = "invalid-input" | "not-found";

/** Thrown inside an action's transaction to roll it back and come out as a refusal. */
export class ActionRefused extends Error {
  override name = "ActionRefused";
  constructor(readonly refusal: ActionRefusal) {
    super(refusal.message);
  }
}

/** Refuses from inside an action: everything the transaction wrote is rolled back. */
export function refuse(code: string, message: string): never {
  throw new ActionRefused({ ok: false, code, message });
}

/** Parses an action's input; a bad input is a refusal listing every problem, never a throw. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): { ok: true; value: z.infer<S> } | ActionRefusal<"invalid-input"> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.map(String).join(".") : "(input)"}: ${i.message}`);
  return { ok: false, code: "invalid-input", message: problems.join("; ") };
}

/** Postgres errors that mean "the same transaction may succeed if run again": a detected deadlock, a serialization failure. */
const RETRYABLE_SQLSTATES: ReadonlySet<string> = new Set(["40P01", "40001"]);
const ATTEMPTS = 3;

/**
 * Runs `work` in one transaction. A refusal rolls it back and is returned; a
 * deadlock or serialization failure (a decider or the timer poller on the same
 * rows at the same moment, resolved by Postgres aborting one side) is retried,
 * twice at most; anything else is a bug or an outage and throws.
 */
export async function runInTransaction<T>(deps: WorkflowActionDeps, work: (trx: Transaction<Database>, now: Date) => Promise<T>): Promise<T | ActionRefusal> {
  for (let attempt = 1; ; attempt++) {
    try {
      const now = new Date(deps.now?.() ?? Date.now());
      return await deps.db.transaction().execute((trx) => work(trx, now));
    } catch (error) {
      if (error instanceof ActionRefused) return error.refusal;
      const code = (error as { code?: unknown } | null)?.code;
      if (attempt < ATTEMPTS && typeof code === "string" && RETRYABLE_SQLSTATES.has(code)) continue;
      throw error;
    }
  }
}

/**
 * Locks the workflow for an action and returns its row, refusing "not-found"
 * for a missing workflow or one in another namespace (never acts across
 * namespaces: the id alone is not enough).
 *
 * With `decideReason`, first enqueues a decide for it. Order matters: the
 * evaluator takes the DecideQueues row (its claim) and *then* the workflow
 * row; an action that locked the workflow first and enqueued afterwards
 * would, against a decider that claimed in between, wait on that claim while
 * the decider waits on our lock — a deadlock. Taking the queue row first is
 * the evaluator's own order. A refusal rolls the enqueue back.
 */
export async function openWorkflow(
  trx: Transaction<Database>,
  input: { namespaceId: string; workflowId: string; decideReason?: string },
): Promise<WorkflowExecutionRow> {
  // An unlocked read first, so a wrong id or namespace touches no queue row.
  const seen = await getWorkflowExecution(trx, input.namespaceId, input.workflowId);
  if (seen === undefined) refuse("not-found", `Workflow ${input.workflowId} not found`);
  if (input.decideReason !== undefined) {
    await enqueueDecide(trx, { workflowId: input.workflowId, namespaceId: input.namespaceId, reason: input.decideReason });
  }
  const wf = await lockWorkflow(trx, input.workflowId);
  if (wf === undefined || wf.namespaceId !== input.namespaceId) refuse("not-found", `Workflow ${input.workflowId} not found`);
  return wf;
}

/** A refusal naming the status the workflow is in. */
export function refuseStatus(code: string, wf: { id: string; status: WorkflowStatus }, wanted: string): never {
  refuse(code, `Workflow ${wf.id} is ${wf.status}; ${wanted}`);
}

/**
 * Records the action: the workflow's history (each event's data carries the
 * actor) and one AuditEvents row, in the action's transaction so both commit
 * with the change or not at all.
 */
export async function recordAction(
  trx: Transaction<Database>,
  input: {
    wf: { id: string; namespaceId: string };
    actor: Actor;
    /** AuditEvents "action", e.g. "workflow.pause". */
    action: string;
    events: readonly NewWorkflowEventInput[];
    details: Record<string, unknown>;
    now: Date;
  },
): Promise<void> {
  const actor = { type: input.actor.type, id: input.actor.id };
  await appendWorkflowEvents(
    trx,
    { workflowId: input.wf.id, namespaceId: input.wf.namespaceId },
    input.events.map((e) => ({ ...e, at: input.now, data: { ...asObject(e.data), actor } })),
  );
  await appendAuditEvent(trx, {
    namespaceId: input.wf.namespaceId,
    actorType: input.actor.type,
    actorId: input.actor.id,
    action: input.action,
    resourceType: "workflow",
    resourceId: input.wf.id,
    details: input.details,
    at: input.now,
  });
}

/** The blueprint of the workflow's definition version (immutable, so reading it needs no lock). */
export async function loadBlueprint(trx: Transaction<Database>, wf: WorkflowExecutionRow): Promise<Blueprint> {
  return (await loadDefinition(trx, wf, wf.defVersion)).blueprint;
}

/** A version of the workflow's definition — `"latest"`: the latest unarchived one — or a "definition-not-found" refusal. */
export async function loadDefinition(
  trx: Transaction<Database>,
  wf: Pick<WorkflowExecutionRow, "namespaceId" | "defName">,
  version: number | "latest",
): Promise<{ version: number; blueprint: Blueprint; graph: WorkflowDefinition }> {
  const def = await getWorkflowDefinition(trx, wf.namespaceId, wf.defName, version === "latest" ? undefined : version);
  if (def === undefined) {
    refuse("definition-not-found", `Workflow definition "${wf.defName}"${version === "latest" ? "" : ` version ${version}`} not found`);
  }
  return { version: def.version, blueprint: def.blueprint as Blueprint, graph: def.graph as WorkflowDefinition };
}

/**
 * A new workflow input (rerun, restart) checked against the definition's
 * inputSchema the way a start checks it (start-execution.ts): every problem
 * in one "invalid-input" refusal.
 */
export function refuseInvalidWorkflowInput(graph: WorkflowDefinition, value: unknown): void {
  const schema = graph.inputSchema;
  if (schema === undefined) return;
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(schema);
  } catch (error) {
    refuse("invalid-input", `The workflow's inputSchema cannot be applied: ${error instanceof Error ? error.message : String(error)}`);
  }
  const result = validator.safeParse(value);
  if (!result.success) {
    refuse("invalid-input", result.error.issues.map((i) => `input${i.path.map((p) => `.${String(p)}`).join("")}: ${i.message}`).join("; "));
  }
}

/**
 * Offloads a new workflow input over 256 KB before the transaction that
 * references it (invariant 8: a rollback leaks a blob, never commits a dangling
 * ref). Without a blob store the input stays inline, as a nested start does.
 */
export async function storeWorkflowInput(deps: WorkflowActionDeps, value: unknown): Promise<{ input: unknown; inputRef: string | null }> {
  if (deps.blobs === undefined) return { input: value, inputRef: null };
  const payload = await offloadIfLarge(deps.blobs, value);
  return "ref" in payload ? { input: {}, inputRef: payload.ref } : { input: payload.inline, inputRef: null };
}

/** Best effort: a blob no committed row references; failing only leaks it to orphan collection. */
export async function discardBlob(deps: WorkflowActionDeps, ref: string | null): Promise<void> {
  if (ref === null || deps.blobs === undefined) return;
  try {
    await deps.blobs.delete(ref);
  } catch {
    // Orphan collection will find it.
  }
}

/**
 * The workflow's end dropped its timers; a reopened workflow with a timeout
 * needs its wake-up back (decide re-checks the deadline whenever it runs, but
 * only a timer makes it run then). Past deadlines are not re-armed: a
 * TIME_OUT_WF one was refused before, an ALERT_ONLY one has nothing left to say.
 */
export async function rearmWorkflowTimeout(
  trx: Transaction<Database>,
  wf: { id: string; namespaceId: string; startedAt: Date },
  timeoutSeconds: number,
  now: Date,
): Promise<void> {
  if (timeoutSeconds <= 0) return;
  const fireAt = new Date(wf.startedAt.getTime() + timeoutSeconds * 1000);
  if (fireAt.getTime() <= now.getTime()) return;
  await armTimer(trx, { kind: "workflowTimeout", fireAt, namespaceId: wf.namespaceId, workflowId: wf.id });
}

/** Names one task of a workflow: its ref (the ref's latest row, the one decide reads) or its id — exactly one. */
export const TaskSelectorFields = {
  taskRef: z.string().min(1).max(400).optional(),
  taskId: UUID.optional(),
};
export function hasOneTaskSelector(v: { taskRef?: string | undefined; taskId?: string | undefined }): boolean {
  return (v.taskRef === undefined) !== (v.taskId === undefined);
}
export const TASK_SELECTOR_PROBLEM = { message: "give exactly one of taskRef and taskId", path: ["taskRef"] };

/** The selected task row of `workflowId`, or a "task-not-found" refusal. */
export async function findTask(trx: Transaction<Database>, workflowId: string, selector: { taskRef?: string | undefined; taskId?: string | undefined }): Promise<TaskExecutionRow> {
  const row =
    selector.taskId !== undefined
      ? await getTaskRow(trx, workflowId, selector.taskId)
      : (await loadLatestByRefs(trx, workflowId, [selector.taskRef ?? ""]))[0];
  if (row === undefined) refuse("task-not-found", `Workflow ${workflowId} has no task ${selector.taskId ?? selector.taskRef ?? ""}`);
  return row;
}

/**
 * Refuses to reopen a workflow whose own timeout (TIME_OUT_WF) has already
 * run out: decide measures it from "startedAt", so the first evaluation would
 * time the workflow out again at once. (Conductor measures from the last
 * retry instead; this schema has no column for that yet.) Restart starts the
 * clock over and is the way out.
 */
export function refuseIfWorkflowTimeoutPassed(wf: WorkflowExecutionRow, blueprint: Blueprint, now: Date): void {
  if (blueprint.timeoutSeconds <= 0 || blueprint.timeoutPolicy !== "TIME_OUT_WF") return;
  const deadline = wf.startedAt.getTime() + blueprint.timeoutSeconds * 1000;
  if (deadline <= now.getTime()) {
    refuse(
      "workflow-timeout-passed",
      `Workflow ${wf.id}'s ${blueprint.timeoutSeconds}s timeout (TIME_OUT_WF) ran out at ${new Date(deadline).toISOString()}; reopening it would time it out again at once. Restart it instead.`,
    );
  }
}

export function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Terminal workflow statuses an operator may reopen (retry, rerun, restart). */
export const ENDED_STATUSES = ["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"] as const satisfies readonly WorkflowStatus[];
