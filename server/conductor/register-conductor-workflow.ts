import type { Db } from "../../db/pool";
import { compile, importConductorWorkflow } from "../../engine";
import type { TaskPolicy, WorkflowDefinition } from "../../engine";
import type { TaskDefinitionRow } from "../../db/schema";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { insertWorkflowDefinitionAtVersion, latestWorkflowDefinitionVersion, lockWorkflowDefinitionName } from "../store/conductor-queries";
import { getTaskDefinition } from "../store/task-definitions";
import { getWorkflowDefinition } from "../store/workflow-definitions";
import type { ConductorValidationError } from "./conductor-error";
import { dottedPath } from "./conductor-error";
import { missingDispatchReferences } from "../definitions/check-dispatch-references";

/**
 * Registers a Conductor WorkflowDef: imported through the engine into the
 * graph form (so it opens in the visual editor like any other definition),
 * compiled, and stored at the version the WorkflowDef names.
 *
 * Conductor lets a version be overwritten (`overwrite=true`, `PUT
 * /metadata/workflow`); node-flow's versions are immutable — runs pin
 * (name, version) and its blueprint is cached by that pair forever — so an
 * overwrite is honoured this way instead:
 * - the same definition again (what a client registering at every start-up
 *   sends) changes nothing;
 * - a changed one becomes the next version (max + 1), which is what runs
 *   started without a version pick up. A run pinned to the old number keeps
 *   the old graph.
 * Without overwrite an existing version is a conflict (409), as in Conductor.
 *
 * A worker task takes its retry and timeout policy from the TaskDef
 * registered under its name, as in Conductor: the blueprint is compiled with
 * those TaskDefs layered under each node's own policy (its inline
 * taskDefinition, its retryCount). The TaskDef is snapshotted at
 * registration, so a TaskDef changed later applies to workflows registered
 * after the change — where Conductor reads it at every schedule.
 */

/**
 * What registration tells the caller beside storing the definition: node-flow's
 * extra checks on a definition Conductor accepts (a task after a TERMINATE, an
 * expression naming a ref that does not exist, a response timeout beyond the
 * timeout) and what the import changed (a field dropped, a LAMBDA run as
 * INLINE). Answered as `{"warnings": [...]}` where Conductor answers `{}`.
 */
export interface ConductorRegistrationWarning {
  code: string;
  message: string;
  /** Where in the WorkflowDef, dotted like a validation error's path. */
  path: string;
  /** The taskReferenceName it is about. */
  ref?: string;
}

export type RegisterConductorWorkflowResult =
  | { ok: true; name: string; version: number; outcome: "created" | "unchanged" | "new-version"; warnings: ConductorRegistrationWarning[] }
  | { ok: false; reason: "invalid"; errors: ConductorValidationError[] }
  | { ok: false; reason: "exists"; message: string };

export interface RegisterConductorWorkflowInput {
  namespaceId: string;
  workflowDef: unknown;
  overwrite: boolean;
  createdBy: string | null;
  actor: AuditActor;
  /** Prefix of every validation error's path: `[2]` for the third of a list. */
  pathPrefix?: string;
}

/** Every problem the import found, as Conductor-style validation errors pointing into the WorkflowDef; its warnings when it succeeded. */
export function importConductorDefinition(
  workflowDef: unknown,
  pathPrefix = "",
): { ok: true; definition: WorkflowDefinition; warnings: ConductorRegistrationWarning[] } | { ok: false; errors: ConductorValidationError[] } {
  const imported = importConductorWorkflow(workflowDef);
  if (imported.ok) {
    const warnings = imported.warnings.map((w) => {
      const out: ConductorRegistrationWarning = { code: w.code, message: w.message, path: dottedPath(pathPrefix, w.path) || (pathPrefix === "" ? "workflowDef" : pathPrefix) };
      if (w.ref !== undefined) out.ref = w.ref;
      return out;
    });
    return { ok: true, definition: imported.definition, warnings };
  }
  return {
    ok: false,
    errors: imported.problems.map((p) => ({
      path: dottedPath(pathPrefix, p.path) || (pathPrefix === "" ? "workflowDef" : pathPrefix),
      message: `${p.message}${p.ref === undefined ? "" : ` (task ${p.ref})`} [${p.code}]`,
    })),
  };
}

