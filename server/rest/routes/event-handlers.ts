import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { EventHandlerSchema, EVENT_HANDLER_NAME_PATTERN } from "../../events/event-handler-schema";
import { toEventExecutionView, toEventHandlerView } from "../../events/event-handler-view";
import { removeEventHandler, saveEventHandler } from "../../events/save-event-handler";
import { getEventHandler, listEventExecutions, listEventHandlers } from "../../store/event-handlers";
import { defineRoute } from "../define-route";
import { HttpProblem, jsonPointer, validationProblem } from "../problem";
import { limitSchema } from "../schemas";

const tags = ["Event handlers"];

const EventHandlerDtoSchema = z
  .object({
    name: z.string(),
    description: z.string().nullable(),
    event: z.string(),
    condition: z.string().nullable(),
    evaluatorType: z.string(),
    actions: z.unknown(),
    active: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  ;

const EventExecutionDtoSchema = z
  .object({ id: z.string(), eventId: z.number(), event: z.string(), status: z.enum(["COMPLETED", "SKIPPED", "FAILED"]), outcomes: z.unknown(), createdAt: z.string() })
  ;

const Params = z.object({ name: z.string().regex(EVENT_HANDLER_NAME_PATTERN, "must be letters, digits, _ . or - (up to 200)") });
const notFound = (name: string, namespace: string) => new HttpProblem("not-found", `No event handler "${name}" in namespace ${namespace}`);

export const putEventHandlerRoute = defineRoute({
  method: "PUT",
  path: "/ns/{ns}/event-handlers/{name}",
  auth: "edit",
  operationId: "putEventHandler",
  summary: "Create or replace an event handler",
  description:
    "On each event named `event` (e.g. conductor:<workflow>:<queue>, what an EVENT task publishes) whose payload satisfies `condition` (JavaScript over `$`), the actions run in order with `${…}` resolved from the payload. Inactive until `active` is true, as in Conductor.",
  tags,
  params: Params,
  body: EventHandlerSchema.omit({ name: true }).strict(),
  responses: { 200: EventHandlerDtoSchema, 201: EventHandlerDtoSchema },
  handler: async ({ deps, principal, namespace, params, body }) => {
    const saved = await saveEventHandler(deps.db, { namespaceId: namespace.id, config: { ...body, name: params.name }, actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
    if (!saved.ok) {
      if ("problems" in saved) throw validationProblem(saved.problems.map((p) => ({ pointer: jsonPointer(["body", ...p.path]), message: p.message })));
      throw new HttpProblem("conflict", saved.message);
    }
    return { status: saved.created ? 201 : 200, body: toEventHandlerView(saved.row) };
  },
});

export const listEventHandlersRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/event-handlers",
  auth: "read",
  operationId: "listEventHandlers",
  summary: "List event handlers, optionally of one event",
  tags,
  query: z.object({ event: z.string().min(1).max(500).optional(), activeOnly: z.enum(["true", "false"]).optional() }),
  responses: { 200: z.object({ items: z.array(EventHandlerDtoSchema) }) },
  handler: async ({ deps, namespace, query }) => {
    const rows = await listEventHandlers(deps.db, { namespaceId: namespace.id, event: query.event, activeOnly: query.activeOnly === "true" });
    return { status: 200, body: { items: rows.map(toEventHandlerView) } };
  },
});

export const getEventHandlerRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/event-handlers/{name}",
  auth: "read",
  operationId: "getEventHandler",
  summary: "Get an event handler",
  tags,
  params: Params,
  responses: { 200: EventHandlerDtoSchema },
  handler: async ({ deps, namespace, params }) => {
    const row = await getEventHandler(deps.db, namespace.id, params.name);
    if (row === undefined) throw notFound(params.name, namespace.name);
    return { status: 200, body: toEventHandlerView(row) };
  },
});

export const deleteEventHandlerRoute = defineRoute({
  method: "DELETE",
  path: "/ns/{ns}/event-handlers/{name}",
  auth: "edit",
  operationId: "deleteEventHandler",
  summary: "Delete an event handler and its record of executions",
  tags,
  params: Params,
  responses: { 200: EventHandlerDtoSchema },
  handler: async ({ deps, principal, namespace, params }) => {
    const row = await removeEventHandler(deps.db, { namespaceId: namespace.id, name: params.name, actor: actorOfPrincipal(principal) });
    if (row === undefined) throw notFound(params.name, namespace.name);
    return { status: 200, body: toEventHandlerView(row) };
  },
});

export const listEventExecutionsRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/event-handlers/{name}/executions",
  auth: "read",
  operationId: "listEventExecutions",
  summary: "What an event handler did with the latest events, newest first",
  tags,
  params: Params,
  query: z.object({ limit: limitSchema(50, 500) }),
  responses: { 200: z.object({ items: z.array(EventExecutionDtoSchema) }) },
  handler: async ({ deps, namespace, params, query }) => {
    const handler = await getEventHandler(deps.db, namespace.id, params.name);
    if (handler === undefined) throw notFound(params.name, namespace.name);
    const rows = await listEventExecutions(deps.db, { namespaceId: namespace.id, handlerId: handler.id, limit: query.limit });
    return { status: 200, body: { items: rows.map(toEventExecutionView) } };
  },
});

export const EVENT_HANDLER_ROUTES = [putEventHandlerRoute, listEventHandlersRoute, getEventHandlerRoute, deleteEventHandlerRoute, listEventExecutionsRoute];
