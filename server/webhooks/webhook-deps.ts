import { secretLookup, sealingKeysOf } from "../secrets/secrets";
import type { WebContext } from "../web/web-context";
import { CallRate } from "./call-rate";
import type { WebhookDeps } from "./receive-webhook";

const depsByContext = new WeakMap<WebContext, WebhookDeps>();

/** The webhook receiver's dependencies in the web process, one set (and one rate limiter) per web context. */
export function webhookDepsOf(context: WebContext): WebhookDeps {
  let deps = depsByContext.get(context);
  if (deps === undefined) {
    deps = { db: context.db, blobs: context.blobs, notifier: context.notifier, secrets: secretLookup(context.db, sealingKeysOf(context.config)), logger: context.logger, rate: new CallRate() };
    depsByContext.set(context, deps);
  }
  return deps;
}
