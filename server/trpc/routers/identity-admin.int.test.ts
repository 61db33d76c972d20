import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import type { Principal } from "../../auth/principal";
import { createSession, authenticateSession } from "../../auth/sessions";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

/** users, namespaces and groups: who may manage what, and what each change does. */
const database = useTestDatabase();
const PASSWORD = "tulip-harbour-9-lantern";
const isCode = (code: TRPCError["code"]) => (error: unknown) => error instanceof TRPCError && error.code === code;

let owner: Principal;
let alice: Principal;
let aliceId: string;

const as = (principal: Principal | null) => callerAs(database.db, database.url, principal);

beforeAll(async () => {
  owner = userPrincipal(await insertTestUser(database.db, "owner@example.com", { isOwner: true }));
  const created = await as(owner).users.create({ email: "alice@example.com", password: PASSWORD, displayName: "Alice" });
  aliceId = created.id;
  alice = { kind: "user", userId: created.id, email: created.email, isOwner: false, sessionId: "00000000-0000-0000-0000-000000000000" };
});

describe("users (owner only)", () => {
  it("lists users without any password material", async () => {
    const users = await as(owner).users.list();
    expect(users.map((u) => [u.email, u.isOwner, u.disabled])).toEqual([
      ["alice@example.com", false, false],
      ["owner@example.com", true, false],
    ]);
    expect(JSON.stringify(users)).not.toMatch(/scrypt|passwordHash/);
  });

  it("refuses non-owners (FORBIDDEN) and weak or duplicate users", async () => {
    await expect(as(alice).users.list()).rejects.toSatisfy(isCode("FORBIDDEN"));
    await expect(as(alice).users.create({ email: "eve@example.com", password: PASSWORD })).rejects.toSatisfy(isCode("FORBIDDEN"));
    await expect(as(owner).users.create({ email: "bob@example.com", password: "bob" })).rejects.toSatisfy(isCode("BAD_REQUEST"));
    await expect(as(owner).users.create({ email: "ALICE@example.com", password: PASSWORD })).rejects.toSatisfy(isCode("CONFLICT"));
  });

  it("disabling a user ends their sessions; owners cannot disable themselves", async () => {
    const { token } = await createSession(database.db, { userId: aliceId });
    expect(await authenticateSession(database.db, token)).not.toBeNull();
    expect(await as(owner).users.setDisabled({ userId: aliceId, disabled: true })).toMatchObject({ disabled: true });
    expect(await authenticateSession(database.db, token)).toBeNull();
    expect(await as(owner).users.setDisabled({ userId: aliceId, disabled: false })).toMatchObject({ disabled: false });
    if (owner.kind !== "user") throw new Error("owner is a user");
    await expect(as(owner).users.setDisabled({ userId: owner.userId, disabled: true })).rejects.toSatisfy(isCode("CONFLICT"));
  });
});

describe("namespaces", () => {
  it("only an owner creates namespaces; names must be slugs and unique", async () => {
    await expect(as(alice).namespaces.create({ name: "alpha" })).rejects.toSatisfy(isCode("FORBIDDEN"));
    expect(await as(owner).namespaces.create({ name: "alpha", description: "Team alpha" })).toMatchObject({ name: "alpha", role: "admin" });
    await as(owner).namespaces.create({ name: "beta" });
    await expect(as(owner).namespaces.create({ name: "Not A Slug" })).rejects.toSatisfy(isCode("BAD_REQUEST"));
    await expect(as(owner).namespaces.create({ name: "alpha" })).rejects.toSatisfy(isCode("CONFLICT"));
  });

  it("lists every namespace for the owner and only their own, with their role, for a member", async () => {
    expect((await as(owner).namespaces.list()).map((n) => [n.name, n.role])).toEqual([
      ["alpha", "admin"],
      ["beta", "admin"],
      ["default", "admin"],
    ]);
    expect(await as(alice).namespaces.list()).toEqual([]);
    await as(owner).namespaces.members.set({ namespace: "alpha", email: "Alice@Example.com", role: "editor" });
    expect((await as(alice).namespaces.list()).map((n) => [n.name, n.role])).toEqual([["alpha", "editor"]]);
  });

  it("members are managed by the namespace's admins, not its editors", async () => {
    await expect(as(alice).namespaces.members.list({ namespace: "alpha" })).rejects.toSatisfy(isCode("FORBIDDEN"));
    await expect(as(alice).namespaces.members.set({ namespace: "alpha", email: "alice@example.com", role: "admin" })).rejects.toSatisfy(isCode("FORBIDDEN"));
    await as(owner).namespaces.members.set({ namespace: "alpha", email: "alice@example.com", role: "admin" });
    const members = await as(alice).namespaces.members.list({ namespace: "alpha" });
    expect(members.map((m) => [m.email, m.role])).toEqual([["alice@example.com", "admin"]]);
    await expect(as(alice).namespaces.members.set({ namespace: "alpha", email: "ghost@example.com", role: "viewer" })).rejects.toSatisfy(isCode("NOT_FOUND"));
    await as(alice).namespaces.members.remove({ namespace: "alpha", userId: aliceId });
    expect(await as(alice).namespaces.list()).toEqual([]);
  });
});

