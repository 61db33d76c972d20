import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import {
  deleteEnvironmentVariable,
  getEnvironmentVariable,
  listEnvironmentVariables,
  putEnvironmentVariable,
  VariableDescriptionSchema,
  VariableNameSchema,
  VariableValueSchema,
} from "../../secrets/environment-variables";
import type { EnvironmentVariable } from "../../secrets/environment-variables";
import { defineRoute } from "../define-route";
import { HttpProblem } from "../problem";
import { iso } from "../schemas";

const tags = ["Variables"];

const VariableSchema = z
  .object({ name: z.string(), value: z.string(), description: z.string().nullable(), createdAt: z.string(), updatedAt: z.string(), updatedBy: z.string().nullable() })
  .meta({ description: "An environment variable: plain configuration task input reads as ${workflow.env.NAME} when the task is dispatched." });

function toDto(v: EnvironmentVariable): z.input<typeof VariableSchema> {
  return { name: v.name, value: v.value, description: v.description, createdAt: iso(v.createdAt), updatedAt: iso(v.updatedAt), updatedBy: v.updatedBy };
}

const Params = z.object({ name: VariableNameSchema });

export const putVariableRoute = defineRoute({
  method: "PUT",
  path: "/ns/{ns}/variables/{name}",
  auth: "edit",
  operationId: "putVariable",
  summary: "Create or replace an environment variable",
  tags,
  params: Params,
  body: z.strictObject({ value: VariableValueSchema, description: VariableDescriptionSchema.nullable().optional() }),
  responses: { 200: VariableSchema, 201: VariableSchema },
  handler: async ({ deps, principal, namespace, params, body }) => {
    const { variable, created } = await putEnvironmentVariable(deps.db, {
      namespaceId: namespace.id,
      name: params.name,
      value: body.value,
      description: body.description === undefined ? undefined : body.description || null,
      actor: actorOfPrincipal(principal),
      updatedBy: createdByOfPrincipal(principal),
    });
    return { status: created ? 201 : 200, body: toDto(variable) };
  },
});

export const listVariablesRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/variables",
  auth: "read",
  operationId: "listVariables",
  summary: "List the namespace's environment variables with their values",
  tags,
  responses: { 200: z.object({ items: z.array(VariableSchema) }) },
  handler: async ({ deps, namespace }) => ({ status: 200, body: { items: (await listEnvironmentVariables(deps.db, namespace.id)).map(toDto) } }),
});

export const getVariableRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/variables/{name}",
  auth: "read",
  operationId: "getVariable",
  summary: "One environment variable",
  tags,
  params: Params,
  responses: { 200: VariableSchema },
  handler: async ({ deps, namespace, params }) => {
    const variable = await getEnvironmentVariable(deps.db, namespace.id, params.name);
    if (variable === undefined) throw new HttpProblem("not-found", `No variable "${params.name}" in namespace ${namespace.name}`);
    return { status: 200, body: toDto(variable) };
  },
});

export const deleteVariableRoute = defineRoute({
  method: "DELETE",
  path: "/ns/{ns}/variables/{name}",
  auth: "edit",
  operationId: "deleteVariable",
  summary: "Delete an environment variable: tasks dispatched from then on that read it fail, saying which",
  tags,
  params: Params,
  responses: { 200: z.object({ deleted: z.literal(true) }) },
  handler: async ({ deps, principal, namespace, params }) => {
    if (!(await deleteEnvironmentVariable(deps.db, { namespaceId: namespace.id, name: params.name, actor: actorOfPrincipal(principal) }))) {
      throw new HttpProblem("not-found", `No variable "${params.name}" in namespace ${namespace.name}`);
    }
    return { status: 200, body: { deleted: true as const } };
  },
});

export const VARIABLE_ROUTES = [putVariableRoute, listVariablesRoute, getVariableRoute, deleteVariableRoute];
