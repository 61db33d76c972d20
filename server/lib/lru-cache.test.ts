import { describe, expect, it } from "vitest";
import { LruCache } from "./lru-cache";

describe("LruCache", () => {
  it("drops the least recently used entry beyond its capacity; a read makes an entry recent", () => {
    const cache = new LruCache<string, number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    expect(cache.get("a")).toBe(1);
    cache.set("c", 3);
    expect([...cache.snapshot().keys()]).toEqual(["a", "c"]);
    expect(cache.get("b")).toBeUndefined();
  });

  it("a snapshot is a copy, and taking one changes no entry's recency", () => {
    const cache = new LruCache<string, number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    const snapshot = cache.snapshot();
    cache.set("c", 3);
    expect([...snapshot.keys()]).toEqual(["a", "b"]);
    expect([...cache.snapshot().keys()]).toEqual(["b", "c"]);
  });
});
