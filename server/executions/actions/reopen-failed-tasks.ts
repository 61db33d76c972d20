import type { Transaction } from "kysely";
import type { Database, TaskExecutionRow, TaskStatus, WorkflowExecutionRow } from "../../../db/schema";
import { attemptDelaySeconds, blueprintNode, executorOf, parseAgentChildRef, parseForkInstanceRef } from "../../../engine";
import type { Blueprint, BlueprintNode } from "../../../engine";
import { countSeenSuccessfulForkInstances, latestTaskRowPerRef } from "../../store/operator-rewrites";
import { insertTasks } from "../../store/task-executions";
import { enqueueTask } from "../../store/task-queues";
import { armTimer } from "../../store/timers";
import type { NewWorkflowEventInput } from "../../store/workflow-events";
import { asObject, refuse } from "./action-support";

/**
 * Reopening an ended workflow's failed work (retry, and rerun for what lies
 * outside the rerun's reach): for every ref whose *latest* row — the only row
 * decide reads — FAILED, FAILED_WITH_TERMINAL_ERROR, TIMED_OUT or was
 * CANCELED, a new attempt (attempt + 1) with the same input. The old rows stay
 * as they are: the attempt history is the point (invariant 5).
 *
 * How each kind of task comes back, chosen so that the decider — not this
 * code — does everything that starting a task involves:
 * - **Queued** (a worker's or the system runner's: the row has a queue):
 *   SCHEDULED and enqueued, visible now, with its poll and total deadlines
 *   armed as decide would arm them.
 * - **External** (WAIT, HUMAN, SUB_WORKFLOW, START_WORKFLOW — including
 *   dynamic-fork instances of them): SCHEDULED, unqueued, exactly like an
 *   external task decide delayed. The next evaluation starts it (startTask)
 *   and emits what starting takes: a WAIT's deadline from now, the inbox row
 *   of a HUMAN, and for SUB_WORKFLOW **a new child workflow**. A new child
 *   rather than retrying the failed one in place: the failed child is
 *   history, linked to the failed attempt ("parentTaskId"), and a new attempt
 *   gets a child of its own, which is also what the engine's own retry of a
 *   SUB_WORKFLOW does and Conductor's default. (To resume the failed child
 *   from its own failure instead, retry the child workflow itself.)
 * - **Containers** (DO_WHILE, FORK_JOIN_DYNAMIC, AGENT): IN_PROGRESS again with
 *   their bookkeeping, and decide's container check picks them up (an agent
 *   goes on from its current turn: its failed model call is reopened with it). A loop
 *   keeps its output (iteration counter, per-iteration outputs). A fork's
 *   `completed` counter is **recomputed** from its instance rows, as
 *   engine/decide/types.ts (aggregateForkOutput) requires of anything that
 *   moves a fork row back to IN_PROGRESS: the count is the instances that
 *   succeeded *and were marked seen*; unseen ones are counted by the next
 *   evaluation when it reacts to them.
 * - **Anything decide itself failed** while evaluating it (a SWITCH or a
 *   DO_WHILE condition script, a DYNAMIC task name, a WAIT duration, a
 *   dynamic fork's item list — rows born FAILED_WITH_TERMINAL_ERROR in the
 *   evaluation that reached them): refused. The same input evaluates the same
 *   way; a rerun from that node, optionally with new input, is the remedy.
 *
 * Rows inside a container count only while their container is being
 * reopened too (or still runs): the canceled body of an optional loop that
 * failed, or the failed instance of an optional fork that ended
 * COMPLETED_WITH_ERRORS, belongs to a container that has finished.
 *
 * A manual retry does not restore the automatic retry budget (decide compares
 * `attempt` with retryCount, so a failing manual attempt past it fails the
 * workflow) and starts a fresh totalTimeoutSeconds window ("firstScheduledAt"
 * NULL): a retry after the total ran out would otherwise time out at once.
 */

const FAILED_STATUSES: ReadonlySet<TaskStatus> = new Set(["FAILED", "FAILED_WITH_TERMINAL_ERROR", "TIMED_OUT", "CANCELED"]);
const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set([...FAILED_STATUSES, "COMPLETED", "COMPLETED_WITH_ERRORS", "SKIPPED"]);

