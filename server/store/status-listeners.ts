import { sql } from "kysely";
import type { Kysely, Selectable } from "kysely";
import type { Database } from "../../db/schema";

/** StatusListeners per (namespace, name): a URL called on a workflow's status change (migration 0025's trigger writes the events). */

type Executor = Kysely<Database>;
export type StatusListenerRow = Selectable<Database["StatusListeners"]>;

export interface StatusListenerSettings {
  workflowName?: string | null;
  statuses: string[];
  url: string;
  secretName?: string | null;
  enabled: boolean;
}

export async function upsertStatusListener(
  db: Executor,
  input: { namespaceId: string; name: string; settings: StatusListenerSettings; actor: string | null },
): Promise<{ row: StatusListenerRow; created: boolean }> {
  const values = {
    workflowName: input.settings.workflowName ?? null,
    statuses: input.settings.statuses,
    url: input.settings.url,
    secretName: input.settings.secretName ?? null,
    enabled: input.settings.enabled,
  };
  const row = await db
    .insertInto("StatusListeners")
    .values({ namespaceId: input.namespaceId, name: input.name, ...values, createdBy: input.actor, updatedBy: input.actor })
    .onConflict((oc) => oc.columns(["namespaceId", "name"]).doUpdateSet({ ...values, updatedBy: input.actor, updatedAt: sql`now()` }))
    .returningAll()
    .returning(sql<boolean>`xmax = 0`.as("created"))
    .executeTakeFirstOrThrow();
  const { created, ...stored } = row;
  return { row: stored, created };
}

export async function getStatusListener(db: Executor, namespaceId: string, name: string): Promise<StatusListenerRow | undefined> {
  return db.selectFrom("StatusListeners").selectAll().where("namespaceId", "=", namespaceId).where("name", "=", name).executeTakeFirst();
}

/** By id within a namespace: the relay's lookup (an id of another namespace finds nothing). */
export async function getStatusListenerById(db: Executor, namespaceId: string, id: string): Promise<StatusListenerRow | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  return db.selectFrom("StatusListeners").selectAll().where("namespaceId", "=", namespaceId).where("id", "=", id).executeTakeFirst();
}

export async function listStatusListeners(db: Executor, namespaceId: string): Promise<StatusListenerRow[]> {
  return db.selectFrom("StatusListeners").selectAll().where("namespaceId", "=", namespaceId).orderBy("name").limit(1000).execute();
}

export async function deleteStatusListener(db: Executor, namespaceId: string, name: string): Promise<StatusListenerRow | undefined> {
  return db.deleteFrom("StatusListeners").where("namespaceId", "=", namespaceId).where("name", "=", name).returningAll().executeTakeFirst();
}