describe("groups", () => {
  it("grant their roles to their members in their namespace, and stop when removed", async () => {
    const group = await as(owner).groups.create({ namespace: "beta", name: "Operators", roles: ["operator"] });
    await as(owner).groups.addMember({ namespace: "beta", groupId: group.id, email: "alice@example.com" });
    expect((await as(alice).namespaces.list()).map((n) => [n.name, n.role])).toEqual([["beta", "operator"]]);

    await as(owner).groups.setRoles({ namespace: "beta", groupId: group.id, roles: ["operator", "admin"] });
    expect((await as(alice).groups.list({ namespace: "beta" })).map((g) => [g.name, g.roles, g.members.map((m) => m.email)])).toEqual([
      ["Operators", ["operator", "admin"], ["alice@example.com"]],
    ]);

    await as(owner).groups.removeMember({ namespace: "beta", groupId: group.id, userId: aliceId });
    expect(await as(alice).namespaces.list()).toEqual([]);
    await expect(as(alice).groups.list({ namespace: "beta" })).rejects.toSatisfy(isCode("NOT_FOUND"));

    await as(owner).groups.delete({ namespace: "beta", groupId: group.id });
    expect(await as(owner).groups.list({ namespace: "beta" })).toEqual([]);
  });

  it("a group id of another namespace is NOT_FOUND through this one", async () => {
    const inAlpha = await as(owner).groups.create({ namespace: "alpha", name: "Alpha admins", roles: ["admin"] });
    await expect(as(owner).groups.addMember({ namespace: "beta", groupId: inAlpha.id, email: "alice@example.com" })).rejects.toSatisfy(isCode("NOT_FOUND"));
    await expect(as(owner).groups.setRoles({ namespace: "beta", groupId: inAlpha.id, roles: [] })).rejects.toSatisfy(isCode("NOT_FOUND"));
    await expect(as(owner).groups.delete({ namespace: "beta", groupId: inAlpha.id })).rejects.toSatisfy(isCode("NOT_FOUND"));
    expect((await as(owner).groups.list({ namespace: "alpha" })).map((g) => [g.name, g.roles])).toEqual([["Alpha admins", ["admin"]]]);
  });

  it("refuses unknown roles and duplicate names", async () => {
    await expect(as(owner).groups.create({ namespace: "alpha", name: "x", roles: ["superuser" as "admin"] })).rejects.toSatisfy(isCode("BAD_REQUEST"));
    await expect(as(owner).groups.create({ namespace: "alpha", name: "Alpha admins", roles: [] })).rejects.toSatisfy(isCode("CONFLICT"));
  });

  it("records each change in the audit log of its namespace", async () => {
    const actions = await database.db.selectFrom("AuditEvents").select("action").execute();
    expect(new Set(actions.map((a) => a.action))).toEqual(
      new Set([
        "user.create",
        "user.disable",
        "user.enable",
        "namespace.create",
        "namespace.member.set",
        "namespace.member.remove",
        "group.create",
        "group.member.add",
        "group.setRoles",
        "group.member.remove",
        "group.delete",
      ]),
    );
    expect(JSON.stringify(await database.db.selectFrom("AuditEvents").select("details").execute())).not.toContain(PASSWORD);
  });
});
