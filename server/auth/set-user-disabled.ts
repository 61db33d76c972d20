import type { Db } from "../../db/pool";
import { appendAuditEvent } from "../store/audit-events";
import { deleteSessionsOfUser } from "../store/sessions";
import { countOtherActiveOwners, findUserById, setUserDisabledAt } from "../store/users";
import type { User } from "../store/users";
import { auditActor } from "./audit-actor";
import { IdentityError } from "./identity-error";
import type { Principal } from "./principal";

/**
 * An owner disables or re-enables a user. Disabling ends every session of the
 * user in the same transaction, and their API keys stop authenticating
 * (api-keys.ts refuses keys of a disabled owner), so it takes effect on the
 * next request, not at the next expiry.
 *
 * Refused: disabling yourself, or the last enabled owner — either would leave
 * nobody able to undo it without database access.
 */
export async function setUserDisabled(db: Db, actor: Principal, input: { userId: string; disabled: boolean }): Promise<User> {
  if (actor.kind !== "user" || !actor.isOwner) throw new IdentityError("forbidden", "Only an owner can disable or enable users.");
  if (input.disabled && input.userId === actor.userId) throw new IdentityError("conflict", "You cannot disable your own account.");
  return db.transaction().execute(async (trx) => {
    const target = await findUserById(trx, input.userId);
    if (!target) throw new IdentityError("not-found", "No such user.");
    if (input.disabled && target.isOwner && (await countOtherActiveOwners(trx, target.id)) === 0) {
      throw new IdentityError("conflict", "This is the last enabled owner: make another user an owner first.");
    }
    const updated = await setUserDisabledAt(trx, input.userId, input.disabled);
    if (!updated) throw new IdentityError("not-found", "No such user.");
    if (input.disabled) await deleteSessionsOfUser(trx, input.userId);
    await appendAuditEvent(trx, {
      namespaceId: null,
      ...auditActor(actor),
      action: input.disabled ? "user.disable" : "user.enable",
      resourceType: "user",
      resourceId: updated.id,
      details: { email: updated.email },
    });
    return updated;
  });
}
