import { z } from "zod";
import { listLatestWorkflowDefinitions } from "../../store/workflow-definitions";
import { publicProcedure, router } from "../init";

export const workflowListInput = z.object({
  namespace: z.string().trim().min(1).max(200).default("default"),
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
  list: publicProcedure
    .input(workflowListInput)
    .output(z.array(workflowSummaryOutput))
    .query(({ ctx, input }) => listLatestWorkflowDefinitions(ctx.db, input)),
});
