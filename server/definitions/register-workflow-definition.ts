import type { Db } from "@/db/pool";
import { compile, validateDefinition } from "@/engine";
import type { Problem } from "@/engine";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { insertNextWorkflowDefinitionVersion } from "../store/workflow-definitions";
import { missingDispatchReferences } from "./check-dispatch-references";

export interface RegisterWorkflowDefinitionInput {
  namespaceId: string;
  /** Anything: it is validated here, and every problem comes back in the result. */
  definition: unknown;
  createdBy?: string | null;
  /** The optional save message shown in the version history; not part of the graph. */
  message?: string | null;
  /**
   * Who registers it, for the AuditEvents row. Omitted: the system, on behalf
   * of `createdBy` (a CLI import, a test fixture) — a registration is recorded
   * either way, so no caller can forget to audit one.
   */
  actor?: AuditActor;
}

export type RegisterWorkflowDefinitionResult =
  /** `warnings`: node-flow's extra checks the saved definition still fails (a node that never runs, …); saved anyway. */
  | { ok: true; id: string; name: string; version: number; warnings: Problem[] }
  /** The definition is not valid: every problem, each with its JSON path and, when it has one, its node's ref. Nothing was stored. */
  | { ok: false; reason: "invalid"; problems: Problem[] }
  | { ok: false; reason: "namespace-not-found"; message: string };

/** Postgres' foreign_key_violation: the only FK on the row is "namespaceId". */
const FOREIGN_KEY_VIOLATION = "23503";

/**
 * Saves `definition` as the next version of its name in the namespace
 * ("The diagram is the definition": versions are immutable, so saving always
 * makes a new one). It is validated first — an invalid definition is a result
 * listing every problem, never an exception; the secrets and variables it
 * reads must exist in the namespace — then compiled to its blueprint,
 * and graph and blueprint are stored together in one row. A `version` in the
 * submitted definition is ignored: versions are assigned here, and the stored
 * graph carries the assigned one.
 *
 * The AuditEvents row ("workflowDefinition.create") is written in the
 * insert's transaction, so a version exists exactly when its record does. It
 * names the definition and version and never carries the graph: a graph is
 * unbounded, may hold literal credentials in HTTP headers or inline scripts,
 * and is kept beside the version anyway. Its resource id is the name, not the
 * row id, so "who changed orders?" is one lookup across all its versions.
 */
export async function registerWorkflowDefinition(
  db: Db,
  input: RegisterWorkflowDefinitionInput,
): Promise<RegisterWorkflowDefinitionResult> {
  const validation = validateDefinition(input.definition);
  if (!validation.ok) return { ok: false, reason: "invalid", problems: validation.problems };
  const definition = validation.definition;
  const missing = await missingDispatchReferences(db, input.namespaceId, definition);
  if (missing.length > 0) return { ok: false, reason: "invalid", problems: missing };
  // A valid definition compiles; if it does not, that is a bug worth a 500.
  const blueprint = compile(definition);
  try {
    const row = await insertNextWorkflowDefinitionVersion(db, {
      namespaceId: input.namespaceId,
      name: definition.name,
      description: definition.description ?? null,
      graph: (version) => ({ ...definition, version }),
      blueprint,
      createdBy: input.createdBy ?? null,
      message: input.message ?? null,
      alsoInTransaction: async (trx, row) => {
        await appendAuditEvent(trx, {
          namespaceId: row.namespaceId,
          ...auditActorColumns(input.actor ?? { type: "system", id: input.createdBy ?? null }),
          action: "workflowDefinition.create",
          resourceType: "workflowDefinition",
          resourceId: row.name,
          details: { name: row.name, version: row.version },
        });
      },
    });
    return { ok: true, id: row.id, name: row.name, version: row.version, warnings: validation.warnings };
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === FOREIGN_KEY_VIOLATION) {
      return { ok: false, reason: "namespace-not-found", message: `Namespace ${input.namespaceId} does not exist` };
    }
    throw error;
  }
}
