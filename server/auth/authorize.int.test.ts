import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { insertGroup, insertGroupMember } from "../store/groups";
import { upsertNamespaceMember } from "../store/namespace-members";
import { insertNamespace } from "../store/namespaces";
import { insertUser } from "../store/users";
import { createApiKey } from "./api-keys";
import { authenticateRequest } from "./authenticate";
import { authorizeNamespace } from "./authorize";
import type { Principal } from "./principal";
import { createSession } from "./sessions";

const database = useTestDatabase();

let nsA: string;
let owner: Principal;
let viewer: Principal;
let grouped: Principal;
let outsider: Principal;

function userPrincipal(user: { id: string; email: string; isOwner: boolean }): Principal {
  return { kind: "user", userId: user.id, email: user.email, isOwner: user.isOwner, sessionId: "00000000-0000-0000-0000-000000000000" };
}

beforeAll(async () => {
  const db = database.db;
  nsA = (await insertNamespace(db, { name: "team-a" })).id;
  await insertNamespace(db, { name: "team-b" });
  owner = userPrincipal(await insertUser(db, { email: "owner@example.com", passwordHash: null, isOwner: true }));
  const viewerUser = await insertUser(db, { email: "viewer@example.com", passwordHash: null, isOwner: false });
  viewer = userPrincipal(viewerUser);
  await upsertNamespaceMember(db, { namespaceId: nsA, userId: viewerUser.id, role: "viewer" });
  // Direct role viewer, group roles operator and editor: the strongest (editor) wins.
  const groupedUser = await insertUser(db, { email: "grouped@example.com", passwordHash: null, isOwner: false });
  grouped = userPrincipal(groupedUser);
  await upsertNamespaceMember(db, { namespaceId: nsA, userId: groupedUser.id, role: "viewer" });
  const ops = await insertGroup(db, { namespaceId: nsA, name: "ops", roles: ["operator"] });
  const editors = await insertGroup(db, { namespaceId: nsA, name: "editors", roles: ["editor"] });
  await insertGroupMember(db, nsA, ops.id, groupedUser.id);
  await insertGroupMember(db, nsA, editors.id, groupedUser.id);
  outsider = userPrincipal(await insertUser(db, { email: "outsider@example.com", passwordHash: null, isOwner: false }));
});

describe("authorizeNamespace for users", () => {
  it("makes the owner admin in every namespace", async () => {
    expect(await authorizeNamespace(database.db, owner, "team-b", "admin")).toMatchObject({ ok: true, role: "admin" });
  });

  it("gives a member their role's permissions and 403 beyond them", async () => {
    expect(await authorizeNamespace(database.db, viewer, "team-a", "read")).toEqual({ ok: true, namespaceId: nsA, role: "viewer" });
    const refused = await authorizeNamespace(database.db, viewer, "team-a", "operate");
    expect(refused).toMatchObject({ ok: false, status: 403 });
  });

  it("takes the strongest of the direct role and every group role", async () => {
    expect(await authorizeNamespace(database.db, grouped, "team-a", "edit")).toEqual({ ok: true, namespaceId: nsA, role: "editor" });
    expect(await authorizeNamespace(database.db, grouped, "team-a", "admin")).toMatchObject({ ok: false, status: 403 });
  });

  it("answers 404, word for word as for a missing namespace, where the user has no access at all", async () => {
    const noAccess = await authorizeNamespace(database.db, viewer, "team-b", "read");
    const missing = await authorizeNamespace(database.db, viewer, "team-zzz", "read");
    expect(noAccess).toMatchObject({ ok: false, status: 404 });
    expect(missing).toMatchObject({ ok: false, status: 404 });
    expect(noAccess.ok === false && noAccess.message.replace("team-b", "X")).toBe(missing.ok === false && missing.message.replace("team-zzz", "X"));
    expect(await authorizeNamespace(database.db, outsider, "team-a", "read")).toMatchObject({ ok: false, status: 404 });
  });
});

