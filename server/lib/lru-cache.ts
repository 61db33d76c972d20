/**
 * A Map bounded to `capacity` entries that drops the least recently used one
 * first: a read (get) or a write (set) makes an entry the most recent. For the
 * in-process caches of things that never change once written — blueprints,
 * input validators, a loop output's row version — so nothing is ever stale,
 * only evicted. Map iteration order is insertion order, so re-inserting an
 * entry on use keeps the oldest first.
 */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
  }

  /** A copy of what is held, oldest first; using it changes no entry's recency. */
  snapshot(): Map<K, V> {
    return new Map(this.entries);
  }
}
