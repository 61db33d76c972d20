import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { getIncomingWebhook, listIncomingWebhooks, listWebhookCallbacks } from "../../store/incoming-webhooks";
import type { IncomingWebhookRow, WebhookCallbackRow } from "../../store/incoming-webhooks";
import { previewWebhookCall } from "../../webhooks/webhook-mapping";
import { removeWebhook, saveWebhook } from "../../webhooks/save-webhook";
import { WEBHOOK_PATH_PREFIX } from "../../webhooks/receive-webhook";
import { WebhookConfigSchema, WebhookNameSchema } from "../../webhooks/webhook-config";
import { NameSchema } from "../../../engine";
import { defineRoute } from "../define-route";
import { HttpProblem, jsonPointer, validationProblem } from "../problem";
import { iso, limitSchema } from "../schemas";

const tags = ["Webhooks"];

const WebhookSchema = z
  .object({
    name: z.string(),
    path: z.string().meta({ description: "Where senders call it: POST {origin}{path}." }),
    description: z.string().nullable(),
    workflowName: z.string(),
    workflowVersion: z.int().nullable(),
    enabled: z.boolean(),
    authMode: z.enum(["token", "hmac-sha256", "hmac-sha256-timestamped"]),
    secretName: z.string(),
    authHeader: z.string(),
    toleranceSeconds: z.int(),
    inputMapping: z.unknown(),
    correlationIdTemplate: z.string().nullable(),
    idempotencyKeyTemplate: z.string().nullable(),
    responseMode: z.enum(["accepted", "wait"]),
    waitSeconds: z.int(),
    responseNodeRef: z.string().nullable(),
    allowGet: z.boolean(),
    maxBodyBytes: z.int(),
    ratePerMinute: z.int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  ;

const WebhookCallSchema = z
  .object({
    id: z.string(),
    receivedAt: z.string(),
    method: z.string(),
    status: z.int(),
    workflowId: z.string().nullable(),
    refusal: z.string().nullable(),
    idempotencyKey: z.string().nullable(),
    bodyBytes: z.int(),
    durationMs: z.int(),
  })
  ;

export function webhookPath(namespace: string, name: string): string {
  return `${WEBHOOK_PATH_PREFIX}${namespace}/${name}`;
}

function toWebhookDto(row: IncomingWebhookRow, namespace: string): z.input<typeof WebhookSchema> {
  return {
    name: row.name,
    path: webhookPath(namespace, row.name),
    description: row.description,
    workflowName: row.workflowName,
    workflowVersion: row.workflowVersion,
    enabled: row.enabled,
    authMode: row.authMode,
    secretName: row.secretName,
    authHeader: row.authHeader,
    toleranceSeconds: row.toleranceSeconds,
    inputMapping: row.inputMapping,
    correlationIdTemplate: row.correlationIdTemplate,
    idempotencyKeyTemplate: row.idempotencyKeyTemplate,
    responseMode: row.responseMode,
    waitSeconds: row.waitSeconds,
    responseNodeRef: row.responseNodeRef,
    allowGet: row.allowGet,
    maxBodyBytes: row.maxBodyBytes,
    ratePerMinute: row.ratePerMinute,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

function toCallDto(row: WebhookCallbackRow): z.input<typeof WebhookCallSchema> {
  return {
    id: row.id,
    receivedAt: iso(row.receivedAt),
    method: row.method,
    status: row.status,
    workflowId: row.workflowId,
    refusal: row.refusal,
    idempotencyKey: row.idempotencyKey,
    bodyBytes: row.bodyBytes,
    durationMs: row.durationMs,
  };
}

const Params = z.object({ name: WebhookNameSchema });

export const putWebhookRoute = defineRoute({
  method: "PUT",
  path: "/ns/{ns}/webhooks/{name}",
  auth: "edit",
  operationId: "putWebhook",
  summary: "Create or replace a webhook",
  description:
    "Senders then call POST /api/hooks/{ns}/{name}, authenticated by the named namespace secret (a token header, or an HMAC-SHA256 signature in GitHub's or Stripe's shape). The workflow, the secret and the response node must exist.",
  tags,
  params: Params,
  body: WebhookConfigSchema,
  responses: { 200: WebhookSchema, 201: WebhookSchema },
  handler: async ({ deps, principal, namespace, params, body }) => {
    const saved = await saveWebhook(deps.db, { namespaceId: namespace.id, name: params.name, config: body, actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
    if (!saved.ok) throw validationProblem(saved.problems.map((p) => ({ pointer: jsonPointer(["body", ...p.path]), message: p.message })));
    return { status: saved.created ? 201 : 200, body: toWebhookDto(saved.row, namespace.name) };
  },
});

export const listWebhooksRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/webhooks",
  auth: "read",
  operationId: "listWebhooks",
  summary: "List webhooks, optionally of one workflow",
  tags,
  query: z.object({ workflow: NameSchema.optional() }),
  responses: { 200: z.object({ items: z.array(WebhookSchema) }) },
  handler: async ({ deps, namespace, query }) => {
    const rows = await listIncomingWebhooks(deps.db, { namespaceId: namespace.id, workflowName: query.workflow });
    return { status: 200, body: { items: rows.map((r) => toWebhookDto(r, namespace.name)) } };
  },
});

export const getWebhookRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/webhooks/{name}",
  auth: "read",
  operationId: "getWebhook",
  summary: "Get a webhook",
  tags,
  params: Params,
  responses: { 200: WebhookSchema },
  handler: async ({ deps, namespace, params }) => {
    const row = await getIncomingWebhook(deps.db, namespace.id, params.name);
    if (row === undefined) throw new HttpProblem("not-found", `No webhook "${params.name}" in namespace ${namespace.name}`);
    return { status: 200, body: toWebhookDto(row, namespace.name) };
  },
});

export const deleteWebhookRoute = defineRoute({
  method: "DELETE",
  path: "/ns/{ns}/webhooks/{name}",
  auth: "edit",
  operationId: "deleteWebhook",
  summary: "Delete a webhook and its call record; its address answers 404 from now on",
  tags,
  params: Params,
  responses: { 200: WebhookSchema },
  handler: async ({ deps, principal, namespace, params }) => {
    const row = await removeWebhook(deps.db, { namespaceId: namespace.id, name: params.name, actor: actorOfPrincipal(principal) });
    if (row === undefined) throw new HttpProblem("not-found", `No webhook "${params.name}" in namespace ${namespace.name}`);
    return { status: 200, body: toWebhookDto(row, namespace.name) };
  },
});

export const listWebhookCallsRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/webhooks/{name}/calls",
  auth: "read",
  operationId: "listWebhookCalls",
  summary: "The latest calls to a webhook, newest first: status, the run started, why refused",
  tags,
  params: Params,
  query: z.object({ limit: limitSchema(50, 500) }),
  responses: { 200: z.object({ items: z.array(WebhookCallSchema) }) },
  handler: async ({ deps, namespace, params, query }) => {
    const webhook = await getIncomingWebhook(deps.db, namespace.id, params.name);
    if (webhook === undefined) throw new HttpProblem("not-found", `No webhook "${params.name}" in namespace ${namespace.name}`);
    const rows = await listWebhookCallbacks(deps.db, { namespaceId: namespace.id, webhookId: webhook.id, limit: query.limit });
    return { status: 200, body: { items: rows.map(toCallDto) } };
  },
});

export const previewWebhookRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/webhooks/preview",
  auth: "read",
  operationId: "previewWebhook",
  summary: "What a call would map to: the run's input, correlation id and idempotency key, without starting anything",
  tags,
  body: z.strictObject({
    inputMapping: z.unknown().default("${body}"),
    correlationIdTemplate: z.string().max(1000).nullable().optional(),
    idempotencyKeyTemplate: z.string().max(1000).nullable().optional(),
    call: z.strictObject({
      body: z.unknown().optional(),
      headers: z.record(z.string(), z.string()).default({}),
      query: z.record(z.string(), z.string()).default({}),
    }),
  }),
  responses: { 200: z.object({ input: z.unknown(), correlationId: z.string().nullable(), idempotencyKey: z.string().nullable(), problems: z.array(z.string()) }) },
  handler: ({ body }) => Promise.resolve({ status: 200 as const, body: previewWebhookCall(body) }),
});

export const WEBHOOK_ROUTES = [putWebhookRoute, listWebhooksRoute, previewWebhookRoute, getWebhookRoute, deleteWebhookRoute, listWebhookCallsRoute];
