import { z } from "zod";
import { createUser } from "../../auth/create-user";
import { MAX_PASSWORD_LENGTH } from "../../auth/password-policy";
import { setUserDisabled } from "../../auth/set-user-disabled";
import { listUsers } from "../../store/users";
import type { User } from "../../store/users";
import { withIdentityErrors } from "../identity-errors";
import { ownerProcedure, router } from "../init";

// Dates as ISO strings: no transformer is configured, so the wire type must say string.
function toUserOutput(user: User) {
  return {
    id: user.id,
    email: user.email,
    displayName: user.displayName,
    isOwner: user.isOwner,
    disabled: user.disabledAt !== null,
    lastLoginAt: user.lastLoginAt?.toISOString() ?? null,
    createdAt: user.createdAt.toISOString(),
  };
}
export type UserOutput = ReturnType<typeof toUserOutput>;

export const createUserInput = z.object({
  email: z.string().trim().min(1).max(254),
  password: z.string().max(MAX_PASSWORD_LENGTH),
  displayName: z.string().trim().max(200).optional(),
  isOwner: z.boolean().default(false),
});

export const usersRouter = router({
  list: ownerProcedure.query(async ({ ctx }) => (await listUsers(ctx.db)).map(toUserOutput)),

  create: ownerProcedure.input(createUserInput).mutation(async ({ ctx, input }) =>
    toUserOutput(await withIdentityErrors(() => createUser(ctx.db, ctx.principal, { ...input, displayName: input.displayName || null }))),
  ),

  setDisabled: ownerProcedure
    .input(z.object({ userId: z.guid(), disabled: z.boolean() }))
    .mutation(async ({ ctx, input }) => toUserOutput(await withIdentityErrors(() => setUserDisabled(ctx.db, ctx.principal, input)))),
});
