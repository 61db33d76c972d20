import type { Db } from "../../db/pool";
import type { ApiRequest } from "../web/api-exchange";
import { authenticateApiKey, parseBearer } from "./api-keys";
import type { Principal } from "./principal";
import { SESSION_COOKIE, authenticateSession, readCookie } from "./sessions";

/**
 * Who sent this request: an API key (`Authorization: Bearer nf_…`) or a
 * signed-in browser (the session cookie), or null for nobody.
 *
 * A request that presents a Bearer token is judged by that token alone: a
 * wrong or revoked key is anonymous even if a session cookie rides along, so
 * a script with a broken key fails loudly instead of quietly acting as
 * whoever last signed in on that machine.
 */
export async function authenticateRequest(db: Db, request: Pick<ApiRequest, "headers">): Promise<Principal | null> {
  const authorization = request.headers.get("authorization");
  const bearer = parseBearer(authorization);
  if (bearer !== null) return authenticateApiKey(db, bearer);
  // Any other Authorization scheme is not ours to honour (Basic, Digest…), and
  // falling back to the cookie would make its failure invisible too.
  if (authorization !== null && authorization.trim() !== "") return null;
  const token = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
  return token ? authenticateSession(db, token) : null;
}
