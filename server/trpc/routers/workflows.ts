import { z } from "zod";
import { listLatestWorkflowDefinitions } from "../../store/workflow-definitions";
import { namespaceInput, namespaceProcedure, router } from "../init";

// The namespace is required, never defaulted: a call that forgot it should
// fail, not quietly read "default". The UI passes its current namespace.
export const workflowListInput = namespaceInput.extend({
  search: z.string().max(200).optional(),
});
export type WorkflowListInput = z.input<typeof workflowListInput>;

// No transformer is configured, so a Date would reach the browser as a string
// while its type still said Date. The output schema makes the wire type honest.
const workflowSummaryOutput = z.object({
  id: z.string(),
  name: z.string(),
  latestVersion: z.number().int(),
  versionCount: z.number().int(),
  description: z.string().nullable(),
  updatedAt: z.date().transform((d) => d.toISOString()),
});

export const workflowsRouter = router({
  list: namespaceProcedure("read")
    .input(workflowListInput)
    .output(z.array(workflowSummaryOutput))
    .query(({ ctx, input }) => listLatestWorkflowDefinitions(ctx.db, input)),
});
