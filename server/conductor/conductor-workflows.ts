import type { TaskExecutionRow, WorkflowStatus } from "../../db/schema";
import { WORKFLOW_STATUSES, isTerminalTaskStatus, isTerminalWorkflowStatus } from "../../engine";
import { waitForWorkflowEvent } from "../executions/wait-for-workflow";
import { resolvePayload, resolveTaskPayloads } from "../lib/payload-offload";
import type { WorkflowSearchFilter } from "../store/conductor-queries";
import { listWorkflowTasks } from "../store/task-executions";
import { getWorkflowExecution } from "../store/workflow-executions";
import type { ConductorValidationError } from "./conductor-error";
import { conductorRef, forkedTaskLabels, toConductorTask, toConductorWorkflow } from "./conductor-shapes";
import type { ConductorDeps } from "./define-conductor-route";

/**
 * Reading workflows the Conductor way: the whole Workflow with its task list,
 * waiting for a run to finish (the synchronous execute), and Conductor's
 * search query language, the subset node-flow answers.
 */

/** Every task of a workflow in scheduling order, read a page (of the primary key) at a time. */
async function allTasks(deps: ConductorDeps, namespaceId: string, workflowId: string): Promise<TaskExecutionRow[]> {
  const rows: TaskExecutionRow[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listWorkflowTasks(deps.db, { namespaceId, workflowId, limit: 1000, cursor });
    rows.push(...page.items);
    if (page.nextCursor === null) return rows;
    cursor = page.nextCursor;
  }
}

/**
 * A Conductor Workflow, or undefined when there is none by that id in the
 * namespace. `seq` is the task's place in scheduling order; a task that was
 * retried names the attempt that retried it.
 */
export async function loadConductorWorkflow(
  deps: ConductorDeps,
  namespaceId: string,
  workflowId: string,
  options: { includeTasks: boolean },
): Promise<{ workflow: Record<string, unknown>; status: WorkflowStatus; tasks: TaskExecutionRow[] } | undefined> {
  const row = await getWorkflowExecution(deps.db, namespaceId, workflowId);
  if (row === undefined) return undefined;
  const [input, output] = await Promise.all([
    resolvePayload(deps.blobs, { inline: row.input, ref: row.inputRef }, `the input of workflow ${row.id}`),
    resolvePayload(deps.blobs, { inline: row.output, ref: row.outputRef }, `the output of workflow ${row.id}`),
  ]);
  let tasks: Record<string, unknown>[] | undefined;
  let rows: TaskExecutionRow[] = [];
  if (options.includeTasks) {
    rows = await resolveTaskPayloads(deps.blobs, await allTasks(deps, namespaceId, row.id));
    const byIdentity = new Map(rows.map((t) => [`${t.refName}\u0000${t.iteration}\u0000${t.attempt}`, t.id]));
    const header = { defName: row.defName, correlationId: row.correlationId, priority: row.priority };
    const labels = new Map<string, string[]>();
    for (const t of rows) {
      const forked = t.taskType === "FORK_JOIN_DYNAMIC" ? forkedTaskLabels(t.input) : undefined;
      if (forked !== undefined) labels.set(`${t.refName}\u0000${t.iteration}`, forked);
    }
    tasks = rows.map((t, i) =>
      toConductorTask(t, header, {
        seq: i + 1,
        retriedTaskId: byIdentity.get(`${t.refName}\u0000${t.iteration}\u0000${t.attempt + 1}`),
        instanceRef: t.parentRef !== null && t.forkIndex !== null ? labels.get(`${t.parentRef}\u0000${t.iteration}`)?.[t.forkIndex] : undefined,
      }),
    );
  }
  return { workflow: toConductorWorkflow({ ...row, input, output }, tasks), status: row.status, tasks: rows };
}

/** Waits until the workflow has ended — or, with `untilTaskRef`, until that task has — or `timeoutMs` has passed. */
export async function waitForWorkflow(
  deps: ConductorDeps,
  input: { namespaceId: string; workflowId: string; timeoutMs: number; untilTaskRef?: string; signal?: AbortSignal },
): Promise<void> {
  await waitForWorkflowEvent(deps, { workflowId: input.workflowId, timeoutMs: input.timeoutMs, signal: input.signal, reached: () => reached(deps, input) });
}

