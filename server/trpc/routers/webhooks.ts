import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { NameSchema } from "../../../engine";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { getIncomingWebhook, listIncomingWebhooks, listWebhookCallbacks } from "../../store/incoming-webhooks";
import type { IncomingWebhookRow } from "../../store/incoming-webhooks";
import { removeWebhook, saveWebhook } from "../../webhooks/save-webhook";
import { WEBHOOK_PATH_PREFIX } from "../../webhooks/receive-webhook";
import { WebhookConfigSchema, WebhookNameSchema } from "../../webhooks/webhook-config";
import { previewWebhookCall } from "../../webhooks/webhook-mapping";
import { namespaceProcedure, router } from "../init";
import { fieldIssues } from "../problem-errors";

/** A workflow's webhooks in the console: the Triggers panel lists, edits, previews and shows the latest calls. */

function toWebhook(row: IncomingWebhookRow, namespace: string) {
  return {
    ...row,
    path: `${WEBHOOK_PATH_PREFIX}${namespace}/${row.name}`,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const nameInput = z.object({ name: WebhookNameSchema });

export const webhooksRouter = router({
  list: namespaceProcedure("read")
    .input(z.object({ workflowName: NameSchema.optional() }))
    .query(async ({ ctx, input }) => (await listIncomingWebhooks(ctx.db, { namespaceId: ctx.namespaceId, workflowName: input.workflowName })).map((r) => toWebhook(r, input.namespace))),

  save: namespaceProcedure("edit")
    .input(z.object({ name: WebhookNameSchema, config: WebhookConfigSchema }))
    .mutation(async ({ ctx, input }) => {
      const saved = await saveWebhook(ctx.db, {
        namespaceId: ctx.namespaceId,
        name: input.name,
        config: input.config,
        actor: actorOfPrincipal(ctx.principal),
        updatedBy: createdByOfPrincipal(ctx.principal),
      });
      if (!saved.ok) {
        throw new TRPCError({ code: "BAD_REQUEST", message: saved.problems.map((p) => p.message).join("; "), cause: fieldIssues(saved.problems.map((p) => ({ path: p.path, message: p.message }))) });
      }
      return { ...toWebhook(saved.row, input.namespace), created: saved.created };
    }),

  delete: namespaceProcedure("edit")
    .input(nameInput)
    .mutation(async ({ ctx, input }) => {
      const row = await removeWebhook(ctx.db, { namespaceId: ctx.namespaceId, name: input.name, actor: actorOfPrincipal(ctx.principal) });
      if (row === undefined) throw new TRPCError({ code: "NOT_FOUND", message: `No webhook "${input.name}" in this namespace.` });
      return { deleted: true };
    }),

  calls: namespaceProcedure("read")
    .input(z.object({ name: WebhookNameSchema, limit: z.number().int().min(1).max(100).default(20) }))
    .query(async ({ ctx, input }) => {
      const webhook = await getIncomingWebhook(ctx.db, ctx.namespaceId, input.name);
      if (webhook === undefined) throw new TRPCError({ code: "NOT_FOUND", message: `No webhook "${input.name}" in this namespace.` });
      const rows = await listWebhookCallbacks(ctx.db, { namespaceId: ctx.namespaceId, webhookId: webhook.id, limit: input.limit });
      return rows.map((r) => ({ ...r, receivedAt: r.receivedAt.toISOString() }));
    }),

  preview: namespaceProcedure("read")
    .input(
      z.object({
        inputMapping: z.unknown(),
        correlationIdTemplate: z.string().max(1000).nullable().optional(),
        idempotencyKeyTemplate: z.string().max(1000).nullable().optional(),
        call: z.object({ body: z.unknown().optional(), headers: z.record(z.string(), z.string().max(8192)).default({}), query: z.record(z.string(), z.string().max(8192)).default({}) }),
      }),
    )
    .query(({ input }) => previewWebhookCall({ ...input, inputMapping: input.inputMapping ?? "${body}" })),
});
