import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database, MemberRole } from "../../db/schema";
import { NAMESPACE_ROLES } from "../auth/principal";
import type { NamespaceRole } from "../auth/principal";

/** A Kysely instance or a transaction: the caller owns the transaction boundary. */
type Executor = Kysely<Database>;

// db/ cannot import server/, so the column type repeats the role names; this
// line fails to compile the day the two lists differ.
const sameRoles: [MemberRole, NamespaceRole] extends [NamespaceRole, MemberRole] ? true : never = true;
void sameRoles;

/** The strongest of `roles` by NAMESPACE_ROLES order (each role includes the weaker ones); null for none. */
export function strongestRole(roles: Iterable<string>): NamespaceRole | null {
  let best = -1;
  for (const role of roles) best = Math.max(best, NAMESPACE_ROLES.indexOf(role as NamespaceRole));
  return best < 0 ? null : (NAMESPACE_ROLES[best] ?? null);
}

/**
 * Every role a user holds in one namespace: the direct membership plus each
 * role of each group of that namespace the user belongs to. One round trip,
 * on every authorization ("NamespaceMembers" PK, "GroupMembers_user_idx").
 */
export async function rolesOfUserInNamespace(db: Executor, namespaceId: string, userId: string): Promise<NamespaceRole[]> {
  const { rows } = await sql<{ role: NamespaceRole }>`
    SELECT m."role" AS "role"
      FROM "NamespaceMembers" m
     WHERE m."namespaceId" = ${namespaceId} AND m."userId" = ${userId}
    UNION
    SELECT unnest(g."roles") AS "role"
      FROM "GroupMembers" gm
      JOIN "Groups" g ON g."id" = gm."groupId"
     WHERE gm."userId" = ${userId} AND g."namespaceId" = ${namespaceId}`.execute(db);
  return rows.map((r) => r.role);
}

export interface NamespaceAccess {
  namespaceId: string;
  name: string;
  description: string | null;
  role: NamespaceRole;
}

/** Every namespace where a user holds some role, with the strongest one, by name. */
export async function listNamespacesOfUser(db: Executor, userId: string): Promise<NamespaceAccess[]> {
  const { rows } = await sql<{ namespaceId: string; name: string; description: string | null; roles: string[] }>`
    SELECT n."id" AS "namespaceId", n."name", n."description", array_agg(r."role") AS "roles"
      FROM (
        SELECT m."namespaceId", m."role" FROM "NamespaceMembers" m WHERE m."userId" = ${userId}
        UNION
        SELECT g."namespaceId", unnest(g."roles") FROM "GroupMembers" gm JOIN "Groups" g ON g."id" = gm."groupId"
         WHERE gm."userId" = ${userId}
      ) r
      JOIN "Namespaces" n ON n."id" = r."namespaceId"
     GROUP BY n."id", n."name", n."description"
     ORDER BY n."name"`.execute(db);
  const result: NamespaceAccess[] = [];
  for (const row of rows) {
    const role = strongestRole(row.roles);
    // A group with an empty roles array contributes no row to the union, so
    // every row here has a role; the guard keeps the type honest.
    if (role) result.push({ namespaceId: row.namespaceId, name: row.name, description: row.description, role });
  }
  return result;
}

export interface NamespaceMember {
  userId: string;
  email: string;
  displayName: string | null;
  role: NamespaceRole;
  disabled: boolean;
  createdAt: Date;
}

/** A namespace's direct members, by email. Group-derived roles are listed with the groups. */
export async function listNamespaceMembers(db: Executor, namespaceId: string): Promise<NamespaceMember[]> {
  const rows = await db
    .selectFrom("NamespaceMembers as m")
    .innerJoin("Users as u", "u.id", "m.userId")
    .select(["m.userId", "u.email", "u.displayName", "m.role", "u.disabledAt", "m.createdAt"])
    .where("m.namespaceId", "=", namespaceId)
    .orderBy(sql`lower(${sql.ref("u.email")})`)
    .execute();
  return rows.map((r) => ({
    userId: r.userId,
    email: r.email,
    displayName: r.displayName,
    role: r.role,
    disabled: r.disabledAt !== null,
    createdAt: r.createdAt,
  }));
}

/** Adds a member or changes their role. */
export async function upsertNamespaceMember(db: Executor, input: { namespaceId: string; userId: string; role: NamespaceRole }): Promise<void> {
  await db
    .insertInto("NamespaceMembers")
    .values({ namespaceId: input.namespaceId, userId: input.userId, role: input.role })
    .onConflict((oc) => oc.columns(["namespaceId", "userId"]).doUpdateSet({ role: input.role }))
    .execute();
}

/** Removes a direct membership; false when there was none. Group memberships are untouched. */
export async function deleteNamespaceMember(db: Executor, namespaceId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("NamespaceMembers")
    .where("namespaceId", "=", namespaceId)
    .where("userId", "=", userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
