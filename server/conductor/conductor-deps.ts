import type { WebContext } from "../web/web-context";
import type { ConductorDeps } from "./define-conductor-route";

const depsByContext = new WeakMap<WebContext, ConductorDeps>();

/** The Conductor layer's dependencies in the web process, one set per web context. */
export function conductorDepsOf(context: WebContext): ConductorDeps {
  let deps = depsByContext.get(context);
  if (deps === undefined) {
    deps = { db: context.db, blobs: context.blobs, notifier: context.notifier, secret: context.config.secret, previousSecrets: context.config.previousSecrets, logger: context.logger };
    depsByContext.set(context, deps);
  }
  return deps;
}
