import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import type { NamespaceRole } from "../auth/principal";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

/**
 * Groups belong to one namespace and carry the roles their members get there.
 * Every statement filters by "namespaceId" as well as the group id: the edge
 * (authorizeNamespace) checks the caller may act in the namespace, and this
 * second filter is what keeps a group id from another namespace, pasted into a
 * request, from being read or changed through it.
 */

export interface GroupMember {
  userId: string;
  email: string;
  displayName: string | null;
}

export interface Group {
  id: string;
  name: string;
  description: string | null;
  roles: NamespaceRole[];
  createdAt: Date;
  members: GroupMember[];
}

export class DuplicateGroupError extends Error {
  override name = "DuplicateGroupError";
  constructor(name: string) {
    super(`A group named "${name}" already exists in this namespace.`);
  }
}

/** A namespace's groups by name, each with its members by email. */
export async function listGroups(db: Executor, namespaceId: string): Promise<Group[]> {
  const groups = await db
    .selectFrom("Groups")
    .select(["id", "name", "description", "roles", "createdAt"])
    .where("namespaceId", "=", namespaceId)
    .orderBy("name")
    .execute();
  if (groups.length === 0) return [];
  const members = await db
    .selectFrom("GroupMembers as gm")
    .innerJoin("Users as u", "u.id", "gm.userId")
    .select(["gm.groupId", "gm.userId", "u.email", "u.displayName"])
    .where(
      "gm.groupId",
      "in",
      groups.map((g) => g.id),
    )
    .orderBy(sql`lower(${sql.ref("u.email")})`)
    .execute();
  return groups.map((g) => ({
    id: g.id,
    name: g.name,
    description: g.description,
    roles: g.roles as NamespaceRole[],
    createdAt: g.createdAt,
    members: members.filter((m) => m.groupId === g.id).map((m) => ({ userId: m.userId, email: m.email, displayName: m.displayName })),
  }));
}

export async function insertGroup(
  db: Executor,
  input: { namespaceId: string; name: string; description?: string | null; roles: NamespaceRole[] },
): Promise<{ id: string }> {
  try {
    return await db
      .insertInto("Groups")
      .values({ namespaceId: input.namespaceId, name: input.name, description: input.description ?? null, roles: input.roles })
      .returning("id")
      .executeTakeFirstOrThrow();
  } catch (error) {
    if ((error as { code?: string }).code === "23505") throw new DuplicateGroupError(input.name);
    throw error;
  }
}

/** True when the group exists in that namespace. */
export async function groupExists(db: Executor, namespaceId: string, groupId: string): Promise<boolean> {
  const row = await db.selectFrom("Groups").select("id").where("id", "=", groupId).where("namespaceId", "=", namespaceId).executeTakeFirst();
  return row !== undefined;
}

/** Deletes a group (its memberships cascade); false when no such group is in that namespace. */
export async function deleteGroup(db: Executor, namespaceId: string, groupId: string): Promise<boolean> {
  const result = await db.deleteFrom("Groups").where("id", "=", groupId).where("namespaceId", "=", namespaceId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Replaces a group's roles; false when no such group is in that namespace. */
export async function updateGroupRoles(db: Executor, namespaceId: string, groupId: string, roles: NamespaceRole[]): Promise<boolean> {
  const result = await db
    .updateTable("Groups")
    .set({ roles })
    .where("id", "=", groupId)
    .where("namespaceId", "=", namespaceId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Adds a user to a group of the namespace; false when no such group is in it.
 * The INSERT … SELECT makes the namespace check and the insert one statement,
 * so a group id of another namespace inserts nothing. Adding a member twice is
 * a no-op.
 */
export async function insertGroupMember(db: Executor, namespaceId: string, groupId: string, userId: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    WITH "group" AS (
      SELECT "id" FROM "Groups" WHERE "id" = ${groupId} AND "namespaceId" = ${namespaceId}
    ), "added" AS (
      INSERT INTO "GroupMembers" ("groupId", "userId")
      SELECT "id", ${userId} FROM "group"
      ON CONFLICT ("groupId", "userId") DO NOTHING
    )
    SELECT EXISTS (SELECT 1 FROM "group") AS "found"`.execute(db);
  return rows[0]?.found ?? false;
}

/** Removes a user from a group of the namespace; false when they were not in such a group. */
export async function deleteGroupMember(db: Executor, namespaceId: string, groupId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("GroupMembers")
    .where("groupId", "=", groupId)
    .where("userId", "=", userId)
    .where("groupId", "in", (qb) => qb.selectFrom("Groups").select("id").where("namespaceId", "=", namespaceId))
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