async function reached(deps: ConductorDeps, input: { namespaceId: string; workflowId: string; untilTaskRef?: string }): Promise<boolean> {
  const row = await getWorkflowExecution(deps.db, input.namespaceId, input.workflowId);
  if (row === undefined || isTerminalWorkflowStatus(row.status)) return true;
  if (input.untilTaskRef === undefined) return false;
  const ref = input.untilTaskRef;
  const tasks = await allTasks(deps, input.namespaceId, input.workflowId);
  return tasks.some((t) => (t.refName === ref || conductorRef(t.refName, t.iteration) === ref) && isTerminalTaskStatus(t.status));
}

type SearchFields = Pick<WorkflowSearchFilter, "defNames" | "statuses" | "correlationIds" | "workflowIds" | "startedFrom" | "startedBefore">;

const LIST_FIELDS = { workflowType: "defNames", status: "statuses", correlationId: "correlationIds", workflowId: "workflowIds" } as const;

/**
 * Conductor's search `query`: clauses joined by AND, each `field IN (a,b)`,
 * `field = a` (values optionally quoted), or `startTime > n` / `< n` (epoch
 * ms). Fields: workflowType, status, correlationId, workflowId, startTime.
 * Anything else — OR, another field — is refused with every problem listed
 * rather than silently ignored (a search that quietly drops a condition
 * answers with runs the caller did not ask for).
 */
export function parseSearchQuery(query: string | undefined): { ok: true; fields: SearchFields } | { ok: false; errors: ConductorValidationError[] } {
  const fields: SearchFields = {};
  const errors: ConductorValidationError[] = [];
  const text = (query ?? "").trim();
  if (text === "" || text === "*") return { ok: true, fields };
  const clauses = text.split(/\s+AND\s+/i);
  for (const clause of clauses) {
    const inMatch = /^(\w+)\s+IN\s*\((.*)\)$/i.exec(clause.trim());
    const eqMatch = /^(\w+)\s*(>=|<=|=|>|<)\s*(.+)$/.exec(clause.trim());
    let field: string;
    let op: string;
    let values: string[];
    if (inMatch !== null) {
      field = inMatch[1]!;
      op = "IN";
      values = inMatch[2]!.split(",").map(unquote).filter((v) => v !== "");
    } else if (eqMatch !== null) {
      field = eqMatch[1]!;
      op = eqMatch[2]!;
      values = [unquote(eqMatch[3]!)];
    } else {
      errors.push({ path: "query.query", message: `Cannot read the clause "${clause}": use field IN (a,b), field = a, or startTime > epochMillis, joined by AND` });
      continue;
    }
    if (field === "startTime") {
      const at = Number(values[0]);
      if ((op !== ">" && op !== ">=" && op !== "<" && op !== "<=") || values.length !== 1 || !Number.isFinite(at)) {
        errors.push({ path: "query.query", message: `startTime takes > or < and epoch milliseconds, got "${clause}"` });
        continue;
      }
      if (op.startsWith(">")) fields.startedFrom = new Date(op === ">" ? at + 1 : at);
      else fields.startedBefore = new Date(op === "<" ? at : at + 1);
      continue;
    }
    const key = LIST_FIELDS[field as keyof typeof LIST_FIELDS];
    if (key === undefined) {
      errors.push({ path: "query.query", message: `Unknown search field "${field}": node-flow searches by workflowType, status, correlationId, workflowId and startTime` });
      continue;
    }
    if (op !== "IN" && op !== "=") {
      errors.push({ path: "query.query", message: `${field} takes = or IN, got "${op}"` });
      continue;
    }
    if (key === "statuses") {
      const bad = values.filter((v) => !(WORKFLOW_STATUSES as readonly string[]).includes(v));
      if (bad.length > 0) {
        errors.push({ path: "query.query", message: `Unknown workflow status ${bad.join(", ")}: one of ${WORKFLOW_STATUSES.join(", ")}` });
        continue;
      }
      fields.statuses = values as WorkflowStatus[];
    } else if (key === "workflowIds") {
      fields.workflowIds = values.filter((v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v));
      // An id that cannot exist matches nothing rather than erroring.
      if (fields.workflowIds.length === 0) fields.workflowIds = ["00000000-0000-0000-0000-000000000000"];
    } else {
      fields[key] = values;
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, fields };
}

function unquote(value: string): string {
  const v = value.trim();
  return (v.startsWith("'") && v.endsWith("'")) || (v.startsWith('"') && v.endsWith('"')) ? v.slice(1, -1) : v;
}
