import type { Db } from "@/db/pool";
import { referencedRefs } from "../../engine";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { deleteSchedule, insertSchedule, lockSchedule, setSchedulePaused, updateSchedule } from "../store/schedules";
import type { ScheduleRow, ScheduleSettings } from "../store/schedules";
import { getWorkflowDefinition } from "../store/workflow-definitions";
import { checkCron, dstNotes, FireTimes } from "./cron";
import type { CronSpec } from "./cron";
import type { ScheduleConfig } from "./schedule-config";

/**
 * Creating, replacing, pausing, resuming and deleting a schedule, as REST,
 * Conductor's API and the console do it: the workflow (the version, when one
 * is pinned) must exist and the templates parse; every problem is reported
 * at once, by field, and a refused save writes nothing. A save and its
 * AuditEvents row commit together, under the schedule's row lock, so a save
 * never interleaves with a fire in progress.
 *
 * The next fire: a new schedule, or one whose timing changed, fires first at
 * the first fire time after now (and not before its start). A save that keeps
 * the timing keeps the pending fire, so editing the input at the moment a
 * fire is due does not lose it. Resuming starts from now: fires that fell in
 * the pause are not caught up — catch-up is for downtime, not for a pause.
 */

export interface ScheduleProblem {
  /** The field in the settings, e.g. ["cronExpression"]. */
  path: (string | number)[];
  message: string;
}

export type SaveScheduleResult = { ok: true; row: ScheduleRow; created: boolean } | { ok: false; problems: ScheduleProblem[] };

function firstFireAfter(spec: CronSpec, now: Date): Date | null {
  return new FireTimes(spec).next(now);
}

function sameTiming(row: ScheduleRow, config: ScheduleConfig): boolean {
  return (
    row.cronExpression === config.cronExpression &&
    row.zoneId === config.zoneId &&
    (row.startAt?.getTime() ?? null) === (config.startAt?.getTime() ?? null) &&
    (row.endAt?.getTime() ?? null) === (config.endAt?.getTime() ?? null)
  );
}

export async function saveSchedule(
  db: Db,
  input: { namespaceId: string; name: string; config: ScheduleConfig; actor: AuditActor; updatedBy: string | null; now?: Date },
): Promise<SaveScheduleResult> {
  const now = input.now ?? new Date();
  const problems = await checkSchedule(db, input.namespaceId, input.config, now);
  if (problems.length > 0) return { ok: false, problems };
  const { config } = input;
  const settings: ScheduleSettings = config;
  const saved = await db.transaction().execute(async (trx) => {
    const existing = await lockSchedule(trx, input.namespaceId, input.name);
    let row: ScheduleRow;
    if (existing === undefined) {
      row = await insertSchedule(trx, { namespaceId: input.namespaceId, name: input.name, settings, nextFireAt: firstFireAfter(config, now), actor: input.updatedBy });
    } else {
      const resumed = existing.paused && !config.paused;
      const nextFireAt = !resumed && sameTiming(existing, config) && existing.nextFireAt !== null ? existing.nextFireAt : firstFireAfter(config, now);
      row = await updateSchedule(trx, { id: existing.id, settings, nextFireAt, pausedReason: config.paused ? existing.pausedReason : null, actor: input.updatedBy });
    }
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActorColumns(input.actor),
      action: existing === undefined ? "schedule.create" : "schedule.update",
      resourceType: "schedule",
      resourceId: input.name,
      details: { name: input.name, workflowName: config.workflowName, workflowVersion: config.workflowVersion ?? null, cronExpression: config.cronExpression, zoneId: config.zoneId, paused: config.paused },
    });
    return { row, created: existing === undefined };
  });
  return { ok: true, ...saved };
}

export type PauseResult = { ok: true; row: ScheduleRow } | { ok: false; reason: "not-found" };

