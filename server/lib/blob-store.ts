import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, open, readFile, rename, rm, unlink } from "node:fs/promises";
import path from "node:path";

/**
 * Blob storage for payloads too large for a row (see payload-offload.ts).
 *
 * A ref is "<scheme>:<key>" and always carries its scheme, because refs
 * outlive the deployment that wrote them: a cluster that starts on the
 * filesystem and later moves to S3 still has years of "fs:" refs in its
 * history. Reads and deletes therefore go through a {@link BlobStoreRegistry}
 * that picks the driver by the ref's scheme; writes go to one configured driver.
 */

export interface BlobPutOptions {
  /** Stored with the blob and returned by get (e.g. "application/json"). */
  contentType: string;
}

export interface StoredBlob {
  bytes: Buffer;
  contentType: string;
}

export interface BlobStore {
  /** Stores the bytes (a string is stored as UTF-8) and returns a ref carrying its scheme. Durable when it resolves. */
  put(body: Uint8Array | string, options: BlobPutOptions): Promise<string>;
  /** The blob behind `ref`; throws {@link BlobNotFoundError} when there is none. */
  get(ref: string): Promise<StoredBlob>;
  /** Removes the blob; a ref that is already gone is not an error (garbage collection may race). */
  delete(ref: string): Promise<void>;
}

/** One storage backend, named by the scheme its refs carry. */
export interface BlobDriver extends BlobStore {
  readonly scheme: string;
}

export class BlobNotFoundError extends Error {
  override name = "BlobNotFoundError";
  constructor(readonly ref: string) {
    super(`Blob ${ref} does not exist`);
  }
}

export class InvalidBlobRefError extends Error {
  override name = "InvalidBlobRefError";
  constructor(
    readonly ref: string,
    reason: string,
  ) {
    super(`Invalid blob ref ${JSON.stringify(ref)}: ${reason}`);
  }
}

export class UnknownBlobSchemeError extends Error {
  override name = "UnknownBlobSchemeError";
  constructor(
    readonly ref: string,
    readonly scheme: string,
    configured: readonly string[],
  ) {
    super(
      `Blob ref ${JSON.stringify(ref)} uses scheme "${scheme}", which this deployment has no driver for ` +
        `(configured: ${configured.map((s) => `"${s}"`).join(", ") || "none"})`,
    );
  }
}

const SCHEME = /^([a-z][a-z0-9+.-]*):(.+)$/;

/** Splits "<scheme>:<key>"; throws InvalidBlobRefError when there is no scheme. */
export function parseBlobRef(ref: string): { scheme: string; key: string } {
  const match = SCHEME.exec(ref);
  if (!match) throw new InvalidBlobRefError(ref, 'expected "<scheme>:<key>"');
  return { scheme: match[1]!, key: match[2]! };
}

/**
 * Resolves refs to drivers by scheme and writes new blobs with `writeTo`.
 * It is itself a BlobStore, so callers hold one object whatever the mix of
 * schemes in their history.
 */
export class BlobStoreRegistry implements BlobStore {
  private readonly drivers: ReadonlyMap<string, BlobDriver>;

  constructor(
    private readonly writeTo: BlobDriver,
    readOnly: readonly BlobDriver[] = [],
  ) {
    const drivers = new Map<string, BlobDriver>();
    for (const driver of [writeTo, ...readOnly]) {
      if (drivers.has(driver.scheme)) throw new Error(`Two blob drivers for scheme "${driver.scheme}"`);
      drivers.set(driver.scheme, driver);
    }
    this.drivers = drivers;
  }

  // async, so a bad ref rejects like any other failure instead of throwing synchronously.
  async put(body: Uint8Array | string, options: BlobPutOptions): Promise<string> {
    return this.writeTo.put(body, options);
  }

  async get(ref: string): Promise<StoredBlob> {
    return this.driverFor(ref).get(ref);
  }

  async delete(ref: string): Promise<void> {
    return this.driverFor(ref).delete(ref);
  }

  private driverFor(ref: string): BlobDriver {
    const { scheme } = parseBlobRef(ref);
    const driver = this.drivers.get(scheme);
    if (!driver) throw new UnknownBlobSchemeError(ref, scheme, [...this.drivers.keys()]);
    return driver;
  }
}

