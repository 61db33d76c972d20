import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { NameSchema } from "@/engine";
import { createdByOfPrincipal } from "../../auth/api-keys";
import { startExecution } from "../../executions/start-execution";
import { namespaceProcedure, router } from "../init";
import { InputProblemsError } from "../problem-errors";

/**
 * Starting a run from the console (the editor's Run dialog). Reading runs and
 * acting on them is the `executions` router's. Thin: the work is
 * startExecution's; the REST routes (server/rest/routes/runs.ts) call it too.
 */

const runStartInput = z.object({
  name: NameSchema,
  /** Omitted: the latest unarchived version. */
  version: z.number().int().min(1).optional(),
  input: z.record(z.string(), z.unknown()).default({}),
  correlationId: z.string().trim().min(1).max(255).optional(),
});

export const runsRouter = router({
  /**
   * Starts a run and returns its id. Writes rows and queues the first
   * evaluation; nothing is evaluated here (DESIGN.md invariant 1). An input
   * its workflow's inputSchema refuses is a BAD_REQUEST whose cause — over
   * HTTP `error.data.inputProblems` — lists each problem with its path.
   */
  start: namespaceProcedure("operate")
    .input(runStartInput)
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const result = await startExecution(
        { db: ctx.db, blobs: ctx.blobs },
        {
          namespaceId: ctx.namespaceId,
          name: input.name,
          version: input.version,
          input: input.input,
          correlationId: input.correlationId ?? null,
          createdBy: createdByOfPrincipal(ctx.principal),
        },
      );
      if (result.ok) return { id: result.workflowId };
      switch (result.reason) {
        case "not-found":
          throw new TRPCError({ code: "NOT_FOUND", message: result.message });
        case "invalid-input": {
          const cause = new InputProblemsError(result.problems);
          throw new TRPCError({ code: "BAD_REQUEST", message: cause.message, cause });
        }
        case "conflict":
          // Only an idempotency key conflicts, and this procedure sends none.
          throw new TRPCError({ code: "CONFLICT", message: result.message });
      }
    }),
});
