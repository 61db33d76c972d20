import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { EventHandlerSchema, EVENT_HANDLER_NAME_PATTERN } from "../../events/event-handler-schema";
import { toEventHandlerView } from "../../events/event-handler-view";
import { removeEventHandler, saveEventHandler } from "../../events/save-event-handler";
import type { SaveEventHandlerResult } from "../../events/save-event-handler";
import { listEventHandlers } from "../../store/event-handlers";
import { conflict, dottedPath, notFound, validationFailed, zodValidationErrors } from "../conductor-error";
import { defineConductorRoute } from "../define-conductor-route";

/**
 * Conductor's EventResource (/api/event), as its clients call it: add,
 * update, delete, list all, and list the handlers of one event. The handler
 * is Conductor's EventHandler JSON; the namespace is the caller's.
 */

function conductorHandler(row: Parameters<typeof toEventHandlerView>[0]) {
  const { createdAt: _c, updatedAt: _u, ...view } = toEventHandlerView(row);
  return view;
}

function checked(body: unknown) {
  const parsed = EventHandlerSchema.safeParse(body);
  if (!parsed.success) throw validationFailed(zodValidationErrors(parsed.error.issues, "body"));
  return parsed.data;
}

function refusalOf(saved: Exclude<SaveEventHandlerResult, { ok: true }> | { ok: false; reason: "not-found" | "exists"; message: string }): never {
  if ("problems" in saved) throw validationFailed(saved.problems.map((p) => ({ path: dottedPath("body", p.path), message: p.message })));
  throw saved.reason === "exists" ? conflict(saved.message) : notFound(saved.message);
}

export const addEventHandlerRoute = defineConductorRoute({
  method: "POST",
  path: "/event",
  auth: "edit",
  summary: "Add an event handler (409 when one of that name exists)",
  body: z.unknown(),
  handler: async ({ deps, principal, namespaceId, body }) => {
    const saved = await saveEventHandler(deps.db, { namespaceId, config: checked(body), actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal), mustBeNew: true });
    if (!saved.ok) refusalOf(saved);
    return { status: 200, json: {} };
  },
});

export const updateEventHandlerRoute = defineConductorRoute({
  method: "PUT",
  path: "/event",
  auth: "edit",
  summary: "Replace an event handler (404 when there is none of that name)",
  body: z.unknown(),
  handler: async ({ deps, principal, namespaceId, body }) => {
    const saved = await saveEventHandler(deps.db, { namespaceId, config: checked(body), actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal), mustExist: true });
    if (!saved.ok) refusalOf(saved);
    return { status: 200, json: {} };
  },
});

export const deleteEventHandlerRoute = defineConductorRoute({
  method: "DELETE",
  path: "/event/{name}",
  auth: "edit",
  summary: "Remove an event handler",
  params: z.object({ name: z.string().regex(EVENT_HANDLER_NAME_PATTERN, "is not an event handler's name") }),
  handler: async ({ deps, principal, namespaceId, params }) => {
    const row = await removeEventHandler(deps.db, { namespaceId, name: params.name, actor: actorOfPrincipal(principal) });
    if (row === undefined) throw notFound(`EventHandler with name ${params.name} not found!`);
    return { status: 200, json: {} };
  },
});

export const listEventHandlersRoute = defineConductorRoute({
  method: "GET",
  path: "/event",
  auth: "read",
  summary: "All event handlers",
  handler: async ({ deps, namespaceId }) => ({ status: 200, json: (await listEventHandlers(deps.db, { namespaceId })).map(conductorHandler) }),
});

export const eventHandlersForEventRoute = defineConductorRoute({
  method: "GET",
  path: "/event/{event}",
  auth: "read",
  summary: "The event handlers of one event (only the active ones unless activeOnly=false)",
  params: z.object({ event: z.string().min(1).max(500) }),
  query: z.object({ activeOnly: z.enum(["true", "false"]).default("true") }),
  handler: async ({ deps, namespaceId, params, query }) => ({
    status: 200,
    json: (await listEventHandlers(deps.db, { namespaceId, event: params.event, activeOnly: query.activeOnly === "true" })).map(conductorHandler),
  }),
});

export const EVENT_ROUTES = [addEventHandlerRoute, updateEventHandlerRoute, listEventHandlersRoute, eventHandlersForEventRoute, deleteEventHandlerRoute];
