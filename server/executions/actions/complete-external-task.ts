import { z } from "zod";
import { submitHumanTaskInTransaction } from "../../human-tasks/submit-human-task";
import type { HumanRefusalCode } from "../../human-tasks/human-task-support";
import { TASK_SELECTOR_PROBLEM, TaskSelectorFields, WorkflowActionBaseSchema, findTask, hasOneTaskSelector, openWorkflow, parseInput, refuse, refuseStatus, runInTransaction } from "./action-support";
import { endExternalTask } from "./end-external-task";
import type { ActionRefusal, CommonRefusalCode, WorkflowActionDeps } from "./action-support";

export const CompleteExternalTaskInputSchema = WorkflowActionBaseSchema.extend({
  ...TaskSelectorFields,
  /** The task's output; for a HUMAN task also the form response recorded on its inbox row. */
  output: z.record(z.string(), z.unknown()).default({}),
  /** COMPLETED by default; FAILED hands the task to its retry policy like a worker's failure. */
  status: z.enum(["COMPLETED", "FAILED"]).default("COMPLETED"),
  reason: z.string().max(2000).optional(),
}).refine(hasOneTaskSelector, TASK_SELECTOR_PROBLEM);
export type CompleteExternalTaskInput = z.input<typeof CompleteExternalTaskInputSchema>;

/**
 * APPROVAL_RECORDED: a HUMAN task needing N distinct approvals took this one
 * and stays open for the next. A HUMAN refusal (forbidden, conflict,
 * invalid-data with `fieldErrors`) comes from the human-task rules.
 */
export type CompleteExternalTaskResult =
  | { ok: true; workflowId: string; taskId: string; ref: string; status: "COMPLETED" | "FAILED" | "APPROVAL_RECORDED" }
  | (ActionRefusal<CommonRefusalCode | "not-running" | "task-not-found" | "task-not-open" | "unsupported-task-type" | HumanRefusalCode> & {
      fieldErrors?: { path: string; message: string }[];
    });

/** The tasks nothing polls and something outside the engine finishes. */
const EXTERNAL_TYPES: ReadonlySet<string> = new Set(["WAIT", "HUMAN"]);

/**
 * Completes a WAIT or HUMAN task from outside (an API signal, the inbox, an
 * operator): the IN_PROGRESS attempt becomes COMPLETED (or FAILED) with the
 * given output, unseen, and a decide is enqueued — the same shape as a
 * worker's report, so the decider reacts to it the same way. A HUMAN task's
 * inbox row closes in the same transaction, with the output as its response.
 *
 * Other types are refused: a SIMPLE task belongs to the worker holding it
 * (its report is the completion; skip-task moves on without it), system tasks
 * to the system runner, SUB_WORKFLOW to its child. A WAIT or HUMAN still
 * SCHEDULED (a start delay not yet over) has not started and is refused too.
 * A PAUSED workflow accepts the completion; it is reacted to on resume.
 */
export async function completeExternalTask(deps: WorkflowActionDeps, rawInput: unknown): Promise<CompleteExternalTaskResult> {
  const parsed = parseInput(CompleteExternalTaskInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  return runInTransaction(deps, async (trx, now) => {
    const wf = await openWorkflow(trx, { ...input, decideReason: "external task completion" });
    if (wf.status !== "RUNNING" && wf.status !== "PAUSED") refuseStatus("not-running", wf, "its tasks can no longer be completed");
    const task = await findTask(trx, wf.id, input);
    if (!EXTERNAL_TYPES.has(task.taskType)) {
      refuse(
        "unsupported-task-type",
        `Task ${task.refName} is a ${task.taskType} task; only WAIT and HUMAN tasks are completed externally${task.queueName !== null ? " (its worker reports its result; skip-task moves on without it)" : ""}`,
      );
    }
    if (task.status !== "IN_PROGRESS") refuse("task-not-open", `Task ${task.refName} (${task.id}) is ${task.status}; only an IN_PROGRESS task can be completed`);
    const end = { actor: input.actor, status: input.status, output: input.output, reason: input.reason };
    // A HUMAN task is completed under the human-task rules whichever path the
    // completion came by (API signal, operator, Conductor): who may submit it,
    // self-approval, outcome, form data, N approvals.
    if (task.taskType === "HUMAN") return submitHumanTaskInTransaction(trx, now, wf, task, end);
    return endExternalTask(trx, now, wf, task, end);
  }) as Promise<CompleteExternalTaskResult>;
}
