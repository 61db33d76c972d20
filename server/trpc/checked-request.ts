import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { BodyTooLargeError, fromFetchRequest } from "../web/api-exchange";
import { DEFAULT_MAX_BODY_BYTES } from "../rest/dispatch";

/**
 * The console's tRPC request, checked before tRPC reads it, the way REST and
 * Conductor check theirs: a body over the limit is refused with 413 while it
 * is read (tRPC would buffer any size), and input that is not UTF-8 — a
 * mutation's body, a query's `?input=` — with 400, where tRPC would decode
 * it into U+FFFD and store what was never sent. Answers in tRPC's own error
 * shape, so the console's client shows them like any other refusal.
 */
export async function checkedTrpcRequest(request: Request, limit = DEFAULT_MAX_BODY_BYTES): Promise<Request | Response> {
  const path = new URL(request.url).pathname.replace(/^\/api\/trpc\/?/, "");
  const input = rawQueryValue(request.url, "input");
  if (input !== null && !decodes(input)) return refusal(path, 400, "BAD_REQUEST", "The input is not valid UTF-8");
  if (request.method !== "POST") return request;
  let bytes: Uint8Array | null;
  try {
    bytes = await fromFetchRequest(request).readBody(limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) return refusal(path, 413, "PAYLOAD_TOO_LARGE", error.message);
    throw error;
  }
  if (bytes === null) return request;
  try {
    STRICT_UTF8.decode(bytes);
  } catch {
    return refusal(path, 400, "BAD_REQUEST", "The body is not valid UTF-8");
  }
  return new Request(request.url, { method: request.method, headers: request.headers, body: bytes as BodyInit, signal: request.signal });
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A query parameter as sent, still percent-encoded (URLSearchParams would already have replaced bad bytes). */
function rawQueryValue(url: string, key: string): string | null {
  const search = new URL(url).search.slice(1);
  for (const pair of search.split("&")) {
    const at = pair.indexOf("=");
    if ((at === -1 ? pair : pair.slice(0, at)) === key) return at === -1 ? "" : pair.slice(at + 1);
  }
  return null;
}

function decodes(encoded: string): boolean {
  try {
    decodeURIComponent(encoded.replace(/\+/g, " "));
    return true;
  } catch {
    return false;
  }
}

function refusal(path: string, status: number, code: "BAD_REQUEST" | "PAYLOAD_TOO_LARGE", message: string): Response {
  const body = { error: { message, code: TRPC_ERROR_CODES_BY_KEY[code], data: { code, httpStatus: status, path } } };
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}
