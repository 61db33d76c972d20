import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { validateDefinition } from "../../../engine/definition";
import type { WorkflowDefinition } from "../../../engine/definition";
import { testStep } from "../../definitions/test-step";
import { createJqTransform } from "../../sandbox/jq-transform";
import type { JqTransform } from "../../sandbox/jq-transform";
import { createQuickJsScriptEvaluator } from "../../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../../sandbox/quickjs-script-evaluator";
import { namespaceProcedure, router } from "../init";
import { DefinitionProblemsError } from "../problem-errors";

const JsonObject = z.record(z.string(), z.unknown());

/** One pair of sandboxes per web process, started by the first step test (most web processes never need them). */
let sandbox: Promise<{ scripts: QuickJsScriptEvaluator; jq: JqTransform }> | undefined;
function webSandbox() {
  sandbox ??= Promise.all([createQuickJsScriptEvaluator(), createJqTransform()]).then(([scripts, jq]) => ({ scripts, jq }));
  return sandbox;
}

/**
 * The editor's "Test step": one node of the draft on screen, run on sample
 * data (server/definitions/test-step.ts). Editors only — a test can make an
 * HTTP call, which saving and running the workflow could do as well.
 */
export const stepTestsRouter = router({
  run: namespaceProcedure("edit")
    .input(
      z.object({
        definition: z.unknown(),
        ref: z.string().min(1).max(128),
        sample: z.object({ input: JsonObject.optional(), variables: JsonObject.optional(), outputs: z.record(z.string(), JsonObject).optional() }).default({}),
        mockOutput: JsonObject.optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const verdict = validateDefinition(input.definition);
      // The draft need not be finished, but the node under test and what it reads must make sense.
      if (!verdict.ok) {
        const own = verdict.problems.filter((p) => p.ref === input.ref || (p.ref === undefined && p.refs === undefined));
        if (own.length > 0) {
          const cause = new DefinitionProblemsError(own);
          throw new TRPCError({ code: "BAD_REQUEST", message: `The step ${JSON.stringify(input.ref)} has problems to fix first: ${own[0]!.message}`, cause });
        }
      }
      const result = await testStep(
        { sandbox: webSandbox, http: { allowPrivateNetworks: ctx.config.httpAllowPrivateNetworks } },
        { definition: input.definition as WorkflowDefinition, ref: input.ref, sample: input.sample, ...(input.mockOutput === undefined ? {} : { mockOutput: input.mockOutput }) },
      );
      if (!result.ok) throw new TRPCError({ code: "BAD_REQUEST", message: result.reason });
      return result;
    }),
});
