import type { Db } from "../../db/pool";
import { appendAuditEvent } from "../store/audit-events";
import { deleteNamespaceMember, upsertNamespaceMember } from "../store/namespace-members";
import { findUserByEmail } from "../store/users";
import { auditActor } from "./audit-actor";
import { IdentityError } from "./identity-error";
import type { NamespaceRole, Principal } from "./principal";

/**
 * Direct namespace membership. The caller has already been authorized as an
 * admin of `namespaceId` (authorizeNamespace); every statement still names the
 * namespace, so nothing here can reach another one.
 */

/** Adds the user with this email to the namespace, or changes their role. */
export async function setNamespaceMember(
  db: Db,
  actor: Principal,
  input: { namespaceId: string; email: string; role: NamespaceRole },
): Promise<{ userId: string; email: string; role: NamespaceRole }> {
  return db.transaction().execute(async (trx) => {
    const user = await findUserByEmail(trx, input.email);
    if (!user) throw new IdentityError("not-found", `No user has the email ${input.email.trim()}: an owner adds users first.`);
    await upsertNamespaceMember(trx, { namespaceId: input.namespaceId, userId: user.id, role: input.role });
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(actor),
      action: "namespace.member.set",
      resourceType: "user",
      resourceId: user.id,
      details: { email: user.email, role: input.role },
    });
    return { userId: user.id, email: user.email, role: input.role };
  });
}

/** Removes a direct membership. Roles the user holds through groups stay. */
export async function removeNamespaceMember(db: Db, actor: Principal, input: { namespaceId: string; userId: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await deleteNamespaceMember(trx, input.namespaceId, input.userId))) {
      throw new IdentityError("not-found", "That user is not a member of this namespace.");
    }
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(actor),
      action: "namespace.member.remove",
      resourceType: "user",
      resourceId: input.userId,
    });
  });
}
