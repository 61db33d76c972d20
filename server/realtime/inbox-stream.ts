import type { Notifier } from "../lib/notifier";
import { INBOX_CHANNEL } from "../lib/notifier";
import { HEARTBEAT_MS } from "./execution-stream";
import { SSE_HEARTBEAT, Waker, sseMessage } from "./sse";

/**
 * The inbox's live updates: `inbox` messages `{ id, status }` whenever a
 * HumanTasks row of the namespace is created or changes (the
 * "HumanTasks_notify" trigger, 0010, payload "namespaceId:id:status"), over
 * the process's one LISTEN connection (server/lib/notifier.ts), routed by
 * namespace. The client refetches its inbox and counts on each — the message
 * says only that something changed, never what the task holds, so it needs no
 * per-user filtering and costs no query. A `resync` (the LISTEN connection
 * came back, or a poll interval passed: 10 s with notifications off, 60 s
 * with them) means the same: refetch.
 */

/** Without notifications (NODE_FLOW_NOTIFICATIONS=off) the stream asks for a refetch this often. */
const POLL_RESYNC_MS = 10_000;
/**
 * With them, still this often: NOTIFY is an optimisation, never a guarantee
 * (DESIGN.md invariant 7), and a refetch a minute is the interval that bounds
 * a missed one.
 */
const SAFETY_RESYNC_MS = 60_000;
/** Distinct tasks queued for a slow client before it is told to refetch instead. */
const MAX_PENDING = 500;

export async function* inboxStream(
  notifier: Notifier | null,
  namespaceId: string,
  signal: AbortSignal,
  options: { heartbeatMs?: number; pollResyncMs?: number } = {},
): AsyncGenerator<string, void, undefined> {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const pollResyncMs = options.pollResyncMs ?? (notifier === null ? POLL_RESYNC_MS : SAFETY_RESYNC_MS);
  const waker = new Waker();
  // Latest status per task: a task that changed three times while the client was slow is sent once.
  let queued = new Map<string, string>();
  let needsResync = false;
  const unsubscribe = notifier?.subscribe(INBOX_CHANNEL, namespaceId, (event) => {
    if (event.kind === "resync") {
      needsResync = true;
    } else {
      const [, id = "", status = ""] = event.payload.split(":");
      queued.delete(id);
      queued.set(id, status);
      if (queued.size > MAX_PENDING) needsResync = true;
    }
    waker.wake();
  });
  let nextHeartbeat = Date.now() + heartbeatMs;
  let nextPollResync = Date.now() + pollResyncMs;
  try {
    yield "retry: 1000\n\n";
    while (!signal.aborted) {
      const deadline = Math.min(nextHeartbeat, nextPollResync);
      await waker.wait(Math.max(0, deadline - Date.now()), signal);
      if (signal.aborted) return;
      if (Date.now() >= nextPollResync) {
        nextPollResync = Date.now() + pollResyncMs;
        needsResync = true;
      }
      if (needsResync) {
        needsResync = false;
        queued = new Map();
        yield sseMessage("resync", {});
      } else if (queued.size > 0) {
        const batch = [...queued];
        queued = new Map();
        yield batch.map(([id, status]) => sseMessage("inbox", { id, status })).join("");
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