export interface ReopenedTask {
  ref: string;
  iteration: number;
  attempt: number;
  taskId: string;
  taskType: string;
  how: "queued" | "external" | "container";
  /** The attempt it follows and how that one ended. */
  previous: { taskId: string; status: TaskStatus };
}

/** The row that governs a task's policy: its node, or for a dynamic-fork instance its fork's, for an agent's step its agent's. */
function nodeOfRow(blueprint: Blueprint, row: TaskExecutionRow): BlueprintNode | undefined {
  const agentChild = parseAgentChildRef(row.refName);
  if (agentChild !== undefined) return blueprintNode(blueprint, agentChild.agentRef);
  const instance = parseForkInstanceRef(row.refName);
  return blueprintNode(blueprint, instance === undefined ? row.refName : instance.forkRef);
}

/** Born failed: ended in the evaluation that scheduled it, which only decide's own failures do. */
function failedInDecide(row: TaskExecutionRow): boolean {
  return row.status === "FAILED_WITH_TERMINAL_ERROR" && row.endedAt !== null && row.endedAt.getTime() === row.scheduledAt.getTime() && row.queueName === null;
}

function agentTurn(agent: TaskExecutionRow): number {
  const turn = asObject(agent.output).turn;
  return typeof turn === "number" && Number.isInteger(turn) && turn >= 1 ? turn : 1;
}

function loopIteration(loop: TaskExecutionRow): number {
  const i = asObject(loop.output).iteration;
  return typeof i === "number" && Number.isInteger(i) && i >= 1 ? i : 1;
}

/**
 * Finds and reopens the failed work of `wf` (see above), except refs for which
 * `exclude` is true (a rerun deletes those). Refuses, changing nothing the
 * caller's rollback would not undo, when a failed row cannot be reopened.
 * Returns what it reopened and the TASK_SCHEDULED events to record.
 */
