import { NextResponse } from "next/server";
import type { NextRequest } from "next/server";
import { REQUESTED_PATH_HEADER, isAuthPage, signInPath } from "@/components/auth-routes";
import { SESSION_COOKIE } from "@/server/auth/sessions";

/**
 * An optimistic first gate for pages: a visitor without a session cookie is
 * sent to sign in before any page renders. It only looks for the cookie — a
 * forged, expired or revoked one passes here and is refused by the root
 * layout, which asks the server who the session belongs to, and again by every
 * tRPC procedure, which is the real enforcement.
 */
export function proxy(request: NextRequest): NextResponse {
  const { pathname, search } = request.nextUrl;
  const requested = `${pathname}${search}`;
  if (!isAuthPage(pathname) && !request.cookies.has(SESSION_COOKIE)) {
    return NextResponse.redirect(new URL(signInPath(requested), request.url));
  }
  const headers = new Headers(request.headers);
  headers.set(REQUESTED_PATH_HEADER, requested);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  // Pages only. API routes — /api/* and Conductor's /conductor/api/* —
  // authenticate each request themselves and answer 401, not a redirect (a
  // Conductor client would follow it to an HTML page); health and metrics are
  // public by design; Next's own assets and the icon carry nothing to protect.
  matcher: ["/((?!api/|conductor/api/|_next/|metrics|icon.svg|favicon.ico).*)"],
};