describe("authorizeNamespace for API keys", () => {
  async function keyPrincipal(scopes: ("worker" | "admin")[]): Promise<Principal> {
    const { key } = await createApiKey(database.db, { namespaceId: nsA, name: `key-${scopes.join("-")}`, scopes, createdBy: "test" });
    const principal = await authenticateRequest(database.db, new Request("http://x/", { headers: { authorization: `Bearer ${key}` } }));
    if (!principal) throw new Error("the key did not authenticate");
    return principal;
  }

  it("an admin key may do everything in its own namespace and nothing (404) in another", async () => {
    const admin = await keyPrincipal(["admin"]);
    expect(await authorizeNamespace(database.db, admin, "team-a", "admin")).toEqual({ ok: true, namespaceId: nsA, role: "admin" });
    expect(await authorizeNamespace(database.db, admin, "team-b", "read")).toMatchObject({ ok: false, status: 404 });
  });

  it("a worker key may work but not read or administer (403)", async () => {
    const worker = await keyPrincipal(["worker"]);
    expect(await authorizeNamespace(database.db, worker, "team-a", "work")).toEqual({ ok: true, namespaceId: nsA, role: null });
    expect(await authorizeNamespace(database.db, worker, "team-a", "read")).toMatchObject({ ok: false, status: 403 });
    expect(await authorizeNamespace(database.db, worker, "team-a", "admin")).toMatchObject({ ok: false, status: 403 });
    expect(await authorizeNamespace(database.db, worker, "team-b", "work")).toMatchObject({ ok: false, status: 404 });
  });
});

describe("authenticateRequest", () => {
  it("resolves a session cookie to its user and a Bearer key to the key", async () => {
    const user = await insertUser(database.db, { email: "cookie@example.com", passwordHash: null, isOwner: false });
    const { token } = await createSession(database.db, { userId: user.id });
    const byCookie = await authenticateRequest(database.db, new Request("http://x/", { headers: { cookie: `nf_session=${token}` } }));
    expect(byCookie).toMatchObject({ kind: "user", userId: user.id });

    const { key, id } = await createApiKey(database.db, { namespaceId: nsA, name: "bearer", scopes: ["worker"], createdBy: "test" });
    const byKey = await authenticateRequest(database.db, new Request("http://x/", { headers: { authorization: `Bearer ${key}` } }));
    expect(byKey).toMatchObject({ kind: "apiKey", apiKeyId: id, namespaceId: nsA, scopes: ["worker"] });
  });

  it("judges a Bearer request by the key alone: a bad key is anonymous even beside a good cookie", async () => {
    const user = await insertUser(database.db, { email: "both@example.com", passwordHash: null, isOwner: false });
    const { token } = await createSession(database.db, { userId: user.id });
    const headers = { cookie: `nf_session=${token}`, authorization: "Bearer nf_0123456789ab_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" };
    expect(await authenticateRequest(database.db, new Request("http://x/", { headers }))).toBeNull();
    // Another scheme is not ours, and does not fall back to the cookie either.
    expect(await authenticateRequest(database.db, new Request("http://x/", { headers: { ...headers, authorization: "Basic dTpw" } }))).toBeNull();
  });

  it("is anonymous with no credentials", async () => {
    expect(await authenticateRequest(database.db, new Request("http://x/"))).toBeNull();
  });
});

describe("the namespace lookup", () => {
  it("remembers a namespace once found, but not a name it did not find: one created afterwards is found", async () => {
    expect(await authorizeNamespace(database.db, owner, "created-later", "read")).toMatchObject({ ok: false, status: 404 });
    const created = await insertNamespace(database.db, { name: "created-later" });
    expect(await authorizeNamespace(database.db, owner, "created-later", "read")).toEqual({ ok: true, namespaceId: created.id, role: "admin" });
    expect(await authorizeNamespace(database.db, owner, "created-later", "read")).toEqual({ ok: true, namespaceId: created.id, role: "admin" });
  });
});
