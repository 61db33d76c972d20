import { sql } from "kysely";
import type { Kysely, SelectQueryBuilder, Transaction } from "kysely";
import type { Db } from "@/db/pool";
import { json } from "@/db/json";
import type { Database, WorkflowDefinitionRow, WorkflowStatus } from "@/db/schema";

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
  /** The most recently started run of any version of this name, or null when it never ran. */
  lastRun: { id: string; status: WorkflowStatus; startedAt: Date } | null;
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
  const rows = await listLatestWorkflowDefinitionsStatement(db, filter).execute();
  return rows.map(({ lastRunId, lastRunStatus, lastRunStartedAt, ...row }) => ({
    ...row,
    // count(*) is a bigint, which pg hands over as a string.
    versionCount: Number(row.versionCount),
    lastRun: lastRunId !== null && lastRunStatus !== null && lastRunStartedAt !== null ? { id: lastRunId, status: lastRunStatus, startedAt: lastRunStartedAt } : null,
  }));
}

/** listLatestWorkflowDefinitions' statement; exported for the plan test. */
export function listLatestWorkflowDefinitionsStatement(db: Db, filter: WorkflowDefinitionListFilter) {
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
          "d.namespaceId",
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
    // One point lookup per listed name, after the search has narrowed the
    // names: the newest run by ("namespaceId","defName","startedAt" DESC, "id"
    // DESC) is the first entry of WorkflowExecutions_def_idx in each monthly
    // partition, merged and cut at one row. Never a scan or sort of the runs,
    // however many a workflow has (a GROUP BY over the executions would read
    // every run of every listed workflow to keep one each).
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom("WorkflowExecutions as e")
          .select(["e.id as lastRunId", "e.status as lastRunStatus", "e.startedAt as lastRunStartedAt"])
          .whereRef("e.namespaceId", "=", "latest.namespaceId")
          .whereRef("e.defName", "=", "latest.name")
          .orderBy("e.startedAt", "desc")
          .orderBy("e.id", "desc")
          .limit(1)
          .as("r"),
      (join) => join.onTrue(),
    )
    .select(["latest.id", "latest.name", "latest.latestVersion", "latest.versionCount", "latest.description", "latest.updatedAt", "r.lastRunId", "r.lastRunStatus", "r.lastRunStartedAt"])
    .$if(search.length > 0, (qb) =>
      qb.where((eb) =>
        eb.or([eb("latest.name", "ilike", containsPattern(search)), eb("latest.description", "ilike", containsPattern(search))]),
      ),
    )
    .orderBy("latest.name");
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
  return definitionVersion(db.selectFrom("WorkflowDefinitions").selectAll(), namespaceId, name, version).executeTakeFirst();
}

/** The version getWorkflowDefinition's rule picks: `version`, or the latest unarchived one. */
function definitionVersion<O>(
  query: SelectQueryBuilder<Database, "WorkflowDefinitions", O>,
  namespaceId: string,
  name: string,
  version?: number,
): SelectQueryBuilder<Database, "WorkflowDefinitions", O> {
  const named = query.where("namespaceId", "=", namespaceId).where("name", "=", name);
  return version === undefined ? named.where("archivedAt", "is", null).orderBy("version", "desc").limit(1) : named.where("version", "=", version);
}

/** What a start needs of a definition version (getDefinitionToStart). */
export interface DefinitionToStart {
  name: string;
  version: number;
  /** The graph's initial variables, or null when it has none. */
  variables: unknown;
  /** The graph's inputSchema as stored JSON text, or null: the text is its validator's cache key (start-execution.ts). */
  inputSchemaText: string | null;
}

/**
 * {@link getWorkflowDefinition} for a start: the same version, but only the two
 * parts of its graph a start reads. The whole row is the diagram and its
 * compiled blueprint — 210 KB of JSON for a 200-node chain — which every start
 * read and parsed to use neither: a scratch loop of starts of such a
 * definition took 6.8–7.4 ms of the web process's CPU each
 * (docs/performance.md).
 */
export async function getDefinitionToStart(db: Db, namespaceId: string, name: string, version?: number): Promise<DefinitionToStart | undefined> {
  const query = db
    .selectFrom("WorkflowDefinitions")
    .select(["name", "version", sql<unknown>`"graph" -> 'variables'`.as("variables"), sql<string | null>`"graph" ->> 'inputSchema'`.as("inputSchemaText")]);
  return definitionVersion(query, namespaceId, name, version).executeTakeFirst();
}

