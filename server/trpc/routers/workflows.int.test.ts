import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { json } from "@/db/json";
import { useTestDatabase } from "@/db/testing/test-database";
import type { Principal } from "../../auth/principal";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

const database = useTestDatabase();
const emptyGraph = json({ nodes: [], edges: [] });
let owner: Principal;

// The owner sees every namespace; who may see which is tested in namespace-isolation.int.test.ts.
function caller() {
  return callerAs(database.db, database.url, owner);
}

async function namespaceId(name: string): Promise<string> {
  const row = await database.db
    .insertInto("Namespaces")
    .values({ name })
    .onConflict((oc) => oc.column("name").doUpdateSet({ name }))
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

async function define(
  ns: string,
  name: string,
  version: number,
  description: string | null,
  createdAt: string,
  archivedAt: string | null = null,
): Promise<void> {
  await database.db
    .insertInto("WorkflowDefinitions")
    .values({ namespaceId: ns, name, version, description, graph: emptyGraph, blueprint: emptyGraph, createdAt, archivedAt })
    .execute();
}

describe("workflows.list", () => {
  beforeAll(async () => {
    owner = userPrincipal(await insertTestUser(database.db, "owner@example.com", { isOwner: true }));
    const defaultNs = await namespaceId("default");
    const otherNs = await namespaceId("other");
    await define(defaultNs, "order-fulfilment", 1, "First draft", "2025-01-01T10:00:00Z");
    await define(defaultNs, "order-fulfilment", 2, "Ships paid orders", "2025-02-01T10:00:00Z");
    await define(defaultNs, "billing-sync", 1, null, "2025-01-15T08:30:00Z");
    // The newest version is archived: the list shows the newest one still in use.
    await define(defaultNs, "payments", 1, "Charges cards", "2025-01-10T00:00:00Z");
    await define(defaultNs, "payments", 2, "Broken rewrite", "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z");
    // Every version archived: gone from the list.
    await define(defaultNs, "retired", 1, "Old", "2024-01-01T00:00:00Z", "2024-06-01T00:00:00Z");
    // Same name in another namespace must not leak in.
    await define(otherNs, "order-fulfilment", 7, "Elsewhere", "2025-04-01T00:00:00Z");
  });

  it("lists the latest version of each definition, ordered by name", async () => {
    const rows = await caller().workflows.list({ namespace: "default" });
    expect(rows.map((r) => [r.name, r.latestVersion, r.versionCount, r.description])).toEqual([
      ["billing-sync", 1, 1, null],
      ["order-fulfilment", 2, 2, "Ships paid orders"],
      ["payments", 1, 1, "Charges cards"],
    ]);
    // Dates cross the wire as ISO strings, and the procedure's type says so.
    expect(rows[1]?.updatedAt).toBe("2025-02-01T10:00:00.000Z");
  });

  it("lists another namespace on its own", async () => {
    const rows = await caller().workflows.list({ namespace: "other" });
    expect(rows.map((r) => [r.name, r.latestVersion])).toEqual([["order-fulfilment", 7]]);
  });

  it("answers NOT_FOUND for a namespace that does not exist", async () => {
    await expect(caller().workflows.list({ namespace: "missing" })).rejects.toSatisfy(
      (error: unknown) => error instanceof TRPCError && error.code === "NOT_FOUND",
    );
  });

  it("searches names case-insensitively", async () => {
    const rows = await caller().workflows.list({ namespace: "default", search: "BILLING" });
    expect(rows.map((r) => r.name)).toEqual(["billing-sync"]);
  });

  it("searches the latest version's description, not older ones", async () => {
    expect((await caller().workflows.list({ namespace: "default", search: "paid orders" })).map((r) => r.name)).toEqual(["order-fulfilment"]);
    expect(await caller().workflows.list({ namespace: "default", search: "First draft" })).toEqual([]);
  });

  it("treats LIKE wildcards in the search as text", async () => {
    expect(await caller().workflows.list({ namespace: "default", search: "%" })).toEqual([]);
    expect(await caller().workflows.list({ namespace: "default", search: "_" })).toEqual([]);
  });

  it("treats a blank search as no search", async () => {
    expect(await caller().workflows.list({ namespace: "default", search: "   " })).toHaveLength(3);
  });

  it("refuses an empty namespace with BAD_REQUEST", async () => {
    await expect(caller().workflows.list({ namespace: "" })).rejects.toSatisfy(
      (error: unknown) => error instanceof TRPCError && error.code === "BAD_REQUEST",
    );
  });
});
