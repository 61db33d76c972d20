import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlobStoreRegistry, FilesystemBlobStore } from "./blob-store";
import {
  OFFLOAD_THRESHOLD_BYTES,
  PayloadResolutionError,
  offloadIfLarge,
  resolvePayload,
  resolveTaskPayloads,
} from "./payload-offload";
import type { OffloadedPayload } from "./payload-offload";

let root: string;
let store: BlobStoreRegistry;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "nf-offload-"));
  store = new BlobStoreRegistry(new FilesystemBlobStore({ root }));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function refOf(result: OffloadedPayload): string {
  if (!("ref" in result)) throw new Error("expected an offloaded payload");
  return result.ref;
}

describe("offloadIfLarge", () => {
  it("is 256 KiB", () => {
    expect(OFFLOAD_THRESHOLD_BYTES).toBe(262_144);
  });

  it("keeps small payloads inline and round-trips large ones through the store", async () => {
    const small = { status: "ok", items: [1, 2, 3] };
    expect(await offloadIfLarge(store, small)).toEqual({ inline: small });

    const large = { status: "ok", blob: "x".repeat(OFFLOAD_THRESHOLD_BYTES) };
    const ref = refOf(await offloadIfLarge(store, large));
    expect(ref).toMatch(/^fs:\d{4}\/\d{2}\//);
    expect((await store.get(ref)).contentType).toBe("application/json");
    expect(await resolvePayload(store, { inline: {}, ref })).toEqual(large);
  });

  it("measures UTF-8 bytes, not string length: multi-byte text just over and just under the threshold", async () => {
    // json("€…") is the quotes plus three UTF-8 bytes per "€", one UTF-16 unit each.
    const euros = (n: number) => "€".repeat(n);
    const overCount = (OFFLOAD_THRESHOLD_BYTES - 1) / 3; // 3n + 2 = threshold + 1
    expect(Number.isInteger(overCount)).toBe(true);

    const justOver = euros(overCount);
    expect(JSON.stringify(justOver).length).toBeLessThan(OFFLOAD_THRESHOLD_BYTES / 2); // .length would say "small"
    const ref = refOf(await offloadIfLarge(store, justOver));
    expect(await resolvePayload(store, { inline: null, ref })).toBe(justOver);

    const exactly = euros(overCount - 1) + "ab"; // 3(n−1) + 2 + 2 = threshold
    expect(Buffer.byteLength(JSON.stringify(exactly), "utf8")).toBe(OFFLOAD_THRESHOLD_BYTES);
    expect(await offloadIfLarge(store, exactly)).toEqual({ inline: exactly });
    expect("ref" in (await offloadIfLarge(store, exactly + "c"))).toBe(true);

    // Astral characters: two UTF-16 units, four UTF-8 bytes.
    const emoji = { e: "😀".repeat(65_535) }; // 4 × 65,535 + 8 = threshold + 4
    expect("ref" in (await offloadIfLarge(store, emoji))).toBe(true);
    const fewer = { e: "😀".repeat(65_534) }; // 262,136 + 8: exactly the threshold
    expect(await offloadIfLarge(store, fewer)).toEqual({ inline: fewer });
  });

  it("measures json()'s output: NULs it strips do not count, and the blob holds the stripped text", async () => {
    // Plain JSON.stringify writes each NUL as six characters (\\u0000): 60,000 of
    // them would be 360 KB, but jsonb cannot store them and json() drops them.
    const value = { s: `a${"\u0000".repeat(60_000)}b` };
    expect(JSON.stringify(value).length).toBeGreaterThan(OFFLOAD_THRESHOLD_BYTES);
    expect(await offloadIfLarge(store, value)).toEqual({ inline: value });

    const big = { s: `${"\u0000".repeat(10)}${"y".repeat(OFFLOAD_THRESHOLD_BYTES)}` };
    const ref = refOf(await offloadIfLarge(store, big));
    expect(await resolvePayload(store, { inline: {}, ref })).toEqual({ s: "y".repeat(OFFLOAD_THRESHOLD_BYTES) });
  });

  it("honours a custom threshold", async () => {
    expect("ref" in (await offloadIfLarge(store, "abcdef", 4))).toBe(true);
    expect(await offloadIfLarge(store, "ab", 4)).toEqual({ inline: "ab" });
  });
});

describe("resolvePayload / resolveTaskPayloads", () => {
  it("returns the inline value when there is no ref", async () => {
    expect(await resolvePayload(store, { inline: { a: 1 }, ref: null })).toEqual({ a: 1 });
  });

  it("resolves every ref of every row, in order, without touching the rows passed in", async () => {
    const bigInput = { text: "i".repeat(OFFLOAD_THRESHOLD_BYTES + 1) };
    const bigOutput = { status: "PAID", text: "o".repeat(OFFLOAD_THRESHOLD_BYTES + 1) };
    const rows = [
      { id: "1", refName: "small", input: { a: 1 }, output: { b: 2 }, inputRef: null, outputRef: null },
      {
        id: "2",
        refName: "big",
        input: {},
        output: {},
        inputRef: refOf(await offloadIfLarge(store, bigInput)),
        outputRef: refOf(await offloadIfLarge(store, bigOutput)),
      },
      {
        id: "3",
        refName: "half",
        input: { c: 3 },
        output: {},
        inputRef: null,
        outputRef: refOf(await offloadIfLarge(store, bigOutput)),
      },
    ];
    const resolved = await resolveTaskPayloads(store, rows);
    expect(resolved.map((r) => r.refName)).toEqual(["small", "big", "half"]);
    expect(resolved[0]).toEqual(rows[0]);
    expect(resolved[1]?.input).toEqual(bigInput);
    expect((resolved[1]?.output as { status: string }).status).toBe("PAID");
    expect(resolved[2]?.input).toEqual({ c: 3 });
    expect(resolved[2]?.output).toEqual(bigOutput);
    expect(resolved[1]?.outputRef).toBe(rows[1]?.outputRef); // kept, for display
    expect(rows[1]?.output).toEqual({}); // the input array is not mutated
    expect(await resolveTaskPayloads(store, [])).toEqual([]);
  });

  it("fails loudly, naming the task and the field, when a blob is missing — never reads it as absent", async () => {
    const ref = refOf(await offloadIfLarge(store, { status: "PAID", pad: "p".repeat(OFFLOAD_THRESHOLD_BYTES) }));
    await store.delete(ref);
    const rows = [
      { id: "1", refName: "fine", input: {}, output: { ok: true }, inputRef: null, outputRef: null },
      { id: "2", refName: "charge", input: {}, output: {}, inputRef: null, outputRef: ref },
    ];
    const failure = resolveTaskPayloads(store, rows);
    await expect(failure).rejects.toThrow(PayloadResolutionError);
    await expect(failure).rejects.toThrow(`Cannot resolve the output of "charge" (${ref}): its blob is missing`);
  });

  it("fails loudly on a ref with an unknown scheme and on a blob that is not JSON", async () => {
    await expect(resolvePayload(store, { inline: {}, ref: "s3:bucket/key" })).rejects.toThrow(
      /Cannot resolve payload \(s3:bucket\/key\): its blob could not be read/,
    );
    const ref = await store.put("not json {", { contentType: "application/json" });
    await expect(resolveTaskPayloads(store, [{ id: "w1", input: {}, output: {}, inputRef: ref, outputRef: null }])).rejects.toThrow(
      `Cannot resolve the input of w1 (${ref}): its blob is not JSON`,
    );
    // And a blob file that was truncated to nothing by hand is not JSON either.
    await writeFile(path.join(root, ref.slice("fs:".length)), "");
    await expect(resolvePayload(store, { inline: {}, ref })).rejects.toThrow(PayloadResolutionError);
  });

  it("resolves many refs with bounded concurrency", async () => {
    const refs = await Promise.all(
      Array.from({ length: 40 }, (_, i) => offloadIfLarge(store, { i, pad: "z".repeat(OFFLOAD_THRESHOLD_BYTES) }).then(refOf)),
    );
    const rows = refs.map((ref, i) => ({ id: String(i), input: {}, output: {}, inputRef: null, outputRef: ref }));
    const resolved = await resolveTaskPayloads(store, rows);
    expect(resolved.map((r) => (r.output as { i: number }).i)).toEqual(refs.map((_, i) => i));
  });
});
