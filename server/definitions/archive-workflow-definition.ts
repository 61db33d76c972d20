import type { Db } from "@/db/pool";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { archiveWorkflowDefinitionVersions } from "../store/workflow-definitions";

export interface ArchiveWorkflowDefinitionInput {
  namespaceId: string;
  name: string;
  actor: AuditActor;
}

export type ArchiveWorkflowDefinitionResult =
  | { ok: true; name: string; archivedVersions: number[] }
  | { ok: false; reason: "not-found"; message: string };

/**
 * "Deletes" a workflow: archives every live version of its name, so it drops
 * out of the list and of "latest" lookups. Nothing is removed — runs keep
 * pointing at their (name, version), and each version stays readable by its
 * number. Saving the name again starts a fresh latest version (max + 1, so
 * numbers are never reused).
 *
 * The AuditEvents row ("workflowDefinition.archive") is written in the same
 * transaction as the archive, like registration's, so a delete exists exactly
 * when its record does.
 */
export async function archiveWorkflowDefinition(db: Db, input: ArchiveWorkflowDefinitionInput): Promise<ArchiveWorkflowDefinitionResult> {
  return db.transaction().execute(async (trx) => {
    const archivedVersions = await archiveWorkflowDefinitionVersions(trx, { namespaceId: input.namespaceId, name: input.name });
    if (archivedVersions.length === 0) {
      return { ok: false as const, reason: "not-found" as const, message: `No workflow "${input.name}" in this namespace` };
    }
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActorColumns(input.actor),
      action: "workflowDefinition.archive",
      resourceType: "workflowDefinition",
      resourceId: input.name,
      details: { name: input.name, versions: archivedVersions },
    });
    return { ok: true as const, name: input.name, archivedVersions };
  });
}
