import type { Db } from "@/db/pool";
import { referencedRefs } from "../../engine";
import { getSecretMetadata } from "../secrets/secrets";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { deleteIncomingWebhook, upsertIncomingWebhook } from "../store/incoming-webhooks";
import type { IncomingWebhookRow } from "../store/incoming-webhooks";
import { getWorkflowDefinition } from "../store/workflow-definitions";
import type { WebhookConfig } from "./webhook-config";

/**
 * Creating, replacing and deleting a webhook, as REST and the console do it:
 * what the settings name must exist — the workflow (the version, when one is
 * pinned), the namespace secret, the node whose output answers — and the
 * templates must parse; every problem is reported at once, by field, and a
 * refused save writes nothing. A save and its AuditEvents row commit together.
 */

export interface WebhookProblem {
  /** The field in the settings, e.g. ["secretName"]. */
  path: (string | number)[];
  message: string;
}

export type SaveWebhookResult = { ok: true; row: IncomingWebhookRow; created: boolean } | { ok: false; problems: WebhookProblem[] };

export async function saveWebhook(
  db: Db,
  input: { namespaceId: string; name: string; config: WebhookConfig; actor: AuditActor; updatedBy: string | null },
): Promise<SaveWebhookResult> {
  const problems = await checkWebhook(db, input.namespaceId, input.config);
  if (problems.length > 0) return { ok: false, problems };
  const saved = await db.transaction().execute(async (trx) => {
    const result = await upsertIncomingWebhook(trx, { namespaceId: input.namespaceId, name: input.name, settings: input.config, actor: input.updatedBy });
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActorColumns(input.actor),
      action: result.created ? "webhook.create" : "webhook.update",
      resourceType: "webhook",
      resourceId: input.name,
      details: { name: input.name, workflowName: input.config.workflowName, authMode: input.config.authMode, secretName: input.config.secretName, enabled: input.config.enabled },
    });
    return result;
  });
  return { ok: true, ...saved };
}

export async function removeWebhook(db: Db, input: { namespaceId: string; name: string; actor: AuditActor }): Promise<IncomingWebhookRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await deleteIncomingWebhook(trx, input.namespaceId, input.name);
    if (row !== undefined) {
      await appendAuditEvent(trx, {
        namespaceId: input.namespaceId,
        ...auditActorColumns(input.actor),
        action: "webhook.delete",
        resourceType: "webhook",
        resourceId: input.name,
        details: { name: input.name },
      });
    }
    return row;
  });
}

/** Every reason the settings cannot work, by field. */
async function checkWebhook(db: Db, namespaceId: string, config: WebhookConfig): Promise<WebhookProblem[]> {
  const problems: WebhookProblem[] = [];
  const definition = await getWorkflowDefinition(db, namespaceId, config.workflowName, config.workflowVersion ?? undefined);
  if (definition === undefined) {
    const which = config.workflowVersion == null ? `a workflow "${config.workflowName}"` : `version ${config.workflowVersion} of "${config.workflowName}"`;
    problems.push({ path: [config.workflowVersion == null ? "workflowName" : "workflowVersion"], message: `There is no ${which} in this namespace` });
  } else if (config.responseNodeRef != null && !definitionHasRef(definition.graph, config.responseNodeRef)) {
    problems.push({ path: ["responseNodeRef"], message: `The workflow "${config.workflowName}" has no node "${config.responseNodeRef}"` });
  }
  if ((await getSecretMetadata(db, namespaceId, config.secretName)) === undefined) problems.push({ path: ["secretName"], message: `There is no secret "${config.secretName}" in this namespace; create it under Settings → Secrets first` });
  for (const [field, template] of [
    ["inputMapping", config.inputMapping],
    ["correlationIdTemplate", config.correlationIdTemplate],
    ["idempotencyKeyTemplate", config.idempotencyKeyTemplate],
  ] as const) {
    if (template == null) continue;
    for (const problem of referencedRefs(template).problems) problems.push({ path: [field], message: problem.message });
  }
  return problems;
}

function definitionHasRef(graph: unknown, ref: string): boolean {
  const nodes = (graph as { nodes?: { ref?: unknown }[] } | null)?.nodes ?? [];
  return nodes.some((node) => node.ref === ref);
}
