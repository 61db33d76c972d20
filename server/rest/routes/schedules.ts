import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { NameSchema } from "../../../engine";
import { previewSchedule, removeSchedule, saveSchedule, setPaused } from "../../schedules/save-schedule";
import { ScheduleConfigSchema, ScheduleNameSchema, SchedulePreviewSchema } from "../../schedules/schedule-config";
import { toScheduleRunView, toScheduleView } from "../../schedules/schedule-view";
import { getSchedule, listScheduleRuns, listSchedules } from "../../store/schedules";
import { defineRoute } from "../define-route";
import { documentAs } from "../openapi";
import { HttpProblem, jsonPointer, validationProblem } from "../problem";
import { limitSchema } from "../schemas";

const tags = ["Schedules"];

const ScheduleSchema = z.object({
  name: z.string(),
  description: z.string().nullable(),
  workflowName: z.string(),
  workflowVersion: z.int().nullable(),
  input: z.unknown(),
  correlationIdTemplate: z.string().nullable(),
  priority: z.int(),
  cronExpression: z.string(),
  zoneId: z.string(),
  startAt: z.string().nullable(),
  endAt: z.string().nullable(),
  catchUp: z.enum(["skip", "latest", "all"]),
  catchUpLimit: z.int(),
  overlap: z.enum(["allow", "skip", "queue"]),
  paused: z.boolean(),
  pausedReason: z.string().nullable(),
  nextFireAt: z.string().nullable().meta({ description: "The next fire not yet handled; null while paused or past the end time." }),
  nextFireTimes: z.array(z.string()).meta({ description: "The next five fire times (ISO 8601, UTC)." }),
  createdAt: z.string(),
  createdBy: z.string().nullable(),
  updatedAt: z.string(),
  updatedBy: z.string().nullable(),
});
documentAs(ScheduleSchema, "Schedule");

const ScheduleRunSchema = z.object({
  id: z.string(),
  fireAt: z.string(),
  throughFireAt: z.string().nullable().meta({ description: "Set on a row standing for a run of skipped fires, from fireAt to this." }),
  fireCount: z.int().nullable(),
  outcome: z.enum(["started", "skipped", "queued", "failed"]),
  workflowId: z.string().nullable(),
  reason: z.string().nullable(),
  handledAt: z.string(),
  startedAt: z.string().nullable(),
});
documentAs(ScheduleRunSchema, "ScheduleRun");

const Params = z.object({ name: ScheduleNameSchema });

function notFound(name: string, namespace: string): HttpProblem {
  return new HttpProblem("not-found", `No schedule "${name}" in namespace ${namespace}`);
}

export const putScheduleRoute = defineRoute({
  method: "PUT",
  path: "/ns/{ns}/schedules/{name}",
  auth: "edit",
  operationId: "putSchedule",
  summary: "Create or replace a schedule",
  description:
    "Starts the workflow on the cron expression in the zone, between the optional start and end times. The workflow (and the version, when one is pinned) must exist. Keeping the timing keeps the pending fire; changing it fires next at the first fire time after now.",
  tags,
  params: Params,
  body: ScheduleConfigSchema,
  responses: { 200: ScheduleSchema, 201: ScheduleSchema },
  handler: async ({ deps, principal, namespace, params, body }) => {
    const saved = await saveSchedule(deps.db, { namespaceId: namespace.id, name: params.name, config: body, actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
    if (!saved.ok) throw validationProblem(saved.problems.map((p) => ({ pointer: jsonPointer(["body", ...p.path]), message: p.message })));
    return { status: saved.created ? 201 : 200, body: toScheduleView(saved.row) };
  },
});

export const listSchedulesRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/schedules",
  auth: "read",
  operationId: "listSchedules",
  summary: "List schedules, optionally of one workflow",
  tags,
  query: z.object({ workflow: NameSchema.optional() }),
  responses: { 200: z.object({ items: z.array(ScheduleSchema) }) },
  handler: async ({ deps, namespace, query }) => {
    const rows = await listSchedules(deps.db, { namespaceId: namespace.id, workflowName: query.workflow });
    const now = new Date();
    return { status: 200, body: { items: rows.map((r) => toScheduleView(r, now)) } };
  },
});

