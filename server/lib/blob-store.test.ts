import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BlobDriver, StoredBlob } from "./blob-store";
import {
  BlobNotFoundError,
  BlobStoreRegistry,
  FilesystemBlobStore,
  InvalidBlobRefError,
  UnknownBlobSchemeError,
  parseBlobRef,
} from "./blob-store";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "nf-blobs-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe("FilesystemBlobStore", () => {
  it("round-trips strings (as UTF-8) and bytes with their content type under fs:<yyyy>/<mm>/<uuid>", async () => {
    const store = new FilesystemBlobStore({ root, now: () => new Date("2026-03-31T23:59:59Z") });
    const text = '{"greeting":"grüß dich 👋"}';
    const ref = await store.put(text, { contentType: "application/json" });
    expect(ref).toMatch(/^fs:2026\/03\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const blob = await store.get(ref);
    expect(blob.contentType).toBe("application/json");
    expect(blob.bytes.toString("utf8")).toBe(text);

    const bytes = Uint8Array.from([0, 1, 2, 10, 255, 10, 0]);
    const binRef = await store.put(bytes, { contentType: "application/octet-stream" });
    expect(new Uint8Array((await store.get(binRef)).bytes)).toEqual(bytes);
    expect(binRef).not.toBe(ref);

    const empty = await store.put("", { contentType: "text/plain" });
    expect((await store.get(empty)).bytes.length).toBe(0);
  });

  it("leaves only the finished files behind (the temporary file is renamed into place)", async () => {
    const store = new FilesystemBlobStore({ root, now: () => new Date("2026-07-04T12:00:00Z") });
    const refs = await Promise.all(Array.from({ length: 5 }, (_, i) => store.put(`blob ${i}`, { contentType: "text/plain" })));
    const files = (await listTree(root)).sort();
    expect(files).toEqual(refs.map((ref) => ref.slice("fs:".length)).sort());
  });

  it("deletes, and deleting again is not an error; a deleted blob is not found", async () => {
    const store = new FilesystemBlobStore({ root });
    const ref = await store.put("x", { contentType: "text/plain" });
    await store.delete(ref);
    await store.delete(ref);
    await expect(store.get(ref)).rejects.toThrow(BlobNotFoundError);
    await expect(store.get(ref)).rejects.toThrow(`Blob ${ref} does not exist`);
  });

  it("refuses refs that could reach outside the root, or that it never writes", async () => {
    const store = new FilesystemBlobStore({ root });
    // A file just outside the root that a traversal would hit.
    await writeFile(path.join(path.dirname(root), "secret.txt"), "nope");
    const hostile = [
      "fs:../secret.txt",
      "fs:2026/07/../../../secret.txt",
      "fs:/etc/passwd",
      "fs:2026/07/00000000-0000-0000-0000-000000000000/../x",
      "fs:2026\\07\\00000000-0000-0000-0000-000000000000",
      "fs:2026/07/00000000-0000-0000-0000-000000000000\u0000",
      "fs:2026/13/00000000-0000-0000-0000-000000000000",
      "fs:",
      "fs:2026/07/",
    ];
    for (const ref of hostile) {
      await expect(store.get(ref), ref).rejects.toThrow(InvalidBlobRefError);
      await expect(store.delete(ref), ref).rejects.toThrow(InvalidBlobRefError);
    }
    await expect(store.get("s3:bucket/key")).rejects.toThrow(/not an "fs:" ref/);
    await expect(store.get("no-scheme")).rejects.toThrow(InvalidBlobRefError);
  });

  it("rejects a file that is not one of its blobs rather than returning garbage", async () => {
    const store = new FilesystemBlobStore({ root, now: () => new Date("2026-01-15T00:00:00Z") });
    const ref = await store.put("ok", { contentType: "text/plain" });
    await writeFile(path.join(root, ref.slice("fs:".length)), "plain text");
    await expect(store.get(ref)).rejects.toThrow(/not a node-flow blob file/);
  });
});

describe("BlobStoreRegistry", () => {
  class MemoryDriver implements BlobDriver {
    readonly blobs = new Map<string, StoredBlob>();
    constructor(readonly scheme: string) {}
    put(body: Uint8Array | string, options: { contentType: string }): Promise<string> {
      const ref = `${this.scheme}:${this.blobs.size}`;
      this.blobs.set(ref, { bytes: Buffer.from(body), contentType: options.contentType });
      return Promise.resolve(ref);
    }
    get(ref: string): Promise<StoredBlob> {
      const blob = this.blobs.get(ref);
      return blob ? Promise.resolve(blob) : Promise.reject(new BlobNotFoundError(ref));
    }
    delete(ref: string): Promise<void> {
      this.blobs.delete(ref);
      return Promise.resolve();
    }
  }

  it("writes with its write driver and reads each ref with the driver its scheme names", async () => {
    const fs = new FilesystemBlobStore({ root });
    const legacy = new MemoryDriver("mem");
    const legacyRef = await legacy.put("old", { contentType: "text/plain" });
    const registry = new BlobStoreRegistry(fs, [legacy]);

    const ref = await registry.put("new", { contentType: "text/plain" });
    expect(parseBlobRef(ref).scheme).toBe("fs");
    expect((await registry.get(ref)).bytes.toString()).toBe("new");
    expect((await registry.get(legacyRef)).bytes.toString()).toBe("old");
    await registry.delete(legacyRef);
    expect(legacy.blobs.size).toBe(0);
  });

  it("names the scheme it has no driver for", async () => {
    const registry = new BlobStoreRegistry(new FilesystemBlobStore({ root }));
    await expect(registry.get("s3:bucket/2026/07/x")).rejects.toThrow(UnknownBlobSchemeError);
    await expect(registry.get("s3:bucket/2026/07/x")).rejects.toThrow(
      'Blob ref "s3:bucket/2026/07/x" uses scheme "s3", which this deployment has no driver for (configured: "fs")',
    );
    await expect(registry.delete("nope")).rejects.toThrow(InvalidBlobRefError);
    expect(() => new BlobStoreRegistry(new MemoryDriver("fs"), [new FilesystemBlobStore({ root })])).toThrow(/Two blob drivers/);
  });
});
