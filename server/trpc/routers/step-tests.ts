import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { validateDefinition } from "../../../engine/definition";
import type { WorkflowDefinition } from "../../../engine/definition";
import { testStep } from "../../definitions/test-step";
import { testWorkflow } from "../../definitions/test-workflow";
import { PayloadResolutionError, resolvePayload } from "../../lib/payload-offload";
import { latestCompletedTaskOutput } from "../../store/latest-task-output";
import { createJqTransform } from "../../sandbox/jq-transform";
import type { JqTransform } from "../../sandbox/jq-transform";
import { sealingKeysOf, secretLookup } from "../../secrets/secrets";
import { createQuickJsScriptEvaluator } from "../../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../../sandbox/quickjs-script-evaluator";
import { namespaceProcedure, router } from "../init";
import { DefinitionProblemsError } from "../problem-errors";

const JsonObject = z.record(z.string(), z.unknown());

/** A pin taken from a run is saved in the definition: past this it belongs in a fixture file, not in the workflow. */
export const MAX_PIN_FROM_RUN_BYTES = 64 * 1024;

/** One pair of sandboxes per web process, started by the first step test (most web processes never need them). */
let sandbox: Promise<{ scripts: QuickJsScriptEvaluator; jq: JqTransform }> | undefined;
function webSandbox() {
  sandbox ??= Promise.all([createQuickJsScriptEvaluator(), createJqTransform()]).then(([scripts, jq]) => ({ scripts, jq }));
  return sandbox;
}

/**
 * The editor's tests of the draft on screen: "Test step" runs one node on
 * sample data (server/definitions/test-step.ts), "Test workflow" runs the
 * whole draft in the testkit with its pins standing in for the nodes they pin
 * (server/definitions/test-workflow.ts), and `lastRunOutput` fetches a node's
 * output from a past run, to pin. The tests are for editors only — a test can
 * make an HTTP call or spend a provider's tokens, which saving and running the
 * workflow could do as well.
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
        {
          sandbox: webSandbox,
          http: { allowPrivateNetworks: ctx.config.httpAllowPrivateNetworks },
          // A completion reads its provider's key, as the sidecar would; nothing else of the namespace's secrets.
          llm: { db: ctx.db, namespaceId: ctx.namespaceId, secrets: secretLookup(ctx.db, sealingKeysOf(ctx.config)) },
        },
        { definition: input.definition as WorkflowDefinition, ref: input.ref, sample: input.sample, ...(input.mockOutput === undefined ? {} : { mockOutput: input.mockOutput }) },
      );
      if (!result.ok) throw new TRPCError({ code: "BAD_REQUEST", message: result.reason });
      return result;
    }),

  /** Runs the whole draft in memory on a sample input; nothing is stored. */
  runWorkflow: namespaceProcedure("edit")
    .input(z.object({ definition: z.unknown(), input: JsonObject.default({}) }))
    .mutation(async ({ ctx, input }) => {
      const verdict = validateDefinition(input.definition);
      if (!verdict.ok) {
        const errors = verdict.problems.filter((p) => p.severity !== "warning");
        if (errors.length > 0) {
          const first = errors[0]!;
          const cause = new DefinitionProblemsError(errors);
          throw new TRPCError({ code: "BAD_REQUEST", message: `Fix the workflow first${first.ref === undefined ? "" : ` (${first.ref})`}: ${first.message}`, cause });
        }
      }
      const result = await testWorkflow(
        { sandbox: webSandbox, http: { allowPrivateNetworks: ctx.config.httpAllowPrivateNetworks } },
        { definition: input.definition as WorkflowDefinition, input: input.input },
      );
      if (!result.ok) throw new TRPCError({ code: "BAD_REQUEST", message: result.reason });
      return result;
    }),

  /** `ref`'s output in the newest run of `workflow` that completed it, for "Pin from last run"; null when none did. */
  lastRunOutput: namespaceProcedure("read")
    .input(z.object({ workflow: z.string().min(1).max(256), ref: z.string().min(1).max(128) }))
    .query(async ({ ctx, input }) => {
      const row = await latestCompletedTaskOutput(ctx.db, { namespaceId: ctx.namespaceId, workflowName: input.workflow, ref: input.ref });
      if (row === undefined) return null;
      let output: unknown;
      try {
        output = await resolvePayload(ctx.blobs, { inline: row.output, ref: row.outputRef }, `the output of ${input.ref} in run ${row.workflowId}`);
      } catch (error) {
        if (error instanceof PayloadResolutionError) throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
        throw error;
      }
      if (typeof output !== "object" || output === null || Array.isArray(output)) {
        throw new TRPCError({ code: "BAD_REQUEST", message: `The output of ${input.ref} in run ${row.workflowId} is not a JSON object, so it cannot be a pin` });
      }
      const bytes = Buffer.byteLength(JSON.stringify(output), "utf8");
      if (bytes > MAX_PIN_FROM_RUN_BYTES) {
        throw new TRPCError({
          code: "PAYLOAD_TOO_LARGE",
          message: `The output of ${input.ref} in run ${row.workflowId} is ${Math.ceil(bytes / 1024)} KiB: a pin is saved in the definition and holds at most ${MAX_PIN_FROM_RUN_BYTES / 1024} KiB`,
        });
      }
      return { runId: row.workflowId, runStartedAt: row.runStartedAt.toISOString(), iteration: row.iteration, output: output as Record<string, unknown> };
    }),
});
