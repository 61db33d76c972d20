import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { NameSchema } from "../../../engine";
import { previewSchedule, removeSchedule, saveSchedule, setPaused } from "../../schedules/save-schedule";
import { ScheduleConfigSchema, ScheduleNameSchema } from "../../schedules/schedule-config";
import { getSchedule, listSchedules } from "../../store/schedules";
import type { ScheduleRow } from "../../store/schedules";
import { dottedPath, notFound, validationFailed } from "../conductor-error";
import type { ConductorValidationError } from "../conductor-error";
import { defineConductorRoute } from "../define-conductor-route";

/**
 * Conductor's SchedulerResource (/api/scheduler), as its clients call it:
 * save (create or update by name), get, list (optionally of one workflow),
 * delete, pause and resume (GET, as the generated clients send them, or
 * PUT), and nextFewSchedules. The body is Conductor's WorkflowSchedule:
 * `cronExpression` (5 or 6 fields), `zoneId`, `startWorkflowRequest`,
 * `paused`, `scheduleStartTime`/`scheduleEndTime` in epoch ms (0 or absent:
 * none) and `runCatchupScheduleInstances` — true runs missed fires (the
 * latest `catchUpLimit`, 10 unless set), false skips them. node-flow's own
 * `catchUp`, `catchUpLimit` and `overlap` may be sent beside them and are
 * answered back. Unknown fields (createTime, tags, …) are ignored, as
 * Conductor's Jackson mapping does.
 */

const EpochMs = z.number().int().min(0).nullable().optional();

export const ConductorScheduleSchema = z.looseObject({
  name: ScheduleNameSchema,
  cronExpression: z.string().max(200),
  zoneId: z.string().max(64).nullable().optional(),
  description: z.string().max(1000).nullable().optional(),
  startWorkflowRequest: z.looseObject({
    name: NameSchema,
    version: z.number().int().min(0).nullable().optional(),
    input: z.record(z.string(), z.unknown()).nullable().optional(),
    correlationId: z.string().max(1000).nullable().optional(),
    priority: z.number().int().min(0).max(99).nullable().optional(),
  }),
  runCatchupScheduleInstances: z.boolean().nullable().optional(),
  paused: z.boolean().nullable().optional(),
  scheduleStartTime: EpochMs,
  scheduleEndTime: EpochMs,
  catchUp: z.enum(["skip", "latest", "all"]).optional(),
  catchUpLimit: z.number().int().min(1).max(1000).optional(),
  overlap: z.enum(["allow", "skip", "queue"]).optional(),
});

type ConductorSchedule = z.output<typeof ConductorScheduleSchema>;

/** Where each of node-flow's settings comes from in Conductor's body, for naming the field of a refusal. */
const CONDUCTOR_FIELD: Record<string, (string | number)[]> = {
  workflowName: ["startWorkflowRequest", "name"],
  workflowVersion: ["startWorkflowRequest", "version"],
  input: ["startWorkflowRequest", "input"],
  correlationIdTemplate: ["startWorkflowRequest", "correlationId"],
  priority: ["startWorkflowRequest", "priority"],
  startAt: ["scheduleStartTime"],
  endAt: ["scheduleEndTime"],
};

function fieldOf(path: readonly PropertyKey[]): string {
  const [head, ...rest] = path;
  const mapped = typeof head === "string" && head in CONDUCTOR_FIELD ? [...CONDUCTOR_FIELD[head]!, ...rest] : path;
  return dottedPath("body", mapped);
}

const instant = (ms: number | null | undefined): string | null => (ms == null || ms === 0 ? null : new Date(ms).toISOString());

/** Conductor's body as node-flow's settings, keeping what Conductor cannot say (latest vs all, overlap) from the saved schedule. */
function toConfig(body: ConductorSchedule, existing: ScheduleRow | undefined) {
  const request = body.startWorkflowRequest;
  let catchUp = body.catchUp ?? existing?.catchUp ?? "skip";
  if (body.catchUp === undefined && body.runCatchupScheduleInstances != null) {
    catchUp = body.runCatchupScheduleInstances ? (existing !== undefined && existing.catchUp !== "skip" ? existing.catchUp : "all") : "skip";
  }
  return {
    description: body.description ?? null,
    workflowName: request.name,
    workflowVersion: request.version == null || request.version === 0 ? null : request.version,
    input: request.input ?? {},
    correlationIdTemplate: request.correlationId == null || request.correlationId === "" ? null : request.correlationId,
    priority: request.priority ?? 0,
    cronExpression: body.cronExpression,
    zoneId: body.zoneId == null || body.zoneId === "" ? "UTC" : body.zoneId,
    startAt: instant(body.scheduleStartTime),
    endAt: instant(body.scheduleEndTime),
    catchUp,
    catchUpLimit: body.catchUpLimit ?? existing?.catchUpLimit ?? 10,
    overlap: body.overlap ?? existing?.overlap ?? "allow",
    paused: body.paused ?? false,
  };
}

/** A schedule as Conductor's WorkflowSchedule, with node-flow's policies beside it. */
export function toConductorSchedule(row: ScheduleRow) {
  return {
    name: row.name,
    cronExpression: row.cronExpression,
    zoneId: row.zoneId,
    description: row.description,
    startWorkflowRequest: {
      name: row.workflowName,
      version: row.workflowVersion,
      input: row.input,
      correlationId: row.correlationIdTemplate,
      priority: row.priority,
    },
    runCatchupScheduleInstances: row.catchUp !== "skip",
    paused: row.paused,
    ...(row.pausedReason === null ? {} : { pausedReason: row.pausedReason }),
    scheduleStartTime: row.startAt?.getTime() ?? null,
    scheduleEndTime: row.endAt?.getTime() ?? null,
    nextRunTime: row.paused ? null : (row.nextFireAt?.getTime() ?? null),
    createTime: row.createdAt.getTime(),
    createdBy: row.createdBy,
    updatedTime: row.updatedAt.getTime(),
    updatedBy: row.updatedBy,
    catchUp: row.catchUp,
    catchUpLimit: row.catchUpLimit,
    overlap: row.overlap,
  };
}

