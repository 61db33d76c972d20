import type { Principal } from "../auth/principal";
import type { Actor } from "../executions/actions";

/** Who acts, as operator actions record it (WorkflowEvents data, AuditEvents): the user, or the API key itself. */
export function actorOf(principal: Principal): Actor {
  return principal.kind === "user" ? { type: "user", id: principal.userId } : { type: "apiKey", id: principal.apiKeyId };
}