export interface FilesystemBlobStoreOptions {
  /** Directory the blobs live under (e.g. `<dataDir>/blobs`); created on first write. */
  root: string;
  /** The clock that names the yyyy/mm directory; injectable for tests. */
  now?: () => Date;
}

// fs:<yyyy>/<mm>/<uuid>. The key is matched whole, so no "..", separator,
// absolute path or NUL can reach the filesystem through a ref.
const FS_KEY = /^(\d{4})\/(0[1-9]|1[0-2])\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

// The file is a one-line JSON header, then the bytes: the content type travels
// in the same file, so one rename publishes blob and metadata together.
const MAGIC = "nf-blob/1 ";

/**
 * Blobs as files under `root`, in one directory per month (so a directory never
 * holds more than a month of payloads, and old months are easy to archive).
 *
 * A write is durable before put() resolves, because the caller commits a row
 * pointing at the blob right after: the bytes go to a temporary file in the
 * target directory, are fsynced, and the file is renamed into place (atomic on
 * POSIX within one filesystem), then the directory is fsynced so the rename
 * itself survives a crash. A reader therefore sees a whole blob or none, never
 * a torn one.
 */
export class FilesystemBlobStore implements BlobDriver {
  readonly scheme = "fs";
  private readonly root: string;
  private readonly now: () => Date;

  constructor(options: FilesystemBlobStoreOptions) {
    this.root = path.resolve(options.root);
    this.now = options.now ?? (() => new Date());
  }

  async put(body: Uint8Array | string, options: BlobPutOptions): Promise<string> {
    const at = this.now();
    const key = `${at.getUTCFullYear()}/${String(at.getUTCMonth() + 1).padStart(2, "0")}/${randomUUID()}`;
    const target = this.pathFor(`fs:${key}`);
    const dir = path.dirname(target);
    await mkdir(dir, { recursive: true });

    const header = Buffer.from(`${MAGIC}${JSON.stringify({ contentType: options.contentType })}\n`, "utf8");
    const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
    // Dot-prefixed and never a valid key, so a crash mid-write leaves only
    // junk that no ref can name (and a sweeper can match by prefix).
    const temp = path.join(dir, `.tmp-${randomBytes(8).toString("hex")}`);
    const file = await open(temp, "wx");
    try {
      // writeFile loops over partial writes (a bare write/writev may not), and on a
      // handle it continues from the current position.
      await file.writeFile(header);
      await file.writeFile(bytes);
      await file.sync();
    } catch (error) {
      await file.close();
      await rm(temp, { force: true });
      throw error;
    }
    await file.close();
    try {
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await syncDirectory(dir);
    return `fs:${key}`;
  }

  async get(ref: string): Promise<StoredBlob> {
    const file = this.pathFor(ref);
    let raw: Buffer;
    try {
      raw = await readFile(file);
    } catch (error) {
      if (errorCode(error) === "ENOENT") throw new BlobNotFoundError(ref);
      throw error;
    }
    const newline = raw.indexOf(0x0a);
    const head = newline < 0 ? "" : raw.subarray(0, newline).toString("utf8");
    if (!head.startsWith(MAGIC)) throw new Error(`Blob ${ref} is not a node-flow blob file (${file})`);
    const meta = JSON.parse(head.slice(MAGIC.length)) as { contentType?: unknown };
    return {
      bytes: raw.subarray(newline + 1),
      contentType: typeof meta.contentType === "string" ? meta.contentType : "application/octet-stream",
    };
  }

  async delete(ref: string): Promise<void> {
    try {
      await unlink(this.pathFor(ref));
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw error;
    }
  }

  /** The file behind an "fs:" ref; refuses anything that is not exactly a key this store writes. */
  private pathFor(ref: string): string {
    const { scheme, key } = parseBlobRef(ref);
    if (scheme !== this.scheme) throw new InvalidBlobRefError(ref, `not an "${this.scheme}:" ref`);
    const match = FS_KEY.exec(key);
    if (!match) throw new InvalidBlobRefError(ref, 'expected "fs:<yyyy>/<mm>/<uuid>"');
    const file = path.resolve(this.root, match[1]!, match[2]!, match[3]!);
    // Belt and braces: the pattern already excludes traversal.
    if (!file.startsWith(this.root + path.sep)) throw new InvalidBlobRefError(ref, "resolves outside the blob root");
    return file;
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
