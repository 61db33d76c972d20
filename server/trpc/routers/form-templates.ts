import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { createdByOfPrincipal } from "../../auth/api-keys";
import { auditActor } from "../../auth/audit-actor";
import { validateFormData } from "../../human-tasks/validate-form-data";
import { appendAuditEvent } from "../../store/audit-events";
import { createFormTemplateVersion, getFormTemplate, listFormTemplateVersions, listFormTemplates } from "../../store/form-templates";
import { namespaceProcedure, router } from "../init";

/**
 * Reusable HUMAN forms, versioned: saving never edits a version (the table
 * refuses it), it adds the next one, so a task already open on version 3
 * keeps its form. Reading takes viewer; saving takes editor, like definitions.
 */

const name = z.string().trim().min(1).max(200).regex(/^[A-Za-z0-9][A-Za-z0-9 _.-]*$/, "letters, digits, spaces, '_', '.' and '-', starting with a letter or digit");
const jsonObject = z.record(z.string(), z.unknown());

export const formTemplatesRouter = router({
  list: namespaceProcedure("read").query(async ({ ctx }) =>
    (await listFormTemplates(ctx.db, ctx.namespaceId)).map((t) => ({ ...t, updatedAt: t.updatedAt.toISOString() })),
  ),

  get: namespaceProcedure("read")
    .input(z.object({ name, version: z.int().min(1).optional() }))
    .query(async ({ ctx, input }) => {
      const row = await getFormTemplate(ctx.db, ctx.namespaceId, input.name, input.version);
      if (row === undefined) throw new TRPCError({ code: "NOT_FOUND", message: `Form template "${input.name}"${input.version === undefined ? "" : ` version ${input.version}`} not found` });
      return { name: row.name, version: row.version, description: row.description, schema: row.schema as Record<string, unknown>, uiSchema: row.uiSchema as Record<string, unknown>, createdAt: row.createdAt.toISOString(), createdBy: row.createdBy };
    }),

  versions: namespaceProcedure("read")
    .input(z.object({ name }))
    .query(async ({ ctx, input }) => (await listFormTemplateVersions(ctx.db, ctx.namespaceId, input.name)).map((v) => ({ ...v, createdAt: v.createdAt.toISOString() }))),

  save: namespaceProcedure("edit")
    .input(z.object({ name, description: z.string().trim().max(2000).optional(), schema: jsonObject, uiSchema: jsonObject.default({}) }))
    .mutation(async ({ ctx, input }) => {
      // The same checks a HUMAN node's inline form gets: an object form, and a schema ajv can compile.
      if (input.schema.type !== "object") throw new TRPCError({ code: "BAD_REQUEST", message: 'schema must be an object-typed JSON Schema ("type": "object")' });
      const unusable = validateFormData(input.schema, {}).find((e) => e.path === "" && e.message.startsWith("The form's schema cannot be used"));
      if (unusable !== undefined) throw new TRPCError({ code: "BAD_REQUEST", message: unusable.message });
      const row = await ctx.db.transaction().execute(async (trx) => {
        const saved = await createFormTemplateVersion(trx, {
          namespaceId: ctx.namespaceId,
          name: input.name,
          description: input.description || null,
          schema: input.schema,
          uiSchema: input.uiSchema,
          createdBy: createdByOfPrincipal(ctx.principal),
        });
        await appendAuditEvent(trx, {
          namespaceId: ctx.namespaceId,
          ...auditActor(ctx.principal),
          action: "form-template.save",
          resourceType: "formTemplate",
          resourceId: saved.id,
          details: { name: saved.name, version: saved.version },
          at: new Date(),
        });
        return saved;
      });
      return { name: row.name, version: row.version };
    }),
});
