import { json } from "../../db/json";
import type { BlobStore } from "./blob-store";
import { BlobNotFoundError } from "./blob-store";

/**
 * Payload offload (DESIGN.md invariant 8): an input or output over 256 KB is
 * written to the blob store and its row keeps only a "<scheme>:<key>" ref in
 * "inputRef"/"outputRef" (the JSONB column then holds '{}').
 *
 * ORDERING IS THE CALLER'S JOB, and it is one way only: call offloadIfLarge
 * BEFORE the transaction that stores the ref commits (before it begins, ideally,
 * so no row lock is held across file I/O). The other order commits a row that
 * points at nothing, which is unrecoverable; this order, on a rollback, leaks
 * a blob that no row references, which orphan collection cleans up (the
 * "inputRef"/"outputRef" indexes exist for that sweep). Leaking is the right
 * failure.
 *
 * Reading is the other half, and the dangerous one: an unresolved ref does not
 * throw — the decider reads the payload as absent ('{}'), `${big.output.status}`
 * evaluates to undefined, the workflow takes the default branch and reports
 * success. So every payload is resolved eagerly, before the decider sees any
 * of them ({@link resolveTaskPayloads}), and a missing blob fails loudly.
 */

/** 256 KiB of UTF-8 JSON text. */
export const OFFLOAD_THRESHOLD_BYTES = 256 * 1024;

const CONTENT_TYPE = "application/json";

export type OffloadedPayload = { inline: unknown } | { ref: string };

/**
 * `{ ref }` after storing the payload when its JSON is over the threshold,
 * `{ inline: value }` otherwise. The size is measured on json(value) — the exact
 * text that would be stored, NUL already stripped — in UTF-8 bytes: a string of
 * "€" is three bytes per JavaScript character, so `.length` would let ~768 KB
 * through as "256 K". Exactly the threshold stays inline ("over 256 KB" offloads).
 */
export async function offloadIfLarge(
  store: BlobStore,
  value: unknown,
  thresholdBytes: number = OFFLOAD_THRESHOLD_BYTES,
): Promise<OffloadedPayload> {
  const text = json(value);
  if (Buffer.byteLength(text, "utf8") <= thresholdBytes) return { inline: value };
  // The blob holds json()'s output, so a resolved payload equals what an inline
  // one would have read back from jsonb (NUL stripped, lone surrogates replaced).
  return { ref: await store.put(text, { contentType: CONTENT_TYPE }) };
}

/** A stored payload: the JSONB column and its ref column, as read from a row. */
export interface StoredPayload {
  inline: unknown;
  ref: string | null;
}

export class PayloadResolutionError extends Error {
  override name = "PayloadResolutionError";
  constructor(
    readonly ref: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The payload itself: the blob behind `ref` when there is one, else the inline value. Throws when the blob is missing or not JSON. */
export async function resolvePayload(store: BlobStore, payload: StoredPayload, what = "payload"): Promise<unknown> {
  if (payload.ref === null) return payload.inline;
  const ref = payload.ref;
  let bytes: Buffer;
  try {
    ({ bytes } = await store.get(ref));
  } catch (error) {
    const reason = error instanceof BlobNotFoundError ? "its blob is missing" : "its blob could not be read";
    throw new PayloadResolutionError(ref, `Cannot resolve ${what} (${ref}): ${reason}`, { cause: error });
  }
  try {
    return JSON.parse(bytes.toString("utf8")) as unknown;
  } catch (error) {
    throw new PayloadResolutionError(ref, `Cannot resolve ${what} (${ref}): its blob is not JSON`, { cause: error });
  }
}

/** The columns a row with offloadable payloads has: tasks and workflow executions alike. */
export interface RowWithPayloads {
  input: unknown;
  output: unknown;
  inputRef: string | null;
  outputRef: string | null;
}

/** How many blobs are read at once: enough to overlap I/O, few enough not to exhaust file descriptors on a 30,000-task load. */
const RESOLVE_CONCURRENCY = 16;

/**
 * Returns the rows with "input" and "output" replaced by their resolved
 * payloads (refs kept, for display), in the same order. Every ref is resolved
 * before this returns; any failure rejects the whole call with an error naming
 * the row and the field, so an evaluation either sees every payload or none.
 */
export async function resolveTaskPayloads<T extends RowWithPayloads & { id?: string; refName?: string }>(
  store: BlobStore,
  rows: readonly T[],
): Promise<T[]> {
  const resolved = rows.map((row) => ({ ...row }));
  const jobs: (() => Promise<void>)[] = [];
  resolved.forEach((row) => {
    const name = row.refName !== undefined ? `"${row.refName}"` : row.id !== undefined ? row.id : "row";
    if (row.inputRef !== null) {
      const ref = row.inputRef;
      jobs.push(async () => {
        row.input = await resolvePayload(store, { inline: row.input, ref }, `the input of ${name}`);
      });
    }
    if (row.outputRef !== null) {
      const ref = row.outputRef;
      jobs.push(async () => {
        row.output = await resolvePayload(store, { inline: row.output, ref }, `the output of ${name}`);
      });
    }
  });
  await runLimited(jobs, RESOLVE_CONCURRENCY);
  return resolved;
}

/** Runs every job, at most `limit` at a time; rejects with the first failure once no job is left running. */
async function runLimited(jobs: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < jobs.length) {
      const job = jobs[next++]!;
      try {
        await job();
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  if (failure !== undefined) throw failure.error;
}
