import type { Db } from "../../db/pool";
import { toExecutionSummary } from "../executions/execution-summaries";
import type { ExecutionSummary } from "../executions/execution-summaries";
import type { Notifier, NotifierEvent } from "../lib/notifier";
import { WORKFLOW_EVENTS_CHANNEL } from "../lib/notifier";
import { getExecutionSummaries } from "../store/execution-views";
import { HEARTBEAT_MS } from "./execution-stream";
import { SSE_HEARTBEAT, Waker, sseMessage } from "./sse";

/**
 * The executions list's live feed: runs of a namespace that started or
 * changed status, as `execution` messages carrying an ExecutionSummary.
 *
 * A WorkflowEvents notification says only "workflowId:seq" — not the
 * namespace, not whether the status moved. So one feed per process (per
 * notifier) takes every notification on the channel, collects the ids for
 * BATCH_MS, reads them in one `WHERE "id" = ANY(…)`, and routes each summary
 * to the namespace's subscribers when its status differs from the last one
 * routed. The feed listens only while someone subscribes.
 *
 * No resume: a client that reconnects refetches the list. When notifications
 * may have been lost (the LISTEN connection came back — a `resync`), the feed
 * cannot know what changed and sends subscribers `resync`, which means
 * exactly that: refetch. A subscriber that falls too far behind gets the same
 * instead of an unbounded queue.
 */

const BATCH_MS = 100;
/** Ids read per statement; a bigger batch is read in several. */
const READ_CHUNK = 1000;
/** Distinct runs a subscriber may have pending before it is told to refetch instead. */
const MAX_PENDING_PER_SUBSCRIBER = 500;
/** Runs whose last routed status is remembered (insertion-ordered; the oldest are forgotten first). */
const REMEMBERED_STATUSES = 10_000;
/** Without notifications at all (NODE_FLOW_NOTIFICATIONS=off) a list stream asks for a refetch this often. */
const POLL_RESYNC_MS = 10_000;

export interface FeedSubscriber {
  push(summary: ExecutionSummary): void;
  resync(): void;
}

export interface FeedLogger {
  error(obj: object, msg: string): void;
}

export class NamespaceFeed {
  private readonly subscribers = new Map<string, Set<FeedSubscriber>>();
  private readonly pending = new Set<string>();
  private readonly lastStatus = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly notifier: Notifier,
    private readonly logger: FeedLogger,
    private readonly batchMs = BATCH_MS,
  ) {}

  subscribe(namespaceId: string, subscriber: FeedSubscriber): () => void {
    let set = this.subscribers.get(namespaceId);
    if (!set) {
      set = new Set();
      this.subscribers.set(namespaceId, set);
    }
    set.add(subscriber);
    this.unlisten ??= this.notifier.subscribeChannel(WORKFLOW_EVENTS_CHANNEL, (event) => this.onEvent(event));
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      const current = this.subscribers.get(namespaceId);
      current?.delete(subscriber);
      if (current?.size === 0) this.subscribers.delete(namespaceId);
      if (this.subscribers.size === 0) {
        this.unlisten?.();
        this.unlisten = undefined;
        clearTimeout(this.timer);
        this.timer = undefined;
        this.pending.clear();
      }
    };
  }

  private onEvent(event: NotifierEvent): void {
    if (event.kind === "resync") {
      for (const set of this.subscribers.values()) for (const subscriber of set) subscriber.resync();
      return;
    }
    this.pending.add(event.key);
    this.timer ??= setTimeout(() => void this.flush(), this.batchMs);
  }

  private async flush(): Promise<void> {
    const ids = [...this.pending];
    this.pending.clear();
    try {
      for (let i = 0; i < ids.length; i += READ_CHUNK) {
        const rows = await getExecutionSummaries(this.db, ids.slice(i, i + READ_CHUNK));
        for (const row of rows) {
          const subscribers = this.subscribers.get(row.namespaceId);
          if (!subscribers) continue;
          const key = `${row.status}|${row.startedAt.getTime()}|${row.endedAt?.getTime() ?? ""}`;
          if (this.lastStatus.get(row.id) === key) continue;
          this.lastStatus.delete(row.id);
          this.lastStatus.set(row.id, key);
          if (this.lastStatus.size > REMEMBERED_STATUSES) {
            const oldest = this.lastStatus.keys().next().value;
            if (oldest !== undefined) this.lastStatus.delete(oldest);
          }
          const summary = toExecutionSummary(row);
          for (const subscriber of subscribers) subscriber.push(summary);
        }
      }
    } catch (error) {
      this.logger.error({ err: error }, "executions feed read failed; subscribers asked to refetch");
      for (const set of this.subscribers.values()) for (const subscriber of set) subscriber.resync();
    } finally {
      // Ids that arrived during the read wait for the next batch, never in parallel with this one.
      this.timer = this.pending.size > 0 ? setTimeout(() => void this.flush(), this.batchMs) : undefined;
    }
  }
}

const feeds = new WeakMap<Notifier, NamespaceFeed>();

/** The process's feed for `notifier` (one LISTEN connection, one feed). */
export function namespaceFeedFor(db: Db, notifier: Notifier, logger: FeedLogger): NamespaceFeed {
  let feed = feeds.get(notifier);
  if (!feed) {
    feed = new NamespaceFeed(db, notifier, logger);
    feeds.set(notifier, feed);
  }
  return feed;
}

/** One list stream: coalesced summaries of its namespace's runs, pulled by sseResponse. */
export async function* namespaceStream(
  feed: NamespaceFeed | null,
  namespaceId: string,
  signal: AbortSignal,
  options: { heartbeatMs?: number } = {},
): AsyncGenerator<string, void, undefined> {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const waker = new Waker();
  // Latest summary per run: a run that changed three times while the client
  // was slow is sent once, as it is now.
  let queued = new Map<string, ExecutionSummary>();
  let needsResync = false;
  const unsubscribe = feed?.subscribe(namespaceId, {
    push(summary) {
      if (needsResync) return;
      queued.delete(summary.id);
      queued.set(summary.id, summary);
      if (queued.size > MAX_PENDING_PER_SUBSCRIBER) {
        queued = new Map();
        needsResync = true;
      }
      waker.wake();
    },
    resync() {
      queued = new Map();
      needsResync = true;
      waker.wake();
    },
  });
  let nextHeartbeat = Date.now() + heartbeatMs;
  let nextPollResync = Date.now() + POLL_RESYNC_MS;
  try {
    yield "retry: 1000\n\n";
    while (!signal.aborted) {
      const deadline = Math.min(nextHeartbeat, feed === null ? nextPollResync : Infinity);
      await waker.wait(Math.max(0, deadline - Date.now()), signal);
      if (signal.aborted) return;
      if (feed === null && Date.now() >= nextPollResync) {
        nextPollResync = Date.now() + POLL_RESYNC_MS;
        needsResync = true;
      }
      if (needsResync) {
        needsResync = false;
        queued = new Map();
        yield sseMessage("resync", {});
      } else if (queued.size > 0) {
        const batch = [...queued.values()];
        queued = new Map();
        yield batch.map((summary) => sseMessage("execution", summary)).join("");
      }
      if (Date.now() >= nextHeartbeat) {
        nextHeartbeat = Date.now() + heartbeatMs;
        yield SSE_HEARTBEAT;
      }
    }
  } finally {
    unsubscribe?.();
  }
}
