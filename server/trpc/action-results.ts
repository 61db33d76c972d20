import { TRPCError } from "@trpc/server";
import type { ActionRefusal, WorkflowActionDeps } from "../executions/actions/action-support";
import type { TrpcContext } from "./init";
import { FieldErrorsError } from "./problem-errors";

/** What the workflow actions and the human-task service need from a tRPC request's context. */
export function actionDeps(ctx: TrpcContext): WorkflowActionDeps {
  return { db: ctx.db, blobs: ctx.blobs };
}

/**
 * A human-task refusal as a tRPC error, per the contract: field errors are a
 * BAD_REQUEST whose cause carries them (the errorFormatter copies them into
 * `error.data.fieldErrors`); not eligible / self-approval is FORBIDDEN; closed,
 * claimed by someone else or already submitted is CONFLICT; an unknown id —
 * or another namespace's — is NOT_FOUND.
 */
export function humanTaskError(refusal: ActionRefusal & { fieldErrors?: { path: string; message: string }[] }): TRPCError {
  switch (refusal.code) {
    case "invalid-data":
      return new TRPCError({ code: "BAD_REQUEST", message: refusal.message, cause: new FieldErrorsError(refusal.message, refusal.fieldErrors ?? []) });
    case "invalid-input":
      return new TRPCError({ code: "BAD_REQUEST", message: refusal.message });
    case "forbidden":
      return new TRPCError({ code: "FORBIDDEN", message: refusal.message });
    case "not-found":
    case "task-not-found":
      return new TRPCError({ code: "NOT_FOUND", message: refusal.message });
    default:
      return new TRPCError({ code: "CONFLICT", message: refusal.message });
  }
}
