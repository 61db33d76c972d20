import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { deleteSecret, getSecretMetadata, listSecrets, putSecret, sealingKeysOf, SecretNameSchema, SecretValueSchema } from "../../secrets/secrets";
import { ConductorError, notFound, validationFailed, zodValidationErrors } from "../conductor-error";
import { defineConductorRoute } from "../define-conductor-route";

/**
 * Conductor's SecretResource (/api/secrets) as its clients call it: put a
 * value (the body, as text or as a JSON string), list names, ask whether one
 * exists, delete. Reading a value back is refused: node-flow's secrets are
 * write-only, used only where a task or trigger is dispatched.
 */

const Key = z.object({ key: SecretNameSchema });

/** The body as the value: a JSON string ("\"s3cr3t\"", what Orkes' clients send) is unquoted; anything else is taken as it is. */
function valueOf(text: string | undefined): string {
  const raw = text ?? "";
  let value = raw;
  if (raw.startsWith('"')) {
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (typeof parsed === "string") value = parsed;
    } catch {
      // Not JSON: the text itself is the value.
    }
  }
  const checked = SecretValueSchema.safeParse(value);
  if (!checked.success) throw validationFailed(zodValidationErrors(checked.error.issues, "body"));
  return checked.data;
}

export const putSecretRoute = defineConductorRoute({
  method: "PUT",
  path: "/secrets/{key}",
  auth: "admin",
  summary: "Create or replace a secret; the body is its value",
  params: Key,
  textBody: true,
  body: z.string().optional(),
  handler: async ({ deps, principal, namespaceId, params, body }) => {
    const keys = sealingKeysOf({ secret: deps.secret, previousSecrets: deps.previousSecrets ?? [] });
    await putSecret(deps.db, keys, { namespaceId, name: params.key, value: valueOf(body), actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
    return { status: 200, json: {} };
  },
});

export const getSecretRoute = defineConductorRoute({
  method: "GET",
  path: "/secrets/{key}",
  auth: "read",
  summary: "Refused: secret values are write-only (GET /secrets/{key}/exists says whether it exists)",
  params: Key,
  handler: async ({ deps, namespaceId, params }) => {
    if ((await getSecretMetadata(deps.db, namespaceId, params.key)) === undefined) throw notFound(`Secret ${params.key} not found`);
    throw new ConductorError(403, `Secret values are write-only in node-flow; ${params.key} is used where a task or trigger is dispatched, never read back`);
  },
});

export const secretExistsRoute = defineConductorRoute({
  method: "GET",
  path: "/secrets/{key}/exists",
  auth: "read",
  summary: "Whether a secret exists",
  params: Key,
  handler: async ({ deps, namespaceId, params }) => ({ status: 200, json: (await getSecretMetadata(deps.db, namespaceId, params.key)) !== undefined }),
});

export const deleteSecretRoute = defineConductorRoute({
  method: "DELETE",
  path: "/secrets/{key}",
  auth: "admin",
  summary: "Delete a secret",
  params: Key,
  handler: async ({ deps, principal, namespaceId, params }) => {
    if (!(await deleteSecret(deps.db, { namespaceId, name: params.key, actor: actorOfPrincipal(principal) }))) throw notFound(`Secret ${params.key} not found`);
    return { status: 200, json: {} };
  },
});

/** The names of the namespace's secrets; Orkes' clients ask with a POST, others with a GET. */
function listNamesRoute(method: "GET" | "POST") {
  return defineConductorRoute({
    method,
    path: "/secrets",
    auth: "read",
    summary: "The names of the namespace's secrets",
    handler: async ({ deps, namespaceId }) => ({ status: 200, json: (await listSecrets(deps.db, namespaceId)).map((s) => s.name) }),
  });
}
const listNames = listNamesRoute("GET");
const listNamesByPost = listNamesRoute("POST");

export const SECRET_ROUTES = [putSecretRoute, getSecretRoute, secretExistsRoute, deleteSecretRoute, listNames, listNamesByPost];
