/**
 * Calls per minute per webhook, as a token bucket in this web process: a
 * full minute's allowance may arrive at once, then it refills evenly. Kept in
 * memory, so with several web processes each allows the rate (documented);
 * a limit that must hold cluster-wide belongs in front of them.
 */
export class CallRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes one call from `key`'s allowance; the seconds to wait when there is none. */
  take(key: string, perMinute: number): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const now = this.now();
    const held = this.buckets.get(key);
    const refilled = held === undefined ? perMinute : Math.min(perMinute, held.tokens + ((now - held.at) / 60_000) * perMinute);
    if (refilled >= 1) {
      this.buckets.set(key, { tokens: refilled - 1, at: now });
      if (this.buckets.size > 10_000) this.buckets.delete(this.buckets.keys().next().value!);
      return { ok: true };
    }
    this.buckets.set(key, { tokens: refilled, at: now });
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(((1 - refilled) * 60) / perMinute)) };
  }
}
