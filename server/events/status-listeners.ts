import { z } from "zod";
import type { Db } from "@/db/pool";
import { NameSchema, WORKFLOW_STATUSES } from "../../engine";
import { getSecretMetadata } from "../secrets/secrets";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { deleteStatusListener, upsertStatusListener } from "../store/status-listeners";
import type { StatusListenerRow } from "../store/status-listeners";
import { getWorkflowDefinition } from "../store/workflow-definitions";
import { HttpRequestError, parseHttpUrl } from "../system-tasks/guarded-http";

/**
 * Status listeners: a URL called, through the outbox with retries and a
 * dead letter, each time a workflow of the namespace (or of one workflow)
 * reaches one of the chosen statuses — signed with a namespace secret when
 * one is named. The call's body is the change: workflowId, workflowType,
 * version, status, previousStatus, correlationId, reasonForIncompletion,
 * updateTime. Network policy is the HTTP tasks': checked at each call on the
 * address the host resolves to then.
 */

export const STATUS_LISTENER_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,200}$/;

export const StatusListenerSchema = z.strictObject({
  workflowName: NameSchema.nullable().optional().meta({ description: "Only this workflow's runs; absent: every workflow of the namespace." }),
  statuses: z
    .array(z.enum(WORKFLOW_STATUSES))
    .min(1)
    .max(WORKFLOW_STATUSES.length)
    .default(["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"])
    .transform((s) => [...new Set(s)]),
  url: z.string().min(1).max(2000),
  secretName: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be a secret's name")
    .nullable()
    .optional()
    .meta({ description: "Signs each call: X-Node-Flow-Signature: t=<unix>,v1=<HMAC-SHA256 of `<t>.<body>`>." }),
  enabled: z.boolean().default(true),
});
export type StatusListenerConfig = z.output<typeof StatusListenerSchema>;

export type SaveStatusListenerResult = { ok: true; row: StatusListenerRow; created: boolean } | { ok: false; problems: { path: string[]; message: string }[] };

export async function saveStatusListener(
  db: Db,
  input: { namespaceId: string; name: string; config: StatusListenerConfig; actor: AuditActor; updatedBy: string | null },
): Promise<SaveStatusListenerResult> {
  const problems: { path: string[]; message: string }[] = [];
  try {
    parseHttpUrl(input.config.url);
  } catch (error) {
    if (!(error instanceof HttpRequestError)) throw error;
    problems.push({ path: ["url"], message: error.message });
  }
  if (input.config.workflowName != null && (await getWorkflowDefinition(db, input.namespaceId, input.config.workflowName)) === undefined) {
    problems.push({ path: ["workflowName"], message: `There is no workflow "${input.config.workflowName}" in this namespace` });
  }
  if (input.config.secretName != null) {
    if ((await getSecretMetadata(db, input.namespaceId, input.config.secretName)) === undefined) problems.push({ path: ["secretName"], message: `There is no secret "${input.config.secretName}" in this namespace` });
  }
  if (problems.length > 0) return { ok: false, problems };
  const saved = await db.transaction().execute(async (trx) => {
    const result = await upsertStatusListener(trx, { namespaceId: input.namespaceId, name: input.name, settings: input.config, actor: input.updatedBy });
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActorColumns(input.actor),
      action: result.created ? "statusListener.create" : "statusListener.update",
      resourceType: "statusListener",
      resourceId: input.name,
      details: { name: input.name, workflowName: input.config.workflowName ?? null, statuses: input.config.statuses, enabled: input.config.enabled, signed: input.config.secretName != null },
    });
    return result;
  });
  return { ok: true, ...saved };
}

export async function removeStatusListener(db: Db, input: { namespaceId: string; name: string; actor: AuditActor }): Promise<StatusListenerRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await deleteStatusListener(trx, input.namespaceId, input.name);
    if (row !== undefined) {
      await appendAuditEvent(trx, { namespaceId: input.namespaceId, ...auditActorColumns(input.actor), action: "statusListener.delete", resourceType: "statusListener", resourceId: input.name, details: { name: input.name } });
    }
    return row;
  });
}
