import { tmpdir } from "node:os";
import path from "node:path";
import type { Db } from "@/db/pool";
import { FilesystemBlobStore } from "../lib/blob-store";
import type { BlobStore } from "../lib/blob-store";
import { authenticateRequest } from "../auth/authenticate";
import { checkSameOrigin } from "../auth/csrf";
import type { Principal } from "../auth/principal";
import type { Config } from "../lib/config";
import type { RequestFacts, TrpcContext } from "./init";

/** The first address of X-Forwarded-For, else X-Real-IP. Informational only (sessions, audit): a client can set both. */
function clientAddress(headers: Headers): string | null {
  const forwarded = headers.get("x-forwarded-for")?.split(",")[0]?.trim();
  return forwarded || headers.get("x-real-ip")?.trim() || null;
}

function cameOverHttps(request: Request): boolean {
  const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  if (proto) return proto === "https";
  try {
    return new URL(request.url).protocol === "https:";
  } catch {
    return false;
  }
}

export function requestFacts(request: Request): RequestFacts {
  return {
    ipAddress: clientAddress(request.headers),
    userAgent: request.headers.get("user-agent"),
    secure: cameOverHttps(request),
    sameOrigin: checkSameOrigin(request),
  };
}

/**
 * The context for one tRPC request: who is calling (session cookie or Bearer
 * key, via authenticateRequest) and the facts the auth procedures need. Used by
 * the HTTP endpoint and by server components (which pass a Request built from
 * `headers()`).
 */
export async function createTrpcContext(input: {
  db: Db;
  config: Config;
  blobs: BlobStore;
  request: Request;
  resHeaders: Headers;
}): Promise<TrpcContext> {
  return {
    db: input.db,
    config: input.config,
    blobs: input.blobs,
    principal: await authenticateRequest(input.db, input.request),
    resHeaders: input.resHeaders,
    request: requestFacts(input.request),
  };
}

/**
 * A context with a principal given directly, for server-side callers that
 * already know who is acting (tests through `createCaller`). Its request facts
 * pass the same-origin check: there is no browser to forge anything.
 */
export function trustedContext(input: {
  db: Db;
  config: Config;
  principal: Principal | null;
  resHeaders?: Headers;
  blobs?: BlobStore;
}): TrpcContext {
  return {
    db: input.db,
    config: input.config,
    // Tests rarely pass one; a default under the config's data directory
    // would litter the checkout's .data/ with test payloads.
    blobs: input.blobs ?? new FilesystemBlobStore({ root: path.join(tmpdir(), "node-flow-test-blobs") }),
    principal: input.principal,
    resHeaders: input.resHeaders ?? new Headers(),
    request: { ipAddress: null, userAgent: null, secure: false, sameOrigin: { ok: true } },
  };
}
