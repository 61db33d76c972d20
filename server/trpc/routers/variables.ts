import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import {
  deleteEnvironmentVariable,
  listEnvironmentVariables,
  putEnvironmentVariable,
  VariableDescriptionSchema,
  VariableNameSchema,
  VariableValueSchema,
} from "../../secrets/environment-variables";
import { namespaceProcedure, router } from "../init";

/**
 * Settings → Variables: plain configuration that task input reads as
 * `${workflow.env.NAME}`. Everyone with a role reads names and values;
 * editors change them (a variable can point an HTTP task elsewhere, which an
 * editor can do by editing the workflow anyway).
 */
export const variablesRouter = router({
  list: namespaceProcedure("read").query(async ({ ctx }) =>
    (await listEnvironmentVariables(ctx.db, ctx.namespaceId)).map((v) => ({ ...v, createdAt: v.createdAt.toISOString(), updatedAt: v.updatedAt.toISOString() })),
  ),

  put: namespaceProcedure("edit")
    .input(z.object({ name: VariableNameSchema, value: VariableValueSchema, description: VariableDescriptionSchema.nullable().optional() }))
    .mutation(async ({ ctx, input }) => {
      const { created } = await putEnvironmentVariable(ctx.db, {
        namespaceId: ctx.namespaceId,
        name: input.name,
        value: input.value,
        description: input.description === undefined ? undefined : input.description || null,
        actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
        updatedBy: createdByOfPrincipal(ctx.principal),
      });
      return { name: input.name, created };
    }),

  delete: namespaceProcedure("edit")
    .input(z.object({ name: VariableNameSchema }))
    .mutation(async ({ ctx, input }) => {
      if (!(await deleteEnvironmentVariable(ctx.db, { namespaceId: ctx.namespaceId, name: input.name, actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress) }))) {
        throw new TRPCError({ code: "NOT_FOUND", message: `No variable "${input.name}" in this namespace.` });
      }
      return { deleted: true };
    }),
});
