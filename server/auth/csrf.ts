import type { ApiRequest } from "../web/api-exchange";
import { parseBearer } from "./api-keys";
import { SESSION_COOKIE, readCookie } from "./session-cookie";

/**
 * Cross-site request forgery: a page on another site can make the browser send
 * a request that carries our session cookie. SameSite=Lax already keeps the
 * cookie off cross-site POSTs in current browsers; this check is the second
 * line, for older browsers and for "same-site but other origin" (a sibling
 * subdomain), by comparing where the request says it comes from with where it
 * arrived.
 *
 * - Safe methods (GET, HEAD, OPTIONS) change nothing and pass.
 * - A Bearer-authenticated request passes: a browser never attaches an
 *   Authorization header on its own, so a forged request cannot carry one.
 * - An Origin (or, failing that, a Referer) that is present must match the
 *   request's host, cookie or not: it costs nothing and also stops a forged
 *   sign-in (login CSRF), which carries no session cookie yet.
 * - A request with neither header passes only without a session cookie
 *   (curl, server-side callers); with one it is refused, since every browser
 *   we support sends Origin on a state-changing fetch.
 */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** What the check reads: a fetch Request is one, and so is the REST dispatcher's ApiRequest. */
type SameOriginRequest = Pick<ApiRequest, "method" | "url" | "headers">;

/** The hosts a request may have been addressed to: Host, a proxy's X-Forwarded-Host, and the URL's own. */
function requestHosts(request: SameOriginRequest): Set<string> {
  const hosts = new Set<string>();
  const add = (value: string | null | undefined) => {
    const host = value?.split(",")[0]?.trim().toLowerCase();
    if (host) hosts.add(host);
  };
  add(request.headers.get("host"));
  // Safe to believe: a cross-site page cannot set a custom header on a request
  // without a CORS preflight, which this server never approves.
  add(request.headers.get("x-forwarded-host"));
  try {
    add(new URL(request.url).host);
  } catch {
    // A relative or odd URL leaves only the headers to compare with.
  }
  return hosts;
}

function hostOf(value: string): string | null {
  try {
    return new URL(value).host.toLowerCase();
  } catch {
    return null;
  }
}

export function checkSameOrigin(request: SameOriginRequest): { ok: true } | { ok: false; message: string } {
  if (SAFE_METHODS.has(request.method.toUpperCase())) return { ok: true };
  if (parseBearer(request.headers.get("authorization")) !== null) return { ok: true };
  const origin = request.headers.get("origin");
  const referer = request.headers.get("referer");
  // "null" is what a sandboxed frame or a privacy-stripping redirect sends: not
  // proof of anything, so it is judged like a missing header below.
  const claimed = origin && origin !== "null" ? origin : referer;
  if (claimed) {
    const host = hostOf(claimed);
    if (host !== null && requestHosts(request).has(host)) return { ok: true };
    return { ok: false, message: "Cross-origin request refused: it comes from another site than the one it was sent to." };
  }
  if (readCookie(request.headers.get("cookie"), SESSION_COOKIE) !== null) {
    return { ok: false, message: "Request refused: a signed-in request that changes something must carry an Origin header." };
  }
  return { ok: true };
}
