/**
 * When `nf start` restarts a part that died (web, worker, the embedded
 * Postgres), and when it stops trying. A restart waits a backoff that doubles
 * from `initialDelayMs` to `maxDelayMs`, and falls back to the first once the
 * part has run `healthyAfterMs` without dying; more than `maxRestarts` restarts
 * within `windowMs` is a crash loop — restarting again would only hide it —
 * and everything stops with the reason.
 */
export interface RestartPolicyOptions {
  initialDelayMs?: number;
  maxDelayMs?: number;
  healthyAfterMs?: number;
  maxRestarts?: number;
  windowMs?: number;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

export type RestartDecision = { restart: true; delayMs: number; restartsInWindow: number } | { restart: false; reason: string };

export const DEFAULT_RESTART_POLICY = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  healthyAfterMs: 60_000,
  maxRestarts: 5,
  windowMs: 5 * 60_000,
} as const;

export class RestartPolicy {
  private readonly options: Required<Omit<RestartPolicyOptions, "now">>;
  private readonly now: () => number;
  private restarts: number[] = [];
  private nextDelayMs: number;
  private startedAt: number;

  constructor(options: RestartPolicyOptions = {}) {
    this.options = { ...DEFAULT_RESTART_POLICY, ...options };
    this.now = options.now ?? (() => performance.now());
    this.nextDelayMs = this.options.initialDelayMs;
    this.startedAt = this.now();
  }

  /** The part died: restart it after `delayMs`, or stop everything. */
  exited(): RestartDecision {
    const at = this.now();
    const { initialDelayMs, maxDelayMs, healthyAfterMs, maxRestarts, windowMs } = this.options;
    if (at - this.startedAt >= healthyAfterMs) this.nextDelayMs = initialDelayMs;
    this.restarts = this.restarts.filter((t) => at - t < windowMs);
    if (this.restarts.length >= maxRestarts) {
      return { restart: false, reason: `it died ${this.restarts.length + 1} times within ${Math.round(windowMs / 60_000)} minutes` };
    }
    this.restarts.push(at);
    const delayMs = this.nextDelayMs;
    this.nextDelayMs = Math.min(maxDelayMs, this.nextDelayMs * 2);
    return { restart: true, delayMs, restartsInWindow: this.restarts.length };
  }

  /** The restarted part is running again: its healthy time counts from now. */
  started(): void {
    this.startedAt = this.now();
  }
}