/** Pauses (no fire while paused) or resumes (the next fire after now) a schedule; idempotent. */
export async function setPaused(
  db: Db,
  input: { namespaceId: string; name: string; paused: boolean; reason?: string | null; actor: AuditActor; updatedBy: string | null; now?: Date },
): Promise<PauseResult> {
  const now = input.now ?? new Date();
  return db.transaction().execute(async (trx): Promise<PauseResult> => {
    const existing = await lockSchedule(trx, input.namespaceId, input.name);
    if (existing === undefined) return { ok: false, reason: "not-found" };
    if (existing.paused === input.paused) return { ok: true, row: existing };
    const nextFireAt = input.paused ? existing.nextFireAt : firstFireAfter(existing, now);
    const row = await setSchedulePaused(trx, { id: existing.id, paused: input.paused, pausedReason: input.paused ? (input.reason ?? null) : null, nextFireAt, actor: input.updatedBy });
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActorColumns(input.actor),
      action: input.paused ? "schedule.pause" : "schedule.resume",
      resourceType: "schedule",
      resourceId: input.name,
      details: { name: input.name, ...(input.paused && input.reason ? { reason: input.reason } : {}) },
    });
    return { ok: true, row };
  });
}

export async function removeSchedule(db: Db, input: { namespaceId: string; name: string; actor: AuditActor }): Promise<ScheduleRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await deleteSchedule(trx, input.namespaceId, input.name);
    if (row !== undefined) {
      await appendAuditEvent(trx, {
        namespaceId: input.namespaceId,
        ...auditActorColumns(input.actor),
        action: "schedule.delete",
        resourceType: "schedule",
        resourceId: input.name,
        details: { name: input.name, workflowName: row.workflowName },
      });
    }
    return row;
  });
}

export interface SchedulePreview {
  /** The next fires, earliest first. */
  fireTimes: Date[];
  /** What the zone's DST transitions in the next year do to this schedule. */
  dstNotes: string[];
  /** croner's rule for this expression: fixed-time (DST gaps shift it, repeats run once) or interval. */
  fixedTime: boolean;
}

export type PreviewResult = { ok: true; preview: SchedulePreview } | { ok: false; problems: ScheduleProblem[] };

/** The next `count` fires of an expression in a zone, from `now`, without saving anything. */
export function previewSchedule(spec: CronSpec & { count: number }, now: Date = new Date()): PreviewResult {
  const check = checkCron(spec.cronExpression, spec.zoneId);
  if (!check.ok) return { ok: false, problems: [{ path: [check.field], message: check.message }] };
  const times = new FireTimes(spec);
  return { ok: true, preview: { fireTimes: times.nextFew(spec.count, now), dstNotes: dstNotes(spec, now), fixedTime: times.fixedTime } };
}

/** The next `count` fires of a saved schedule: none while it is paused or past its end. */
export function upcomingFires(row: ScheduleRow, count: number, now: Date = new Date()): Date[] {
  if (row.paused) return [];
  const times = new FireTimes(row);
  const from = row.nextFireAt !== null && row.nextFireAt.getTime() > now.getTime() ? new Date(row.nextFireAt.getTime() - 1) : now;
  return row.nextFireAt === null ? [] : times.nextFew(count, from);
}

/** Every reason the settings cannot work, by field. */
async function checkSchedule(db: Db, namespaceId: string, config: ScheduleConfig, now: Date): Promise<ScheduleProblem[]> {
  const problems: ScheduleProblem[] = [];
  const cron = checkCron(config.cronExpression, config.zoneId);
  if (!cron.ok) problems.push({ path: [cron.field], message: cron.message });
  const definition = await getWorkflowDefinition(db, namespaceId, config.workflowName, config.workflowVersion ?? undefined);
  if (definition === undefined) {
    const which = config.workflowVersion == null ? `workflow "${config.workflowName}"` : `version ${config.workflowVersion} of "${config.workflowName}"`;
    problems.push({ path: [config.workflowVersion == null ? "workflowName" : "workflowVersion"], message: `There is no ${which} in this namespace` });
  }
  for (const [field, template] of [
    ["input", config.input],
    ["correlationIdTemplate", config.correlationIdTemplate],
  ] as const) {
    if (template == null) continue;
    for (const problem of referencedRefs(template).problems) problems.push({ path: [field], message: problem.message });
  }
  if (cron.ok && problems.length === 0 && !config.paused && firstFireAfter(config, now) === null) {
    problems.push({ path: [config.endAt === null ? "cronExpression" : "endAt"], message: "The schedule would never fire: no fire time is left before its end" });
  }
  return problems;
}