export const previewScheduleRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/schedules/preview",
  auth: "read",
  operationId: "previewSchedule",
  summary: "The next fire times of an expression in a zone, without saving anything, and what DST does to it",
  tags,
  body: SchedulePreviewSchema,
  responses: { 200: z.object({ fireTimes: z.array(z.string()), dstNotes: z.array(z.string()), fixedTime: z.boolean() }) },
  handler: ({ body }) => {
    const result = previewSchedule({ ...body, startAt: body.startAt == null ? null : new Date(body.startAt), endAt: body.endAt == null ? null : new Date(body.endAt) });
    if (!result.ok) throw validationProblem(result.problems.map((p) => ({ pointer: jsonPointer(["body", ...p.path]), message: p.message })));
    const { preview } = result;
    return Promise.resolve({ status: 200 as const, body: { fireTimes: preview.fireTimes.map((d) => d.toISOString()), dstNotes: preview.dstNotes, fixedTime: preview.fixedTime } });
  },
});

export const getScheduleRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/schedules/{name}",
  auth: "read",
  operationId: "getSchedule",
  summary: "Get a schedule, with its next fire times",
  tags,
  params: Params,
  responses: { 200: ScheduleSchema },
  handler: async ({ deps, namespace, params }) => {
    const row = await getSchedule(deps.db, namespace.id, params.name);
    if (row === undefined) throw notFound(params.name, namespace.name);
    return { status: 200, body: toScheduleView(row) };
  },
});

export const deleteScheduleRoute = defineRoute({
  method: "DELETE",
  path: "/ns/{ns}/schedules/{name}",
  auth: "edit",
  operationId: "deleteSchedule",
  summary: "Delete a schedule and its record of fires; runs it started are kept",
  tags,
  params: Params,
  responses: { 200: ScheduleSchema },
  handler: async ({ deps, principal, namespace, params }) => {
    const row = await removeSchedule(deps.db, { namespaceId: namespace.id, name: params.name, actor: actorOfPrincipal(principal) });
    if (row === undefined) throw notFound(params.name, namespace.name);
    return { status: 200, body: toScheduleView(row) };
  },
});

function pauseRoute(paused: boolean) {
  return defineRoute({
    method: "POST",
    path: paused ? "/ns/{ns}/schedules/{name}/pause" : "/ns/{ns}/schedules/{name}/resume",
    auth: "edit",
    operationId: paused ? "pauseSchedule" : "resumeSchedule",
    summary: paused ? "Pause a schedule: no fire until it is resumed" : "Resume a schedule: it fires next at the first fire time after now; fires in the pause are not caught up",
    tags,
    params: Params,
    body: z.strictObject({ reason: z.string().max(1000).optional() }).optional(),
    responses: { 200: ScheduleSchema },
    handler: async ({ deps, principal, namespace, params, body }) => {
      const result = await setPaused(deps.db, { namespaceId: namespace.id, name: params.name, paused, reason: body?.reason ?? null, actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
      if (!result.ok) throw notFound(params.name, namespace.name);
      return { status: 200, body: toScheduleView(result.row) };
    },
  });
}

export const pauseScheduleRoute = pauseRoute(true);
export const resumeScheduleRoute = pauseRoute(false);

export const listScheduleRunsRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/schedules/{name}/runs",
  auth: "read",
  operationId: "listScheduleRuns",
  summary: "A schedule's latest fires, newest first: when, the run started, or why none",
  tags,
  params: Params,
  query: z.object({ limit: limitSchema(20, 500) }),
  responses: { 200: z.object({ items: z.array(ScheduleRunSchema) }) },
  handler: async ({ deps, namespace, params, query }) => {
    const schedule = await getSchedule(deps.db, namespace.id, params.name);
    if (schedule === undefined) throw notFound(params.name, namespace.name);
    const rows = await listScheduleRuns(deps.db, { namespaceId: namespace.id, scheduleId: schedule.id, limit: query.limit });
    return { status: 200, body: { items: rows.map(toScheduleRunView) } };
  },
});

export const SCHEDULE_ROUTES = [
  putScheduleRoute,
  listSchedulesRoute,
  previewScheduleRoute,
  getScheduleRoute,
  deleteScheduleRoute,
  pauseScheduleRoute,
  resumeScheduleRoute,
  listScheduleRunsRoute,
];
