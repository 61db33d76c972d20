/**
 * The session cookie's name and headers, with no imports at all: Next's
 * proxy.ts (the page gate) reads the name, and must not pull the database
 * driver into its bundle. sessions.ts re-exports all of it.
 */
export const SESSION_COOKIE = "nf_session";

/**
 * The Set-Cookie value for a session. HttpOnly: no script (nor an XSS) reads
 * it. SameSite=Lax: other sites' forms and fetches do not carry it on POST,
 * the first line of CSRF defence (csrf.ts is the second). Secure whenever the
 * request came over HTTPS; plain-HTTP localhost would otherwise never sign in.
 */
export function sessionCookie(token: string, expiresAt: Date, options: { secure: boolean }): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return [
    `${SESSION_COOKIE}=${token}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${maxAge}`,
    `Expires=${expiresAt.toUTCString()}`,
    ...(options.secure ? ["Secure"] : []),
  ].join("; ");
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;
}

/** The value of cookie `name` in a Cookie header, or null. */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const index = part.indexOf("=");
    if (index < 0) continue;
    if (part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return null;
}
