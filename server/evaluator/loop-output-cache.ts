import { LruCache } from "../lib/lru-cache";

/**
 * The outputs of running DO_WHILE rows the decider has read, by row version,
 * so the next evaluation of the same workflow need not read them again.
 *
 * Why: a running loop's output keeps every iteration's outputs under
 * `output["<i>"]` (Conductor's shape), so it grows with the loop — ~240 KB by
 * the 300th iteration of the system bench's large workflow — while it changes only
 * once per iteration. Every evaluation reads the loop row (it is in the
 * frontier, and again among the rows its expressions reference), so each one
 * shipped, parsed and collected the whole history: evaluations grew from 16 to
 * 40 ms over that run, and a CPU profile of the sidecar was a third garbage
 * collection (docs/performance.md).
 *
 * A row version is `"<task id>:<xmin>"`: every UPDATE of a row writes a new
 * tuple with the writing transaction's id, whoever writes it (a decider, an
 * operator's action, a migration), so an unchanged version is an unchanged
 * output and nothing ever needs invalidating. The store's reads are given the
 * versions held (loadFrontiers, loadLatestByRefsOf); Postgres returns NULL for
 * the output of a row whose current version is one of them — it neither
 * detoasts nor sends it — and the caller fills it in from here.
 *
 * Only inline outputs are held (an offloaded one is read as before), so the
 * cache holds at most `capacity` outputs of at most 256 KB of JSON each (the
 * offload threshold) — tens of MB of objects at worst, a few kB for most
 * loops. Each is deep-frozen: decide receives the same object in every
 * evaluation, so a mutation of it would leak from one evaluation into the
 * next — frozen, it throws instead.
 */
export class LoopOutputCache {
  private readonly entries: LruCache<string, Record<string, unknown>>;
  /** Outputs served from here instead of read. */
  hits = 0;

  /** `capacity`: row versions held at most, least recently used dropped first. */
  constructor(readonly capacity = 64) {
    this.entries = new LruCache(capacity);
  }

  /** What is held now, for one read: its versions go to Postgres, and the read fills its outputs from this copy. */
  snapshot(): ReadonlyMap<string, Record<string, unknown>> {
    return this.entries.snapshot();
  }

  /** A version's output was served from a snapshot: it is recent again. */
  used(version: string): void {
    this.hits += 1;
    this.entries.get(version);
  }

  /** Holds a version's output, read in full (frozen from now on). */
  remember(version: string, output: Record<string, unknown>): void {
    this.entries.set(version, deepFreeze(output));
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
