import { authenticateRequest } from "../auth/authenticate";
import { authorizeNamespace } from "../auth/authorize";
import { checkSameOrigin } from "../auth/csrf";
import { sealingKeysOf } from "../secrets/secrets";
import type { WebContext } from "../web/web-context";
import type { RestAuth, RestDeps } from "./define-route";

/** The real identity checks: bearer API keys and session cookies (server/auth). */
export const serverAuth: RestAuth = {
  authenticate: authenticateRequest,
  authorize: authorizeNamespace,
  checkSameOrigin,
};

const depsByContext = new WeakMap<WebContext, RestDeps>();

/** The REST dependencies of the web process, one set per web context. */
export function restDepsOf(context: WebContext): RestDeps {
  let deps = depsByContext.get(context);
  if (deps === undefined) {
    deps = { db: context.db, blobs: context.blobs, notifier: context.notifier, auth: serverAuth, sealingKeys: sealingKeysOf(context.config), logger: context.logger };
    depsByContext.set(context, deps);
  }
  return deps;
}
