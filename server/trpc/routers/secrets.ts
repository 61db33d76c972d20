import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { deleteSecret, listSecrets, putSecret, sealingKeysOf, SecretNameSchema, SecretValueSchema } from "../../secrets/secrets";
import { namespaceProcedure, router } from "../init";

/**
 * Settings → Secrets: names for everyone who edits (the webhook form picks
 * one), values written by admins and never read back — the list has no
 * value to show, and no procedure returns one.
 */
export const secretsRouter = router({
  list: namespaceProcedure("read").query(async ({ ctx }) =>
    (await listSecrets(ctx.db, ctx.namespaceId)).map((s) => ({ ...s, createdAt: s.createdAt.toISOString(), updatedAt: s.updatedAt.toISOString() })),
  ),

  put: namespaceProcedure("admin")
    .input(z.object({ name: SecretNameSchema, value: SecretValueSchema, description: z.string().trim().max(1000).nullable().optional() }))
    .mutation(async ({ ctx, input }) => {
      const { created } = await putSecret(ctx.db, sealingKeysOf(ctx.config), {
        namespaceId: ctx.namespaceId,
        name: input.name,
        value: input.value,
        description: input.description === undefined ? undefined : input.description || null,
        actor: actorOfPrincipal(ctx.principal),
        updatedBy: createdByOfPrincipal(ctx.principal),
      });
      return { name: input.name, created };
    }),

  delete: namespaceProcedure("admin")
    .input(z.object({ name: SecretNameSchema }))
    .mutation(async ({ ctx, input }) => {
      if (!(await deleteSecret(ctx.db, { namespaceId: ctx.namespaceId, name: input.name, actor: actorOfPrincipal(ctx.principal) }))) {
        throw new TRPCError({ code: "NOT_FOUND", message: `No secret "${input.name}" in this namespace.` });
      }
      return { deleted: true };
    }),
});
