import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { EVENT_HANDLER_NAME_PATTERN, EventHandlerSchema } from "../../events/event-handler-schema";
import { toEventExecutionView, toEventHandlerView } from "../../events/event-handler-view";
import { removeEventHandler, saveEventHandler } from "../../events/save-event-handler";
import { getEventHandler, listEventExecutions, listEventHandlers } from "../../store/event-handlers";
import { namespaceProcedure, router } from "../init";
import { fieldIssues } from "../problem-errors";

/**
 * Settings → Event handlers: everyone with a role reads the handlers and what
 * they did with the latest events; editors change them, as REST's
 * /event-handlers and Conductor's /api/event let an editor's key do.
 */

const EventHandlerNameSchema = z.string().regex(EVENT_HANDLER_NAME_PATTERN, "must be letters, digits, _ . or - (up to 200)");
const notFound = (name: string) => new TRPCError({ code: "NOT_FOUND", message: `No event handler "${name}" in this namespace.` });

export const eventHandlersRouter = router({
  list: namespaceProcedure("read").query(async ({ ctx }) => (await listEventHandlers(ctx.db, { namespaceId: ctx.namespaceId })).map(toEventHandlerView)),

  /** A save replaces the handler of that name; `isNew` refuses one that exists, so an add never overwrites. */
  save: namespaceProcedure("edit")
    .input(EventHandlerSchema.extend({ isNew: z.boolean().default(false) }))
    .mutation(async ({ ctx, input }) => {
      const { isNew, namespace: _namespace, ...config } = input;
      const saved = await saveEventHandler(ctx.db, {
        namespaceId: ctx.namespaceId,
        config,
        actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
        updatedBy: createdByOfPrincipal(ctx.principal),
        mustBeNew: isNew,
      });
      if (!saved.ok) {
        if ("problems" in saved) {
          throw new TRPCError({ code: "BAD_REQUEST", message: saved.problems.map((p) => p.message).join("; "), cause: fieldIssues(saved.problems.map((p) => ({ path: p.path, message: p.message }))) });
        }
        throw new TRPCError({ code: "CONFLICT", message: saved.message, cause: fieldIssues([{ path: ["name"], message: saved.message }]) });
      }
      return { ...toEventHandlerView(saved.row), created: saved.created };
    }),

  delete: namespaceProcedure("edit")
    .input(z.object({ name: EventHandlerNameSchema }))
    .mutation(async ({ ctx, input }) => {
      const row = await removeEventHandler(ctx.db, { namespaceId: ctx.namespaceId, name: input.name, actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress) });
      if (row === undefined) throw notFound(input.name);
      return { deleted: true };
    }),

  /** What the handler did with its latest events, newest first: the run each start made, or why it failed or skipped. */
  executions: namespaceProcedure("read")
    .input(z.object({ name: EventHandlerNameSchema, limit: z.number().int().min(1).max(100).default(20) }))
    .query(async ({ ctx, input }) => {
      const handler = await getEventHandler(ctx.db, ctx.namespaceId, input.name);
      if (handler === undefined) throw notFound(input.name);
      return (await listEventExecutions(ctx.db, { namespaceId: ctx.namespaceId, handlerId: handler.id, limit: input.limit })).map(toEventExecutionView);
    }),
});