function refuse(errors: ConductorValidationError[]): never {
  throw validationFailed(errors);
}

export const saveScheduleRoute = defineConductorRoute({
  method: "POST",
  path: "/scheduler/schedules",
  auth: "edit",
  summary: "Create or update a schedule (matched by name)",
  body: z.unknown(),
  handler: async ({ deps, principal, namespaceId, body }) => {
    const parsed = ConductorScheduleSchema.safeParse(body);
    if (!parsed.success) refuse(parsed.error.issues.map((issue) => ({ path: dottedPath("body", issue.path), message: issue.message })));
    const existing = await getSchedule(deps.db, namespaceId, parsed.data.name);
    const config = ScheduleConfigSchema.safeParse(toConfig(parsed.data, existing));
    if (!config.success) refuse(config.error.issues.map((issue) => ({ path: fieldOf(issue.path), message: issue.message })));
    const saved = await saveSchedule(deps.db, { namespaceId, name: parsed.data.name, config: config.data, actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
    if (!saved.ok) refuse(saved.problems.map((p) => ({ path: fieldOf(p.path), message: p.message })));
    return { status: 200, json: {} };
  },
});

export const listSchedulesRoute = defineConductorRoute({
  method: "GET",
  path: "/scheduler/schedules",
  auth: "read",
  summary: "All schedules, optionally of one workflow",
  query: z.object({ workflowName: NameSchema.optional() }),
  handler: async ({ deps, namespaceId, query }) => ({
    status: 200,
    json: (await listSchedules(deps.db, { namespaceId, workflowName: query.workflowName })).map(toConductorSchedule),
  }),
});

const NameParams = z.object({ name: ScheduleNameSchema });

export const getScheduleRoute = defineConductorRoute({
  method: "GET",
  path: "/scheduler/schedules/{name}",
  auth: "read",
  summary: "A schedule by name",
  params: NameParams,
  handler: async ({ deps, namespaceId, params }) => {
    const row = await getSchedule(deps.db, namespaceId, params.name);
    if (row === undefined) throw notFound(`Schedule ${params.name} not found`);
    return { status: 200, json: toConductorSchedule(row) };
  },
});

export const deleteScheduleRoute = defineConductorRoute({
  method: "DELETE",
  path: "/scheduler/schedules/{name}",
  auth: "edit",
  summary: "Delete a schedule",
  params: NameParams,
  handler: async ({ deps, principal, namespaceId, params }) => {
    const row = await removeSchedule(deps.db, { namespaceId, name: params.name, actor: actorOfPrincipal(principal) });
    if (row === undefined) throw notFound(`Schedule ${params.name} not found`);
    return { status: 200, json: {} };
  },
});

function pauseRoute(method: "GET" | "PUT", paused: boolean) {
  return defineConductorRoute({
    method,
    path: paused ? "/scheduler/schedules/{name}/pause" : "/scheduler/schedules/{name}/resume",
    auth: "edit",
    summary: paused ? "Pause a schedule" : "Resume a paused schedule: it fires next at the first fire time after now",
    params: NameParams,
    query: z.object({ reason: z.string().max(1000).optional() }),
    handler: async ({ deps, principal, namespaceId, params, query }) => {
      const result = await setPaused(deps.db, { namespaceId, name: params.name, paused, reason: query.reason ?? null, actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
      if (!result.ok) throw notFound(`Schedule ${params.name} not found`);
      return { status: 200, json: {} };
    },
  });
}

export const pauseScheduleRoute = pauseRoute("GET", true);
export const pauseSchedulePutRoute = pauseRoute("PUT", true);
export const resumeScheduleRoute = pauseRoute("GET", false);
export const resumeSchedulePutRoute = pauseRoute("PUT", false);

export const nextFewSchedulesRoute = defineConductorRoute({
  method: "GET",
  path: "/scheduler/nextFewSchedules",
  auth: "read",
  summary: "The next fire times of an expression, in epoch ms (3 by default, at most 5)",
  query: z.object({
    cronExpression: z.string().min(1).max(200),
    zoneId: z.string().max(64).optional(),
    scheduleStartTime: z.coerce.number().int().min(0).optional(),
    scheduleEndTime: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(5).default(3),
  }),
  handler: ({ query }) => {
    const result = previewSchedule({
      cronExpression: query.cronExpression,
      zoneId: query.zoneId ?? "UTC",
      startAt: query.scheduleStartTime ? new Date(query.scheduleStartTime) : null,
      // Taken literally when sent, 0 included: Conductor's own client tests expect (0, 0) to give no fires.
      endAt: query.scheduleEndTime === undefined ? null : new Date(query.scheduleEndTime),
      count: query.limit,
    });
    if (!result.ok) refuse(result.problems.map((p) => ({ path: dottedPath("query", p.path), message: p.message })));
    return Promise.resolve({ status: 200, json: result.preview.fireTimes.map((d) => d.getTime()) });
  },
});

export const SCHEDULER_ROUTES = [
  saveScheduleRoute,
  listSchedulesRoute,
  nextFewSchedulesRoute,
  getScheduleRoute,
  deleteScheduleRoute,
  pauseScheduleRoute,
  pauseSchedulePutRoute,
  resumeScheduleRoute,
  resumeSchedulePutRoute,
];
