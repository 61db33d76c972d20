import type { Db } from "../../db/pool";
import { appendAuditEvent } from "../store/audit-events";
import { deleteGroup as deleteGroupRow, deleteGroupMember, DuplicateGroupError, insertGroup, insertGroupMember, updateGroupRoles } from "../store/groups";
import { findUserByEmail } from "../store/users";
import { auditActor } from "./audit-actor";
import { IdentityError } from "./identity-error";
import type { NamespaceRole, Principal } from "./principal";

/**
 * Groups of users that carry roles in one namespace. The caller has been
 * authorized as an admin of `namespaceId`; the repository filters every
 * statement by it again, so a group id from another namespace is "not found".
 */

const GROUP_NAME = /^\S(?:.{0,98}\S)?$/;
const noSuchGroup = () => new IdentityError("not-found", "No such group in this namespace.");

export async function createGroup(
  db: Db,
  actor: Principal,
  input: { namespaceId: string; name: string; description?: string | null; roles: NamespaceRole[] },
): Promise<{ id: string }> {
  const name = input.name.trim();
  if (!GROUP_NAME.test(name)) throw new IdentityError("invalid-input", "A group name is 1 to 100 characters.");
  try {
    return await db.transaction().execute(async (trx) => {
      const group = await insertGroup(trx, { ...input, name, roles: [...new Set(input.roles)] });
      await appendAuditEvent(trx, {
        namespaceId: input.namespaceId,
        ...auditActor(actor),
        action: "group.create",
        resourceType: "group",
        resourceId: group.id,
        details: { name, roles: input.roles },
      });
      return group;
    });
  } catch (error) {
    if (error instanceof DuplicateGroupError) throw new IdentityError("conflict", error.message);
    throw error;
  }
}

export async function deleteGroup(db: Db, actor: Principal, input: { namespaceId: string; groupId: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await deleteGroupRow(trx, input.namespaceId, input.groupId))) throw noSuchGroup();
    await appendAuditEvent(trx, { namespaceId: input.namespaceId, ...auditActor(actor), action: "group.delete", resourceType: "group", resourceId: input.groupId });
  });
}

export async function setGroupRoles(db: Db, actor: Principal, input: { namespaceId: string; groupId: string; roles: NamespaceRole[] }): Promise<void> {
  const roles = [...new Set(input.roles)];
  await db.transaction().execute(async (trx) => {
    if (!(await updateGroupRoles(trx, input.namespaceId, input.groupId, roles))) throw noSuchGroup();
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(actor),
      action: "group.setRoles",
      resourceType: "group",
      resourceId: input.groupId,
      details: { roles },
    });
  });
}

/** Adds the user with this email to a group of the namespace (again: no-op). */
export async function addGroupMember(
  db: Db,
  actor: Principal,
  input: { namespaceId: string; groupId: string; email: string },
): Promise<{ userId: string }> {
  return db.transaction().execute(async (trx) => {
    const user = await findUserByEmail(trx, input.email);
    if (!user) throw new IdentityError("not-found", `No user has the email ${input.email.trim()}: an owner adds users first.`);
    if (!(await insertGroupMember(trx, input.namespaceId, input.groupId, user.id))) throw noSuchGroup();
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(actor),
      action: "group.member.add",
      resourceType: "group",
      resourceId: input.groupId,
      details: { userId: user.id, email: user.email },
    });
    return { userId: user.id };
  });
}

export async function removeGroupMember(db: Db, actor: Principal, input: { namespaceId: string; groupId: string; userId: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await deleteGroupMember(trx, input.namespaceId, input.groupId, input.userId))) {
      throw new IdentityError("not-found", "That user is not in this group.");
    }
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(actor),
      action: "group.member.remove",
      resourceType: "group",
      resourceId: input.groupId,
      details: { userId: input.userId },
    });
  });
}
