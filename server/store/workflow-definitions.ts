import { sql } from "kysely";
import type { Transaction } from "kysely";
import type { Db } from "@/db/pool";
import { json } from "@/db/json";
import type { Database, WorkflowDefinitionRow } from "@/db/schema";

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

/** A stored definition version: its graph (the definition as saved) and the blueprint compiled from it. */
export type WorkflowDefinitionVersionRow = WorkflowDefinitionRow;

/**
 * One version of a definition in `namespaceId`, or undefined. With `version`
 * omitted, the latest *unarchived* version (archiving hides a version from
 * pickers, "latest" included); an explicit version is returned archived or not,
 * so runs pinned to it keep resolving.
 */
export async function getWorkflowDefinition(
  db: Db,
  namespaceId: string,
  name: string,
  version?: number,
): Promise<WorkflowDefinitionVersionRow | undefined> {
  let query = db
    .selectFrom("WorkflowDefinitions")
    .selectAll()
    .where("namespaceId", "=", namespaceId)
    .where("name", "=", name);
  query =
    version === undefined
      ? query.where("archivedAt", "is", null).orderBy("version", "desc").limit(1)
      : query.where("version", "=", version);
  return query.executeTakeFirst();
}

export interface InsertWorkflowDefinitionVersionInput {
  namespaceId: string;
  name: string;
  description: string | null;
  /** Builds the stored graph for the version allocated (the graph records its own version). */
  graph: (version: number) => unknown;
  blueprint: unknown;
  createdBy?: string | null;
  /**
   * Runs in the insert's transaction, after the insert: what must commit or
   * roll back with the new version (its AuditEvents row). Throwing rolls the
   * version back. It may run more than once — each retried attempt is a new
   * transaction — so it writes through `trx` only.
   */
  alsoInTransaction?: (trx: Transaction<Database>, row: WorkflowDefinitionRow) => Promise<void>;
}

/** Postgres' unique_violation. */
const UNIQUE_VIOLATION = "23505";

function pgCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * Inserts the next version (max + 1) of `name` in `namespaceId` and returns the
 * stored row.
 *
 * max + 1 is only safe when no other registration of the same name sits between
 * our read and our commit, so each attempt runs in its own transaction that
 * first takes a transaction-scoped advisory lock on (namespace, name):
 * concurrent registrations of one name queue behind each other, and the max()
 * after the lock — a new statement, so a fresh snapshot under READ COMMITTED —
 * sees the previous one's commit. Registrations of different names do not
 * block each other (bar a hash collision, which only serialises them). The
 * UNIQUE ("namespaceId","name","version") constraint stays the arbiter: should
 * a writer that skips the lock take the version first, the unique violation is
 * retried with a fresh max() rather than surfaced to the user.
 */
export async function insertNextWorkflowDefinitionVersion(
  db: Db,
  input: InsertWorkflowDefinitionVersionInput,
): Promise<WorkflowDefinitionRow> {
  const attempts = 5;
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(hashtext('WorkflowDefinitions'), hashtext(${input.namespaceId}::text || '/' || ${input.name}::text))`.execute(
          trx,
        );
        const { last } = await trx
          .selectFrom("WorkflowDefinitions")
          .select((eb) => eb.fn.max("version").as("last"))
          .where("namespaceId", "=", input.namespaceId)
          .where("name", "=", input.name)
          .executeTakeFirstOrThrow();
        const version = Number(last ?? 0) + 1;
        const row = await trx
          .insertInto("WorkflowDefinitions")
          .values({
            namespaceId: input.namespaceId,
            name: input.name,
            version,
            description: input.description,
            graph: json(input.graph(version)),
            blueprint: json(input.blueprint),
            createdBy: input.createdBy ?? null,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await input.alsoInTransaction?.(trx, row);
        return row;
      });
    } catch (error) {
      if (pgCode(error) === UNIQUE_VIOLATION && attempt < attempts) continue;
      throw error;
    }
  }
}
