import { z } from "zod";
import type { TaskDefinitionRow } from "../../../db/schema";
import { ConductorTaskDefSchema, NameSchema, exportConductorWorkflow } from "../../../engine";
import type { WorkflowDefinition } from "../../../engine";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { getTaskDefinition, listTaskDefinitions } from "../../store/task-definitions";
import type { TaskDefinitionInput } from "../../store/task-definitions";
import { findNamespaceById } from "../../store/namespaces";
import { getWorkflowDefinition, listLatestWorkflowDefinitions } from "../../store/workflow-definitions";
import type { WorkflowDefinitionVersionRow } from "../../store/workflow-definitions";
import { upsertTaskDefinition } from "../../definitions/upsert-task-definition";
import { ConductorError, conflict, dottedPath, notFound, validationFailed, zodValidationErrors } from "../conductor-error";
import type { ConductorValidationError } from "../conductor-error";
import { defineConductorRoute } from "../define-conductor-route";
import { importConductorDefinition, missingReferenceErrors, registerConductorWorkflow, storeImportedDefinition } from "../register-conductor-workflow";
import type { ConductorRegistrationWarning } from "../register-conductor-workflow";

/**
 * Conductor's /metadata resource: WorkflowDef and TaskDef JSON in and out,
 * converted through the engine's Conductor import and export. A malformed
 * definition answers 400 listing every problem; nothing of a list is stored
 * unless all of it is valid.
 */

const WorkflowDefBody = z.record(z.string(), z.unknown(), { error: "A WorkflowDef is a JSON object" });
const OverwriteQuery = z.object({ overwrite: z.enum(["true", "false"]).default("false").transform((v) => v === "true") });

export const registerWorkflowDefRoute = defineConductorRoute({
  method: "POST",
  path: "/metadata/workflow",
  auth: "edit",
  summary: "Register a WorkflowDef: 409 when its version exists, unless overwrite=true",
  query: OverwriteQuery,
  body: WorkflowDefBody,
  handler: async ({ deps, principal, namespaceId, query, body }) => {
    const result = await registerConductorWorkflow(deps.db, {
      namespaceId,
      workflowDef: body,
      overwrite: query.overwrite,
      createdBy: createdByOfPrincipal(principal),
      actor: actorOfPrincipal(principal),
    });
    if (!result.ok) {
      if (result.reason === "invalid") throw validationFailed(result.errors);
      throw conflict(result.message);
    }
    // Conductor answers {}; node-flow adds what it warns of (never a refusal: Conductor accepts these).
    return { status: 200, json: result.warnings.length === 0 ? {} : { warnings: result.warnings } };
  },
});

export const updateWorkflowDefsRoute = defineConductorRoute({
  method: "PUT",
  path: "/metadata/workflow",
  auth: "edit",
  summary: "Create or update a list of WorkflowDefs (all validated before any is stored)",
  body: z.array(WorkflowDefBody).min(1).max(100),
  handler: async ({ deps, principal, namespaceId, body }) => {
    const errors: ConductorValidationError[] = [];
    const warnings: ConductorRegistrationWarning[] = [];
    const definitions: WorkflowDefinition[] = [];
    for (const [i, def] of body.entries()) {
      const imported = importConductorDefinition(def, `[${i}]`);
      if (imported.ok) {
        definitions.push(imported.definition);
        warnings.push(...imported.warnings);
        errors.push(...(await missingReferenceErrors(deps.db, namespaceId, imported.definition, `[${i}]`)));
      } else errors.push(...imported.errors);
    }
    if (errors.length > 0) throw validationFailed(errors);
    const names: string[] = [];
    for (const definition of definitions) {
      await storeImportedDefinition(deps.db, { namespaceId, definition, overwrite: true, createdBy: createdByOfPrincipal(principal), actor: actorOfPrincipal(principal) });
      names.push(definition.name);
    }
    // Conductor's BulkResponse, plus node-flow's warnings (paths start with the definition's index) when there are any.
    return { status: 200, json: { bulkErrorResults: {}, bulkSuccessfulResults: names, ...(warnings.length === 0 ? {} : { warnings }) } };
  },
});

/** A stored version as Conductor's WorkflowDef, or the reasons it has no nested form. */
function toConductorWorkflowDef(row: WorkflowDefinitionVersionRow): { ok: true; def: Record<string, unknown> } | { ok: false; problems: { ref?: string; message: string }[] } {
  const exported = exportConductorWorkflow(row.graph as WorkflowDefinition);
  if (!exported.ok) return { ok: false, problems: exported.problems };
  return {
    ok: true,
    def: { ...exported.workflowDef, name: row.name, version: row.version, createTime: row.createdAt.getTime(), updateTime: row.createdAt.getTime(), createdBy: row.createdBy },
  };
}