export async function reopenFailedTasks(
  trx: Transaction<Database>,
  input: { wf: WorkflowExecutionRow; blueprint: Blueprint; now: Date; reason: string; exclude?: (ref: string) => boolean },
): Promise<{ reopened: ReopenedTask[]; events: NewWorkflowEventInput[] }> {
  const { wf, blueprint, now } = input;
  const latest = new Map((await latestTaskRowPerRef(trx, wf.id)).filter((r) => !(input.exclude?.(r.refName) ?? false)).map((r) => [r.refName, r]));

  const memo = new Map<string, boolean>();
  /** Whether the row is failed work that will run again: failed itself, and its container (if any) runs again too. */
  const reopens = (row: TaskExecutionRow): boolean => {
    const known = memo.get(row.refName);
    if (known !== undefined) return known;
    memo.set(row.refName, false); // A cycle cannot occur (containers nest), but never recurse forever.
    let result = FAILED_STATUSES.has(row.status);
    if (result && row.parentRef !== null) {
      const container = latest.get(row.parentRef);
      if (container === undefined) {
        result = false;
      } else {
        // An agent's steps carry its turn as their iteration; only the current turn's are its open work.
        const sameRound =
          container.taskType === "FORK_JOIN_DYNAMIC" ? container.iteration === row.iteration : container.taskType === "AGENT" ? agentTurn(container) === row.iteration : loopIteration(container) === row.iteration;
        result = sameRound && (!TERMINAL_STATUSES.has(container.status) || reopens(container));
      }
    }
    memo.set(row.refName, result);
    return result;
  };

  const failed = [...latest.values()].filter(reopens).sort((a, b) => a.refName.localeCompare(b.refName));
  const plan: { row: TaskExecutionRow; node: BlueprintNode; how: ReopenedTask["how"] }[] = [];
  for (const row of failed) {
    const node = nodeOfRow(blueprint, row);
    if (node === undefined) refuse("not-retryable", `Task ${row.refName} names no node of ${wf.defName} v${wf.defVersion}`);
    const executor = executorOf(row.taskType);
    if (row.queueName !== null) {
      plan.push({ row, node, how: "queued" });
    } else if (failedInDecide(row) || (executor !== "external" && executor !== "decider")) {
      refuse(
        "not-retryable",
        `Task ${row.refName} (${row.taskType}) failed while the decider evaluated it${row.reasonForIncompletion ? `: ${row.reasonForIncompletion}` : ""}. ` +
          `Retrying would evaluate the same input the same way; rerun the workflow from ${parseForkInstanceRef(row.refName)?.forkRef ?? row.refName} instead (optionally with new input).`,
      );
    } else if (executor === "external") {
      plan.push({ row, node, how: "external" });
    } else {
      if (row.taskType === "FORK_JOIN_DYNAMIC" && typeof asObject(row.output).total !== "number") {
        refuse("not-retryable", `Dynamic fork ${row.refName} has no instance counters (output.total); rerun the workflow from it instead.`);
      }
      plan.push({ row, node, how: "container" });
    }
  }

  const reopened: ReopenedTask[] = [];
  const events: NewWorkflowEventInput[] = [];
  for (const { row, node, how } of plan) {
    const attempt = row.attempt + 1;
    let output: unknown = {};
    if (how === "container") {
      output = asObject(row.output);
      if (row.taskType === "FORK_JOIN_DYNAMIC") {
        const total = asObject(row.output).total as number;
        const completed = await countSeenSuccessfulForkInstances(trx, { workflowId: wf.id, forkRef: row.refName, iteration: row.iteration, total });
        output = { ...asObject(row.output), total, completed };
      }
    }
    // An external row waits SCHEDULED until decide starts it, which decide does
    // once "scheduledAt" + the attempt's delay has passed (checkDeadlines). An
    // operator's retry is meant to run now, so the row is written as scheduled
    // that delay ago: due at once, with no timer needed to wake anyone.
    const scheduledAt = how === "external" ? new Date(now.getTime() - attemptDelaySeconds(node.policy, attempt) * 1000) : now;
    const [created] = await insertTasks(trx, [
      {
        workflowId: wf.id,
        namespaceId: wf.namespaceId,
        refName: row.refName,
        iteration: row.iteration,
        attempt,
        taskType: row.taskType,
        taskDefName: row.taskDefName,
        queueName: row.queueName,
        domain: row.domain,
        status: how === "container" ? "IN_PROGRESS" : "SCHEDULED",
        input: row.input,
        inputRef: row.inputRef,
        output,
        scheduledAt,
        startedAt: how === "container" ? now : null,
        updatedAt: now,
        responseTimeoutSeconds: row.responseTimeoutSeconds,
        timeoutSeconds: row.timeoutSeconds,
        pollTimeoutSeconds: row.pollTimeoutSeconds,
        parentRef: row.parentRef,
        forkIndex: row.forkIndex,
      },
    ]);
    // The identity (ref, iteration, attempt + 1) cannot exist: attempt was the latest.
    if (created === undefined) throw new Error(`reopenFailedTasks: ${row.refName}[${row.iteration}.${attempt}] already exists`);
    if (how === "queued") {
      await enqueueTask(trx, {
        queueName: row.queueName!,
        taskId: created.id,
        workflowId: wf.id,
        namespaceId: wf.namespaceId,
        taskType: row.taskType,
        priority: wf.priority,
        visibleAt: now,
      });
      // The deadlines decide arms when it schedules a queued task; it re-derives them from the row, but only when woken.
      const key = { ref: row.refName, iteration: row.iteration, attempt };
      if (node.policy.pollTimeoutSeconds > 0) {
        await armTimer(trx, { kind: "scheduleToStart", fireAt: new Date(now.getTime() + node.policy.pollTimeoutSeconds * 1000), namespaceId: wf.namespaceId, workflowId: wf.id, taskId: created.id, payload: { key } });
      }
      if (node.policy.totalTimeoutSeconds > 0) {
        await armTimer(trx, { kind: "taskTimeout", fireAt: new Date(now.getTime() + node.policy.totalTimeoutSeconds * 1000), namespaceId: wf.namespaceId, workflowId: wf.id, taskId: created.id, payload: { key } });
      }
    }
    reopened.push({ ref: row.refName, iteration: row.iteration, attempt, taskId: created.id, taskType: row.taskType, how, previous: { taskId: row.id, status: row.status } });
    events.push({
      type: "TASK_SCHEDULED",
      refName: row.refName,
      taskId: created.id,
      status: created.status,
      data: { iteration: row.iteration, attempt, reason: `${input.reason}: attempt ${row.attempt} ${row.status}` },
    });
  }
  return { reopened, events };
}
