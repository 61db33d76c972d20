import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { NameSchema, WORKFLOW_STATUSES } from "@/engine";
import { archiveWorkflowDefinition } from "../../definitions/archive-workflow-definition";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { registerWorkflowDefinition } from "../../definitions/register-workflow-definition";
import {
  getWorkflowDefinition,
  latestWorkflowDefinitionVersion,
  listLatestWorkflowDefinitions,
  listWorkflowDefinitionVersions,
} from "../../store/workflow-definitions";
import { namespaceInput, namespaceProcedure, router } from "../init";
import { DefinitionProblemsError } from "../problem-errors";

// The namespace is required, never defaulted: a call that forgot it should
// fail, not quietly read "default". The UI passes its current namespace.
export const workflowListInput = namespaceInput.extend({
  search: z.string().max(200).optional(),
});
export type WorkflowListInput = z.input<typeof workflowListInput>;

/** The longest save message; the column's CHECK (0009) says the same. */
export const MAX_SAVE_MESSAGE_LENGTH = 2000;

// No transformer is configured, so a Date would reach the browser as a string
// while its type still said Date. The output schemas make the wire type honest.
const isoDate = z.date().transform((d) => d.toISOString());

const workflowSummaryOutput = z.object({
  id: z.string(),
  name: z.string(),
  latestVersion: z.number().int(),
  versionCount: z.number().int(),
  description: z.string().nullable(),
  updatedAt: isoDate,
  lastRun: z.object({ id: z.string(), status: z.enum(WORKFLOW_STATUSES), startedAt: isoDate }).nullable(),
});

const workflowGetInput = z.object({
  name: NameSchema,
  /** Omitted: the latest unarchived version. An explicit one is returned archived or not. */
  version: z.number().int().min(1).optional(),
});

const workflowVersionOutput = z.object({
  name: z.string(),
  version: z.number().int(),
  /** The stored graph, exactly as saved (positions included), with its assigned `version`. */
  definition: z.record(z.string(), z.unknown()),
  description: z.string().nullable(),
  message: z.string().nullable(),
  createdAt: isoDate,
  createdBy: z.string().nullable(),
  /** The newest unarchived version of the name; null once the workflow is deleted. */
  latestVersion: z.number().int().nullable(),
  /** This version is archived (the workflow was deleted, or this version hidden). */
  archived: z.boolean(),
});

const workflowVersionsInput = z.object({
  name: NameSchema,
  limit: z.number().int().min(1).max(500).default(200),
});

const versionSummaryOutput = z.object({
  version: z.number().int(),
  message: z.string().nullable(),
  description: z.string().nullable(),
  createdAt: isoDate,
  createdBy: z.string().nullable(),
  createdByDisplay: z.string().nullable(),
  nodeCount: z.number().int(),
  archived: z.boolean(),
});

const workflowSaveInput = z.object({
  // Any JSON: the engine's validator is the schema here (zod, node by node),
  // and reports every problem at once with its path and node, which one
  // up-front zod parse of the whole graph could not.
  definition: z.unknown(),
  message: z.string().trim().max(MAX_SAVE_MESSAGE_LENGTH).optional(),
});

const workflowDeleteInput = z.object({ name: NameSchema });

export const workflowsRouter = router({
  list: namespaceProcedure("read")
    .input(workflowListInput)
    .output(z.array(workflowSummaryOutput))
    .query(({ ctx, input }) => listLatestWorkflowDefinitions(ctx.db, input)),

  /** One version with its graph, for the editor; NOT_FOUND when the name (or that version) does not exist. */
  get: namespaceProcedure("read")
    .input(workflowGetInput)
    .output(workflowVersionOutput)
    .query(async ({ ctx, input }) => {
      const [row, latestVersion] = await Promise.all([
        getWorkflowDefinition(ctx.db, ctx.namespaceId, input.name, input.version),
        latestWorkflowDefinitionVersion(ctx.db, ctx.namespaceId, input.name),
      ]);
      if (row === undefined) {
        const which = input.version === undefined ? "" : ` version ${input.version}`;
        throw new TRPCError({ code: "NOT_FOUND", message: `No workflow "${input.name}"${which} in ${input.namespace}` });
      }
      return {
        name: row.name,
        version: row.version,
        definition: row.graph as Record<string, unknown>,
        description: row.description,
        message: row.message,
        createdAt: row.createdAt,
        createdBy: row.createdBy,
        latestVersion,
        archived: row.archivedAt !== null,
      };
    }),

  /** The version history of one name, newest first, archived versions included; empty for a name never saved. */
  versions: namespaceProcedure("read")
    .input(workflowVersionsInput)
    .output(z.array(versionSummaryOutput))
    .query(async ({ ctx, input }) => {
      const rows = await listWorkflowDefinitionVersions(ctx.db, { namespaceId: ctx.namespaceId, name: input.name, limit: input.limit });
      return rows.map(({ archivedAt, ...row }) => ({ ...row, archived: archivedAt !== null }));
    }),

  /**
   * Saves the definition as the next version of its name (versions are
   * immutable). An invalid definition is a BAD_REQUEST whose cause — and, over
   * HTTP, `error.data.problems` — is the engine's Problem list; nothing is stored.
   * `warnings` are the problems saved anyway (Problem, severity "warning").
   */
  save: namespaceProcedure("edit")
    .input(workflowSaveInput)
    .output(
      z.object({
        id: z.string(),
        name: z.string(),
        version: z.number().int(),
        warnings: z.array(z.object({ code: z.string(), message: z.string(), path: z.array(z.union([z.string(), z.number()])), ref: z.string().optional(), severity: z.literal("warning").optional() })),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const result = await registerWorkflowDefinition(ctx.db, {
        namespaceId: ctx.namespaceId,
        definition: input.definition,
        message: input.message ?? null,
        createdBy: createdByOfPrincipal(ctx.principal),
        actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
      });
      if (result.ok) return { id: result.id, name: result.name, version: result.version, warnings: result.warnings };
      if (result.reason === "invalid") {
        const cause = new DefinitionProblemsError(result.problems);
        throw new TRPCError({ code: "BAD_REQUEST", message: cause.message, cause });
      }
      throw new TRPCError({ code: "NOT_FOUND", message: result.message });
    }),

  /**
   * Deletes a workflow: archives every version of the name. It leaves the
   * list; its versions stay readable by number, and its runs keep theirs.
   */
  delete: namespaceProcedure("edit")
    .input(workflowDeleteInput)
    .output(z.object({ name: z.string(), archivedVersions: z.array(z.number().int()) }))
    .mutation(async ({ ctx, input }) => {
      const result = await archiveWorkflowDefinition(ctx.db, {
        namespaceId: ctx.namespaceId,
        name: input.name,
        actor: actorOfPrincipal(ctx.principal, ctx.request.ipAddress),
      });
      if (!result.ok) throw new TRPCError({ code: "NOT_FOUND", message: `No workflow "${input.name}" in ${input.namespace}` });
      return { name: result.name, archivedVersions: result.archivedVersions };
    }),
});
