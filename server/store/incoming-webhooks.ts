import { sql } from "kysely";
import type { Kysely } from "kysely";
import { json } from "../../db/json";
import type { Selectable } from "kysely";
import type { Database } from "../../db/schema";

/**
 * IncomingWebhooks and WebhookCallbacks: a webhook's settings per
 * (namespace, name), and one row per call made to it (server/webhooks).
 */

type Executor = Kysely<Database>;
export type IncomingWebhookRow = Selectable<Database["IncomingWebhooks"]>;
export type WebhookCallbackRow = Selectable<Database["WebhookCallbacks"]>;

export interface WebhookSettings {
  description?: string | null;
  workflowName: string;
  workflowVersion?: number | null;
  enabled: boolean;
  authMode: IncomingWebhookRow["authMode"];
  secretName: string;
  authHeader: string;
  toleranceSeconds: number;
  inputMapping: unknown;
  correlationIdTemplate?: string | null;
  idempotencyKeyTemplate?: string | null;
  responseMode: IncomingWebhookRow["responseMode"];
  waitSeconds: number;
  responseNodeRef?: string | null;
  allowGet: boolean;
  maxBodyBytes: number;
  ratePerMinute: number;
}

function columns(settings: WebhookSettings) {
  return {
    description: settings.description ?? null,
    workflowName: settings.workflowName,
    workflowVersion: settings.workflowVersion ?? null,
    enabled: settings.enabled,
    authMode: settings.authMode,
    secretName: settings.secretName,
    authHeader: settings.authHeader,
    toleranceSeconds: settings.toleranceSeconds,
    inputMapping: json(settings.inputMapping),
    correlationIdTemplate: settings.correlationIdTemplate ?? null,
    idempotencyKeyTemplate: settings.idempotencyKeyTemplate ?? null,
    responseMode: settings.responseMode,
    waitSeconds: settings.waitSeconds,
    responseNodeRef: settings.responseNodeRef ?? null,
    allowGet: settings.allowGet,
    maxBodyBytes: settings.maxBodyBytes,
    ratePerMinute: settings.ratePerMinute,
  };
}

/** Creates or replaces the webhook `name`; `created` says which. */
export async function upsertIncomingWebhook(
  db: Executor,
  input: { namespaceId: string; name: string; settings: WebhookSettings; actor: string | null },
): Promise<{ row: IncomingWebhookRow; created: boolean }> {
  const values = columns(input.settings);
  const row = await db
    .insertInto("IncomingWebhooks")
    .values({ namespaceId: input.namespaceId, name: input.name, ...values, createdBy: input.actor, updatedBy: input.actor })
    .onConflict((oc) => oc.columns(["namespaceId", "name"]).doUpdateSet({ ...values, updatedBy: input.actor, updatedAt: sql`now()` }))
    .returningAll()
    .returning(sql<boolean>`xmax = 0`.as("created"))
    .executeTakeFirstOrThrow();
  const { created, ...stored } = row;
  return { row: stored, created };
}

export async function getIncomingWebhook(db: Executor, namespaceId: string, name: string): Promise<IncomingWebhookRow | undefined> {
  return db.selectFrom("IncomingWebhooks").selectAll().where("namespaceId", "=", namespaceId).where("name", "=", name).executeTakeFirst();
}

/** The webhook a call's URL names, found by the namespace's name: the one lookup a call makes before it is authenticated. */
export async function findWebhookForCall(db: Executor, namespaceName: string, name: string): Promise<IncomingWebhookRow | undefined> {
  return db
    .selectFrom("IncomingWebhooks as w")
    .innerJoin("Namespaces as n", "n.id", "w.namespaceId")
    .selectAll("w")
    .where("n.name", "=", namespaceName)
    .where("w.name", "=", name)
    .executeTakeFirst();
}

export async function listIncomingWebhooks(db: Executor, input: { namespaceId: string; workflowName?: string }): Promise<IncomingWebhookRow[]> {
  let query = db.selectFrom("IncomingWebhooks").selectAll().where("namespaceId", "=", input.namespaceId);
  if (input.workflowName !== undefined) query = query.where("workflowName", "=", input.workflowName);
  return query.orderBy("name").limit(1000).execute();
}

export async function deleteIncomingWebhook(db: Executor, namespaceId: string, name: string): Promise<IncomingWebhookRow | undefined> {
  return db.deleteFrom("IncomingWebhooks").where("namespaceId", "=", namespaceId).where("name", "=", name).returningAll().executeTakeFirst();
}

export interface NewWebhookCallback {
  webhookId: string;
  namespaceId: string;
  method: string;
  status: number;
  refusal?: string | null;
  signatureDigest?: string | null;
  idempotencyKey?: string | null;
  bodyBytes?: number;
}

/**
 * Records a call; returns its id, or null when a call with the same
 * signature digest is already recorded for this webhook — a replay.
 */
export async function insertWebhookCallback(db: Executor, call: NewWebhookCallback): Promise<string | null> {
  const row = await db
    .insertInto("WebhookCallbacks")
    .values({
      webhookId: call.webhookId,
      namespaceId: call.namespaceId,
      method: call.method,
      status: call.status,
      refusal: call.refusal ?? null,
      signatureDigest: call.signatureDigest ?? null,
      idempotencyKey: call.idempotencyKey ?? null,
      bodyBytes: call.bodyBytes ?? 0,
    })
    .onConflict((oc) => oc.columns(["webhookId", "signatureDigest"]).where("signatureDigest", "is not", null).doNothing())
    .returning("id")
    .executeTakeFirst();
  return row?.id ?? null;
}

export async function finishWebhookCallback(
  db: Executor,
  input: { id: string; status: number; workflowId?: string | null; refusal?: string | null; durationMs: number },
): Promise<void> {
  await db
    .updateTable("WebhookCallbacks")
    .set({ status: input.status, workflowId: input.workflowId ?? null, refusal: input.refusal ?? null, durationMs: input.durationMs })
    .where("id", "=", input.id)
    .execute();
}

/** The latest calls to a webhook, newest first. */
export async function listWebhookCallbacks(db: Executor, input: { namespaceId: string; webhookId: string; limit: number }): Promise<WebhookCallbackRow[]> {
  return db
    .selectFrom("WebhookCallbacks")
    .selectAll()
    .where("namespaceId", "=", input.namespaceId)
    .where("webhookId", "=", input.webhookId)
    .orderBy("receivedAt", "desc")
    .orderBy("id", "desc")
    .limit(input.limit)
    .execute();
}
