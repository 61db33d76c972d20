import { z } from "zod";
import { cancelOpenHumanTasks } from "../../store/human-tasks";
import { deleteTaskRows } from "../../store/operator-rewrites";
import { cancelTimers } from "../../store/timers";
import { reopenWorkflowExecution } from "../../store/workflow-executions";
import {
  ENDED_STATUSES,
  WorkflowActionBaseSchema,
  asObject,
  discardBlob,
  loadDefinition,
  openWorkflow,
  parseInput,
  recordAction,
  refuseInvalidWorkflowInput,
  refuseStatus,
  runInTransaction,
  storeWorkflowInput,
} from "./action-support";
import type { ActionRefusal, CommonRefusalCode, WorkflowActionDeps } from "./action-support";

export const RestartWorkflowInputSchema = WorkflowActionBaseSchema.extend({
  /**
   * Which definition version the new run uses: the one it ran (default), a
   * given version, or "latest" (the latest unarchived, Conductor's
   * useLatestDefinitions).
   */
  version: z.union([z.int().min(1), z.literal("latest")]).optional(),
  /** A new workflow input; the current one is kept when absent. */
  input: z.record(z.string(), z.unknown()).optional(),
});
export type RestartWorkflowInput = z.infer<typeof RestartWorkflowInputSchema>;

export type RestartWorkflowResult =
  | { ok: true; workflowId: string; status: "RUNNING"; defVersion: number; removedTasks: number }
  | ActionRefusal<CommonRefusalCode | "not-ended" | "definition-not-found">;

/**
 * Restarts an ended workflow from the beginning, in place, as Conductor does:
 * the same execution id, every task row deleted, RUNNING again with the
 * original (or given) input, the definition's initial variables, and the
 * chosen definition version; a decide then starts it like a new run (decide
 * starts a workflow none of whose start nodes has a row).
 *
 * Its clock starts over: "startedAt" becomes now, because the workflow
 * timeout is measured from it (see reopenWorkflowExecution for what moving
 * that partition key costs). The history keeps everything: WorkflowEvents
 * continue after the earlier run's events, with WORKFLOW_RESTARTED between.
 *
 * Only an ended workflow: a running one has tasks in flight in the rows this
 * deletes. A restarted child stays linked to its parent, but the parent's
 * SUB_WORKFLOW task ended with the child's first run, so the new run's end
 * changes nothing there (afterWorkflowEnded finds the task moved on).
 */
export async function restartWorkflow(deps: WorkflowActionDeps, rawInput: unknown): Promise<RestartWorkflowResult> {
  const parsed = parseInput(RestartWorkflowInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  const stored = input.input === undefined ? undefined : await storeWorkflowInput(deps, input.input);
  const result = await runInTransaction(deps, async (trx, now) => {
    const wf = await openWorkflow(trx, { ...input, decideReason: "operator: restart" });
    if (!(ENDED_STATUSES as readonly string[]).includes(wf.status)) {
      refuseStatus("not-ended", wf, "only an ended workflow can be restarted: terminate it first, or wait for it to end");
    }
    const def = await loadDefinition(trx, wf, input.version ?? wf.defVersion);
    // The kept input is re-checked too when the version changes: the new version's inputSchema may reject it.
    if (input.input !== undefined) refuseInvalidWorkflowInput(def.graph, input.input);
    else if (def.version !== wf.defVersion && wf.inputRef === null) refuseInvalidWorkflowInput(def.graph, wf.input);

    const removed = await deleteTaskRows(trx, wf.id, "all");
    await cancelTimers(trx, { workflowId: wf.id });
    await cancelOpenHumanTasks(trx, wf.id, { now });
    await reopenWorkflowExecution(trx, {
      workflowId: wf.id,
      from: ENDED_STATUSES,
      now,
      defVersion: def.version,
      variables: asObject(def.graph.variables),
      restartedAt: now,
      ...(stored !== undefined ? { input: stored.input, inputRef: stored.inputRef } : {}),
    });
    await recordAction(trx, {
      wf,
      actor: input.actor,
      action: "workflow.restart",
      events: [
        {
          type: "WORKFLOW_RESTARTED",
          status: "RUNNING",
          data: { from: wf.status, defVersion: def.version, previousDefVersion: wf.defVersion, inputChanged: input.input !== undefined, removedTasks: removed.length },
        },
      ],
      details: { from: wf.status, defVersion: def.version, previousDefVersion: wf.defVersion, inputChanged: input.input !== undefined, removedTasks: removed.length },
      now,
    });
    return { ok: true as const, workflowId: wf.id, status: "RUNNING" as const, defVersion: def.version, removedTasks: removed.length };
  });
  if (!result.ok && stored !== undefined) await discardBlob(deps, stored.inputRef);
  return result as RestartWorkflowResult;
}
