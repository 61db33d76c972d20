import { z } from "zod";
import { blueprintNode, parseForkInstanceRef } from "../../../engine";
import type { Blueprint } from "../../../engine";
import { deleteTaskRows, latestTaskRowPerRef, markUnseen } from "../../store/operator-rewrites";
import { loadLatestByRefs } from "../../store/task-executions";
import { reopenWorkflowExecution } from "../../store/workflow-executions";
import {
  ENDED_STATUSES,
  WorkflowActionBaseSchema,
  discardBlob,
  loadDefinition,
  openWorkflow,
  parseInput,
  rearmWorkflowTimeout,
  recordAction,
  refuse,
  refuseIfWorkflowTimeoutPassed,
  refuseInvalidWorkflowInput,
  refuseStatus,
  runInTransaction,
  storeWorkflowInput,
} from "./action-support";
import type { ActionRefusal, CommonRefusalCode, WorkflowActionDeps } from "./action-support";
import { reopenFailedTasks } from "./reopen-failed-tasks";
import type { ReopenedTask } from "./reopen-failed-tasks";

export const RerunWorkflowInputSchema = WorkflowActionBaseSchema.extend({
  /** The node to run again; it and everything downstream of it start over. */
  fromRef: z.string().min(1).max(400),
  /** A new workflow input; the current one is kept when absent. */
  input: z.record(z.string(), z.unknown()).optional(),
});
export type RerunWorkflowInput = z.infer<typeof RerunWorkflowInputSchema>;

export type RerunWorkflowResult =
  | {
      ok: true;
      workflowId: string;
      status: "RUNNING";
      /** Every row deleted (all iterations and attempts of the refs downstream). */
      removed: { ref: string; iteration: number; attempt: number; status: string; taskId: string }[];
      /** Predecessor rows made unseen, so the decider reacts to them again. */
      reactivated: string[];
      /** Failed work outside the rerun's reach, reopened as by a retry. */
      retried: ReopenedTask[];
    }
  | ActionRefusal<
      CommonRefusalCode | "not-ended" | "unknown-node" | "unsupported-node" | "not-retryable" | "workflow-timeout-passed" | "definition-not-found"
    >;

/** At most this many removed rows are listed in the WORKFLOW_RERUN event (a loop may have thousands); the count is always exact. */
const MAX_LISTED_REMOVALS = 500;

/**
 * Reruns an ended workflow from node `fromRef`, optionally with a new input.
 *
 * **Deleted, not superseded.** decide reads only each ref's latest row, and
 * "no row" is the one state in which it evaluates a node afresh; there is no
 * row a rerun could add on top that would read as "not run yet" (a SKIPPED
 * row means "not taken" and would skip everything after it). So the rows of
 * `fromRef` and of every node downstream of it — blueprint successors,
 * transitively, with the bodies of loops and the instances of dynamic forks
 * among them — are deleted, all iterations and attempts (deleting only the
 * latest would promote an older one). What was removed is recorded in the
 * WORKFLOW_RERUN event, and each removed task's own events stay in the
 * history. The identities then become free again, so the rerun schedules
 * attempt 0 of each, like the first run.
 *
 * **Re-evaluated by the decider, not scheduled here.** The predecessors' rows
 * are made unseen ("deciderSeenAt" NULL): the next evaluation reacts to them
 * as to a fresh completion, finds `fromRef` without a row and decides it with
 * the decider's own rules — input templates (reading the new input), SWITCH
 * cases, joins waiting for every branch, dead paths. Scheduling it here would
 * have to copy all of that. A start node has no predecessor: decide starts a
 * workflow whose start nodes have no row, which holds when every start node is
 * downstream of `fromRef` (always, with a single start node); otherwise it is
 * refused. A node inside a loop is refused too: its iteration belongs to the
 * loop — rerun from the DO_WHILE.
 *
 * Failed work outside the rerun's reach (a parallel branch canceled when the
 * workflow failed) is reopened as a retry would (reopenFailedTasks): left
 * failed, a join waiting on it would never run, and the workflow would end as
 * soon as the rerun branch did.
 *
 * Only an ended workflow can be rerun: a running one has tasks in flight in
 * the very rows this deletes. Terminate or let it end first.
 */
