import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { InvalidCursorError, listWorkflowExecutions } from "./workflow-executions";
import type { ListWorkflowExecutionsOptions } from "./workflow-executions";
import { insertWorkflowExecution } from "./workflow-executions";

const t = useTestDatabase();

/** `count` ISO timestamps inside one millisecond, differing only in microseconds. */
function sameMillisecond(count: number, base = new Date()): string[] {
  const millis = base.toISOString().slice(0, 23);
  return Array.from({ length: count }, (_, i) => `${millis}${String(i + 1).padStart(3, "0")}Z`);
}

async function pageAll(options: Omit<ListWorkflowExecutionsOptions, "cursor">): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await listWorkflowExecutions(t.db, { ...options, cursor });
    pages.push(page.items.map((r) => r.id));
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
  throw new Error("paging did not terminate");
}

describe("listWorkflowExecutions", () => {
  it("pages runs that share a millisecond exactly once, newest first (the cursor keeps microseconds)", async () => {
    const namespaceId = randomUUID();
    const stamps = sameMillisecond(12);
    const ids: string[] = [];
    for (const i of [7, 2, 11, 0, 5, 9, 3, 10, 1, 8, 4, 6]) {
      ids[i] = (await insertWorkflowExecution(t.db, { namespaceId, defName: "burst", defVersion: 1, startedAt: stamps[i] })).id;
    }
    const pages = await pageAll({ namespaceId, limit: 5 });
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    expect(pages.flat()).toEqual([...ids].reverse());
  });

  it("combines status, name, correlation id and a start-time range, and sees only its namespace", async () => {
    const namespaceId = randomUUID();
    const hourAgo = new Date(Date.now() - 3_600_000);
    const insert = (defName: string, correlationId: string | null, startedAt: Date, status: "RUNNING" | "COMPLETED" = "RUNNING") =>
      insertWorkflowExecution(t.db, { namespaceId, defName, defVersion: 1, correlationId, startedAt, status });
    const old = await insert("orders", "c1", hourAgo);
    const recent = await insert("orders", "c1", new Date());
    const done = await insert("orders", "c2", new Date(), "COMPLETED");
    await insert("refunds", "c1", new Date());
    await insertWorkflowExecution(t.db, { namespaceId: randomUUID(), defName: "orders", defVersion: 1, correlationId: "c1" });

    const ids = async (filters: Partial<ListWorkflowExecutionsOptions>) =>
      (await listWorkflowExecutions(t.db, { namespaceId, limit: 100, ...filters })).items.map((r) => r.id);
    expect(await ids({ defName: "orders", correlationId: "c1" })).toEqual([recent.id, old.id]);
    expect(await ids({ defName: "orders", status: "COMPLETED" })).toEqual([done.id]);
    const tenMinutesAgo = new Date(Date.now() - 600_000);
    expect(await ids({ defName: "orders", correlationId: "c1", startedFrom: tenMinutesAgo })).toEqual([recent.id]);
    expect(await ids({ defName: "orders", startedBefore: tenMinutesAgo })).toEqual([old.id]);
    expect(await ids({ correlationId: "c1" })).toHaveLength(3);
  });

  it("finds outputs by containment through the index that leaves {} out, and {} still finds every run", async () => {
    const namespaceId = randomUUID();
    const insert = (output: Record<string, unknown>) => insertWorkflowExecution(t.db, { namespaceId, defName: "outputs", defVersion: 1, output, status: "COMPLETED" });
    const empty = await insert({});
    const one = await insert({ a: 1 });
    const two = await insert({ a: 2, b: [3] });
    const ids = async (anyOf: unknown[]) =>
      (await listWorkflowExecutions(t.db, { namespaceId, limit: 100, contains: [{ column: "output", anyOf }] })).items.map((r) => r.id).sort();
    expect(await ids([{ a: 1 }])).toEqual([one.id]);
    expect(await ids([{ a: 1 }, { b: [3] }])).toEqual([one.id, two.id].sort());
    expect(await ids([{ a: 3 }])).toEqual([]);
    expect(await ids([{}])).toEqual([empty.id, one.id, two.id].sort());
    expect(await ids([{ a: 2 }, {}])).toEqual([empty.id, one.id, two.id].sort());

    // The partial index serves a containment search only when the query carries its predicate.
    const plan = async (where: string) =>
      t.db.connection().execute(async (conn) => {
        await sql`SET enable_seqscan = off`.execute(conn);
        try {
          const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT "id" FROM "WorkflowExecutions" WHERE ${sql.raw(where)}`.execute(conn);
          return rows.map((r) => r["QUERY PLAN"]).join("\n");
        } finally {
          await sql`RESET enable_seqscan`.execute(conn);
        }
      });
    expect(await plan(`"output" @> '{"a":1}'::jsonb AND "output" <> '{}'::jsonb`)).toMatch(/output_idx/);
    expect(await plan(`"output" @> '{"a":1}'::jsonb`)).not.toMatch(/output_idx/);
  });

  it("refuses a cursor it did not issue", async () => {
    await expect(listWorkflowExecutions(t.db, { namespaceId: randomUUID(), limit: 5, cursor: "garbage" })).rejects.toBeInstanceOf(InvalidCursorError);
    const forged = Buffer.from(JSON.stringify(["2026-01-01", "x"])).toString("base64url");
    await expect(listWorkflowExecutions(t.db, { namespaceId: randomUUID(), limit: 5, cursor: forged })).rejects.toBeInstanceOf(InvalidCursorError);
  });
});
