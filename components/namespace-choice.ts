/**
 * Which namespace the console is looking at. The choice is a cookie, not
 * localStorage, so server components can prefetch the right namespace's data
 * on the first request; it is a preference only — every namespaced procedure
 * authorizes the name it is given.
 */
export const NAMESPACE_COOKIE = "nf_namespace";

const ONE_YEAR_SECONDS = 365 * 24 * 60 * 60;

/**
 * The preferred namespace if the user can still see it, else `default`, else
 * the first one; null when they can see none. A cookie left by someone else
 * who used this browser, or naming a namespace the user was removed from,
 * therefore falls back instead of failing every page.
 */
export function chooseNamespace(visible: readonly { name: string }[], preferred: string | null | undefined): string | null {
  if (preferred && visible.some((n) => n.name === preferred)) return preferred;
  if (visible.some((n) => n.name === "default")) return "default";
  return visible[0]?.name ?? null;
}

/** The `document.cookie` assignment that remembers a choice. */
export function namespaceCookie(name: string): string {
  return `${NAMESPACE_COOKIE}=${encodeURIComponent(name)}; Path=/; Max-Age=${ONE_YEAR_SECONDS}; SameSite=Lax`;
}
