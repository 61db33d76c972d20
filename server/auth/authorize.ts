import type { Db } from "../../db/pool";
import { rolesOfUserInNamespace, strongestRole } from "../store/namespace-members";
import { findNamespaceByName, NAMESPACE_NAME_PATTERN } from "../store/namespaces";
import type { Namespace } from "../store/namespaces";
import { grants, roleOfScopes } from "./principal";
import type { ApiKeyScope, NamespaceRole, Permission, Principal } from "./principal";

export type NamespaceAuthorization =
  | { ok: true; namespaceId: string; role: NamespaceRole | null }
  | { ok: false; status: 403 | 404; message: string };

/**
 * May `principal` do `permission` in the namespace named `namespaceName`?
 *
 * 404 when the namespace does not exist *or* the principal has no access to it
 * at all, with the same message: a caller must not be able to tell the two
 * apart, or namespace names become enumerable. 403 only when it can see the
 * namespace but its role or scopes fall short.
 *
 * Users: the owner is admin everywhere; anyone else holds the strongest of
 * their direct membership and their groups' roles in that namespace. API keys:
 * their own namespace only, with the role their scopes amount to.
 */
export async function authorizeNamespace(
  db: Db,
  principal: Principal,
  namespaceName: string,
  permission: Permission,
): Promise<NamespaceAuthorization> {
  // A name no namespace can have is not looked up: a NUL in it (a path's %00)
  // made Postgres refuse the query, a 500 for what is plainly a 404.
  const notFound = { ok: false, status: 404, message: `Namespace "${printable(namespaceName)}" not found.` } as const;
  const namespace = NAMESPACE_NAME_PATTERN.test(namespaceName) ? await namespaceNamed(db, namespaceName) : null;
  if (!namespace) return notFound;

  let role: NamespaceRole | null;
  let scopes: readonly ApiKeyScope[] = [];
  if (principal.kind === "user") {
    role = principal.isOwner ? "admin" : strongestRole(await rolesOfUserInNamespace(db, namespace.id, principal.userId));
    if (role === null) return notFound;
  } else {
    if (principal.namespaceId !== namespace.id) return notFound;
    role = roleOfScopes(principal.scopes);
    scopes = principal.scopes;
  }
  if (!grants(role, scopes, permission)) {
    const holder = role ? `Your role in "${namespace.name}" (${role}) does` : `This API key's scopes (${scopes.join(", ") || "none"}) do`;
    return { ok: false, status: 403, message: `${holder} not allow this: it needs the "${permission}" permission.` };
  }
  return { ok: true, namespaceId: namespace.id, role };
}

/** A caller's garbage as it goes back into a message: control characters escaped, and at most 100 characters of it. */
function printable(name: string): string {
  const shown = name.length > 100 ? `${name.slice(0, 100)}…` : name;
  return shown.replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Names remembered per database handle at most; past it the map starts over. */
const MAX_REMEMBERED_NAMESPACES = 10_000;
const namespacesByDb = new WeakMap<Db, Map<string, Namespace>>();

/**
 * The namespace named `name`, remembered once found: nothing renames or
 * deletes a namespace, so a name that was found stands for the same row for
 * good. A name not found is not remembered (it may be created next). Every
 * request to a namespace's API asks this, and the lookup was one of the
 * dozen round trips of a worker's report. Per database handle, because a
 * name means a different row in another database (each test file has its own).
 */
async function namespaceNamed(db: Db, name: string): Promise<Namespace | null> {
  let known = namespacesByDb.get(db);
  if (known === undefined) {
    known = new Map();
    namespacesByDb.set(db, known);
  }
  const hit = known.get(name);
  if (hit !== undefined) return hit;
  const found = await findNamespaceByName(db, name);
  if (found !== null) {
    if (known.size >= MAX_REMEMBERED_NAMESPACES) known.clear();
    known.set(name, found);
  }
  return found;
}
