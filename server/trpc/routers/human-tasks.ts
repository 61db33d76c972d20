import { z } from "zod";
import { actorOf } from "../../rest/actor";
import { claimHumanTask } from "../../human-tasks/claim-human-task";
import { countHumanTasks } from "../../human-tasks/count-human-tasks";
import { getHumanTask } from "../../human-tasks/get-human-task";
import { HUMAN_TASK_VIEWS, listHumanTasks } from "../../human-tasks/list-human-tasks";
import { reassignHumanTask } from "../../human-tasks/reassign-human-task";
import { releaseHumanTask } from "../../human-tasks/release-human-task";
import { submitHumanTask } from "../../human-tasks/submit-human-task";
import { actionDeps, humanTaskError } from "../action-results";
import { namespaceProcedure, router } from "../init";

/**
 * The inbox (docs: /work/human-tasks-contract.md). Every procedure needs only
 * "read" in the namespace: who may act on a task is the task's own rule
 * (assignee, claim, self-approval, operator for reassign), enforced by the
 * service in server/human-tasks/ — the same functions REST and every other
 * completion path use — never by the procedure's permission.
 */

const id = z.string().trim().min(1).max(100);

function unwrap<T extends { ok: true }>(result: T | ({ ok: false; code: string; message: string } & { fieldErrors?: { path: string; message: string }[] })): Omit<T, "ok"> {
  if (!result.ok) throw humanTaskError(result);
  const { ok: _ok, ...rest } = result;
  return rest;
}

export const humanTasksRouter = router({
  inbox: namespaceProcedure("read")
    .input(
      z.object({
        view: z.enum(HUMAN_TASK_VIEWS),
        state: z.enum(["open", "closed"]).optional(),
        cursor: z.string().trim().min(1).max(100).optional(),
        limit: z.int().min(1).max(200).optional(),
      }),
    )
    .query(async ({ ctx, input }) =>
      unwrap(
        await listHumanTasks(actionDeps(ctx), {
          namespaceId: ctx.namespaceId,
          actor: actorOf(ctx.principal),
          view: input.view,
          ...(input.state === undefined ? {} : { state: input.state }),
          ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
          ...(input.limit === undefined ? {} : { limit: input.limit }),
        }),
      ),
    ),

  counts: namespaceProcedure("read").query(async ({ ctx }) => unwrap(await countHumanTasks(actionDeps(ctx), { namespaceId: ctx.namespaceId, actor: actorOf(ctx.principal) }))),

  get: namespaceProcedure("read")
    .input(z.object({ id }))
    .query(async ({ ctx, input }) => unwrap(await getHumanTask(actionDeps(ctx), { namespaceId: ctx.namespaceId, id: input.id, actor: actorOf(ctx.principal) }))),

  claim: namespaceProcedure("read")
    .input(z.object({ id }))
    .mutation(async ({ ctx, input }) => unwrap(await claimHumanTask(actionDeps(ctx), { namespaceId: ctx.namespaceId, id: input.id, actor: actorOf(ctx.principal) })).item),

  release: namespaceProcedure("read")
    .input(z.object({ id }))
    .mutation(async ({ ctx, input }) => unwrap(await releaseHumanTask(actionDeps(ctx), { namespaceId: ctx.namespaceId, id: input.id, actor: actorOf(ctx.principal) })).item),

  reassign: namespaceProcedure("read")
    .input(z.object({ id, assignee: z.string().trim().min(1).max(400) }))
    .mutation(
      async ({ ctx, input }) =>
        unwrap(await reassignHumanTask(actionDeps(ctx), { namespaceId: ctx.namespaceId, id: input.id, assignee: input.assignee, actor: actorOf(ctx.principal) })).item,
    ),

  submit: namespaceProcedure("read")
    .input(z.object({ id, outcome: z.string().min(1).max(200).optional(), data: z.record(z.string(), z.unknown()) }))
    .mutation(async ({ ctx, input }) =>
      unwrap(
        await submitHumanTask(actionDeps(ctx), {
          namespaceId: ctx.namespaceId,
          id: input.id,
          actor: actorOf(ctx.principal),
          data: input.data,
          ...(input.outcome === undefined ? {} : { outcome: input.outcome }),
        }),
      ),
    ),
});
