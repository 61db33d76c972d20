import type { Db } from "../../db/pool";
import type { OutboxEventRow } from "../../db/schema";
import type { RunnerLogger } from "./background-runner";
import { claimOutboxEvents, markOutboxEventPublished, recordOutboxEventFailure } from "../store/outbox-events";
import { HttpRequestError, sendGuardedRequest } from "../system-tasks/guarded-http";
import type { GuardedHttpOptions } from "../system-tasks/guarded-http";
import { WEBHOOK_SINK_PREFIX } from "../system-tasks/event-task";

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
 * - `conductor:…`: internal. Nothing in this process subscribes to internal
 *   events yet (event handlers arrive with the triggers), so they are marked
 *   published as they are reached and kept as a record.
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

async function deliver(event: OutboxEventRow, deps: OutboxRelayDeps, timeoutMs: number): Promise<Delivery> {
  if (event.topic.startsWith("conductor:")) {
    // Internal: no in-process subscriber exists yet; publishing is recording it.
    return { ok: true };
  }
  if (!event.topic.startsWith(WEBHOOK_SINK_PREFIX)) {
    return { ok: false, error: `unsupported topic "${event.topic.split(":", 1)[0]}"`, permanent: true };
  }
  try {
    const response = await sendGuardedRequest(
      {
        url: event.topic.slice(WEBHOOK_SINK_PREFIX.length),
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "node-flow-outbox",
          "X-Node-Flow-Event-Id": String(event.id),
        },
        body: JSON.stringify(event.payload),
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
