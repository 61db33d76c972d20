import { initTRPC, TRPCError } from "@trpc/server";
import { z } from "zod";
import type { Db } from "@/db/pool";
import { authorizeNamespace } from "../auth/authorize";
import type { Permission, Principal } from "../auth/principal";
import type { BlobStore } from "../lib/blob-store";
import type { Config } from "../lib/config";
import { findUnstorableValue } from "../lib/unstorable-input";
import { DefinitionProblemsError, FieldErrorsError, fieldIssues, InputProblemsError } from "./problem-errors";

/** Facts about the HTTP request behind a call, for sessions, the audit log and the CSRF check. */
export interface RequestFacts {
  ipAddress: string | null;
  userAgent: string | null;
  /** Came over HTTPS (directly or via a proxy's X-Forwarded-Proto): the session cookie gets `Secure`. */
  secure: boolean;
  /** checkSameOrigin's verdict; mutations refuse to run on a failed one. */
  sameOrigin: { ok: true } | { ok: false; message: string };
}

/** What every procedure sees. Built per request by `createTrpcContext` (context.ts). */
export interface TrpcContext {
  db: Db;
  config: Config;
  /** Payloads over 256 KB: a run's start offloads its input here, reading a run resolves it. */
  blobs: BlobStore;
  /** Who is calling, or null for nobody: only `publicProcedure`s serve null. */
  principal: Principal | null;
  /** Headers added to the response: sign-in and sign-out set the session cookie here. */
  resHeaders: Headers;
  request: RequestFacts;
}

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error }) {
    // Input errors carry zod's per-field messages so forms can show them next to the field.
    const zodError = error.code === "BAD_REQUEST" && error.cause instanceof z.ZodError ? z.flattenError(error.cause) : null;
    // A refused definition or run input carries every problem, for the editor to mark per node and field.
    const problems = error.code === "BAD_REQUEST" && error.cause instanceof DefinitionProblemsError ? error.cause.problems : null;
    const inputProblems = error.code === "BAD_REQUEST" && error.cause instanceof InputProblemsError ? error.cause.problems : null;
    // A human-task form refused by its schema: JSON pointers into the data, for the form to show on each field.
    const fieldErrors = error.code === "BAD_REQUEST" && error.cause instanceof FieldErrorsError ? error.cause.fieldErrors : null;
    // Never a stack trace, and never the text of an unexpected error (a SQL
    // message can name tables and values): the endpoint logs those instead.
    const message = error.code === "INTERNAL_SERVER_ERROR" ? "The request failed on the server; it has been logged." : shape.message;
    return { ...shape, message, data: { ...shape.data, stack: undefined, zodError, problems, inputProblems, fieldErrors } };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Every procedure starts here. A mutation whose request failed the same-origin
 * check never runs: the session cookie rides along on a forged cross-site
 * request, so the cookie alone cannot prove the user meant it.
 */
const baseProcedure = t.procedure.use(async ({ ctx, type, next, getRawInput }) => {
  if (type === "mutation" && !ctx.request.sameOrigin.ok) {
    throw new TRPCError({ code: "FORBIDDEN", message: ctx.request.sameOrigin.message });
  }
  // Input no row can hold (a NUL, a lone surrogate, nesting past the limit) is
  // refused as a field error before any schema or handler sees it: inside, it
  // reached Postgres and came back as a 500 (server/lib/unstorable-input.ts).
  const unstorable = findUnstorableValue(await getRawInput());
  if (unstorable !== null) {
    const where = unstorable.path.length === 0 ? "The input" : "The value";
    const message = `${where} ${unstorable.message}`;
    throw new TRPCError({ code: "BAD_REQUEST", message, cause: fieldIssues([{ path: unstorable.path, message }]) });
  }
  return next();
});

/**
 * Deliberately public: anyone may call it. Every use says why at the call
 * site, and server/trpc/default-deny.int.test.ts lists each one — a new public
 * procedure fails that test until it is added to its allow-list on purpose.
 */
export const publicProcedure = baseProcedure;

/** Any authenticated caller: a signed-in user or an API key. Anonymous calls get UNAUTHORIZED. */
export const protectedProcedure = baseProcedure.use(({ ctx, next }) => {
  if (!ctx.principal) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first." });
  return next({ ctx: { principal: ctx.principal } });
});

/** The namespace name every namespace-scoped input carries. */
export const namespaceInput = z.object({ namespace: z.string().trim().min(1).max(63) });

/**
 * A procedure inside one namespace: the input must carry `namespace` (its
 * name), and the caller must hold `permission` there (authorize.ts). The
 * procedure gets `ctx.namespaceId` and `ctx.role`, and must scope every
 * repository call by that id. No access at all is NOT_FOUND, exactly like a
 * namespace that does not exist; some access but not enough is FORBIDDEN.
 */
export function namespaceProcedure(permission: Permission) {
  return protectedProcedure.input(namespaceInput).use(async ({ ctx, input, next }) => {
    const verdict = await authorizeNamespace(ctx.db, ctx.principal, input.namespace, permission);
    if (!verdict.ok) throw new TRPCError({ code: verdict.status === 404 ? "NOT_FOUND" : "FORBIDDEN", message: verdict.message });
    return next({ ctx: { namespaceId: verdict.namespaceId, role: verdict.role } });
  });
}

/** The instance owner only (user management, creating namespaces). */
export const ownerProcedure = protectedProcedure.use(({ ctx, next }) => {
  if (ctx.principal.kind !== "user" || !ctx.principal.isOwner) {
    throw new TRPCError({ code: "FORBIDDEN", message: "Only an owner can do this." });
  }
  return next({ ctx: { principal: ctx.principal } });
});
