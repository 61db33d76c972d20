/**
 * Server-Sent Events plumbing shared by the live streams: message framing, a
 * wake-up signal, and a Response whose body is pulled from an async generator.
 *
 * Backpressure is the point of the pull: the body's ReadableStream asks for
 * the next chunk only when its small queue has room, which it gets only as
 * fast as the client's socket drains. A slow or stalled client therefore
 * leaves its generator suspended — no database reads on its behalf, nothing
 * buffered beyond a few chunks — and, since every stream has its own
 * generator and cursor, it holds up nobody else. Notifications never queue
 * data either: they only set a flag that the generator reads when it runs.
 */

/** One SSE message. `data` is JSON-encoded (one line: JSON.stringify never emits a raw newline). */
export function sseMessage(event: string, data: unknown, id?: number | string): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A comment line: keeps proxies and the browser from timing the connection out, and is ignored by EventSource. */
export const SSE_HEARTBEAT = ": heartbeat\n\n";

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store, no-transform",
  connection: "keep-alive",
  // nginx buffers proxied responses by default, which would hold events back.
  "x-accel-buffering": "no",
};

/**
 * A latch a notification sets and the stream's loop waits on. A wake while
 * nobody waits is remembered (one flag, not a queue), so a notification that
 * arrives during a read makes the next wait return at once: nothing is missed
 * between "read" and "wait".
 */
export class Waker {
  private pending = false;
  private release: (() => void) | undefined;

  wake(): void {
    this.pending = true;
    this.release?.();
  }

  /** Resolves true when woken (now or earlier), false on timeout or abort. */
  wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve(true);
    }
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (woken: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.release = undefined;
        if (woken) this.pending = false;
        resolve(woken);
      };
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(false), Math.max(0, ms));
      this.release = () => finish(true);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** Chunks the body's queue holds before it stops pulling (each chunk is one message or one page of history). */
const QUEUED_CHUNKS = 4;

/**
 * A text/event-stream Response fed by `produce`. The generator gets a signal
 * that aborts when the client goes away (the request's signal, or the body
 * being cancelled); it must return promptly then, and its `finally` blocks
 * are where subscriptions end.
 */
export function sseResponse(
  request: Request,
  produce: (signal: AbortSignal) => AsyncGenerator<string, void, undefined>,
  onError: (error: unknown) => void,
): Response {
  const stop = new AbortController();
  const iterator = produce(stop.signal);
  // A generator suspended at a yield (its chunk queued, the client gone) sees
  // no abort until pulled again, and a runtime need not pull a dead stream:
  // end it here so its finally (the unsubscribe) runs now. A pull in flight
  // makes return() wait for it, and the abort ends that pull's wait at once.
  const onRequestAbort = () => {
    stop.abort();
    void iterator.return(undefined).catch(() => undefined);
  };
  request.signal.addEventListener("abort", onRequestAbort, { once: true });
  const encoder = new TextEncoder();
  const finish = () => {
    request.signal.removeEventListener("abort", onRequestAbort);
    stop.abort();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await iterator.next();
          if (next.done || stop.signal.aborted) {
            finish();
            controller.close();
            return;
          }
          controller.enqueue(encoder.encode(next.value));
        } catch (error) {
          finish();
          if (!stop.signal.aborted) onError(error);
          // The client reconnects (EventSource does by itself) and resumes from its Last-Event-ID.
          try {
            controller.close();
          } catch {
            // already closed by a cancel
          }
        }
      },
      async cancel() {
        finish();
        await iterator.return(undefined).catch(() => undefined);
      },
    },
    { highWaterMark: QUEUED_CHUNKS },
  );
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}