/** JSON with object keys sorted, for comparing two stored graphs. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

function sameGraph(stored: unknown, definition: WorkflowDefinition): boolean {
  const { version: _a, ...left } = (stored ?? {}) as Record<string, unknown>;
  const { version: _b, ...right } = definition as unknown as Record<string, unknown>;
  return canonical(left) === canonical(right);
}

export async function registerConductorWorkflow(db: Db, input: RegisterConductorWorkflowInput): Promise<RegisterConductorWorkflowResult> {
  const imported = importConductorDefinition(input.workflowDef, input.pathPrefix);
  if (!imported.ok) return { ok: false, reason: "invalid", errors: imported.errors };
  const missing = await missingReferenceErrors(db, input.namespaceId, imported.definition, input.pathPrefix);
  if (missing.length > 0) return { ok: false, reason: "invalid", errors: missing };
  const stored = await storeImportedDefinition(db, { ...input, definition: imported.definition });
  return stored.ok ? { ...stored, warnings: imported.warnings } : stored;
}

/** The secrets and variables an imported definition names that the namespace lacks, as Conductor validation errors. */
export async function missingReferenceErrors(db: Db, namespaceId: string, definition: WorkflowDefinition, pathPrefix = ""): Promise<ConductorValidationError[]> {
  return (await missingDispatchReferences(db, namespaceId, definition)).map((p) => ({
    path: pathPrefix === "" ? "workflowDef" : pathPrefix,
    message: `${p.message}${p.ref === undefined ? "" : ` (task ${p.ref})`} [${p.code}]`,
  }));
}

/** Stores an already imported definition (PUT of a list validates every one before storing any). */
export async function storeImportedDefinition(
  db: Db,
  input: Omit<RegisterConductorWorkflowInput, "workflowDef" | "pathPrefix"> & { definition: WorkflowDefinition },
): Promise<{ ok: true; name: string; version: number; outcome: "created" | "unchanged" | "new-version" } | Extract<RegisterConductorWorkflowResult, { reason: "exists" }>> {
  const { definition, namespaceId } = input;
  const name = definition.name;
  const requested = definition.version ?? 1;
  const registered = await registeredTaskPolicies(db, namespaceId, definition);
  // The import validated it; a valid definition compiles, and if not that is a bug worth a 500.
  const blueprint = compile(definition, { taskPolicy: (taskName) => registered.get(taskName) });
  return db.transaction().execute(async (trx) => {
    await lockWorkflowDefinitionName(trx, { namespaceId, name });
    const insertAt = async (version: number, outcome: "created" | "new-version") => {
      const row = await insertWorkflowDefinitionAtVersion(trx, {
        namespaceId,
        name,
        version,
        description: definition.description ?? null,
        graph: { ...definition, version },
        blueprint,
        createdBy: input.createdBy,
      });
      if (row === undefined) throw new Error(`version ${version} of ${name} appeared under the definition lock`);
      await appendAuditEvent(trx, {
        namespaceId,
        ...auditActorColumns(input.actor),
        action: "workflowDefinition.create",
        resourceType: "workflowDefinition",
        resourceId: name,
        details: { name, version, via: "conductor" },
      });
      return { ok: true as const, name, version, outcome };
    };
    const existing = await getWorkflowDefinition(trx, namespaceId, name, requested);
    if (existing === undefined) return insertAt(requested, "created");
    if (!input.overwrite) return { ok: false as const, reason: "exists" as const, message: `Workflow ${name} version ${requested} already exists` };
    if (sameGraph(existing.graph, definition)) return { ok: true as const, name, version: requested, outcome: "unchanged" as const };
    const latest = await latestWorkflowDefinitionVersion(trx, { namespaceId, name });
    if (latest !== undefined && sameGraph(latest.graph, definition)) return { ok: true as const, name, version: latest.version, outcome: "unchanged" as const };
    return insertAt((latest?.version ?? requested) + 1, "new-version");
  });
}

/** A registered TaskDef's policy, the fields Conductor reads from it when it schedules a task. */
function policyOfTaskDefinition(row: TaskDefinitionRow): TaskPolicy {
  const policy: TaskPolicy = {
    retryCount: row.retryCount,
    retryLogic: row.retryLogic,
    retryDelaySeconds: row.retryDelaySeconds,
    backoffScaleFactor: Math.max(1, Math.round(Number(row.backoffScaleFactor))),
    timeoutSeconds: row.timeoutSeconds,
    timeoutPolicy: row.timeoutPolicy,
    responseTimeoutSeconds: row.responseTimeoutSeconds,
    totalTimeoutSeconds: row.totalTimeoutSeconds,
  };
  if (row.pollTimeoutSeconds !== null) policy.pollTimeoutSeconds = row.pollTimeoutSeconds;
  return policy;
}

/** The policies of the TaskDefs registered under the names a definition's tasks use, for compile's `taskPolicy`. */
export async function registeredTaskPolicies(db: Db, namespaceId: string, definition: WorkflowDefinition): Promise<Map<string, TaskPolicy>> {
  const names = new Set<string>();
  for (const node of definition.nodes) if (node.name !== undefined) names.add(node.name);
  const policies = new Map<string, TaskPolicy>();
  for (const name of names) {
    const row = await getTaskDefinition(db, namespaceId, name);
    if (row !== undefined) policies.set(name, policyOfTaskDefinition(row));
  }
  return policies;
}
