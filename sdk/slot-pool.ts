import { abortReason } from "./retry-policy";

/**
 * The worker's concurrency budget: one slot per task it may hold. A poll
 * reserves slots before it asks the server for that many tasks (the server
 * leases as many as asked, so asking for more than is free would hold tasks
 * nobody runs), keeps one per task it got, and gives the rest back at once.
 * Waiters are served first come, first served, so several queues' poll loops
 * take turns at freed slots.
 */
export class SlotPool {
  private free: number;
  private readonly waiters: (() => void)[] = [];

  /** A pool of `size` slots, all free. */
  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`concurrency must be a positive integer, got ${size}`);
    this.free = size;
  }

  /** Slots free right now. */
  get available(): number {
    return this.free;
  }

  /**
   * Waits for a free slot, then takes as many as are free, at most `max` and
   * leaving `leave` for others when it can (never fewer than one). Rejects with
   * the signal's reason when it is aborted first.
   */
  async acquire(max: number, leave: () => number, signal: AbortSignal): Promise<number> {
    while (this.free === 0 || this.waiters.length > 0) {
      if (signal.aborted) throw abortReason(signal);
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const i = this.waiters.indexOf(wake);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(abortReason(signal));
        };
        const wake = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
        this.waiters.push(wake);
        signal.addEventListener("abort", onAbort, { once: true });
      });
      // Woken as the head of the line with a slot free: take it now, before anyone queued behind.
      if (this.free > 0) break;
    }
    if (signal.aborted) throw abortReason(signal);
    const taken = Math.max(1, Math.min(max, this.free - leave()));
    this.free -= taken;
    this.wakeNext();
    return taken;
  }

  /** Gives `count` slots back. */
  release(count: number): void {
    if (count <= 0) return;
    this.free += count;
    if (this.free > this.size) throw new Error(`slot pool over-released: ${this.free} free of ${this.size}`);
    this.wakeNext();
  }

  private wakeNext(): void {
    if (this.free > 0) this.waiters.shift()?.();
  }
}
