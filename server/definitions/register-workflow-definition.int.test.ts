import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import type { Blueprint } from "@/engine";
import type { AuditActorType } from "@/db/schema";
import { registerWorkflowDefinition } from "./register-workflow-definition";
import { getWorkflowDefinition, listLatestWorkflowDefinitions } from "../store/workflow-definitions";

const t = useTestDatabase();

async function newNamespace(): Promise<{ id: string; name: string }> {
  const name = `ns-${randomBytes(4).toString("hex")}`;
  const row = await t.db.insertInto("Namespaces").values({ name }).returning("id").executeTakeFirstOrThrow();
  return { id: row.id, name };
}

function definition(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemaVersion: 1,
    name,
    nodes: [
      { ref: "a", type: "SIMPLE", name: "task_a", position: { x: 0, y: 0 } },
      { ref: "b", type: "SIMPLE", name: "task_b", position: { x: 0, y: 100 }, input: { x: "${a.output.x}" } },
    ],
    edges: [{ source: "a", target: "b" }],
    ...extra,
  };
}

/** The namespace's AuditEvents rows, oldest first. */
async function auditOf(namespaceId: string) {
  return t.db
    .selectFrom("AuditEvents")
    .select(["actorType", "actorId", "action", "resourceType", "resourceId", "details"])
    .where("namespaceId", "=", namespaceId)
    .orderBy("at")
    .orderBy("id")
    .execute();
}

describe("registerWorkflowDefinition", () => {
  it("stores version 1, then 2, each with its graph and compiled blueprint", async () => {
    const ns = await newNamespace();
    const first = await registerWorkflowDefinition(t.db, { namespaceId: ns.id, definition: definition("orders", { description: "v1" }), createdBy: "ann" });
    expect(first).toMatchObject({ ok: true, name: "orders", version: 1 });
    const second = await registerWorkflowDefinition(t.db, { namespaceId: ns.id, definition: definition("orders", { description: "v2", version: 41 }) });
    expect(second).toMatchObject({ ok: true, name: "orders", version: 2 });

    const v1 = await getWorkflowDefinition(t.db, ns.id, "orders", 1);
    expect(v1).toMatchObject({ name: "orders", version: 1, description: "v1", createdBy: "ann" });
    expect((v1!.graph as { version: number }).version).toBe(1);
    const latest = await getWorkflowDefinition(t.db, ns.id, "orders");
    expect(latest).toMatchObject({ version: 2, description: "v2" });
    // A version in the submitted definition is ignored: the stored graph carries the assigned one.
    expect((latest!.graph as { version: number }).version).toBe(2);
    const blueprint = latest!.blueprint as Blueprint;
    expect(blueprint.nodes.a!.successors).toEqual([{ ref: "b", case: null }]);
    expect(blueprint.nodes.b!.reads).toContain("a");

    // The existing list still sees the latest version.
    const listed = await listLatestWorkflowDefinitions(t.db, { namespace: ns.name });
    expect(listed).toMatchObject([{ name: "orders", latestVersion: 2, versionCount: 2 }]);
    expect(await getWorkflowDefinition(t.db, ns.id, "orders", 3)).toBeUndefined();
    expect(await getWorkflowDefinition(t.db, ns.id, "nope")).toBeUndefined();
  });

  it("keeps a stored version immutable: an UPDATE of its graph is refused by the trigger", async () => {
    const ns = await newNamespace();
    const result = await registerWorkflowDefinition(t.db, { namespaceId: ns.id, definition: definition("frozen") });
    if (!result.ok) throw new Error("registration failed");
    await expect(
      t.db.updateTable("WorkflowDefinitions").set({ graph: sql`'{"nodes":[]}'::jsonb` }).where("id", "=", result.id).execute(),
    ).rejects.toThrow(/immutable/);
    // Archiving is not a change to what the version does.
    await t.db.updateTable("WorkflowDefinitions").set({ archivedAt: sql`now()` }).where("id", "=", result.id).execute();
    expect(await getWorkflowDefinition(t.db, ns.id, "frozen")).toBeUndefined();
    expect(await getWorkflowDefinition(t.db, ns.id, "frozen", 1)).toMatchObject({ version: 1 });
  });

  it("returns every problem of an invalid definition, with refs and paths, and stores nothing", async () => {
    const ns = await newNamespace();
    const bad = definition("broken", {
      nodes: [
        { ref: "a", type: "SIMPLE", name: "task_a", position: { x: 0, y: 0 }, input: { x: "${ghost.output}" } },
        { ref: "a", type: "SIMPLE", name: "task_b", position: { x: 0, y: 0 } },
      ],
      edges: [{ source: "a", target: "missing" }],
    });
    const result = await registerWorkflowDefinition(t.db, { namespaceId: ns.id, definition: bad });
    expect(result.ok).toBe(false);
    if (result.ok || result.reason !== "invalid") throw new Error("expected problems");
    const codes = result.problems.map((p) => p.code);
    expect(codes).toEqual(expect.arrayContaining(["duplicate-ref", "unknown-ref"]));
    for (const problem of result.problems) expect(Array.isArray(problem.path)).toBe(true);
    expect(result.problems.find((p) => p.code === "duplicate-ref")).toMatchObject({ ref: "a", path: ["nodes", 1, "ref"] });

    const garbage = await registerWorkflowDefinition(t.db, { namespaceId: ns.id, definition: "not a definition" });
    expect(garbage).toMatchObject({ ok: false, reason: "invalid" });

    const { count } = await t.db
      .selectFrom("WorkflowDefinitions")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where("namespaceId", "=", ns.id)
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(0);
  });

  it("gives concurrent registrations of one name distinct consecutive versions", async () => {
    const ns = await newNamespace();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => registerWorkflowDefinition(t.db, { namespaceId: ns.id, definition: definition("busy", { description: `d${i}` }) })),
    );
    const versions = results.map((r) => (r.ok ? r.version : -1)).sort((a, b) => a - b);
    expect(versions).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // One record per version, each naming the version its own attempt got.
    const recorded = (await auditOf(ns.id)).map((e) => (e.details as { version: number }).version).sort((a, b) => a - b);
    expect(recorded).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("reports an unknown namespace as a result, and records nothing", async () => {
    const namespaceId = "00000000-0000-7000-8000-000000000000";
    const result = await registerWorkflowDefinition(t.db, { namespaceId, definition: definition("x"), actor: { type: "user", id: "u-1" } });
    expect(result).toMatchObject({ ok: false, reason: "namespace-not-found" });
    expect(await auditOf(namespaceId)).toEqual([]);
  });
});