export async function rerunWorkflow(deps: WorkflowActionDeps, rawInput: unknown): Promise<RerunWorkflowResult> {
  const parsed = parseInput(RerunWorkflowInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  const stored = input.input === undefined ? undefined : await storeWorkflowInput(deps, input.input);
  const result = await runInTransaction(deps, async (trx, now) => {
    const wf = await openWorkflow(trx, { ...input, decideReason: `operator: rerun from ${input.fromRef}` });
    if (!(ENDED_STATUSES as readonly string[]).includes(wf.status)) {
      refuseStatus("not-ended", wf, "only an ended workflow can be rerun: terminate it first, or wait for it to end");
    }
    const { blueprint, graph } = await loadDefinition(trx, wf, wf.defVersion);
    const node = blueprintNode(blueprint, input.fromRef);
    if (node === undefined) refuse("unknown-node", `${wf.defName} v${wf.defVersion} has no node "${input.fromRef}"`);
    if (node.parent !== null) {
      refuse("unsupported-node", `Node ${node.ref} is inside DO_WHILE ${node.parent}, whose iterations it belongs to: rerun from ${node.parent}`);
    }
    const reach = downstreamOf(blueprint, node.ref);
    if (node.incoming.length === 0 && blueprint.startNodes.some((ref) => !reach.has(ref))) {
      refuse("unsupported-node", `${node.ref} is one of several start nodes and the others are not downstream of it: rerun from a node they all lead to, or restart the workflow`);
    }
    if (input.input !== undefined) refuseInvalidWorkflowInput(graph, input.input);
    refuseIfWorkflowTimeoutPassed(wf, blueprint, now);

    const inReach = (ref: string): boolean => reach.has(ref) || reach.has(parseForkInstanceRef(ref)?.forkRef ?? "");
    const refs = (await latestTaskRowPerRef(trx, wf.id)).map((r) => r.refName).filter(inReach);
    const removed = await deleteTaskRows(trx, wf.id, refs);
    const { reopened, events } = await reopenFailedTasks(trx, { wf, blueprint, now, reason: `operator rerun from ${node.ref}` });

    // Predecessors that succeeded (or were skipped: a rerun on a dead path is skipped again, correctly) are reacted to
    // again; failed ones were just reopened and release fromRef when their new attempt ends.
    const predecessors = await loadLatestByRefs(trx, wf.id, node.predecessors);
    const reactivated = await markUnseen(
      trx,
      wf.id,
      predecessors.filter((r) => r.status === "COMPLETED" || r.status === "COMPLETED_WITH_ERRORS" || r.status === "SKIPPED").map((r) => r.id),
      now,
    );

    await reopenWorkflowExecution(trx, {
      workflowId: wf.id,
      from: ENDED_STATUSES,
      now,
      ...(stored !== undefined ? { input: stored.input, inputRef: stored.inputRef } : {}),
    });
    await rearmWorkflowTimeout(trx, wf, blueprint.timeoutSeconds, now);

    const removedList = removed.map((r) => ({ ref: r.refName, iteration: r.iteration, attempt: r.attempt, status: r.status, taskId: r.id }));
    const reactivatedRefs = predecessors.filter((r) => reactivated.includes(r.id)).map((r) => r.refName);
    await recordAction(trx, {
      wf,
      actor: input.actor,
      action: "workflow.rerun",
      events: [
        {
          type: "WORKFLOW_RERUN",
          status: "RUNNING",
          refName: node.ref,
          data: {
            from: wf.status,
            fromRef: node.ref,
            inputChanged: input.input !== undefined,
            removedCount: removedList.length,
            removed: removedList.slice(0, MAX_LISTED_REMOVALS),
            reactivated: reactivatedRefs,
            retried: reopened.map((r) => ({ ref: r.ref, iteration: r.iteration, attempt: r.attempt, taskId: r.taskId })),
          },
        },
        ...events,
      ],
      details: { from: wf.status, fromRef: node.ref, inputChanged: input.input !== undefined, removedCount: removedList.length },
      now,
    });
    return { ok: true as const, workflowId: wf.id, status: "RUNNING" as const, removed: removedList, reactivated: reactivatedRefs, retried: reopened };
  });
  if (!result.ok && stored !== undefined) await discardBlob(deps, stored.inputRef);
  return result as RerunWorkflowResult;
}

/** `from` and every node reachable from it along successor edges, with the bodies of the loops among them. */
function downstreamOf(blueprint: Blueprint, from: string): Set<string> {
  const reach = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const ref = stack.pop()!;
    if (reach.has(ref)) continue;
    reach.add(ref);
    const node = blueprintNode(blueprint, ref);
    if (node === undefined) continue;
    for (const edge of node.successors) stack.push(edge.ref);
    for (const child of node.children) stack.push(child);
  }
  return reach;
}
