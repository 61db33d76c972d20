import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { removeStatusListener, saveStatusListener, STATUS_LISTENER_NAME_PATTERN, StatusListenerSchema } from "../../events/status-listeners";
import { getStatusListener, listStatusListeners } from "../../store/status-listeners";
import type { StatusListenerRow } from "../../store/status-listeners";
import { defineRoute } from "../define-route";
import { HttpProblem, jsonPointer, validationProblem } from "../problem";
import { iso } from "../schemas";

const tags = ["Status listeners"];

const StatusListenerDtoSchema = z
  .object({
    name: z.string(),
    workflowName: z.string().nullable(),
    statuses: z.array(z.string()),
    url: z.string(),
    secretName: z.string().nullable(),
    enabled: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  ;

function toDto(row: StatusListenerRow): z.input<typeof StatusListenerDtoSchema> {
  return { name: row.name, workflowName: row.workflowName, statuses: row.statuses, url: row.url, secretName: row.secretName, enabled: row.enabled, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

const Params = z.object({ name: z.string().regex(STATUS_LISTENER_NAME_PATTERN, "must be letters, digits, _ . or - (up to 200)") });
const notFound = (name: string, namespace: string) => new HttpProblem("not-found", `No status listener "${name}" in namespace ${namespace}`);

export const putStatusListenerRoute = defineRoute({
  method: "PUT",
  path: "/ns/{ns}/status-listeners/{name}",
  auth: "edit",
  operationId: "putStatusListener",
  summary: "Create or replace a status listener: a URL called on each status change of the namespace's (or one workflow's) runs",
  tags,
  params: Params,
  body: StatusListenerSchema,
  responses: { 200: StatusListenerDtoSchema, 201: StatusListenerDtoSchema },
  handler: async ({ deps, principal, namespace, params, body }) => {
    const saved = await saveStatusListener(deps.db, { namespaceId: namespace.id, name: params.name, config: body, actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
    if (!saved.ok) throw validationProblem(saved.problems.map((p) => ({ pointer: jsonPointer(["body", ...p.path]), message: p.message })));
    return { status: saved.created ? 201 : 200, body: toDto(saved.row) };
  },
});

export const listStatusListenersRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/status-listeners",
  auth: "read",
  operationId: "listStatusListeners",
  summary: "List status listeners",
  tags,
  responses: { 200: z.object({ items: z.array(StatusListenerDtoSchema) }) },
  handler: async ({ deps, namespace }) => ({ status: 200, body: { items: (await listStatusListeners(deps.db, namespace.id)).map(toDto) } }),
});

export const getStatusListenerRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/status-listeners/{name}",
  auth: "read",
  operationId: "getStatusListener",
  summary: "Get a status listener",
  tags,
  params: Params,
  responses: { 200: StatusListenerDtoSchema },
  handler: async ({ deps, namespace, params }) => {
    const row = await getStatusListener(deps.db, namespace.id, params.name);
    if (row === undefined) throw notFound(params.name, namespace.name);
    return { status: 200, body: toDto(row) };
  },
});

export const deleteStatusListenerRoute = defineRoute({
  method: "DELETE",
  path: "/ns/{ns}/status-listeners/{name}",
  auth: "edit",
  operationId: "deleteStatusListener",
  summary: "Delete a status listener; calls not yet made are dropped",
  tags,
  params: Params,
  responses: { 200: StatusListenerDtoSchema },
  handler: async ({ deps, principal, namespace, params }) => {
    const row = await removeStatusListener(deps.db, { namespaceId: namespace.id, name: params.name, actor: actorOfPrincipal(principal) });
    if (row === undefined) throw notFound(params.name, namespace.name);
    return { status: 200, body: toDto(row) };
  },
});

export const STATUS_LISTENER_ROUTES = [putStatusListenerRoute, listStatusListenersRoute, getStatusListenerRoute, deleteStatusListenerRoute];
