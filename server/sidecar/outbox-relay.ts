import type { Db } from "../../db/pool";
import type { OutboxEventRow } from "../../db/schema";
import type { RunnerLogger } from "./background-runner";
import { claimOutboxEvents, markOutboxEventPublished, recordOutboxEventFailure } from "../store/outbox-events";
import { HttpRequestError, sendGuardedRequest } from "../system-tasks/guarded-http";
import type { GuardedHttpOptions } from "../system-tasks/guarded-http";
import { WEBHOOK_SINK_PREFIX } from "../system-tasks/event-task";
import { handleEvent } from "../events/handle-event";
import { getStatusListenerById } from "../store/status-listeners";
import type { SecretLookup } from "../lib/secret-lookup";
import { signWebhookCall } from "../webhooks/webhook-auth";
import { isWebhookEventTopic } from "../webhooks/webhook-config";
import type { EventHandlingDeps } from "../events/handle-event";

/**
 * The outbox relay: delivers OutboxEvents written by EVENT tasks (and, later,
 * anything else that announces a committed change), at least once — a
 * receiver may see an event twice and should dedupe on the
 * `X-Node-Flow-Event-Id` header. Events are not ordered: a retrying event is
 * overtaken by later ones.
 *
 * Topics (server/system-tasks/event-task.ts):
 * - `webhook:<url>`: POSTed as JSON under the HTTP tasks' network policy. A
 *   2xx delivers it; anything else is a failed attempt.
 * - `conductor:…` (EVENT tasks) and `workflow:<name>:<STATUS>` (status
 *   changes, written by a trigger): internal: the namespace's event handlers
 *   of that topic run (server/events/handle-event.ts), each at most once per
 *   event; an outage while they run is a failed attempt, retried.
 * - `webhook:<webhook name>` (no colon after the prefix, unlike a URL): an
 *   inbound webhook's accepted call, handed to the event handlers likewise.
 * - `status-listener:<id>`: a status change POSTed to a listener's URL,
 *   signed with its secret when it has one.
 *
 * A failed attempt backs off exponentially (5 s, 10 s, 20 s … capped at an
 * hour); after `maxAttempts` the event is dead-lettered — kept, out of the
 * delivery path, replayable with replayDeadLetteredEvent. A failure no retry
 * can fix (an unsupported topic, a URL the policy refuses) dead-letters at
 * once instead of spending ten attempts on it.
 */

export interface OutboxRelayDeps {
  db: Db;
  http: {
    allowPrivateNetworks: boolean;
    /** One delivery, connect to last byte. Default 10 s. */
    timeoutMs?: number;
    lookup?: GuardedHttpOptions["lookup"];
  };
  logger?: RunnerLogger;
  /** What conductor:… and workflow:… events are handed to: the event handlers. Without it they are only recorded. */
  events?: EventHandlingDeps;
  /** A namespace secret's value, for signing a status listener's calls. */
  secrets?: SecretLookup;
  /** Attempts before the dead letter. Default 10. */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt. Default 5 s. */
  backoffBaseSeconds?: number;
  /** Longest retry delay. Default 1 h. */
  backoffMaxSeconds?: number;
}

export const OUTBOX_RELAY_DEFAULTS = {
  timeoutMs: 10_000,
  maxAttempts: 10,
  backoffBaseSeconds: 5,
  backoffMaxSeconds: 3600,
  /** Only the status of a receiver's reply matters; more than this of its body is not read. */
  maxResponseBytes: 64 * 1024,
} as const;

export interface RelayOutboxBatchOptions {
  limit: number;
  /** The clock for the claim, the backoff and the stamps; the database's now() when absent. */
  now?: Date;
  /** Deliveries in flight at once. Default 8. */
  concurrency?: number;
}

type Delivery = { ok: true } | { ok: false; error: string; permanent: boolean };

/** The delay before the attempt after `failures` failed ones: base · 2^(failures − 1), capped. */
export function outboxRetryDelaySeconds(failures: number, baseSeconds: number, maxSeconds: number): number {
  return Math.min(maxSeconds, baseSeconds * 2 ** Math.max(0, failures - 1));
}

/**
 * Claims up to `limit` due events, delivers them (bounded concurrency) and
 * records each outcome. Returns how many were claimed (BackgroundRunner's
 * full-batch signal).
 */
