import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { CREDENTIALS_CHANNEL } from "../lib/notifier";
import type { Notifier } from "../lib/notifier";
import { findApiKeyByPrefix } from "../store/api-keys";
import type { ApiKeyCredentialRow } from "../store/api-keys";

/**
 * What authentication knows about a key prefix, kept in process so a worker's
 * request costs no read of ApiKeys: every report and poll presents its key,
 * and that read was one statement of every worker round trip.
 *
 * Correct only while it hears every change, so it is used only while it does:
 * - The "credentials_changed" triggers (migration 0013) NOTIFY
 *   `CREDENTIALS_CHANNEL` when a key is revoked or changed (anything but its
 *   "lastUsedAt"), when a user or service account is disabled, re-enabled or
 *   deleted. Every notification, and every (re)connect of the listener —
 *   anything may have been missed while it was down — empties the cache.
 * - While the listener is not connected (or none was attached: tests, tools,
 *   a process with notifications off) every lookup reads the database, as
 *   before the cache existed.
 * - A read that began before an invalidation is not cached after it (a
 *   generation counter), so a revocation that commits while a lookup is in
 *   flight can never be outlived by that lookup's result.
 * So a revocation takes effect in the time its notification takes to arrive
 * (milliseconds), not at the end of a TTL. The TTL (`ttlMs`) only bounds what
 * the triggers cannot see: a change made with the triggers disabled.
 *
 * Expiry is judged at every use against this process's clock (the row's
 * `expiresAt`), and the last-use stamp is still written at most once a minute
 * per key per process.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private listening: () => boolean = () => false;

  constructor(
    private readonly ttlMs = DEFAULT_TTL_MS,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * Starts caching, invalidated by `notifier`'s CREDENTIALS_CHANNEL; the
   * notifier must listen on that channel. Returns the detach function.
   */
  attach(notifier: Pick<Notifier, "subscribeChannel" | "connected">): () => void {
    const unsubscribe = notifier.subscribeChannel(CREDENTIALS_CHANNEL, () => this.clear());
    this.listening = () => notifier.connected;
    this.clear();
    return () => {
      unsubscribe();
      this.listening = () => false;
      this.clear();
    };
  }

  /**
   * The key with this prefix as authentication needs it, from the cache when
   * it may be used, else read (and cached when it may be). `lastUsedStale` is
   * true at most once a minute per key, for the caller to stamp the use.
   */
  async find(db: Kysely<Database>, prefix: string): Promise<ApiKeyCredentialRow | undefined> {
    if (!this.listening()) {
      // Nothing tells us about changes right now: what we hold may be stale.
      if (this.entries.size > 0) this.clear();
      return findApiKeyByPrefix(db, prefix);
    }
    const now = performance.now();
    const hit = this.entries.get(prefix);
    if (hit && now - hit.readAt < this.ttlMs) {
      const lastUsedStale = now - hit.usedStampAt >= LAST_USED_INTERVAL_MS;
      if (lastUsedStale) hit.usedStampAt = now;
      return { ...hit.row, expired: hit.row.expired || isPast(hit.row.expiresAt), lastUsedStale };
    }
    const generation = this.generation;
    const row = await findApiKeyByPrefix(db, prefix);
    if (row !== undefined && generation === this.generation && this.listening()) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      // A stale last use is stamped by this caller now; a fresh one was stamped within the minute.
      this.entries.set(prefix, { row, readAt: performance.now(), usedStampAt: performance.now() });
    }
    return row;
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  /** How many prefixes are held (for tests). */
  get size(): number {
    return this.entries.size;
  }
}

interface Entry {
  row: ApiKeyCredentialRow;
  /** performance.now() when read from the database. */
  readAt: number;
  /** performance.now() when this process last stamped (or found fresh) the key's "lastUsedAt". */
  usedStampAt: number;
}

/** The backstop for changes no trigger saw; see the class comment. */
export const DEFAULT_TTL_MS = 60_000;
/** As touchApiKeyLastUsed: a use is recorded at most once a minute. */
const LAST_USED_INTERVAL_MS = 60_000;

function isPast(at: Date | null): boolean {
  return at !== null && at.getTime() <= Date.now();
}

/** The process's cache; attached to the web process's notifier (server/web/web-context.ts). */
export const apiKeyCache = new ApiKeyCache();
