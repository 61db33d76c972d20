/**
 * The console's sign-in routing, shared by proxy.ts, the root layout and the
 * sign-in and setup pages. No "use client": server and browser both import it.
 */

/** The only pages an anonymous visitor may see; everything else sends them to sign in. */
export const AUTH_PAGES = ["/sign-in", "/setup"] as const;

/**
 * Set by proxy.ts on every page request: the path (with its query) the visitor
 * asked for. The root layout cannot otherwise know which page it wraps, and it
 * needs to: it frames console pages and leaves the sign-in pages bare.
 */
export const REQUESTED_PATH_HEADER = "x-nf-requested-path";

export const DEFAULT_LANDING = "/workflows";

/** A path on this origin. Callers cast it to next's `Route` for redirect() and router calls. */
export type AppPath = `/${string}`;

export function isAuthPage(path: string): boolean {
  const pathname = path.split(/[?#]/, 1)[0]?.replace(/\/+$/, "") || "/";
  return (AUTH_PAGES as readonly string[]).includes(pathname);
}

/**
 * Where to go after signing in, from a `next` parameter anyone can craft. Only
 * a path on this origin is kept ("//evil.example" and "/\evil.example" are
 * other hosts to a browser), and never a sign-in page itself, which would
 * loop; anything else lands on Workflows.
 */
export function safeNextPath(raw: string | null | undefined): AppPath {
  if (!raw || !raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\")) return DEFAULT_LANDING;
  // Control characters (tabs, newlines) are stripped by URL parsers and can turn "/\t/evil" into "//evil".
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) return DEFAULT_LANDING;
  let url: URL;
  try {
    url = new URL(raw, "http://console.invalid");
  } catch {
    return DEFAULT_LANDING;
  }
  if (url.origin !== "http://console.invalid" || isAuthPage(url.pathname)) return DEFAULT_LANDING;
  return `/${url.pathname.slice(1)}${url.search}${url.hash}`;
}

/** The sign-in page, remembering where the visitor was going (nothing to remember for the landing page). */
export function signInPath(requested: string | null | undefined): AppPath {
  const next = safeNextPath(requested);
  return next === DEFAULT_LANDING || next === "/" ? "/sign-in" : `/sign-in?${new URLSearchParams({ next }).toString()}`;
}
