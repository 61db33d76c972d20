import { sql } from "kysely";
import type { Kysely } from "kysely";
import { json } from "../../db/json";
import type { Database, FormTemplateRow } from "../../db/schema";

/**
 * FormTemplates: versioned, reusable HUMAN forms (JSON Schema + UI schema).
 * Immutable per version (a trigger in 0003 refuses edits): a task that opened
 * on version 3 keeps showing version 3 however often the template is saved.
 * Every statement is scoped to one namespace.
 */

type Executor = Kysely<Database>;

export interface FormTemplateSummary {
  name: string;
  latestVersion: number;
  description: string | null;
  updatedAt: Date;
}

/** Every template of a namespace, by name, with its latest version's description and time. */
export async function listFormTemplates(db: Executor, namespaceId: string): Promise<FormTemplateSummary[]> {
  const { rows } = await sql<FormTemplateSummary>`
    SELECT DISTINCT ON ("name") "name", "version" AS "latestVersion", "description", "createdAt" AS "updatedAt"
      FROM "FormTemplates"
     WHERE "namespaceId" = ${namespaceId}
     ORDER BY "name", "version" DESC`.execute(db);
  return rows;
}

/** One version of a template, the latest when `version` is omitted. */
export async function getFormTemplate(db: Executor, namespaceId: string, name: string, version?: number): Promise<FormTemplateRow | undefined> {
  let query = db.selectFrom("FormTemplates").selectAll().where("namespaceId", "=", namespaceId).where("name", "=", name);
  if (version !== undefined) query = query.where("version", "=", version);
  return query.orderBy("version", "desc").limit(1).executeTakeFirst();
}

/** A template version by id, only inside `namespaceId`. */
export async function getFormTemplateById(db: Executor, namespaceId: string, id: string): Promise<FormTemplateRow | undefined> {
  return db.selectFrom("FormTemplates").selectAll().where("namespaceId", "=", namespaceId).where("id", "=", id).executeTakeFirst();
}

/** A template's versions, newest first. */
export async function listFormTemplateVersions(db: Executor, namespaceId: string, name: string): Promise<{ version: number; createdAt: Date; createdBy: string | null }[]> {
  return db
    .selectFrom("FormTemplates")
    .select(["version", "createdAt", "createdBy"])
    .where("namespaceId", "=", namespaceId)
    .where("name", "=", name)
    .orderBy("version", "desc")
    .execute();
}

/**
 * Saves the next version of a template (1 for a new name). Saves of one
 * template are serialised by a transaction-scoped advisory lock on its
 * (namespace, name), so two racing saves get versions n and n + 1 rather than
 * one of them failing on UNIQUE (namespaceId, name, version). Runs in the
 * caller's transaction, or opens one.
 */
export async function createFormTemplateVersion(
  db: Executor,
  input: { namespaceId: string; name: string; description?: string | null; schema: unknown; uiSchema: unknown; createdBy: string | null },
): Promise<FormTemplateRow> {
  if (!db.isTransaction) return db.transaction().execute((trx) => createFormTemplateVersion(trx, input));
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`form-template:${input.namespaceId}:${input.name}`}, 0))`.execute(db);
  const latest = await getFormTemplate(db, input.namespaceId, input.name);
  return db
    .insertInto("FormTemplates")
    .values({
      namespaceId: input.namespaceId,
      name: input.name,
      version: (latest?.version ?? 0) + 1,
      description: input.description ?? null,
      schema: json(input.schema),
      uiSchema: json(input.uiSchema ?? {}),
      createdBy: input.createdBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
