import { z } from "zod";
import { WORKFLOW_STATUSES } from "@/engine";
import { DASHBOARD_RANGES } from "../../dashboard/dashboard-window";
import { readRunDashboard } from "../../dashboard/read-run-dashboard";
import { namespaceProcedure, router } from "../init";

/**
 * The console's runs dashboard: how a namespace's runs (or one workflow's) are
 * going over the last hour, day or week. Thin: the aggregates are
 * server/dashboard/read-run-dashboard.ts's, computed in SQL.
 */

const isoDate = z.date().transform((d) => d.toISOString());
const statusCounts = z.object(Object.fromEntries(WORKFLOW_STATUSES.map((s) => [s, z.number()])) as Record<(typeof WORKFLOW_STATUSES)[number], z.ZodNumber>);
const ms = z.number().nullable();

const dashboardOutput = z.object({
  range: z.enum(DASHBOARD_RANGES),
  from: isoDate,
  to: isoDate,
  stepSeconds: z.number().int(),
  points: z.array(
    z.object({
      at: z.string(),
      counts: statusCounts,
      perMinute: statusCounts,
      failureRate: z.number().nullable(),
      durationP50Ms: ms,
      durationP95Ms: ms,
      queueWaitP50Ms: ms,
      queueWaitP95Ms: ms,
    }),
  ),
  totals: z.object({
    counts: statusCounts,
    runs: z.number().int(),
    failureRate: z.number().nullable(),
    durationP50Ms: ms,
    durationP95Ms: ms,
    queuedTasks: z.number().int(),
    queueWaitP50Ms: ms,
    queueWaitP95Ms: ms,
  }),
  failing: z.array(
    z.object({
      id: z.string(),
      workflow: z.string(),
      version: z.number().int(),
      status: z.enum(WORKFLOW_STATUSES),
      startedAt: isoDate,
      endedAt: isoDate.nullable(),
      reasonForIncompletion: z.string().nullable(),
      failedTaskRef: z.string().nullable(),
    }),
  ),
});

export const dashboardRouter = router({
  runs: namespaceProcedure("read")
    .input(
      z.object({
        range: z.enum(DASHBOARD_RANGES).default("hour"),
        workflow: z.string().trim().min(1).max(200).optional(),
      }),
    )
    .output(dashboardOutput)
    .query(async ({ ctx, input }) => {
      const dashboard = await readRunDashboard(ctx.db, { namespaceId: ctx.namespaceId, range: input.range, workflow: input.workflow, now: new Date() });
      return {
        range: dashboard.window.range,
        from: dashboard.window.from,
        to: dashboard.window.to,
        stepSeconds: dashboard.window.stepSeconds,
        points: dashboard.points,
        totals: dashboard.totals,
        failing: dashboard.failing.map((r) => ({
          id: r.id,
          workflow: r.defName,
          version: r.defVersion,
          status: r.status,
          startedAt: r.startedAt,
          endedAt: r.endedAt,
          reasonForIncompletion: r.reasonForIncompletion,
          failedTaskRef: r.failedTaskRef,
        })),
      };
    }),
});