export async function relayOutboxBatch(deps: OutboxRelayDeps, options: RelayOutboxBatchOptions): Promise<number> {
  const timeoutMs = deps.http.timeoutMs ?? OUTBOX_RELAY_DEFAULTS.timeoutMs;
  const maxAttempts = deps.maxAttempts ?? OUTBOX_RELAY_DEFAULTS.maxAttempts;
  const base = deps.backoffBaseSeconds ?? OUTBOX_RELAY_DEFAULTS.backoffBaseSeconds;
  const cap = deps.backoffMaxSeconds ?? OUTBOX_RELAY_DEFAULTS.backoffMaxSeconds;
  // The claim must outlast a delivery, or another relay re-claims an event
  // still in flight and it goes out twice.
  const claimSeconds = Math.ceil(timeoutMs / 1000) + 60;
  const events = await claimOutboxEvents(deps.db, { limit: options.limit, claimSeconds, now: options.now });
  if (events.length === 0) return 0;

  let next = 0;
  const work = async () => {
    while (next < events.length) {
      const event = events[next++]!;
      const delivery = await deliver(event, deps, timeoutMs);
      const claim = { id: event.id, claimedUntil: event.nextAttemptAt, now: options.now };
      if (delivery.ok) {
        const recorded = await markOutboxEventPublished(deps.db, claim);
        if (!recorded) deps.logger?.warn({ eventId: event.id }, "outbox event delivered after its claim ran out; another relay may deliver it again");
        continue;
      }
      const failures = event.attempts + 1;
      const deadLetter = delivery.permanent || failures >= maxAttempts;
      await recordOutboxEventFailure(deps.db, {
        ...claim,
        error: delivery.error,
        retryAfterSeconds: outboxRetryDelaySeconds(failures, base, cap),
        deadLetter,
      });
      const log = { eventId: event.id, topic: event.topic, attempts: failures, error: delivery.error };
      if (deadLetter) deps.logger?.warn(log, "outbox event dead-lettered");
      else deps.logger?.debug(log, "outbox delivery failed; will retry");
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, options.concurrency ?? 8), events.length) }, work));
  return events.length;
}

/** Topics whose events the namespace's event handlers take: EVENT tasks' and workflows' status changes (and `webhook:<name>`, an inbound webhook's call). */
const HANDLED_PREFIXES = ["conductor:", "workflow:"];
export const STATUS_LISTENER_PREFIX = "status-listener:";

async function deliver(event: OutboxEventRow, deps: OutboxRelayDeps, timeoutMs: number): Promise<Delivery> {
  if (HANDLED_PREFIXES.some((prefix) => event.topic.startsWith(prefix)) || isWebhookEventTopic(event.topic)) {
    if (deps.events === undefined) return { ok: true };
    try {
      await handleEvent(deps.events, event);
      return { ok: true };
    } catch (error) {
      return { ok: false, error: `the event handlers failed: ${error instanceof Error ? error.message : String(error)}`, permanent: false };
    }
  }
  if (event.topic.startsWith(STATUS_LISTENER_PREFIX)) return deliverToListener(event, deps, timeoutMs);
  if (!event.topic.startsWith(WEBHOOK_SINK_PREFIX)) {
    return { ok: false, error: `unsupported topic "${event.topic.split(":", 1)[0]}"`, permanent: true };
  }
  return post(event.topic.slice(WEBHOOK_SINK_PREFIX.length), event, {}, deps, timeoutMs);
}

/**
 * A workflow's status change to the listener that asked for it: a listener
 * deleted or disabled since is skipped; a signed one carries
 * `X-Node-Flow-Signature: t=<unix>,v1=<hex>`, an HMAC-SHA256 of
 * `<t>.<body>` under its secret (the shape a webhook receiver checks).
 */
async function deliverToListener(event: OutboxEventRow, deps: OutboxRelayDeps, timeoutMs: number): Promise<Delivery> {
  const listener = await getStatusListenerById(deps.db, event.namespaceId, event.topic.slice(STATUS_LISTENER_PREFIX.length));
  if (listener === undefined || !listener.enabled) return { ok: true };
  const body = JSON.stringify(event.payload);
  const headers: Record<string, string> = {};
  if (listener.secretName !== null) {
    const secret = deps.secrets === undefined ? null : await deps.secrets(event.namespaceId, listener.secretName);
    if (secret === null) return { ok: false, error: `the listener's secret ${listener.secretName} does not exist`, permanent: false };
    headers["X-Node-Flow-Signature"] = signWebhookCall("hmac-sha256-timestamped", secret, body, Math.floor(Date.now() / 1000));
  }
  return post(listener.url, event, headers, deps, timeoutMs, body);
}

async function post(url: string, event: OutboxEventRow, extraHeaders: Record<string, string>, deps: OutboxRelayDeps, timeoutMs: number, body = JSON.stringify(event.payload)): Promise<Delivery> {
  try {
    const response = await sendGuardedRequest(
      {
        url,
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "node-flow-outbox",
          "X-Node-Flow-Event-Id": String(event.id),
          ...extraHeaders,
        },
        body,
      },
      {
        allowPrivateNetworks: deps.http.allowPrivateNetworks,
        connectTimeoutMs: timeoutMs,
        readTimeoutMs: timeoutMs,
        totalTimeoutMs: timeoutMs,
        maxResponseBytes: OUTBOX_RELAY_DEFAULTS.maxResponseBytes,
        oversizedBody: "truncate",
        lookup: deps.http.lookup,
      },
    );
    if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true };
    return { ok: false, error: `HTTP ${response.statusCode}${response.statusMessage ? ` ${response.statusMessage}` : ""}`, permanent: false };
  } catch (error) {
    if (error instanceof HttpRequestError) {
      return { ok: false, error: error.message, permanent: error.permanent };
    }
    return { ok: false, error: (error as Error).message, permanent: false };
  }
}
