import type { Kysely } from "kysely";
import type { Database, NamespaceRow } from "../../db/schema";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

export type Namespace = NamespaceRow;

/** The slug rule of "Namespaces"."name" (0001's CHECK), for validating input before it reaches the database. */
export const NAMESPACE_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

export class DuplicateNamespaceError extends Error {
  override name = "DuplicateNamespaceError";
  constructor(name: string) {
    super(`A namespace named "${name}" already exists.`);
  }
}

export async function findNamespaceByName(db: Executor, name: string): Promise<Namespace | null> {
  return (await db.selectFrom("Namespaces").selectAll().where("name", "=", name).executeTakeFirst()) ?? null;
}

export async function findNamespaceById(db: Executor, id: string): Promise<Namespace | null> {
  return (await db.selectFrom("Namespaces").selectAll().where("id", "=", id).executeTakeFirst()) ?? null;
}

/** Every namespace by name: what the owner sees. */
export async function listNamespaces(db: Executor): Promise<Namespace[]> {
  return db.selectFrom("Namespaces").selectAll().orderBy("name").execute();
}

export async function insertNamespace(db: Executor, input: { name: string; description?: string | null }): Promise<Namespace> {
  try {
    return await db
      .insertInto("Namespaces")
      .values({ name: input.name, description: input.description ?? null })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if ((error as { code?: string }).code === "23505") throw new DuplicateNamespaceError(input.name);
    throw error;
  }
}
