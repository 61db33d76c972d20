import type { AuditActorType } from "../../db/schema";
import { actorOfPrincipal } from "./api-keys";
import type { Principal } from "./principal";

/** The AuditEvents actor columns for a principal (the user, or the API key itself). */
export function auditActor(principal: Principal): { actorType: AuditActorType; actorId: string | null } {
  const { type, id } = actorOfPrincipal(principal);
  return { actorType: type, actorId: id };
}