export const listWorkflowDefsRoute = defineConductorRoute({
  method: "GET",
  path: "/metadata/workflow",
  auth: "read",
  summary: "Every workflow definition of the namespace (latest version of each) that has a Conductor form",
  handler: async ({ deps, namespaceId }) => {
    const namespace = await findNamespaceById(deps.db, namespaceId);
    if (namespace === null) return { status: 200, json: [] };
    const out: Record<string, unknown>[] = [];
    for (const summary of await listLatestWorkflowDefinitions(deps.db, { namespace: namespace.name })) {
      const row = await getWorkflowDefinition(deps.db, namespaceId, summary.name, Number(summary.latestVersion));
      // A graph drawn in the editor with no nested form is left out of the list (GET by name says why).
      const converted = row === undefined ? undefined : toConductorWorkflowDef(row);
      if (converted?.ok === true) out.push(converted.def);
    }
    return { status: 200, json: out };
  },
});

export const getWorkflowDefRoute = defineConductorRoute({
  method: "GET",
  path: "/metadata/workflow/{name}",
  auth: "read",
  summary: "A WorkflowDef by name: the latest version, or ?version=",
  params: z.object({ name: NameSchema }),
  query: z.object({ version: z.coerce.number().int().min(1).optional() }),
  handler: async ({ deps, namespaceId, params, query }) => {
    const row = await getWorkflowDefinition(deps.db, namespaceId, params.name, query.version);
    if (row === undefined) throw notFound(`No such workflow found by name: ${params.name}, version: ${query.version ?? "latest"}`);
    const converted = toConductorWorkflowDef(row);
    if (!converted.ok) {
      // A graph drawn in the editor need not have a nested Conductor form.
      throw new ConductorError(
        409,
        `Workflow ${row.name} version ${row.version} has no Conductor WorkflowDef form: ${converted.problems.map((p) => p.message).join("; ")}`,
        converted.problems.map((p) => ({ path: p.ref ?? "workflowDef", message: p.message })),
      );
    }
    return { status: 200, json: converted.def };
  },
});

/** A Conductor TaskDef as node-flow stores it; every problem at once. */
function taskDefinitionOf(raw: unknown, root: string): { ok: true; value: TaskDefinitionInput } | { ok: false; errors: ConductorValidationError[] } {
  const parsed = ConductorTaskDefSchema.safeParse(raw);
  const errors: ConductorValidationError[] = parsed.success ? [] : zodValidationErrors(parsed.error.issues, root);
  const def = (parsed.success ? parsed.data : {}) as Record<string, unknown>;
  const name = NameSchema.safeParse((raw as { name?: unknown } | null)?.name);
  if (!name.success) errors.push({ path: dottedPath(root, ["name"]), message: "TaskDef name cannot be null or empty, and must be a valid name" });
  // Read from the raw value, so the check runs even when another field failed to parse.
  const given = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const timeout = typeof given.timeoutSeconds === "number" ? given.timeoutSeconds : 0;
  const response = typeof given.responseTimeoutSeconds === "number" ? given.responseTimeoutSeconds : 3600;
  if (timeout > 0 && response > timeout) {
    errors.push({ path: dottedPath(root, ["responseTimeoutSeconds"]), message: `responseTimeoutSeconds (${response}) must be less than timeoutSeconds (${timeout})` });
  }
  // node-flow's own field (not Conductor's): workers of this queue are handed resolved secrets.
  if (given.allowSecrets !== undefined && given.allowSecrets !== null && typeof given.allowSecrets !== "boolean") {
    errors.push({ path: dottedPath(root, ["allowSecrets"]), message: "allowSecrets must be true or false" });
  }
  if (errors.length > 0 || !name.success) return { ok: false, errors };
  // null is "absent" in Conductor's JSON: the stored default applies.
  const pick = <T>(key: string): T | undefined => (def[key] === null || def[key] === undefined ? undefined : (def[key] as T));
  const value: TaskDefinitionInput = { name: name.data };
  const keys = [
    "description",
    "ownerEmail",
    "retryCount",
    "retryLogic",
    "retryDelaySeconds",
    "backoffScaleFactor",
    "timeoutPolicy",
    "timeoutSeconds",
    "totalTimeoutSeconds",
    "responseTimeoutSeconds",
    "pollTimeoutSeconds",
    "concurrentExecLimit",
    "rateLimitPerFrequency",
    "rateLimitFrequencyInSeconds",
    "inputKeys",
    "outputKeys",
    "inputTemplate",
    "allowSecrets",
  ] as const;
  for (const key of keys) {
    const v = pick(key);
    if (v !== undefined) (value as unknown as Record<string, unknown>)[key] = v;
  }
  // Conductor writes 0 for "no rate limit / no limit"; node-flow's null means the same.
  if (value.rateLimitFrequencyInSeconds === 0) value.rateLimitFrequencyInSeconds = null;
  return { ok: true, value };
}

