import type { Db } from "../../db/pool";
import { appendAuditEvent } from "../store/audit-events";
import { anyUserExists, insertUser, lockOwnerSetup } from "../store/users";
import type { User } from "../store/users";
import { checkEmailAddress } from "./email-address";
import { IdentityError } from "./identity-error";
import { checkPasswordStrength } from "./password-policy";
import { hashPassword } from "./passwords";

export interface SetupOwnerInput {
  email: string;
  password: string;
  displayName?: string | null;
  ipAddress?: string | null;
  /** Who did it, for the audit record: "setup page" or "nf bootstrap". */
  via: string;
}

/**
 * Creates the instance owner on a fresh install: the one unauthenticated write
 * there is, so it is allowed exactly while no user exists. Two setup requests
 * racing on an empty table serialise on an advisory lock (there is no row to
 * lock yet) and the second finds the first's owner and is refused.
 */
export async function setupOwner(db: Db, input: SetupOwnerInput): Promise<User> {
  const badEmail = checkEmailAddress(input.email);
  if (badEmail) throw new IdentityError("invalid-input", badEmail);
  const weakness = checkPasswordStrength(input.password, { email: input.email });
  if (weakness) throw new IdentityError("invalid-input", weakness);
  // Hashed before the lock: 160 ms of scrypt need not hold up a concurrent setup.
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    await lockOwnerSetup(trx);
    if (await anyUserExists(trx)) throw new IdentityError("conflict", "This installation already has an owner: sign in instead.");
    const user = await insertUser(trx, { email: input.email, displayName: input.displayName ?? null, passwordHash, isOwner: true });
    await appendAuditEvent(trx, {
      namespaceId: null,
      actorType: "user",
      actorId: user.id,
      action: "user.setupOwner",
      resourceType: "user",
      resourceId: user.id,
      details: { email: user.email, via: input.via },
      ipAddress: input.ipAddress ?? null,
    });
    return user;
  });
}
