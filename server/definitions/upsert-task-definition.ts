import type { Db } from "@/db/pool";
import type { TaskDefinitionRow } from "@/db/schema";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { upsertTaskDefinition as upsertTaskDefinitionRow } from "../store/task-definitions";
import type { TaskDefinitionInput } from "../store/task-definitions";
import { invalidateQueueGates } from "../tasks/task-gates";

export interface UpsertTaskDefinitionInput {
  namespaceId: string;
  /** The whole definition: a field left out takes its default (Conductor's PUT /metadata/taskdefs). */
  definition: TaskDefinitionInput;
  /** Stored as "updatedBy" (and "createdBy" on a create): `user:<id>`, `apiKey:<id>`. */
  updatedBy?: string | null;
  /** Who changes it, for the AuditEvents row. Omitted: the system, on behalf of `updatedBy`. */
  actor?: AuditActor;
}

/**
 * Creates or replaces a task definition, with its AuditEvents row
 * ("taskDefinition.upsert") in the same transaction. The record names the
 * definition only: its schemas and input template are unbounded and kept on
 * the row itself.
 *
 * The gate cache of this process is cleared after the commit, not before: a
 * poll between a clear and the commit would cache the old gates again for the
 * cache's whole TTL. Other processes' caches expire on their own.
 */
export async function upsertTaskDefinition(db: Db, input: UpsertTaskDefinitionInput): Promise<TaskDefinitionRow> {
  const row = await db.transaction().execute(async (trx) => {
    const stored = await upsertTaskDefinitionRow(trx, { namespaceId: input.namespaceId, definition: input.definition, actor: input.updatedBy ?? null });
    await appendAuditEvent(trx, {
      namespaceId: stored.namespaceId,
      ...auditActorColumns(input.actor ?? { type: "system", id: input.updatedBy ?? null }),
      action: "taskDefinition.upsert",
      resourceType: "taskDefinition",
      resourceId: stored.name,
      details: { name: stored.name },
    });
    return stored;
  });
  invalidateQueueGates(row.namespaceId, row.name);
  return row;
}
