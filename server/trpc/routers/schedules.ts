import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { NameSchema } from "../../../engine";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { previewSchedule, removeSchedule, saveSchedule, setPaused } from "../../schedules/save-schedule";
import { CronExpressionSchema, ScheduleConfigSchema, ScheduleNameSchema, ZoneIdSchema } from "../../schedules/schedule-config";
import { toScheduleRunView, toScheduleView } from "../../schedules/schedule-view";
import { getSchedule, listScheduleRuns, listSchedules } from "../../store/schedules";
import { namespaceProcedure, router } from "../init";
import { fieldIssues } from "../problem-errors";

/**
 * A workflow's schedules in the console: the Triggers panel lists them with
 * their next fire times and latest fires, edits them with a live preview of
 * the next fire times (and what DST does to them), pauses, resumes and
 * deletes. The settings are checked here rather than by the input schema, so
 * a refusal is keyed by the setting's own name (`cronExpression`), which is
 * what the form's fields are called.
 */

/** Latest fires shown with each schedule in the list. */
const LAST_FIRES = 5;

function refused(issues: { path: (string | number)[]; message: string }[]): never {
  throw new TRPCError({ code: "BAD_REQUEST", message: issues.map((p) => p.message).join("; "), cause: fieldIssues(issues) });
}

function notFound(name: string): never {
  throw new TRPCError({ code: "NOT_FOUND", message: `No schedule "${name}" in this namespace.` });
}

const nameInput = z.object({ name: ScheduleNameSchema });

export const schedulesRouter = router({
  list: namespaceProcedure("read")
    .input(z.object({ workflowName: NameSchema.optional() }))
    .query(async ({ ctx, input }) => {
      const rows = await listSchedules(ctx.db, { namespaceId: ctx.namespaceId, workflowName: input.workflowName });
      const now = new Date();
      return Promise.all(
        rows.map(async (row) => ({
          ...toScheduleView(row, now),
          lastFires: (await listScheduleRuns(ctx.db, { namespaceId: ctx.namespaceId, scheduleId: row.id, limit: LAST_FIRES })).map(toScheduleRunView),
        })),
      );
    }),

  save: namespaceProcedure("edit")
    .input(z.object({ name: ScheduleNameSchema, config: z.record(z.string(), z.unknown()) }))
    .mutation(async ({ ctx, input }) => {
      const config = ScheduleConfigSchema.safeParse(input.config);
      if (!config.success) refused(config.error.issues.map((issue) => ({ path: issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)), message: issue.message })));
      const saved = await saveSchedule(ctx.db, { namespaceId: ctx.namespaceId, name: input.name, config: config.data, actor: actorOfPrincipal(ctx.principal), updatedBy: createdByOfPrincipal(ctx.principal) });
      if (!saved.ok) refused(saved.problems);
      return { ...toScheduleView(saved.row), created: saved.created };
    }),

  setPaused: namespaceProcedure("edit")
    .input(z.object({ name: ScheduleNameSchema, paused: z.boolean(), reason: z.string().max(1000).optional() }))
    .mutation(async ({ ctx, input }) => {
      const result = await setPaused(ctx.db, {
        namespaceId: ctx.namespaceId,
        name: input.name,
        paused: input.paused,
        reason: input.reason ?? null,
        actor: actorOfPrincipal(ctx.principal),
        updatedBy: createdByOfPrincipal(ctx.principal),
      });
      if (!result.ok) notFound(input.name);
      return toScheduleView(result.row);
    }),

  delete: namespaceProcedure("edit")
    .input(nameInput)
    .mutation(async ({ ctx, input }) => {
      const row = await removeSchedule(ctx.db, { namespaceId: ctx.namespaceId, name: input.name, actor: actorOfPrincipal(ctx.principal) });
      if (row === undefined) notFound(input.name);
      return { deleted: true };
    }),

  runs: namespaceProcedure("read")
    .input(z.object({ name: ScheduleNameSchema, limit: z.number().int().min(1).max(100).default(20) }))
    .query(async ({ ctx, input }) => {
      const schedule = await getSchedule(ctx.db, ctx.namespaceId, input.name);
      if (schedule === undefined) notFound(input.name);
      return (await listScheduleRuns(ctx.db, { namespaceId: ctx.namespaceId, scheduleId: schedule.id, limit: input.limit })).map(toScheduleRunView);
    }),

  /** The next fire times of an unsaved expression; a refusal is an answer here (the form previews as the user types), not an error. */
  preview: namespaceProcedure("read")
    .input(z.object({ cronExpression: CronExpressionSchema, zoneId: ZoneIdSchema, count: z.number().int().min(1).max(20).default(5) }))
    .query(({ input }) => {
      const result = previewSchedule({ cronExpression: input.cronExpression, zoneId: input.zoneId, count: input.count });
      if (!result.ok) return { ok: false as const, problems: result.problems };
      return { ok: true as const, fireTimes: result.preview.fireTimes.map((d) => d.toISOString()), dstNotes: result.preview.dstNotes, fixedTime: result.preview.fixedTime };
    }),
});
