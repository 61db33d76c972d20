import { randomUUID } from "node:crypto";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../db/schema";
import { useTestDatabase } from "../../db/testing/test-database";
import * as auditEvents from "./audit-events";
import { appendAuditEvent, listAuditEvents, parseAuditCursor } from "./audit-events";

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
    const forResource = (await listAuditEvents(t.db, { namespaceId, resource: { type: "workflow", id: resourceId }, limit: 10 })).items;
    expect(forResource.map((e) => [e.action, e.actorType, e.actorId, e.details])).toEqual([
      ["workflow.resume", "apiKey", "k1", {}],
      ["workflow.pause", "user", "u1", { reason: "x" }],
    ]);
    expect((await listAuditEvents(t.db, { namespaceId, limit: 2 })).items.map((e) => e.action)).toEqual(["workflow.terminate", "workflow.resume"]);
    await expect(listAuditEvents(t.db, { namespaceId, limit: 0 })).rejects.toThrow(RangeError);
  });

  it("is append-only: the repository has no update or delete, and the table refuses both", async () => {
    expect(Object.keys(auditEvents).filter((name) => /update|delete|remove|edit/i.test(name))).toEqual([]);
    const row = await appendAuditEvent(t.db, { namespaceId, actorType: "user", actorId: "u1", action: "x", resourceType: null, resourceId: null });
    await expect(sql`UPDATE "AuditEvents" SET "action" = 'y' WHERE "id" = ${row.id}::uuid`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM "AuditEvents" WHERE "id" = ${row.id}::uuid`.execute(t.db)).rejects.toThrow(/append-only/);
  });
});

describe("listAuditEvents paging", () => {
  async function newNamespace(): Promise<string> {
    return (await t.db.insertInto("Namespaces").values({ name: `ns-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
  }

  /** Every page, following nextCursor, with `limit` per page. */
  async function allPages(options: Omit<Parameters<typeof listAuditEvents>[1], "cursor" | "limit">, limit: number): Promise<string[][]> {
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await listAuditEvents(t.db, { ...options, limit, ...(cursor === undefined ? {} : { cursor }) });
      pages.push(page.items.map((e) => e.action));
      if (page.nextCursor === null) return pages;
      cursor = page.nextCursor;
      if (pages.length > 50) throw new Error("the cursor does not advance");
    }
  }

  it("pages newest first without skipping or repeating, through ties and events a microsecond apart", async () => {
    const ns = await newNamespace();
    // Three events one microsecond apart inside one millisecond: a cursor kept
    // as a JavaScript Date would round them together.
    for (const [micros, action] of [["000101", "e1"], ["000102", "e2"], ["000103", "e3"]] as const) {
      await t.db.insertInto("AuditEvents").values({ namespaceId: ns, actorType: "system", actorId: null, action, at: `2026-11-02T10:00:00.${micros}Z` }).execute();
    }
    // Four events of one transaction share its now(): the id breaks the tie, in insertion order.
    await t.db.transaction().execute(async (trx) => {
      for (const action of ["t1", "t2", "t3", "t4"]) await appendAuditEvent(trx, { namespaceId: ns, actorType: "system", actorId: null, action, resourceType: null, resourceId: null });
    });
    const newestFirst = ["t4", "t3", "t2", "t1", "e3", "e2", "e1"];
    expect((await listAuditEvents(t.db, { namespaceId: ns, limit: 100 })).items.map((e) => e.action)).toEqual(newestFirst);
    expect(await allPages({ namespaceId: ns }, 2)).toEqual([["t4", "t3"], ["t2", "t1"], ["e3", "e2"], ["e1"]]);
    expect((await allPages({ namespaceId: ns }, 1)).flat()).toEqual(newestFirst);
    // A page that ends exactly at the last event says so: no empty page after it.
    expect(await allPages({ namespaceId: ns }, 7)).toEqual([newestFirst]);
    // An event written after the first page was read does not shift the next one (no OFFSET).
    const first = await listAuditEvents(t.db, { namespaceId: ns, limit: 3 });
    await appendAuditEvent(t.db, { namespaceId: ns, actorType: "system", actorId: null, action: "late", resourceType: null, resourceId: null });
    const second = await listAuditEvents(t.db, { namespaceId: ns, limit: 3, cursor: first.nextCursor ?? "" });
    expect(second.items.map((e) => e.action)).toEqual(["t1", "e3", "e2"]);
  });

  it("filters by action prefix (wildcards literal) and by actor, and pages within the filter", async () => {
    const ns = await newNamespace();
    const add = (action: string, actorId = "u1") =>
      appendAuditEvent(t.db, { namespaceId: ns, actorType: "user", actorId, action, resourceType: null, resourceId: null });
    for (const action of ["workflow.pause", "workflowDefinition.create", "workflow.resume", "workflow_x.odd", "workflow.terminate"]) await add(action);
    await add("workflow.retry", "u2");

    expect((await allPages({ namespaceId: ns, actionPrefix: "workflow." }, 2)).flat()).toEqual(["workflow.retry", "workflow.terminate", "workflow.resume", "workflow.pause"]);
    expect((await allPages({ namespaceId: ns, actionPrefix: "workflow_" }, 2)).flat()).toEqual(["workflow_x.odd"]);
    expect((await allPages({ namespaceId: ns, actionPrefix: "workflowDefinition." }, 2)).flat()).toEqual(["workflowDefinition.create"]);
    expect((await allPages({ namespaceId: ns, actionPrefix: "%" }, 2)).flat()).toEqual([]);
    expect((await allPages({ namespaceId: ns, actor: { type: "user", id: "u2" } }, 2)).flat()).toEqual(["workflow.retry"]);
    expect((await allPages({ namespaceId: ns, actor: { type: "apiKey", id: "u1" } }, 2)).flat()).toEqual([]);
  });

  it("keeps namespaces apart, and lists the cluster-level events (no namespace) on their own", async () => {
    const a = await newNamespace();
    const b = await newNamespace();
    await appendAuditEvent(t.db, { namespaceId: a, actorType: "system", actorId: null, action: "in.a", resourceType: null, resourceId: null });
    await appendAuditEvent(t.db, { namespaceId: b, actorType: "system", actorId: null, action: "in.b", resourceType: null, resourceId: null });
    await appendAuditEvent(t.db, { namespaceId: null, actorType: "system", actorId: null, action: "cluster.only", resourceType: null, resourceId: null });
    expect((await listAuditEvents(t.db, { namespaceId: a, limit: 10 })).items.map((e) => e.action)).toEqual(["in.a"]);
    const cluster = (await listAuditEvents(t.db, { namespaceId: null, limit: 1000 })).items;
    expect(cluster.map((e) => e.action)).toContain("cluster.only");
    expect(cluster.every((e) => e.namespaceId === null)).toBe(true);
  });

  it("names each actor for display: a user's email, a key's name and prefix, a service account's name", async () => {
    const ns = await newNamespace();
    const user = await t.db.insertInto("Users").values({ email: `audit-${randomUUID()}@example.com` }).returning(["id", "email"]).executeTakeFirstOrThrow();
    const key = await t.db
      .insertInto("ApiKeys")
      .values({ namespaceId: ns, name: "deploy bot", prefix: randomUUID().replace(/-/g, "").slice(0, 12), keyHash: `sha256:${randomUUID()}` })
      .returning(["id", "prefix"])
      .executeTakeFirstOrThrow();
    const account = await t.db.insertInto("ServiceAccounts").values({ namespaceId: ns, name: "ci" }).returning("id").executeTakeFirstOrThrow();
    const add = (actorType: "user" | "apiKey" | "serviceAccount" | "system", actorId: string | null, action: string) =>
      appendAuditEvent(t.db, { namespaceId: ns, actorType, actorId, action, resourceType: null, resourceId: null });
    await add("user", user.id, "by.user");
    await add("apiKey", key.id, "by.key");
    await add("serviceAccount", account.id, "by.account");
    // Free text where a uuid would be is not cast (and does not fail the list).
    await add("system", "nf bootstrap", "by.system");
    await add("user", "not-a-uuid", "by.stranger");
    // A user id recorded as a key matches no key.
    await add("apiKey", user.id, "by.mislabelled");
    const named = (await listAuditEvents(t.db, { namespaceId: ns, limit: 10 })).items.map((e) => [e.action, e.actorName, e.actorKeyPrefix]);
    expect(named).toEqual([
      ["by.mislabelled", null, null],
      ["by.stranger", null, null],
      ["by.system", null, null],
      ["by.account", "ci", null],
      ["by.key", "deploy bot", key.prefix],
      ["by.user", user.email, null],
    ]);
  });

  it("refuses a cursor it did not hand out", async () => {
    for (const cursor of ["", "garbage", Buffer.from("2026-01-01|x").toString("base64url"), Buffer.from(`2026-01-01T00:00:00Z|${randomUUID()}`).toString("base64url")]) {
      await expect(listAuditEvents(t.db, { namespaceId, limit: 10, cursor })).rejects.toThrow(RangeError);
    }
  });

  it("reads a page by an index range scan from the cursor, skipping the months after it, never by OFFSET", async () => {
    const ns = await newNamespace();
    for (let i = 0; i < 3; i++) await appendAuditEvent(t.db, { namespaceId: ns, actorType: "system", actorId: null, action: `e${i}`, resourceType: null, resourceId: null });
    const first = await listAuditEvents(t.db, { namespaceId: ns, limit: 1 });
    const cursor = parseAuditCursor(first.nextCursor ?? "");
    expect(cursor).not.toBeNull();

    // The statement listAuditEvents really sends, captured and explained with
    // its own parameters; seq scans off so a tiny test table cannot make the
    // planner prefer one.
    const captured: { sql: string; parameters: readonly unknown[] }[] = [];
    const pool = new pg.Pool({ connectionString: t.url, max: 1 });
    const logged = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: (event) => void captured.push(event.query) });
    try {
      await listAuditEvents(logged, { namespaceId: ns, limit: 1, cursor: first.nextCursor ?? "" });
      const statement = captured.at(-1);
      expect(statement?.sql).toContain('"AuditEvents"');
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query("SET LOCAL enable_seqscan = off");
        const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${statement!.sql}`, [...statement!.parameters]);
        await client.query("ROLLBACK");
        const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
        expect(plan).toMatch(/Index Cond: \(\("namespaceId" = .*\) AND \(ROW\(at, id\) < ROW\(/);
        expect(plan).not.toMatch(/Offset/);
        // The month after the cursor's holds only newer events: pruned, not probed.
        const cursorMonth = new Date(cursor!.at);
        const next = new Date(Date.UTC(cursorMonth.getUTCFullYear(), cursorMonth.getUTCMonth() + 1, 1));
        const nextPartition = `AuditEvents_p${next.getUTCFullYear()}${String(next.getUTCMonth() + 1).padStart(2, "0")}`;
        expect(plan).toMatch(/AuditEvents_p\d{6}_namespaceId_at_id_idx/);
        expect(plan).not.toContain(nextPartition);
      } finally {
        client.release();
      }
    } finally {
      await logged.destroy();
    }
  });
});
