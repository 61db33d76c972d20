import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { removeStatusListener, saveStatusListener, STATUS_LISTENER_NAME_PATTERN, StatusListenerSchema } from "../../events/status-listeners";
import { listStatusListeners } from "../../store/status-listeners";
import type { StatusListenerRow } from "../../store/status-listeners";
import { namespaceProcedure, router } from "../init";
import { fieldIssues } from "../problem-errors";

/**
 * Settings → Event handlers, its status listeners: URLs called when the
 * namespace's runs change status. Everyone with a role reads them (the
 * secret shows by name only); editors change them, as through REST.
 */

const StatusListenerNameSchema = z.string().regex(STATUS_LISTENER_NAME_PATTERN, "must be letters, digits, _ . or - (up to 200)");

function toView(row: StatusListenerRow) {
  return {
    name: row.name,
    workflowName: row.workflowName,
    statuses: row.statuses,
    url: row.url,
    secretName: row.secretName,
    enabled: row.enabled,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const statusListenersRouter = router({
  list: namespaceProcedure("read").query(async ({ ctx }) => (await listStatusListeners(ctx.db, ctx.namespaceId)).map(toView)),

  save: namespaceProcedure("edit")
    .input(z.object({ ...StatusListenerSchema.shape, name: StatusListenerNameSchema }))
    .mutation(async ({ ctx, input }) => {
      const { name, namespace: _namespace, ...config } = input;
      const saved = await saveStatusListener(ctx.db, {
        namespaceId: ctx.namespaceId,
        name,
        config,
        actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
        updatedBy: createdByOfPrincipal(ctx.principal),
      });
      if (!saved.ok) {
        throw new TRPCError({ code: "BAD_REQUEST", message: saved.problems.map((p) => p.message).join("; "), cause: fieldIssues(saved.problems.map((p) => ({ path: p.path, message: p.message }))) });
      }
      return { ...toView(saved.row), created: saved.created };
    }),

  delete: namespaceProcedure("edit")
    .input(z.object({ name: StatusListenerNameSchema }))
    .mutation(async ({ ctx, input }) => {
      const row = await removeStatusListener(ctx.db, { namespaceId: ctx.namespaceId, name: input.name, actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress) });
      if (row === undefined) throw new TRPCError({ code: "NOT_FOUND", message: `No status listener "${input.name}" in this namespace.` });
      return { deleted: true };
    }),
});