/** A stored task definition as Conductor's TaskDef. */
export function toConductorTaskDef(row: TaskDefinitionRow): Record<string, unknown> {
  return {
    name: row.name,
    description: row.description,
    ownerEmail: row.ownerEmail,
    retryCount: row.retryCount,
    retryLogic: row.retryLogic,
    retryDelaySeconds: row.retryDelaySeconds,
    backoffScaleFactor: Number(row.backoffScaleFactor),
    timeoutPolicy: row.timeoutPolicy,
    timeoutSeconds: row.timeoutSeconds,
    totalTimeoutSeconds: row.totalTimeoutSeconds,
    responseTimeoutSeconds: row.responseTimeoutSeconds,
    pollTimeoutSeconds: row.pollTimeoutSeconds,
    concurrentExecLimit: row.concurrentExecLimit ?? 0,
    rateLimitPerFrequency: row.rateLimitPerFrequency ?? 0,
    rateLimitFrequencyInSeconds: row.rateLimitFrequencyInSeconds ?? 1,
    inputKeys: row.inputKeys,
    outputKeys: row.outputKeys,
    inputTemplate: typeof row.inputTemplate === "object" && row.inputTemplate !== null ? row.inputTemplate : {},
    allowSecrets: row.allowSecrets,
    createTime: row.createdAt.getTime(),
    updateTime: row.updatedAt.getTime(),
    createdBy: row.createdBy,
    updatedBy: row.updatedBy,
  };
}

export const registerTaskDefsRoute = defineConductorRoute({
  method: "POST",
  path: "/metadata/taskdefs",
  auth: "edit",
  summary: "Create or replace a list of TaskDefs (all validated before any is stored)",
  body: z.array(z.unknown()).min(1).max(1000),
  handler: async ({ deps, principal, namespaceId, body }) => {
    const errors: ConductorValidationError[] = [];
    const values: TaskDefinitionInput[] = [];
    body.forEach((raw, i) => {
      const checked = taskDefinitionOf(raw, `[${i}]`);
      if (checked.ok) values.push(checked.value);
      else errors.push(...checked.errors);
    });
    if (errors.length > 0) throw validationFailed(errors);
    for (const definition of values) {
      await upsertTaskDefinition(deps.db, { namespaceId, definition, updatedBy: createdByOfPrincipal(principal), actor: actorOfPrincipal(principal) });
    }
    return { status: 200, json: {} };
  },
});

export const updateTaskDefRoute = defineConductorRoute({
  method: "PUT",
  path: "/metadata/taskdefs",
  auth: "edit",
  summary: "Replace an existing TaskDef (404 when there is none by that name)",
  body: z.unknown(),
  handler: async ({ deps, principal, namespaceId, body }) => {
    // Rooted at "body" like every other body's paths (`body.name`); a list's items are `[i]` (registerTaskDefsRoute).
    const checked = taskDefinitionOf(body, "body");
    if (!checked.ok) throw validationFailed(checked.errors);
    if ((await getTaskDefinition(deps.db, namespaceId, checked.value.name)) === undefined) throw notFound(`No such taskType found by name: ${checked.value.name}`);
    await upsertTaskDefinition(deps.db, { namespaceId, definition: checked.value, updatedBy: createdByOfPrincipal(principal), actor: actorOfPrincipal(principal) });
    return { status: 200, json: {} };
  },
});

export const getTaskDefRoute = defineConductorRoute({
  method: "GET",
  path: "/metadata/taskdefs/{taskType}",
  auth: "read",
  summary: "A TaskDef by name",
  params: z.object({ taskType: z.string().min(1).max(400) }),
  handler: async ({ deps, namespaceId, params }) => {
    const row = NameSchema.safeParse(params.taskType).success ? await getTaskDefinition(deps.db, namespaceId, params.taskType) : undefined;
    if (row === undefined) throw notFound(`No such taskType found by name: ${params.taskType}`);
    return { status: 200, json: toConductorTaskDef(row) };
  },
});

export const listTaskDefsRoute = defineConductorRoute({
  method: "GET",
  path: "/metadata/taskdefs",
  auth: "read",
  summary: "Every TaskDef of the namespace, by name",
  handler: async ({ deps, namespaceId }) => {
    const out: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    // Paged underneath; Conductor answers the whole list at once.
    for (;;) {
      const page = await listTaskDefinitions(deps.db, { namespaceId, limit: 1000, cursor });
      out.push(...page.items.map(toConductorTaskDef));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    return { status: 200, json: out };
  },
});
