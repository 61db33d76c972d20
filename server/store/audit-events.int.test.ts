import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import * as auditEvents from "./audit-events";
import { appendAuditEvent, listAuditEvents } from "./audit-events";

const t = useTestDatabase();
let namespaceId: string;

beforeAll(async () => {
  const ns = await t.db.insertInto("Namespaces").values({ name: `ns-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow();
  namespaceId = ns.id;
});

describe("AuditEvents repository", () => {
  it("appends events and lists them newest first, per namespace or per resource", async () => {
    const resourceId = randomUUID();
    const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, s));
    await appendAuditEvent(t.db, { namespaceId, actorType: "user", actorId: "u1", action: "workflow.pause", resourceType: "workflow", resourceId, details: { reason: "x\u0000" }, at: at(1) });
    await appendAuditEvent(t.db, { namespaceId, actorType: "apiKey", actorId: "k1", action: "workflow.resume", resourceType: "workflow", resourceId, at: at(2) });
    await appendAuditEvent(t.db, { namespaceId, actorType: "system", actorId: null, action: "workflow.terminate", resourceType: "workflow", resourceId: randomUUID(), at: at(3) });
    const forResource = await listAuditEvents(t.db, { namespaceId, resource: { type: "workflow", id: resourceId }, limit: 10 });
    expect(forResource.map((e) => [e.action, e.actorType, e.actorId, e.details])).toEqual([
      ["workflow.resume", "apiKey", "k1", {}],
      ["workflow.pause", "user", "u1", { reason: "x" }],
    ]);
    expect((await listAuditEvents(t.db, { namespaceId, limit: 2 })).map((e) => e.action)).toEqual(["workflow.terminate", "workflow.resume"]);
    await expect(listAuditEvents(t.db, { namespaceId, limit: 0 })).rejects.toThrow(RangeError);
  });

  it("is append-only: the repository has no update or delete, and the table refuses both", async () => {
    expect(Object.keys(auditEvents).filter((name) => /update|delete|remove|edit/i.test(name))).toEqual([]);
    const row = await appendAuditEvent(t.db, { namespaceId, actorType: "user", actorId: "u1", action: "x", resourceType: null, resourceId: null });
    await expect(sql`UPDATE "AuditEvents" SET "action" = 'y' WHERE "id" = ${row.id}::uuid`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM "AuditEvents" WHERE "id" = ${row.id}::uuid`.execute(t.db)).rejects.toThrow(/append-only/);
  });
});
