import { describe, expect, it } from "vitest";
import { LoopOutputCache } from "./loop-output-cache";

describe("LoopOutputCache", () => {
  it("holds outputs deep-frozen, so a mutation throws instead of leaking into the next evaluation", () => {
    const cache = new LoopOutputCache();
    cache.remember("t1:100", { iteration: 2, "1": { a: { n: [1, 2] } } });
    const held = cache.snapshot().get("t1:100")!;
    expect(() => {
      (held as { iteration: number }).iteration = 3;
    }).toThrow(TypeError);
    expect(() => {
      ((held["1"] as { a: { n: number[] } }).a.n).push(3);
    }).toThrow(TypeError);
    expect(held).toEqual({ iteration: 2, "1": { a: { n: [1, 2] } } });
  });

  it("drops the least recently used version beyond its capacity; a served version counts as used", () => {
    const cache = new LoopOutputCache(2);
    cache.remember("a:1", { iteration: 1 });
    cache.remember("b:1", { iteration: 1 });
    cache.used("a:1");
    cache.remember("c:1", { iteration: 1 });
    expect([...cache.snapshot().keys()].sort()).toEqual(["a:1", "c:1"]);
    expect(cache.hits).toBe(1);
  });

  it("a snapshot is a copy: what is remembered or dropped later does not change it", () => {
    const cache = new LoopOutputCache(1);
    cache.remember("a:1", { iteration: 1 });
    const snapshot = cache.snapshot();
    cache.remember("b:1", { iteration: 1 });
    expect([...snapshot.keys()]).toEqual(["a:1"]);
    expect([...cache.snapshot().keys()]).toEqual(["b:1"]);
  });
});
