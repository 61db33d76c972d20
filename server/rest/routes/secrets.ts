import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { deleteSecret, getSecretMetadata, listSecrets, putSecret, SecretNameSchema, SecretValueSchema } from "../../secrets/secrets";
import type { SecretMetadata } from "../../secrets/secrets";
import { defineRoute } from "../define-route";
import { HttpProblem } from "../problem";
import { iso } from "../schemas";

const tags = ["Secrets"];

const SecretSchema = z
  .object({ name: z.string(), description: z.string().nullable(), createdAt: z.string(), updatedAt: z.string(), updatedBy: z.string().nullable() })
  .meta({ description: "A secret's name and history. Its value is write-only: no route returns it." });

function toDto(s: SecretMetadata): z.input<typeof SecretSchema> {
  return { name: s.name, description: s.description, createdAt: iso(s.createdAt), updatedAt: iso(s.updatedAt), updatedBy: s.updatedBy };
}

const Params = z.object({ name: SecretNameSchema });

export const putSecretRoute = defineRoute({
  method: "PUT",
  path: "/ns/{ns}/secrets/{name}",
  auth: "admin",
  operationId: "putSecret",
  summary: "Create or replace a secret's value (write-only: it is never returned)",
  tags,
  params: Params,
  body: z.strictObject({ value: SecretValueSchema, description: z.string().max(1000).nullable().optional() }),
  responses: { 200: SecretSchema, 201: SecretSchema },
  handler: async ({ deps, principal, namespace, params, body }) => {
    const { secret, created } = await putSecret(deps.db, deps.sealingKeys, { namespaceId: namespace.id, name: params.name, value: body.value, description: body.description, actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
    return { status: created ? 201 : 200, body: toDto(secret) };
  },
});

export const listSecretsRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/secrets",
  auth: "read",
  operationId: "listSecrets",
  summary: "List the namespace's secrets by name (never their values)",
  tags,
  responses: { 200: z.object({ items: z.array(SecretSchema) }) },
  handler: async ({ deps, namespace }) => ({ status: 200, body: { items: (await listSecrets(deps.db, namespace.id)).map(toDto) } }),
});

export const getSecretRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/secrets/{name}",
  auth: "read",
  operationId: "getSecret",
  summary: "Whether a secret exists, and when it changed (never its value)",
  tags,
  params: Params,
  responses: { 200: SecretSchema },
  handler: async ({ deps, namespace, params }) => {
    const secret = await getSecretMetadata(deps.db, namespace.id, params.name);
    if (secret === undefined) throw new HttpProblem("not-found", `No secret "${params.name}" in namespace ${namespace.name}`);
    return { status: 200, body: toDto(secret) };
  },
});

export const deleteSecretRoute = defineRoute({
  method: "DELETE",
  path: "/ns/{ns}/secrets/{name}",
  auth: "admin",
  operationId: "deleteSecret",
  summary: "Delete a secret: what names it (a webhook, a listener) is refused from then on",
  tags,
  params: Params,
  responses: { 200: z.object({ deleted: z.literal(true) }) },
  handler: async ({ deps, principal, namespace, params }) => {
    if (!(await deleteSecret(deps.db, { namespaceId: namespace.id, name: params.name, actor: actorOfPrincipal(principal) }))) {
      throw new HttpProblem("not-found", `No secret "${params.name}" in namespace ${namespace.name}`);
    }
    return { status: 200, body: { deleted: true as const } };
  },
});

export const SECRET_ROUTES = [putSecretRoute, listSecretsRoute, getSecretRoute, deleteSecretRoute];
