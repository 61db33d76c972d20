import { z } from "zod";
import {
  actorOfPrincipal,
  createApiKey,
  createServiceAccount,
  createdByOfPrincipal,
  disableServiceAccount,
  listApiKeys,
  listServiceAccounts,
  revokeApiKey,
  rotateApiKey,
} from "../../auth/api-keys";
import { API_KEY_SCOPES } from "../../auth/principal";
import type { Principal } from "../../auth/principal";
import { withIdentityErrors } from "../identity-errors";
import { namespaceProcedure, router } from "../init";

/**
 * Settings → API keys. Every procedure needs the namespace's `admin`
 * permission: a key is a credential for the whole namespace, so minting,
 * listing or revoking one is an admin act even for a worker-scoped key.
 * namespaceProcedure supplies the `namespace` input field and resolves it to
 * ctx.namespaceId; the inputs below add only their own fields.
 */

const id = z.guid("must be a UUID");
const name = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");

// No transformer is configured, so a Date would reach the browser as a string
// while its type still said Date. The output schemas make the wire type honest.
const isoDate = z.date().transform((d) => d.toISOString());

const createApiKeyInput = z.object({
  name,
  scopes: z.array(z.enum(API_KEY_SCOPES)).min(1, "choose at least one scope"),
  /** An instant with an offset; omitted or null: the key never expires. */
  expiresAt: z.iso.datetime({ offset: true }).nullish(),
  /** The service account the key acts for; omitted: the key acts for the caller. */
  serviceAccountId: id.nullish(),
});

const apiKeyOutput = z.object({
  id: z.string(),
  prefix: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(API_KEY_SCOPES)),
  owner: z
    .discriminatedUnion("type", [
      z.object({ type: z.literal("user"), id: z.string(), email: z.string() }),
      z.object({ type: z.literal("serviceAccount"), id: z.string(), name: z.string() }),
    ])
    .nullable(),
  status: z.enum(["active", "expired", "revoked", "ownerDisabled"]),
  createdAt: isoDate,
  createdBy: z.string().nullable(),
  lastUsedAt: isoDate.nullable(),
  expiresAt: isoDate.nullable(),
  revokedAt: isoDate.nullable(),
});

/** The whole key appears in exactly these two responses, once each, and nowhere else. */
const issuedKeyOutput = z.object({ id: z.string(), prefix: z.string(), key: z.string() });

const serviceAccountOutput = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  disabledAt: isoDate.nullable(),
  createdAt: isoDate,
  createdBy: z.string().nullable(),
  activeKeyCount: z.number().int(),
});

/** Whom a key minted by this caller acts for, when no service account is named: the caller, or the key's own owner. */
function defaultOwner(principal: Principal): { userId: string | null; serviceAccountId: string | null } {
  return principal.kind === "user"
    ? { userId: principal.userId, serviceAccountId: null }
    : { userId: principal.userId, serviceAccountId: principal.serviceAccountId };
}

export const apiKeysRouter = router({
  list: namespaceProcedure("admin")
    .output(z.array(apiKeyOutput))
    .query(({ ctx }) => listApiKeys(ctx.db, { namespaceId: ctx.namespaceId })),

  create: namespaceProcedure("admin")
    .input(createApiKeyInput)
    .output(issuedKeyOutput)
    .mutation(({ ctx, input }) =>
      withIdentityErrors(() =>
        createApiKey(ctx.db, {
          namespaceId: ctx.namespaceId,
          name: input.name,
          scopes: input.scopes,
          ...(input.serviceAccountId ? { userId: null, serviceAccountId: input.serviceAccountId } : defaultOwner(ctx.principal)),
          expiresAt: input.expiresAt ? new Date(input.expiresAt) : null,
          createdBy: createdByOfPrincipal(ctx.principal),
          actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
        }),
      ),
    ),

  revoke: namespaceProcedure("admin")
    .input(z.object({ apiKeyId: id }))
    .output(z.object({ id: z.string(), prefix: z.string(), revokedAt: isoDate }))
    .mutation(({ ctx, input }) =>
      withIdentityErrors(() => revokeApiKey(ctx.db, { namespaceId: ctx.namespaceId, apiKeyId: input.apiKeyId, actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress) })),
    ),

  rotate: namespaceProcedure("admin")
    .input(z.object({ apiKeyId: id }))
    .output(issuedKeyOutput.extend({ replaced: z.object({ id: z.string(), prefix: z.string() }) }))
    .mutation(({ ctx, input }) =>
      withIdentityErrors(() =>
        rotateApiKey(ctx.db, {
          namespaceId: ctx.namespaceId,
          apiKeyId: input.apiKeyId,
          actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
          createdBy: createdByOfPrincipal(ctx.principal),
        }),
      ),
    ),

  serviceAccounts: router({
    list: namespaceProcedure("admin")
        .output(z.array(serviceAccountOutput))
      .query(({ ctx }) => listServiceAccounts(ctx.db, { namespaceId: ctx.namespaceId })),

    create: namespaceProcedure("admin")
      .input(z.object({ name, description: z.string().trim().max(500).nullish() }))
      .output(z.object({ id: z.string(), name: z.string() }))
      .mutation(({ ctx, input }) =>
        withIdentityErrors(async () => {
          const account = await createServiceAccount(ctx.db, {
            namespaceId: ctx.namespaceId,
            name: input.name,
            description: input.description ?? null,
            createdBy: createdByOfPrincipal(ctx.principal),
            actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
          });
          return { id: account.id, name: account.name };
        }),
      ),

    disable: namespaceProcedure("admin")
      .input(z.object({ serviceAccountId: id }))
      .output(z.object({ id: z.string(), disabledAt: isoDate.nullable() }))
      .mutation(({ ctx, input }) =>
        withIdentityErrors(async () => {
          const account = await disableServiceAccount(ctx.db, {
            namespaceId: ctx.namespaceId,
            serviceAccountId: input.serviceAccountId,
            actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
          });
          return { id: account.id, disabledAt: account.disabledAt };
        }),
      ),
  }),
});
