import { z } from "zod";
import { claimHumanTask } from "../../human-tasks/claim-human-task";
import { getHumanTask } from "../../human-tasks/get-human-task";
import { HUMAN_TASK_VIEWS, listHumanTasks } from "../../human-tasks/list-human-tasks";
import { reassignHumanTask } from "../../human-tasks/reassign-human-task";
import { releaseHumanTask } from "../../human-tasks/release-human-task";
import { submitHumanTask } from "../../human-tasks/submit-human-task";
import type { HumanRefusal } from "../../human-tasks/human-task-support";
import { actionDeps, formDataProblem } from "../action-results";
import { actorOf } from "../actor";
import { defineRoute } from "../define-route";
import { documentAs } from "../openapi";
import { HttpProblem, validationProblem } from "../problem";
import { UuidSchema, limitSchema, pageSchema } from "../schemas";

/**
 * The inbox over REST, for teams that build their own portal: the same
 * service functions as the UI's tRPC router (server/human-tasks/), so the same
 * rules. A key acting for a user acts as that user (their roles and groups,
 * not the key's scopes); a service account's key acts only on tasks assigned
 * to "anyone". Every route needs "read" in the namespace: who may act on a
 * task is the task's rule, not the route's.
 */

const tags = ["Human tasks"];

const UserRefSchema = z.object({ userId: UuidSchema, email: z.string() });

export const HumanTaskItemSchema = z
  .object({
    id: UuidSchema,
    taskId: UuidSchema,
    workflowId: UuidSchema,
    workflowName: z.string(),
    refName: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(["PENDING", "CLAIMED", "COMPLETED", "CANCELED", "EXPIRED"]),
    assignee: z.object({ kind: z.enum(["user", "group", "role", "anyone"]), id: z.string().nullable(), label: z.string() }),
    claimedBy: UserRefSchema.nullable(),
    dueAt: z.string().nullable(),
    overdue: z.boolean(),
    createdAt: z.string(),
    approvalsRequired: z.int(),
    approvalsGiven: z.int(),
  })
  .meta({ description: "An inbox item: one HUMAN task attempt." });
documentAs(HumanTaskItemSchema, "HumanTask");

const HumanTaskDetailSchema = HumanTaskItemSchema.extend({
  schema: z.record(z.string(), z.unknown()),
  uiSchema: z.record(z.string(), z.unknown()),
  formData: z.record(z.string(), z.unknown()).meta({ description: "The form's pre-fill." }),
  outcomes: z.array(z.string()),
  context: z.object({ workflowInput: z.record(z.string(), z.unknown()), variables: z.record(z.string(), z.unknown()) }),
  submissions: z.array(z.object({ userId: UuidSchema, email: z.string(), outcome: z.string().nullable(), at: z.string() })),
  can: z.object({ claim: z.boolean(), release: z.boolean(), submit: z.boolean(), reassign: z.boolean(), reason: z.string().nullable() }),
  response: z.record(z.string(), z.unknown()).nullable(),
  completedBy: UserRefSchema.nullable(),
  completedAt: z.string().nullable(),
});
documentAs(HumanTaskDetailSchema, "HumanTaskDetail");

const Params = z.object({ id: UuidSchema });

/** A refusal of the human-task rules as a problem: 400 with field pointers into the body's data, 403, 404, 409. */
function humanProblem(refusal: HumanRefusal): HttpProblem {
  switch (refusal.code) {
    case "invalid-data":
      // Field errors point into the data; a refusal naming no field is about the outcome.
      return formDataProblem("/body/data", refusal, "/body/outcome");
    case "invalid-input":
      return validationProblem([{ pointer: "/body", message: refusal.message, code: "invalid-input" }]);
    case "forbidden":
      return new HttpProblem("forbidden", refusal.message);
    case "not-found":
    case "task-not-found":
      return new HttpProblem("not-found", refusal.message);
    default:
      return new HttpProblem("conflict", refusal.message);
  }
}

