import type { Db } from "../../db/pool";
import { appendAuditEvent } from "../store/audit-events";
import { DuplicateEmailError, insertUser } from "../store/users";
import type { User } from "../store/users";
import { auditActor } from "./audit-actor";
import { checkEmailAddress } from "./email-address";
import { IdentityError } from "./identity-error";
import { checkPasswordStrength } from "./password-policy";
import { hashPassword } from "./passwords";
import type { Principal } from "./principal";

export interface CreateUserInput {
  email: string;
  password: string;
  displayName?: string | null;
  /** Makes the new user an owner too (admin everywhere, manages users and namespaces). */
  isOwner?: boolean;
}

/**
 * An owner adds a user with an initial password (there is no mail delivery to
 * send an invitation through). The new user belongs to no namespace until an
 * admin adds them or a group that has roles.
 */
export async function createUser(db: Db, actor: Principal, input: CreateUserInput): Promise<User> {
  if (actor.kind !== "user" || !actor.isOwner) throw new IdentityError("forbidden", "Only an owner can add users.");
  const badEmail = checkEmailAddress(input.email);
  if (badEmail) throw new IdentityError("invalid-input", badEmail);
  const weakness = checkPasswordStrength(input.password, { email: input.email });
  if (weakness) throw new IdentityError("invalid-input", weakness);
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction().execute(async (trx) => {
      const user = await insertUser(trx, { email: input.email, displayName: input.displayName ?? null, passwordHash, isOwner: input.isOwner ?? false });
      await appendAuditEvent(trx, {
        namespaceId: null,
        ...auditActor(actor),
        action: "user.create",
        resourceType: "user",
        resourceId: user.id,
        details: { email: user.email, isOwner: user.isOwner },
      });
      return user;
    });
  } catch (error) {
    if (error instanceof DuplicateEmailError) throw new IdentityError("conflict", error.message);
    throw error;
  }
}
