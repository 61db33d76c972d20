import { z } from "zod";
import { createNamespace } from "../../auth/create-namespace";
import { removeNamespaceMember, setNamespaceMember } from "../../auth/manage-namespace-members";
import { NAMESPACE_ROLES, roleOfScopes } from "../../auth/principal";
import type { NamespaceRole } from "../../auth/principal";
import { listNamespaceMembers, listNamespacesOfUser } from "../../store/namespace-members";
import { findNamespaceById, listNamespaces } from "../../store/namespaces";
import { withIdentityErrors } from "../identity-errors";
import { namespaceProcedure, ownerProcedure, protectedProcedure, router } from "../init";

export interface NamespaceOutput {
  id: string;
  name: string;
  description: string | null;
  /** The caller's role there; null for an API key whose scopes amount to no role (worker only). */
  role: NamespaceRole | null;
}

const role = z.enum(NAMESPACE_ROLES);

export const namespacesRouter = router({
  /** The namespaces the caller can see, each with the caller's role: every one for an owner, the key's own for an API key. */
  list: protectedProcedure.query(async ({ ctx }): Promise<NamespaceOutput[]> => {
    const principal = ctx.principal;
    if (principal.kind === "apiKey") {
      const namespace = await findNamespaceById(ctx.db, principal.namespaceId);
      return namespace ? [{ id: namespace.id, name: namespace.name, description: namespace.description, role: roleOfScopes(principal.scopes) }] : [];
    }
    if (principal.isOwner) {
      return (await listNamespaces(ctx.db)).map((n) => ({ id: n.id, name: n.name, description: n.description, role: "admin" as const }));
    }
    return (await listNamespacesOfUser(ctx.db, principal.userId)).map((n) => ({
      id: n.namespaceId,
      name: n.name,
      description: n.description,
      role: n.role,
    }));
  }),

  create: ownerProcedure
    .input(z.object({ name: z.string().trim().min(1).max(63), description: z.string().trim().max(500).optional() }))
    .mutation(async ({ ctx, input }): Promise<NamespaceOutput> => {
      const namespace = await withIdentityErrors(() => createNamespace(ctx.db, ctx.principal, { name: input.name, description: input.description || null }));
      return { id: namespace.id, name: namespace.name, description: namespace.description, role: "admin" };
    }),

  members: router({
    list: namespaceProcedure("admin").query(async ({ ctx }) =>
      (await listNamespaceMembers(ctx.db, ctx.namespaceId)).map((m) => ({ ...m, createdAt: m.createdAt.toISOString() })),
    ),

    /** Adds the user with this email, or changes their role. */
    set: namespaceProcedure("admin")
      .input(z.object({ email: z.string().trim().min(1).max(254), role }))
      .mutation(({ ctx, input }) =>
        withIdentityErrors(() => setNamespaceMember(ctx.db, ctx.principal, { namespaceId: ctx.namespaceId, email: input.email, role: input.role })),
      ),

    remove: namespaceProcedure("admin")
      .input(z.object({ userId: z.guid() }))
      .mutation(async ({ ctx, input }) => {
        await withIdentityErrors(() => removeNamespaceMember(ctx.db, ctx.principal, { namespaceId: ctx.namespaceId, userId: input.userId }));
        return { removed: true };
      }),
  }),
});
