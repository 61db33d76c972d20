import type { Db } from "../../db/pool";
import { appendAuditEvent } from "../store/audit-events";
import { DuplicateNamespaceError, insertNamespace, NAMESPACE_NAME_PATTERN } from "../store/namespaces";
import type { Namespace } from "../store/namespaces";
import { auditActor } from "./audit-actor";
import { IdentityError } from "./identity-error";
import type { Principal } from "./principal";

/** An owner creates a namespace. Nobody else is in it until an admin (or the owner) adds members or groups. */
export async function createNamespace(db: Db, actor: Principal, input: { name: string; description?: string | null }): Promise<Namespace> {
  if (actor.kind !== "user" || !actor.isOwner) throw new IdentityError("forbidden", "Only an owner can create namespaces.");
  if (!NAMESPACE_NAME_PATTERN.test(input.name)) {
    throw new IdentityError("invalid-input", "A namespace name is 1 to 63 lowercase letters, digits and hyphens, starting with a letter or digit.");
  }
  try {
    return await db.transaction().execute(async (trx) => {
      const namespace = await insertNamespace(trx, input);
      await appendAuditEvent(trx, {
        namespaceId: namespace.id,
        ...auditActor(actor),
        action: "namespace.create",
        resourceType: "namespace",
        resourceId: namespace.id,
        details: { name: namespace.name },
      });
      return namespace;
    });
  } catch (error) {
    if (error instanceof DuplicateNamespaceError) throw new IdentityError("conflict", error.message);
    throw error;
  }
}
