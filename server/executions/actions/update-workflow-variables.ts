import { z } from "zod";
import { json } from "../../../db/json";
import { WorkflowActionBaseSchema, openWorkflow, parseInput, recordAction, refuseStatus, runInTransaction } from "./action-support";
import type { ActionRefusal, CommonRefusalCode, WorkflowActionDeps } from "./action-support";

export const UpdateWorkflowVariablesInputSchema = WorkflowActionBaseSchema.extend({
  variables: z.record(z.string(), z.unknown()),
  /** Conductor's appendArray: a variable that is an array gets the new value(s) appended instead of replaced. */
  appendArray: z.boolean().default(false),
});
export type UpdateWorkflowVariablesInput = z.input<typeof UpdateWorkflowVariablesInputSchema>;

export type UpdateWorkflowVariablesResult = { ok: true; workflowId: string; variables: Record<string, unknown> } | ActionRefusal<CommonRefusalCode | "not-running">;

/**
 * Sets variables of a RUNNING or PAUSED workflow from outside (an event
 * handler's update_workflow_variables, as in Conductor): the given keys
 * replace the ones held, or with `appendArray` extend an array held. The
 * history records VARIABLES_SET as a SET_VARIABLE task's does, and a decide
 * is enqueued so expressions reading the variables see the new values from
 * the next evaluation on.
 */
export async function updateWorkflowVariables(deps: WorkflowActionDeps, rawInput: unknown): Promise<UpdateWorkflowVariablesResult> {
  const parsed = parseInput(UpdateWorkflowVariablesInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  return runInTransaction(deps, async (trx, now) => {
    const wf = await openWorkflow(trx, { ...input, decideReason: "variables updated" });
    if (wf.status !== "RUNNING" && wf.status !== "PAUSED") refuseStatus("not-running", wf, "only a RUNNING or PAUSED workflow's variables can be updated");
    const held = (typeof wf.variables === "object" && wf.variables !== null && !Array.isArray(wf.variables) ? wf.variables : {}) as Record<string, unknown>;
    const variables: Record<string, unknown> = { ...held };
    for (const [key, value] of Object.entries(input.variables)) {
      const current = held[key];
      const added: unknown[] = Array.isArray(value) ? (value as unknown[]) : [value];
      variables[key] = input.appendArray && Array.isArray(current) ? [...(current as unknown[]), ...added] : value;
    }
    await trx.updateTable("WorkflowExecutions").set({ variables: json(variables), updatedAt: now }).where("id", "=", wf.id).execute();
    await recordAction(trx, {
      wf,
      actor: input.actor,
      action: "workflow.updateVariables",
      events: [{ type: "VARIABLES_SET", data: { variables: input.variables, appendArray: input.appendArray } }],
      details: { keys: Object.keys(input.variables) },
      now,
    });
    return { ok: true as const, workflowId: wf.id, variables };
  }) as Promise<UpdateWorkflowVariablesResult>;
}
