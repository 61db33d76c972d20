import { z } from "zod";
import { addGroupMember, createGroup, deleteGroup, removeGroupMember, setGroupRoles } from "../../auth/manage-groups";
import { NAMESPACE_ROLES } from "../../auth/principal";
import { listGroups } from "../../store/groups";
import { withIdentityErrors } from "../identity-errors";
import { namespaceProcedure, router } from "../init";

const roles = z.array(z.enum(NAMESPACE_ROLES)).max(NAMESPACE_ROLES.length * 2);
const groupId = z.guid();

/** Groups of one namespace; managing them (and seeing who is in them) takes admin there. */
export const groupsRouter = router({
  list: namespaceProcedure("admin").query(async ({ ctx }) =>
    (await listGroups(ctx.db, ctx.namespaceId)).map((g) => ({ ...g, createdAt: g.createdAt.toISOString() })),
  ),

  create: namespaceProcedure("admin")
    .input(z.object({ name: z.string().trim().min(1).max(100), description: z.string().trim().max(500).optional(), roles }))
    .mutation(({ ctx, input }) =>
      withIdentityErrors(() =>
        createGroup(ctx.db, ctx.principal, { namespaceId: ctx.namespaceId, name: input.name, description: input.description || null, roles: input.roles }),
      ),
    ),

  delete: namespaceProcedure("admin")
    .input(z.object({ groupId }))
    .mutation(async ({ ctx, input }) => {
      await withIdentityErrors(() => deleteGroup(ctx.db, ctx.principal, { namespaceId: ctx.namespaceId, groupId: input.groupId }));
      return { deleted: true };
    }),

  setRoles: namespaceProcedure("admin")
    .input(z.object({ groupId, roles }))
    .mutation(async ({ ctx, input }) => {
      await withIdentityErrors(() => setGroupRoles(ctx.db, ctx.principal, { namespaceId: ctx.namespaceId, groupId: input.groupId, roles: input.roles }));
      return { updated: true };
    }),

  addMember: namespaceProcedure("admin")
    .input(z.object({ groupId, email: z.string().trim().min(1).max(254) }))
    .mutation(({ ctx, input }) =>
      withIdentityErrors(() => addGroupMember(ctx.db, ctx.principal, { namespaceId: ctx.namespaceId, groupId: input.groupId, email: input.email })),
    ),

  removeMember: namespaceProcedure("admin")
    .input(z.object({ groupId, userId: z.guid() }))
    .mutation(async ({ ctx, input }) => {
      await withIdentityErrors(() =>
        removeGroupMember(ctx.db, ctx.principal, { namespaceId: ctx.namespaceId, groupId: input.groupId, userId: input.userId }),
      );
      return { removed: true };
    }),
});