export const listHumanTasksRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/human-tasks",
  auth: "read",
  operationId: "listHumanTasks",
  summary: "The caller's inbox: human tasks by view",
  description:
    "mine: claimed by or assigned to the caller; groups: assigned to a group or role the caller holds; unclaimed: open and claimable by the caller; all: everything the caller may act on (an operator: every task). Open tasks by due date (none last), closed newest first. Keyset-paged.",
  tags,
  query: z.object({
    view: z.enum(HUMAN_TASK_VIEWS).default("all"),
    state: z.enum(["open", "closed"]).default("open"),
    limit: limitSchema(50, 200),
    cursor: UuidSchema.optional().meta({ description: "The previous page's nextCursor." }),
  }),
  responses: { 200: pageSchema(HumanTaskItemSchema) },
  handler: async ({ deps: d, principal, namespace, query }) => {
    const result = await listHumanTasks(actionDeps(d), { namespaceId: namespace.id, actor: actorOf(principal), ...query });
    if (!result.ok) throw humanProblem(result);
    return { status: 200, body: { items: result.items, nextCursor: result.nextCursor } };
  },
});

export const getHumanTaskRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/human-tasks/{id}",
  auth: "read",
  operationId: "getHumanTask",
  summary: "One human task with its form, pre-fill and what the caller may do",
  tags,
  params: Params,
  responses: { 200: HumanTaskDetailSchema },
  handler: async ({ deps: d, principal, namespace, params }) => {
    const result = await getHumanTask(actionDeps(d), { namespaceId: namespace.id, id: params.id, actor: actorOf(principal) });
    if (!result.ok) throw humanProblem(result);
    const { ok: _ok, ...detail } = result;
    return { status: 200, body: detail };
  },
});

function verbRoute(verb: "claim" | "release", run: typeof claimHumanTask, summary: string) {
  return defineRoute({
    method: "POST",
    path: `/ns/{ns}/human-tasks/{id}/${verb}`,
    auth: "read",
    operationId: `${verb}HumanTask`,
    summary,
    tags,
    params: Params,
    responses: { 200: HumanTaskItemSchema },
    problems: [403, 409],
    handler: async ({ deps: d, principal, namespace, params }) => {
      const result = await run(actionDeps(d), { namespaceId: namespace.id, id: params.id, actor: actorOf(principal) });
      if (!result.ok) throw humanProblem(result);
      return { status: 200, body: result.item };
    },
  });
}

export const claimHumanTaskRoute = verbRoute("claim", claimHumanTask, "Claim a task, so nobody else submits it meanwhile");
export const releaseHumanTaskRoute = verbRoute("release", releaseHumanTask, "Release a claimed task (its holder, or an operator)");

export const completeHumanTaskRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/human-tasks/{id}/complete",
  auth: "read",
  operationId: "completeHumanTask",
  summary: "Submit a task's form with an outcome",
  description:
    "The data is validated against the task's form schema (400 with a pointer per field, nothing changed); read-only fields keep their pre-filled values. With N approvals, an approving outcome short of N answers APPROVAL_RECORDED and the task stays open.",
  tags,
  params: Params,
  body: z.strictObject({ outcome: z.string().min(1).max(200).optional(), data: z.record(z.string(), z.unknown()).default({}) }),
  responses: { 200: z.object({ status: z.enum(["COMPLETED", "APPROVAL_RECORDED"]), item: HumanTaskItemSchema }) },
  problems: [403, 409],
  handler: async ({ deps: d, principal, namespace, params, body }) => {
    const result = await submitHumanTask(actionDeps(d), { namespaceId: namespace.id, id: params.id, actor: actorOf(principal), data: body.data, ...(body.outcome === undefined ? {} : { outcome: body.outcome }) });
    if (!result.ok) throw humanProblem(result);
    return { status: 200, body: { status: result.status, item: result.item } };
  },
});

export const reassignHumanTaskRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/human-tasks/{id}/reassign",
  auth: "read",
  operationId: "reassignHumanTask",
  summary: "Give a task to someone else (operator and up)",
  tags,
  params: Params,
  body: z.strictObject({ assignee: z.string().trim().min(1).max(400).meta({ description: '"user:<email>", "group:<name>", "role:<viewer|operator|editor|admin>" or "anyone".' }) }),
  responses: { 200: HumanTaskItemSchema },
  problems: [403, 409],
  handler: async ({ deps: d, principal, namespace, params, body }) => {
    const result = await reassignHumanTask(actionDeps(d), { namespaceId: namespace.id, id: params.id, actor: actorOf(principal), assignee: body.assignee });
    if (!result.ok) throw humanProblem(result);
    return { status: 200, body: result.item };
  },
});
