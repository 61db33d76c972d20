import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { json } from "@/db/json";
import { useTestDatabase } from "@/db/testing/test-database";
import { authenticateApiKey, createApiKey } from "../auth/api-keys";
import type { Principal } from "../auth/principal";
import { insertGroup } from "../store/groups";
import { upsertNamespaceMember } from "../store/namespace-members";
import { insertNamespace } from "../store/namespaces";
import { namespaceInput } from "./init";
import { appRouter } from "./routers/_app";
import { callerAs, insertTestUser, userPrincipal } from "./testing";

/**
 * A credential of namespace A can read or change nothing of namespace B
 * through tRPC. Checked for every namespace-scoped procedure there is (found
 * by its `namespace` input), so a procedure added later is covered without
 * touching this file: an admin of A and an admin API key of A each call every
 * one of them against B and must get NOT_FOUND — the same answer as for a
 * namespace that does not exist — and B's rows must be unchanged afterwards.
 */
const database = useTestDatabase();
const graph = json({ nodes: [], edges: [] });

let memberOfA: Principal;
let keyOfA: Principal;
let workerKeyOfA: Principal;
let nsB: string;

async function keyPrincipal(namespaceId: string, scopes: ("worker" | "admin")[]): Promise<Principal> {
  const { key } = await createApiKey(database.db, { namespaceId, name: `a-${scopes.join("-")}`, scopes, createdBy: "test" });
  const principal = await authenticateApiKey(database.db, key);
  if (!principal) throw new Error("the key did not authenticate");
  return principal;
}

/** Everything of B a leak could touch, as one comparable snapshot. */
async function snapshotOfB(): Promise<unknown> {
  const db = database.db;
  return {
    definitions: await db.selectFrom("WorkflowDefinitions").select(["name", "version", "archivedAt"]).where("namespaceId", "=", nsB).orderBy("name").execute(),
    groups: await db.selectFrom("Groups").select(["name", "roles"]).where("namespaceId", "=", nsB).orderBy("name").execute(),
    members: await db.selectFrom("NamespaceMembers").select(["userId", "role"]).where("namespaceId", "=", nsB).orderBy("userId").execute(),
    apiKeys: await db.selectFrom("ApiKeys").select(["prefix", "revokedAt"]).where("namespaceId", "=", nsB).orderBy("prefix").execute(),
    serviceAccounts: await db.selectFrom("ServiceAccounts").select(["name", "disabledAt"]).where("namespaceId", "=", nsB).orderBy("name").execute(),
  };
}

const namespaceScoped = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { inputs: unknown[] } }>)
  .filter(([, procedure]) => procedure._def.inputs.includes(namespaceInput))
  .map(([procedurePath]) => procedurePath);

function call(principal: Principal, procedurePath: string, input: unknown): Promise<unknown> {
  let target: unknown = callerAs(database.db, database.url, principal);
  for (const key of procedurePath.split(".")) target = (target as Record<string, unknown>)[key];
  return (target as (input: unknown) => Promise<unknown>)(input);
}

beforeAll(async () => {
  const db = database.db;
  const nsA = (await insertNamespace(db, { name: "team-a" })).id;
  nsB = (await insertNamespace(db, { name: "team-b" })).id;
  await db
    .insertInto("WorkflowDefinitions")
    .values([
      { namespaceId: nsA, name: "a-flow", version: 1, graph, blueprint: graph },
      { namespaceId: nsB, name: "b-secret-flow", version: 1, graph, blueprint: graph },
    ])
    .execute();
  await insertGroup(db, { namespaceId: nsB, name: "b-admins", roles: ["admin"] });
  await keyPrincipal(nsB, ["admin"]);

  const alice = await insertTestUser(db, "alice@example.com");
  await upsertNamespaceMember(db, { namespaceId: nsA, userId: alice.id, role: "admin" });
  memberOfA = userPrincipal(alice);
  keyOfA = await keyPrincipal(nsA, ["admin"]);
  workerKeyOfA = await keyPrincipal(nsA, ["worker"]);
});

describe("namespace isolation through tRPC", () => {
  it("finds the namespace-scoped procedures (the walk itself works)", () => {
    expect(namespaceScoped).toEqual(expect.arrayContaining(["workflows.list", "groups.create", "namespaces.members.set", "apiKeys.create"]));
  });

  it("a member of A reads A's definitions and not B's (NOT_FOUND, as for a namespace that does not exist)", async () => {
    const own = await callerAs(database.db, database.url, memberOfA).workflows.list({ namespace: "team-a" });
    expect(own.map((d) => d.name)).toEqual(["a-flow"]);
    for (const namespace of ["team-b", "no-such-team"]) {
      await expect(callerAs(database.db, database.url, memberOfA).workflows.list({ namespace })).rejects.toSatisfy(
        (error: unknown) => error instanceof TRPCError && error.code === "NOT_FOUND",
      );
    }
  });

  it("an API key of A reads A's definitions and not B's", async () => {
    expect((await callerAs(database.db, database.url, keyOfA).workflows.list({ namespace: "team-a" })).map((d) => d.name)).toEqual(["a-flow"]);
    await expect(callerAs(database.db, database.url, keyOfA).workflows.list({ namespace: "team-b" })).rejects.toSatisfy(
      (error: unknown) => error instanceof TRPCError && error.code === "NOT_FOUND",
    );
  });

  it.each([
    ["an admin member of A", () => memberOfA],
    ["an admin API key of A", () => keyOfA],
    ["a worker API key of A", () => workerKeyOfA],
  ])("%s gets NOT_FOUND from every namespace-scoped procedure aimed at B, and B is unchanged", async (_who, principal) => {
    const before = await snapshotOfB();
    const answers: string[] = [];
    for (const procedurePath of namespaceScoped) {
      // Plausible inputs for every procedure at once; authorization runs
      // before the rest of the input is parsed, so extra or missing fields
      // cannot turn a refusal into something else.
      const input = {
        namespace: "team-b",
        name: "b-secret-flow",
        email: "alice@example.com",
        role: "admin",
        roles: ["admin"],
        scopes: ["admin"],
        groupId: "00000000-0000-0000-0000-000000000000",
        userId: "00000000-0000-0000-0000-000000000000",
        apiKeyId: "00000000-0000-0000-0000-000000000000",
        serviceAccountId: "00000000-0000-0000-0000-000000000000",
      };
      const outcome = await call(principal(), procedurePath, input).then(
        () => "answered",
        (error: unknown) => (error instanceof TRPCError ? error.code : String(error)),
      );
      answers.push(`${procedurePath} → ${outcome}`);
    }
    expect(answers).toEqual(namespaceScoped.map((p) => `${p} → NOT_FOUND`));
    expect(await snapshotOfB()).toEqual(before);
  });
});
