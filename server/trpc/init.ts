import { initTRPC } from "@trpc/server";
import { z } from "zod";
import type { Db } from "@/db/pool";
import type { Config } from "../config";

/** What every procedure sees. Built per request from the process-wide web context. */
export interface TrpcContext {
  db: Db;
  config: Config;
}

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error }) {
    // Input errors carry zod's per-field messages so forms can show them next to the field.
    const zodError = error.code === "BAD_REQUEST" && error.cause instanceof z.ZodError ? z.flattenError(error.cause) : null;
    return { ...shape, data: { ...shape.data, zodError } };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * No sessions exist yet, so every procedure is public. The tRPC endpoint
 * serves the UI only; when sign-in lands, `protectedProcedure` joins this file
 * and these move over.
 */
export const publicProcedure = t.procedure;
