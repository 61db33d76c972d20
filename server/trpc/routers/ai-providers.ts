import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { AiProviderConfigSchema, AiProviderNameSchema, deleteAiProvider, listAiProviders, saveAiProvider } from "../../ai/ai-providers";
import type { AiProvider } from "../../ai/ai-providers";
import { namespaceProcedure, router } from "../init";
import { fieldIssues } from "../problem-errors";

/**
 * Settings → AI providers, and the editor's provider and model pickers:
 * everyone with a role reads them (nothing here is secret — the key is a
 * secret's name); editors change them.
 */

const toView = (p: AiProvider) => ({ ...p, createdAt: p.createdAt.toISOString(), updatedAt: p.updatedAt.toISOString() });

export const aiProvidersRouter = router({
  list: namespaceProcedure("read").query(async ({ ctx }) => (await listAiProviders(ctx.db, ctx.namespaceId)).map(toView)),

  save: namespaceProcedure("edit")
    // Flat, so a refused field is named as the form names it (form-errors.ts reads the first path element).
    .input(z.object({ ...AiProviderConfigSchema.shape, name: AiProviderNameSchema }))
    .mutation(async ({ ctx, input }) => {
      const { name, namespace: _namespace, ...config } = input;
      const saved = await saveAiProvider(ctx.db, {
        namespaceId: ctx.namespaceId,
        name,
        config,
        actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
        updatedBy: createdByOfPrincipal(ctx.principal),
      });
      if (!saved.ok) {
        throw new TRPCError({ code: "BAD_REQUEST", message: saved.problems.map((p) => `${p.path.join(".")}: ${p.message}`).join("; "), cause: fieldIssues(saved.problems.map((p) => ({ path: p.path, message: p.message }))) });
      }
      return { ...toView(saved.provider), created: saved.created };
    }),

  delete: namespaceProcedure("edit")
    .input(z.object({ name: AiProviderNameSchema }))
    .mutation(async ({ ctx, input }) => {
      if (!(await deleteAiProvider(ctx.db, { namespaceId: ctx.namespaceId, name: input.name, actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress) }))) {
        throw new TRPCError({ code: "NOT_FOUND", message: `No AI provider "${input.name}" in this namespace.` });
      }
      return { deleted: true };
    }),
});
