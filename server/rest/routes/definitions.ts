import { z } from "zod";
import { NameSchema, validateDefinition } from "../../../engine";
import type { Problem as DefinitionProblem } from "../../../engine";
import { registerWorkflowDefinition } from "../../definitions/register-workflow-definition";
import { missingDispatchReferences } from "../../definitions/check-dispatch-references";
import { getWorkflowDefinition, listLatestWorkflowDefinitions } from "../../store/workflow-definitions";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { defineRoute } from "../define-route";
import { HttpProblem, ProblemFieldErrorSchema, jsonPointer, validationProblem } from "../problem";
import type { ProblemFieldError } from "../problem";
import {
  WorkflowDefinitionBodySchema,
  WorkflowDefinitionSummarySchema,
  WorkflowDefinitionVersionSchema,
  iso,
  isoOrNull,
} from "../schemas";

const tags = ["Workflow definitions"];

/** A definition problem as a field error: its JSON path under /body, its code and node ref. */
function fieldError(problem: DefinitionProblem): ProblemFieldError {
  return {
    pointer: jsonPointer(["body", ...problem.path]),
    message: problem.message,
    code: problem.code,
    ...(problem.ref === undefined ? {} : { ref: problem.ref }),
  };
}

export const createDefinitionRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/definitions",
  auth: "edit",
  operationId: "createWorkflowDefinition",
  summary: "Save a definition as its next version",
  description:
    "Versions are immutable: saving always creates version max + 1 of the definition's name. A `version` in the body is ignored. An invalid definition is refused with every problem at once, each naming its field and node. `warnings` lists node-flow's extra checks the saved definition fails (a node that never runs, an expression naming no node): saved anyway, as Conductor would run it.",
  tags,
  body: WorkflowDefinitionBodySchema,
  responses: { 201: z.object({ id: z.uuid(), name: z.string(), version: z.int(), warnings: z.array(ProblemFieldErrorSchema) }) },
  handler: async ({ deps, principal, namespace, body }) => {
    const result = await registerWorkflowDefinition(deps.db, {
      namespaceId: namespace.id,
      definition: body,
      createdBy: createdByOfPrincipal(principal),
      actor: actorOfPrincipal(principal),
    });
    if (!result.ok) {
      if (result.reason === "invalid") throw validationProblem(result.problems.map(fieldError));
      throw new HttpProblem("not-found", result.message);
    }
    const location = `/api/v1/ns/${encodeURIComponent(namespace.name)}/definitions/${encodeURIComponent(result.name)}?version=${result.version}`;
    return { status: 201, body: { id: result.id, name: result.name, version: result.version, warnings: result.warnings.map(fieldError) }, headers: { location } };
  },
});

export const listDefinitionsRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/definitions",
  auth: "read",
  operationId: "listWorkflowDefinitions",
  summary: "List definitions (latest version of each), by name",
  tags,
  query: z.object({ search: z.string().max(200).optional().meta({ description: "Case-insensitive substring of the name or description." }) }),
  responses: { 200: z.object({ items: z.array(WorkflowDefinitionSummarySchema) }) },
  handler: async ({ deps, namespace, query }) => {
    const rows = await listLatestWorkflowDefinitions(deps.db, { namespace: namespace.name, search: query.search });
    return {
      status: 200,
      body: { items: rows.map((r) => ({ ...r, latestVersion: Number(r.latestVersion), versionCount: Number(r.versionCount), updatedAt: iso(r.updatedAt) })) },
    };
  },
});

export const getDefinitionRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/definitions/{name}",
  auth: "read",
  operationId: "getWorkflowDefinition",
  summary: "Get a definition: its latest unarchived version, or ?version=",
  tags,
  params: z.object({ name: NameSchema }),
  query: z.object({ version: z.coerce.number().int().min(1).optional() }),
  responses: { 200: WorkflowDefinitionVersionSchema },
  handler: async ({ deps, namespace, params, query }) => {
    const row = await getWorkflowDefinition(deps.db, namespace.id, params.name, query.version);
    if (row === undefined) {
      throw new HttpProblem("not-found", `No definition "${params.name}"${query.version === undefined ? "" : ` version ${query.version}`} in namespace ${namespace.name}`);
    }
    return {
      status: 200,
      body: {
        id: row.id,
        name: row.name,
        version: row.version,
        description: row.description,
        createdAt: iso(row.createdAt),
        createdBy: row.createdBy,
        archivedAt: isoOrNull(row.archivedAt),
        definition: row.graph as Record<string, unknown>,
      },
    };
  },
});

export const validateDefinitionRoute = defineRoute({
  method: "POST",
  path: "/ns/{ns}/definitions/validate",
  auth: "read",
  operationId: "validateWorkflowDefinition",
  summary: "Check a definition without saving it",
  description:
    "Answers 200 either way: `valid` says whether it would be accepted, `problems` lists every reason it would not, and `warnings` what would be saved anyway (node-flow's extra checks on what Conductor would run: a node that never runs, an expression naming no node).",
  tags,
  body: WorkflowDefinitionBodySchema,
  responses: { 200: z.object({ valid: z.boolean(), problems: z.array(ProblemFieldErrorSchema), warnings: z.array(ProblemFieldErrorSchema) }) },
  handler: async ({ deps, namespace, body }) => {
    const result = validateDefinition(body);
    const problems = result.ok ? await missingDispatchReferences(deps.db, namespace.id, result.definition) : result.problems;
    return { status: 200 as const, body: { valid: problems.length === 0, problems: problems.map(fieldError), warnings: result.warnings.map(fieldError) } };
  },
});
