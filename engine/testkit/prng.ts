/**
 * A seeded pseudo-random generator for the simulator. engine/ has no
 * `Math.random`: the completion order a simulation explores must be a pure
 * function of its seed, so a failing property run reproduces from its seed
 * alone.
 *
 * mulberry32: 32 bits of state, full period 2^32, passes gjrand's small-state
 * tests — plenty for shuffling a handful of ready tasks, and 5 lines long.
 */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n), n ≥ 1. */
  below(n: number): number;
}

/** A generator whose whole sequence is determined by `seed` (any integer; only its low 32 bits count). */
export function mulberry32(seed: number): Prng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, below: (n) => Math.floor(next() * n) };
}