describe("registerWorkflowDefinition's audit record", () => {
  it("writes one AuditEvents row per version: the actor, the name and version, never the graph", async () => {
    const ns = await newNamespace();
    const first = await registerWorkflowDefinition(t.db, {
      namespaceId: ns.id,
      definition: definition("orders", { description: "secret-description" }),
      createdBy: "user:u-1",
      actor: { type: "user", id: "u-1", ipAddress: "203.0.113.7" },
    });
    expect(first).toMatchObject({ ok: true, version: 1 });
    expect(await auditOf(ns.id)).toEqual([
      {
        actorType: "user",
        actorId: "u-1",
        action: "workflowDefinition.create",
        resourceType: "workflowDefinition",
        resourceId: "orders",
        details: { name: "orders", version: 1 },
      },
    ]);
    const ip = await t.db.selectFrom("AuditEvents").select("ipAddress").where("namespaceId", "=", ns.id).executeTakeFirstOrThrow();
    expect(ip.ipAddress).toBe("203.0.113.7");

    // Without an actor the record is the system's, on behalf of createdBy: no path registers unrecorded.
    await registerWorkflowDefinition(t.db, { namespaceId: ns.id, definition: definition("orders"), createdBy: "nf import" });
    const events = await auditOf(ns.id);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ actorType: "system", actorId: "nf import", details: { name: "orders", version: 2 } });
    const recorded = JSON.stringify(events);
    for (const fragment of ["task_a", "nodes", "edges", "secret-description", "a.output.x"]) expect(recorded).not.toContain(fragment);
  });

  it("an invalid definition writes no record", async () => {
    const ns = await newNamespace();
    const result = await registerWorkflowDefinition(t.db, {
      namespaceId: ns.id,
      definition: definition("broken", { edges: [{ source: "a", target: "missing" }] }),
      actor: { type: "user", id: "u-1" },
    });
    expect(result).toMatchObject({ ok: false, reason: "invalid" });
    expect(await auditOf(ns.id)).toEqual([]);
  });

  it("commits with the version or not at all: a record that cannot be written rolls the version back", async () => {
    const ns = await newNamespace();
    // The "actorType" CHECK refuses this, inside the insert's transaction.
    const actor = { type: "nobody" as AuditActorType, id: "x" };
    await expect(registerWorkflowDefinition(t.db, { namespaceId: ns.id, definition: definition("orders"), actor })).rejects.toThrow(/check constraint/);
    expect(await getWorkflowDefinition(t.db, ns.id, "orders")).toBeUndefined();
    expect(await auditOf(ns.id)).toEqual([]);
  });
});
