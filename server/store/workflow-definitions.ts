import { sql } from "kysely";
import type { Db } from "@/db/pool";

/** One row of the workflows list: the newest version of a definition. */
export interface WorkflowDefinitionSummary {
  id: string;
  name: string;
  latestVersion: number;
  /** How many unarchived versions exist under this name. */
  versionCount: number;
  description: string | null;
  /** When the newest version was saved; versions are immutable, so that is when the definition last changed. */
  updatedAt: Date;
}

export interface WorkflowDefinitionListFilter {
  /** The namespace's name (not its id). */
  namespace: string;
  /** Case-insensitive substring of the name or the latest version's description. */
  search?: string;
}

/**
 * Escapes LIKE wildcards so a search for `50%_off` matches that text and not
 * "50 anything off"; backslash is Postgres's default LIKE escape character.
 */
export function containsPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The latest unarchived version of every definition in a namespace, ordered by name.
 *
 * The search applies *after* picking the latest version: filtering first would
 * let an old version's description match and list that old version as if it
 * were current.
 */
export async function listLatestWorkflowDefinitions(
  db: Db,
  filter: WorkflowDefinitionListFilter,
): Promise<WorkflowDefinitionSummary[]> {
  const search = filter.search?.trim() ?? "";
  return db
    .with("latest", (qb) =>
      qb
        .selectFrom("WorkflowDefinitions as d")
        .innerJoin("Namespaces as n", "n.id", "d.namespaceId")
        .where("n.name", "=", filter.namespace)
        // An archived version is hidden from pickers, this list included; a
        // definition whose every version is archived drops out.
        .where("d.archivedAt", "is", null)
        // DISTINCT ON keeps the first row per name in ORDER BY order: the highest version.
        .distinctOn("d.name")
        .select([
          "d.id",
          "d.name",
          "d.version as latestVersion",
          "d.description",
          "d.createdAt as updatedAt",
          // Window functions run before DISTINCT ON, so this counts every version of the name.
          sql<number>`count(*) OVER (PARTITION BY ${sql.ref("d.name")})`.as("versionCount"),
        ])
        .orderBy("d.name")
        .orderBy("d.version", "desc"),
    )
    .selectFrom("latest")
    .select(["id", "name", "latestVersion", "versionCount", "description", "updatedAt"])
    .$if(search.length > 0, (qb) =>
      qb.where((eb) =>
        eb.or([eb("name", "ilike", containsPattern(search)), eb("description", "ilike", containsPattern(search))]),
      ),
    )
    .orderBy("name")
    .execute();
}
