/**
 * Who is calling. Every authenticated request resolves to exactly one
 * principal — a signed-in user (session cookie) or an API key (bearer) — and
 * every authorization decision is made from it plus the namespace the request
 * names (authorize.ts). Kept free of I/O so route handlers, tRPC and the
 * Conductor layer share one vocabulary.
 */

/** Roles a user holds in a namespace, weakest first: each includes the ones before it. */
export const NAMESPACE_ROLES = ["viewer", "operator", "editor", "admin"] as const;
export type NamespaceRole = (typeof NAMESPACE_ROLES)[number];

/**
 * What an API key may do in its one namespace: `worker` polls and reports
 * tasks; `admin` does everything in the namespace.
 */
export const API_KEY_SCOPES = ["worker", "admin"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/**
 * What an operation needs. `read`: viewer and up. `operate` (start runs,
 * pause, retry, complete human tasks): operator and up. `edit` (definitions):
 * editor and up. `admin` (keys, members, groups): admin. `work` (the worker
 * protocol: poll, heartbeat, report): an API key with the `worker` scope, or
 * operator and up.
 */
export const PERMISSIONS = ["read", "operate", "edit", "admin", "work"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type Principal =
  | {
      kind: "user";
      userId: string;
      email: string;
      /** The instance owner (Users.isAdmin): admin in every namespace, manages namespaces and users. */
      isOwner: boolean;
      sessionId: string;
    }
  | {
      kind: "apiKey";
      apiKeyId: string;
      /** An API key belongs to exactly one namespace and can never act outside it. */
      namespaceId: string;
      scopes: readonly ApiKeyScope[];
      /** The user or service account the key acts for (at most one). */
      userId: string | null;
      serviceAccountId: string | null;
    };

/** The role an API key's scopes amount to for the role-ranked permissions. */
export function roleOfScopes(scopes: readonly ApiKeyScope[]): NamespaceRole | null {
  return scopes.includes("admin") ? "admin" : null;
}

/** Whether `role` (a user's, or a key's via {@link roleOfScopes}) plus `scopes` grant `permission`. */
export function grants(role: NamespaceRole | null, scopes: readonly ApiKeyScope[], permission: Permission): boolean {
  const rank = role === null ? -1 : NAMESPACE_ROLES.indexOf(role);
  switch (permission) {
    case "read":
      return rank >= 0;
    case "operate":
      return rank >= NAMESPACE_ROLES.indexOf("operator");
    case "edit":
      return rank >= NAMESPACE_ROLES.indexOf("editor");
    case "admin":
      return rank >= NAMESPACE_ROLES.indexOf("admin");
    case "work":
      return scopes.includes("worker") || rank >= NAMESPACE_ROLES.indexOf("operator");
  }
}
