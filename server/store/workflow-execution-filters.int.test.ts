import { randomUUID } from "node:crypto";
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

  it("refuses a cursor it did not issue", async () => {
    await expect(listWorkflowExecutions(t.db, { namespaceId: randomUUID(), limit: 5, cursor: "garbage" })).rejects.toBeInstanceOf(InvalidCursorError);
    const forged = Buffer.from(JSON.stringify(["2026-01-01", "x"])).toString("base64url");
    await expect(listWorkflowExecutions(t.db, { namespaceId: randomUUID(), limit: 5, cursor: forged })).rejects.toBeInstanceOf(InvalidCursorError);
  });
});