export interface InsertWorkflowDefinitionVersionInput {
  namespaceId: string;
  name: string;
  description: string | null;
  /** Builds the stored graph for the version allocated (the graph records its own version). */
  graph: (version: number) => unknown;
  blueprint: unknown;
  createdBy?: string | null;
  /** The optional save message ("added the refund branch"); blank is stored as none. */
  message?: string | null;
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
            message: input.message?.trim() ? input.message.trim() : null,
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

/**
 * The newest unarchived version number of `name` in `namespaceId`, or null
 * when every version is archived (or there is none). A backward scan of the
 * ("namespaceId","name","version") unique index, stopping at the first
 * unarchived row.
 */
export async function latestWorkflowDefinitionVersion(db: Db, namespaceId: string, name: string): Promise<number | null> {
  const row = await db
    .selectFrom("WorkflowDefinitions")
    .select("version")
    .where("namespaceId", "=", namespaceId)
    .where("name", "=", name)
    .where("archivedAt", "is", null)
    .orderBy("version", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.version ?? null;
}

/** One entry of a definition's version history: what the editor's history list shows, without the graph. */
export interface WorkflowDefinitionVersionSummary {
  version: number;
  message: string | null;
  description: string | null;
  createdAt: Date;
  /** The stored "createdBy" (`user:<id>`, `apiKey:<id>`, or free text from a CLI import), or null. */
  createdBy: string | null;
  /** For people: the user's display name or email, the API key's name, else the stored text. */
  createdByDisplay: string | null;
  nodeCount: number;
  archivedAt: Date | null;
}

/**
 * Every version of `name` in `namespaceId`, newest first, archived ones
 * included (a deleted workflow's history stays readable: its runs point at
 * it). At most `limit` versions.
 *
 * "createdBy" is text, not a foreign key (it outlives users and keys), so the
 * display name is joined by its `user:`/`apiKey:` prefix. The node count reads
 * each graph's array length in Postgres, so no graph crosses the wire.
 */
export async function listWorkflowDefinitionVersions(
  db: Db,
  input: { namespaceId: string; name: string; limit: number },
): Promise<WorkflowDefinitionVersionSummary[]> {
  const rows = await db
    .selectFrom("WorkflowDefinitions as d")
    .leftJoin("Users as u", (join) => join.on(sql<boolean>`${sql.ref("d.createdBy")} = 'user:' || ${sql.ref("u.id")}::text`))
    .leftJoin("ApiKeys as k", (join) =>
      join.on(sql<boolean>`${sql.ref("d.createdBy")} = 'apiKey:' || ${sql.ref("k.id")}::text`).onRef("k.namespaceId", "=", "d.namespaceId"),
    )
    .select([
      "d.version",
      "d.message",
      "d.description",
      "d.createdAt",
      "d.createdBy",
      "d.archivedAt",
      sql<string | null>`coalesce(${sql.ref("u.displayName")}, ${sql.ref("u.email")}, 'API key ' || ${sql.ref("k.name")}, ${sql.ref("d.createdBy")})`.as("createdByDisplay"),
      sql<number>`coalesce(jsonb_array_length(CASE WHEN jsonb_typeof(${sql.ref("d.graph")} -> 'nodes') = 'array' THEN ${sql.ref("d.graph")} -> 'nodes' END), 0)`.as(
        "nodeCount",
      ),
    ])
    .where("d.namespaceId", "=", input.namespaceId)
    .where("d.name", "=", input.name)
    .orderBy("d.version", "desc")
    .limit(input.limit)
    .execute();
  return rows.map((row) => ({ ...row, nodeCount: Number(row.nodeCount) }));
}

/**
 * Archives every unarchived version of `name` — what "delete" means for a
 * definition. Rows stay: runs reference their (name, version), and an
 * explicit version stays readable (getWorkflowDefinition). Returns the
 * versions archived, none when the name has no live version. Runs in the
 * caller's transaction (the service writes its audit row in the same one).
 */
export async function archiveWorkflowDefinitionVersions(
  db: Kysely<Database>,
  input: { namespaceId: string; name: string },
): Promise<number[]> {
  const rows = await db
    .updateTable("WorkflowDefinitions")
    .set({ archivedAt: sql<Date>`now()` })
    .where("namespaceId", "=", input.namespaceId)
    .where("name", "=", input.name)
    .where("archivedAt", "is", null)
    .returning("version")
    .execute();
  return rows.map((r) => r.version).sort((a, b) => a - b);
}

/**
 * Stores an inline definition (a SUB_WORKFLOW's `workflowDefinition`, a start
 * request's `workflowDef`) under its content-addressed name at version 1,
 * archived from birth so no list or picker shows it; an explicit version
 * still starts it. The same content is the same row: a second insert, or one
 * racing this, changes nothing (ON CONFLICT DO NOTHING on the unique key).
 */
export async function insertInlineWorkflowDefinition(
  db: Kysely<Database>,
  input: { namespaceId: string; name: string; description: string | null; graph: unknown; blueprint: unknown },
): Promise<void> {
  await db
    .insertInto("WorkflowDefinitions")
    .values({
      namespaceId: input.namespaceId,
      name: input.name,
      version: 1,
      description: input.description,
      graph: json(input.graph),
      blueprint: json(input.blueprint),
      createdBy: "inline",
      archivedAt: sql<Date>`now()`,
    })
    .onConflict((oc) => oc.columns(["namespaceId", "name", "version"]).doNothing())
    .execute();
}
