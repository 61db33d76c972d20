import { TRPCError } from "@trpc/server";
import { IdentityError } from "../auth/identity-error";

const CODES = {
  "invalid-input": "BAD_REQUEST",
  "not-found": "NOT_FOUND",
  conflict: "CONFLICT",
  forbidden: "FORBIDDEN",
} as const;

/** Runs an identity service call, turning its IdentityError into the matching tRPC error (message kept: it is written for the form). */
export async function withIdentityErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof IdentityError) throw new TRPCError({ code: CODES[error.code], message: error.message });
    throw error;
  }
}
