/**
 * A task's log lines on their way to the server: `ctx.log()` must not wait on
 * the network, and one request per line would cost more than the work it
 * logs. Lines are sent in order, in batches: when 100 are waiting, a second
 * after the first unsent one, and before the task's result is reported (so
 * the log is complete when the run moves on).
 */

/** Lines one append may carry (the server's limit, server/rest/routes/worker-tasks.ts). */
export const MAX_LINES_PER_APPEND = 1000;
/** Characters one line may have (the server's limit); a longer line is cut. */
export const MAX_LINE_LENGTH = 65_536;

const FLUSH_AT_LINES = 100;
const FLUSH_AFTER_MS = 1000;
/** Past this many unsent lines (the server is down) the oldest are dropped, so a chatty handler cannot exhaust memory. */
const MAX_BUFFERED_LINES = 10_000;

/** Sends a log buffer's lines: one append request. */
export type SendLines = (lines: string[]) => Promise<void>;

/** One task's unsent lines. */
export class TaskLogBuffer {
  private pending: string[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> = Promise.resolve();
  private closed = false;
  /** Lines dropped: over the buffer limit, or logged after the task was reported. */
  dropped = 0;

  constructor(
    private readonly send: SendLines,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Queues a line; a longer one is cut to the server's limit. */
  push(line: string): void {
    if (this.closed) {
      this.dropped += 1;
      return;
    }
    this.pending.push(line.length > MAX_LINE_LENGTH ? line.slice(0, MAX_LINE_LENGTH) : line);
    if (this.pending.length > MAX_BUFFERED_LINES) {
      this.dropped += this.pending.length - MAX_BUFFERED_LINES;
      this.pending.splice(0, this.pending.length - MAX_BUFFERED_LINES);
    }
    if (this.pending.length >= FLUSH_AT_LINES) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  /** Sends every queued line; resolves when they are sent (or failed, which is reported to `onError`, never thrown). */
  flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    // Chained, so batches go out in order even when flushes overlap.
    this.sending = this.sending.then(async () => {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_LINES_PER_APPEND);
        try {
          await this.send(batch);
        } catch (error) {
          this.dropped += batch.length;
          this.onError(error);
        }
      }
    });
    return this.sending;
  }

  /** Flushes what is queued and refuses further lines (the task has been reported). */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }
}
