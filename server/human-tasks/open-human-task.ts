import type { Transaction } from "kysely";
import type { Database, TaskExecutionRow } from "../../db/schema";
import { waitDurationSeconds } from "../../engine";
import { getFormTemplate } from "../store/form-templates";
import { createHumanTask } from "../store/human-tasks";
import { armTimer } from "../store/timers";
import { asObject } from "../executions/actions/action-support";
import { resolveAssignee } from "./human-task-support";
import type { AssigneeColumns } from "./human-task-support";

/**
 * Opens the inbox item of a HUMAN attempt that has just started, in the
 * evaluation's transaction (so an item exists exactly when the attempt is
 * IN_PROGRESS: a task on an untaken branch never starts and never shows up).
 * The task's input carries the node's config as decide resolved it (title,
 * assignee, dueIn and escalation with their expressions evaluated; approvals,
 * allowSelfApproval, form, outcomes as written) plus the form's pre-fill.
 *
 * Here it becomes columns: the assignee looked up in the namespace, the form
 * template version (the latest now, unless pinned), the run's starter (for
 * self-approval) and the due time, with the first escalation step armed as a
 * humanEscalation timer. ON CONFLICT on the task id: a re-run lands on the
 * same row and arms nothing twice.
 */
export async function openHumanTask(
  trx: Transaction<Database>,
  task: Pick<TaskExecutionRow, "id" | "workflowId" | "namespaceId" | "refName">,
  input: Record<string, unknown>,
  now: Date,
): Promise<void> {
  const notes: string[] = [];
  const dueSeconds = waitDurationSeconds(input.dueIn);
  const dueAt = dueSeconds !== null ? new Date(now.getTime() + dueSeconds * 1000) : null;
  let assignee: AssigneeColumns | undefined = await resolveAssignee(trx, task.namespaceId, input.assignee);
  if (assignee === undefined) {
    // An expression that resolved to no assignee form: nobody's task (an operator reassigns it), never anyone's.
    notes.push(`The assignee ${JSON.stringify(input.assignee)} is not "user:…", "group:…", "role:…" or "anyone"; an operator must reassign this task.`);
    assignee = { assigneeKind: "user", assigneeUserId: null, assigneeGroupId: null, assigneeRole: null, assigneeLabel: `user:${String(input.assignee)}` };
  }
  const form = asObject(input.form);
  const templateRef = asObject(form.template);
  let formTemplateId: string | null = null;
  if (typeof templateRef.name === "string") {
    const version = typeof templateRef.version === "number" ? templateRef.version : undefined;
    const template = await getFormTemplate(trx, task.namespaceId, templateRef.name, version);
    if (template !== undefined) formTemplateId = template.id;
    else notes.push(`The form template "${templateRef.name}"${version === undefined ? "" : ` version ${version}`} does not exist; the task shows an empty form.`);
  }
  const approvals = typeof input.approvals === "number" && Number.isInteger(input.approvals) && input.approvals >= 1 ? input.approvals : 1;
  const outcomes = Array.isArray(input.outcomes) ? input.outcomes.filter((o): o is string => typeof o === "string") : [];
  const escalation = Array.isArray(input.escalation) ? input.escalation.filter((s) => typeof s === "object" && s !== null) : [];
  const created = await createHumanTask(trx, {
    namespaceId: task.namespaceId,
    workflowId: task.workflowId,
    taskId: task.id,
    refName: task.refName,
    title: typeof input.title === "string" && input.title.trim() !== "" ? input.title.slice(0, 400) : task.refName,
    description: notes.length > 0 ? notes.join(" ") : null,
    input,
    dueAt,
    formTemplateId,
    ...assignee,
    approvalsRequired: approvals,
    allowSelfApproval: input.allowSelfApproval !== false,
    starterUserId: await runStarter(trx, task.workflowId),
    outcomes,
    formSchema: formTemplateId === null && typeof form.schema === "object" ? form.schema : null,
    formUiSchema: formTemplateId === null && typeof form.uiSchema === "object" ? form.uiSchema : null,
    escalation,
  });
  if (created !== undefined && dueAt !== null && escalation.length > 0) {
    await armTimer(trx, { kind: "humanEscalation", fireAt: dueAt, namespaceId: task.namespaceId, workflowId: task.workflowId, taskId: task.id, payload: { humanTaskId: created.id, level: 0 } });
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The user who started the run: its "createdBy" ("user:<id>", or "apiKey:<id>"
 * → the key's user), walking up to the root for a sub-workflow, whose own
 * start is the engine's. Null when no person started it (a service account).
 */
export async function runStarter(trx: Transaction<Database>, workflowId: string): Promise<string | null> {
  let id: string | null = workflowId;
  for (let depth = 0; id !== null && depth < 50; depth++) {
    const wf: { createdBy: string | null; parentWorkflowId: string | null } | undefined = await trx
      .selectFrom("WorkflowExecutions")
      .select(["createdBy", "parentWorkflowId"])
      .where("id", "=", id)
      .executeTakeFirst();
    if (wf === undefined) return null;
    if (wf.createdBy !== null) {
      const [kind, ref] = [wf.createdBy.slice(0, wf.createdBy.indexOf(":")), wf.createdBy.slice(wf.createdBy.indexOf(":") + 1)];
      if (!UUID.test(ref)) return null;
      if (kind === "user") return (await trx.selectFrom("Users").select("id").where("id", "=", ref).executeTakeFirst())?.id ?? null;
      if (kind === "apiKey") return (await trx.selectFrom("ApiKeys").select("userId").where("id", "=", ref).executeTakeFirst())?.userId ?? null;
      return null;
    }
    id = wf.parentWorkflowId;
  }
  return null;
}
