import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { MAX_PASSWORD_LENGTH } from "../../auth/password-policy";
import { clearedSessionCookie, createSession, revokeSessionById, sessionCookie } from "../../auth/sessions";
import { setupOwner } from "../../auth/setup-owner";
import { signIn } from "../../auth/sign-in";
import { anyUserExists, findUserById } from "../../store/users";
import type { User } from "../../store/users";
import { withIdentityErrors } from "../identity-errors";
import { protectedProcedure, publicProcedure, router } from "../init";
import type { TrpcContext } from "../init";

/** A user as the browser sees them. */
export interface SignedInUser {
  id: string;
  email: string;
  displayName: string | null;
  isOwner: boolean;
}

function toSignedInUser(user: User): SignedInUser {
  return { id: user.id, email: user.email, displayName: user.displayName, isOwner: user.isOwner };
}

const email = z.string().trim().min(1, "Enter your email address.").max(254);

export const setupOwnerInput = z.object({
  email,
  // Strength is judged by the service (password-policy.ts), with a message the form can show.
  password: z.string().max(MAX_PASSWORD_LENGTH),
  displayName: z.string().trim().max(200).optional(),
});

export const signInInput = z.object({
  email,
  // Longer than any password we let anyone set, yet bounded: scrypt of a
  // megabyte is a cheap way to make the server work.
  password: z.string().min(1, "Enter your password.").max(1024),
});

async function startSession(ctx: TrpcContext, userId: string): Promise<void> {
  const session = await createSession(ctx.db, { userId, userAgent: ctx.request.userAgent, ipAddress: ctx.request.ipAddress });
  ctx.resHeaders.append("set-cookie", sessionCookie(session.token, session.expiresAt, { secure: ctx.request.secure }));
}

export const authRouter = router({
  // Public on purpose: the sign-in and setup pages ask it before anyone is
  // signed in — "is this a fresh install?" and "am I signed in?".
  status: publicProcedure.query(async ({ ctx }): Promise<{ setupRequired: boolean; user: SignedInUser | null }> => {
    const setupRequired = !(await anyUserExists(ctx.db));
    if (ctx.principal?.kind !== "user") return { setupRequired, user: null };
    const user = await findUserById(ctx.db, ctx.principal.userId);
    return { setupRequired, user: user ? toSignedInUser(user) : null };
  }),

  // Public on purpose: a fresh install has nobody to sign in as. The service
  // refuses (CONFLICT) as soon as any user exists, so this opens exactly once.
  setupOwner: publicProcedure.input(setupOwnerInput).mutation(async ({ ctx, input }) => {
    const user = await withIdentityErrors(() =>
      setupOwner(ctx.db, { ...input, displayName: input.displayName || null, ipAddress: ctx.request.ipAddress, via: "setup page" }),
    );
    await startSession(ctx, user.id);
    return toSignedInUser(user);
  }),

  // Public on purpose: it is how a caller becomes authenticated.
  signIn: publicProcedure.input(signInInput).mutation(async ({ ctx, input }) => {
    const result = await signIn(ctx.db, { ...input, userAgent: ctx.request.userAgent, ipAddress: ctx.request.ipAddress });
    if (result.ok) {
      ctx.resHeaders.append("set-cookie", sessionCookie(result.token, result.expiresAt, { secure: ctx.request.secure }));
      return toSignedInUser(result.user);
    }
    switch (result.reason) {
      case "invalid-credentials":
        throw new TRPCError({ code: "UNAUTHORIZED", message: "Wrong email or password." });
      case "throttled":
        ctx.resHeaders.set("retry-after", String(result.retryAfterSeconds));
        throw new TRPCError({
          code: "TOO_MANY_REQUESTS",
          message: `Too many failed sign-ins for this email: try again in ${result.retryAfterSeconds} seconds.`,
        });
      case "disabled":
        throw new TRPCError({ code: "FORBIDDEN", message: "This account is disabled: ask an owner to enable it." });
    }
  }),

  signOut: protectedProcedure.mutation(async ({ ctx }) => {
    if (ctx.principal.kind === "user") await revokeSessionById(ctx.db, ctx.principal.sessionId);
    ctx.resHeaders.append("set-cookie", clearedSessionCookie());
    return { signedOut: true };
  }),
});
