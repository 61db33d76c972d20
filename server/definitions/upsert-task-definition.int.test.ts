import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { AuditActorType } from "@/db/schema";
import { useTestDatabase } from "@/db/testing/test-database";
import { getTaskDefinition } from "../store/task-definitions";
import { queueGateCache } from "../tasks/task-gates";
import { upsertTaskDefinition } from "./upsert-task-definition";

const t = useTestDatabase();

async function newNamespace(): Promise<string> {
  const row = await t.db.insertInto("Namespaces").values({ name: `ns-${randomBytes(4).toString("hex")}` }).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

async function auditOf(namespaceId: string) {
  return t.db
    .selectFrom("AuditEvents")
    .select(["actorType", "actorId", "action", "resourceType", "resourceId", "details"])
    .where("namespaceId", "=", namespaceId)
    .orderBy("at")
    .orderBy("id")
    .execute();
}

describe("upsertTaskDefinition (the service)", () => {
  it("stores the definition and one AuditEvents row per upsert, naming only the definition", async () => {
    const namespaceId = await newNamespace();
    const definition = { name: "charge", description: "secret-description", inputTemplate: { token: "tmpl-secret" }, retryCount: 5 };
    const row = await upsertTaskDefinition(t.db, { namespaceId, definition, updatedBy: "user:u-1", actor: { type: "user", id: "u-1" } });
    expect(row).toMatchObject({ name: "charge", retryCount: 5, createdBy: "user:u-1", updatedBy: "user:u-1" });
    await upsertTaskDefinition(t.db, { namespaceId, definition: { name: "charge" }, updatedBy: "apiKey:k-1", actor: { type: "apiKey", id: "k-1" } });
    expect(await getTaskDefinition(t.db, namespaceId, "charge")).toMatchObject({ retryCount: 3, createdBy: "user:u-1", updatedBy: "apiKey:k-1" });

    const events = await auditOf(namespaceId);
    expect(events).toEqual([
      { actorType: "user", actorId: "u-1", action: "taskDefinition.upsert", resourceType: "taskDefinition", resourceId: "charge", details: { name: "charge" } },
      { actorType: "apiKey", actorId: "k-1", action: "taskDefinition.upsert", resourceType: "taskDefinition", resourceId: "charge", details: { name: "charge" } },
    ]);
    expect(JSON.stringify(events)).not.toMatch(/secret-description|tmpl-secret/);
  });

  it("without an actor records the system, on behalf of updatedBy", async () => {
    const namespaceId = await newNamespace();
    await upsertTaskDefinition(t.db, { namespaceId, definition: { name: "ship" }, updatedBy: "nf import" });
    expect(await auditOf(namespaceId)).toEqual([expect.objectContaining({ actorType: "system", actorId: "nf import", action: "taskDefinition.upsert" })]);
  });

  it("commits with its record or not at all", async () => {
    const namespaceId = await newNamespace();
    const actor = { type: "nobody" as AuditActorType, id: "x" };
    await expect(upsertTaskDefinition(t.db, { namespaceId, definition: { name: "ship" }, actor })).rejects.toThrow(/check constraint/);
    expect(await getTaskDefinition(t.db, namespaceId, "ship")).toBeUndefined();
    expect(await auditOf(namespaceId)).toEqual([]);
  });

  it("clears this process's cached gates of the queue, so the next lease sees the new ones", async () => {
    const namespaceId = await newNamespace();
    expect(await queueGateCache.get(t.db, namespaceId, "gated")).toBeNull();
    await upsertTaskDefinition(t.db, { namespaceId, definition: { name: "gated", concurrentExecLimit: 2 } });
    // Within the cache's TTL: only the invalidation makes this a fresh read.
    expect(await queueGateCache.get(t.db, namespaceId, "gated")).toMatchObject({ concurrentExecLimit: 2 });
  });
});
