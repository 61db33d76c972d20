import { z } from "zod";
import { NameSchema } from "../../engine";
import { checkCron } from "./cron";

/**
 * A schedule's settings as the APIs take them: one schema for creating and
 * replacing, with the defaults Conductor's scheduler has (UTC, missed fires
 * skipped, runs allowed to overlap). The expression and the zone are checked
 * here, so a refusal names the field before anything is looked up.
 */

export const SCHEDULE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export const ScheduleNameSchema = z
  .string()
  .regex(SCHEDULE_NAME_PATTERN, "must be letters, digits, _ or -, starting with a letter or digit (up to 128)");

export const CronExpressionSchema = z
  .string()
  .max(200)
  .meta({ description: "5 fields (minute precision), 6 (seconds first, Conductor's shape; `?` allowed) or @hourly, @daily, @weekly, @monthly, @yearly." });

export const ZoneIdSchema = z.string().max(64).meta({ description: "An IANA time zone, e.g. Europe/Berlin. DST: see the schedule's dstNotes." });

const Instant = z.iso.datetime({ offset: true }).meta({ description: "An ISO 8601 instant with its offset, e.g. 2027-01-01T00:00:00Z." });

export const ScheduleConfigSchema = z
  .strictObject({
    description: z.string().max(1000).nullable().optional(),
    workflowName: NameSchema,
    workflowVersion: z.number().int().min(1).nullable().optional().meta({ description: "Null or absent: the latest version at each fire." }),
    input: z
      .unknown()
      .default({})
      .meta({ description: "The run's input: a template over { scheduledTime, executedTime (epoch ms), schedule: { name, fireTime } }, e.g. { \"day\": \"${schedule.fireTime}\" }." }),
    correlationIdTemplate: z.string().min(1).max(1000).nullable().optional().meta({ description: "e.g. nightly-${scheduledTime}." }),
    priority: z.number().int().min(0).max(99).default(0),
    cronExpression: CronExpressionSchema,
    zoneId: ZoneIdSchema.default("UTC"),
    startAt: Instant.nullable().optional().meta({ description: "No fire before this (inclusive)." }),
    endAt: Instant.nullable().optional().meta({ description: "No fire after this (inclusive)." }),
    catchUp: z.enum(["skip", "latest", "all"]).default("skip").meta({ description: "After downtime: skip missed fires, run the latest once, or run the latest catchUpLimit of them." }),
    catchUpLimit: z.number().int().min(1).max(1000).default(10),
    overlap: z.enum(["allow", "skip", "queue"]).default("allow").meta({ description: "While this schedule's previous run is still running: start anyway, skip the fire, or queue one." }),
    paused: z.boolean().default(false),
  })
  .superRefine((config, ctx) => {
    const check = checkCron(config.cronExpression, config.zoneId);
    if (!check.ok) ctx.addIssue({ code: "custom", path: [check.field], message: check.message });
    if (config.startAt != null && config.endAt != null && Date.parse(config.endAt) < Date.parse(config.startAt)) {
      ctx.addIssue({ code: "custom", path: ["endAt"], message: "The end time is before the start time" });
    }
  })
  .transform((c) => ({
    ...c,
    cronExpression: c.cronExpression.trim(),
    startAt: c.startAt == null ? null : new Date(c.startAt),
    endAt: c.endAt == null ? null : new Date(c.endAt),
  }));

export type ScheduleConfig = z.output<typeof ScheduleConfigSchema>;

/** The body of a preview: an expression and a zone, unsaved. */
export const SchedulePreviewSchema = z.strictObject({
  cronExpression: CronExpressionSchema,
  zoneId: ZoneIdSchema.default("UTC"),
  startAt: Instant.nullable().optional(),
  endAt: Instant.nullable().optional(),
  count: z.number().int().min(1).max(50).default(5),
});
