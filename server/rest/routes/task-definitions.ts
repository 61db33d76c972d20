import { z } from "zod";
import { NameSchema } from "../../../engine";
import { getTaskDefinition } from "../../store/task-definitions";
import { listTaskDefinitions } from "../../store/task-definitions";
import { upsertTaskDefinition } from "../../definitions/upsert-task-definition";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { defineRoute } from "../define-route";
import { HttpProblem } from "../problem";
import { CursorSchema, TaskDefinitionBodySchema, TaskDefinitionSchema, limitSchema, pageSchema, toTaskDefinitionDto } from "../schemas";

const tags = ["Task definitions"];

/**
 * A page's `nextCursor`: the last name, base64url (store/task-definitions.ts).
 * Anything else is refused here rather than decoded: base64url of garbage can
 * hold a NUL byte, and Postgres refused the query (a 500).
 */
const TaskDefinitionCursorSchema = CursorSchema.refine((cursor) => {
  const name = Buffer.from(cursor, "base64url").toString("utf8");
  return Buffer.from(name, "utf8").toString("base64url") === cursor && NameSchema.safeParse(name).success;
}, "is not a cursor this list handed out");

export const putTaskDefinitionRoute = defineRoute({
  method: "PUT",
  path: "/ns/{ns}/task-definitions/{name}",
  auth: "edit",
  operationId: "putTaskDefinition",
  summary: "Create or replace a task definition",
  description:
    "Replaces the whole definition (Conductor's TaskDef): a field left out takes its default rather than keeping its old value. The definition named like a queue configures that queue's gates (rate limit, concurrentExecLimit, semaphore).",
  tags,
  params: z.object({ name: NameSchema }),
  body: TaskDefinitionBodySchema,
  responses: { 200: TaskDefinitionSchema },
  handler: async ({ deps, principal, namespace, params, body }) => {
    const row = await upsertTaskDefinition(deps.db, {
      namespaceId: namespace.id,
      definition: { ...body, name: params.name },
      updatedBy: createdByOfPrincipal(principal),
      actor: actorOfPrincipal(principal),
    });
    return { status: 200, body: toTaskDefinitionDto(row) };
  },
});

export const getTaskDefinitionRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/task-definitions/{name}",
  auth: "read",
  operationId: "getTaskDefinition",
  summary: "Get a task definition",
  tags,
  params: z.object({ name: NameSchema }),
  responses: { 200: TaskDefinitionSchema },
  handler: async ({ deps, namespace, params }) => {
    const row = await getTaskDefinition(deps.db, namespace.id, params.name);
    if (row === undefined) throw new HttpProblem("not-found", `No task definition "${params.name}" in namespace ${namespace.name}`);
    return { status: 200, body: toTaskDefinitionDto(row) };
  },
});

export const listTaskDefinitionsRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/task-definitions",
  auth: "read",
  operationId: "listTaskDefinitions",
  summary: "List task definitions by name",
  tags,
  query: z.object({ limit: limitSchema(100, 1000), cursor: TaskDefinitionCursorSchema.optional() }),
  responses: { 200: pageSchema(TaskDefinitionSchema) },
  handler: async ({ deps, namespace, query }) => {
    const page = await listTaskDefinitions(deps.db, { namespaceId: namespace.id, limit: query.limit, cursor: query.cursor });
    return { status: 200, body: { items: page.items.map(toTaskDefinitionDto), nextCursor: page.nextCursor } };
  },
});
