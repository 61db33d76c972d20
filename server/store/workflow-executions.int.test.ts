import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import {
  InvalidCursorError,
  endWorkflowExecution,
  getWorkflowExecution,
  insertWorkflowExecution,
  listLiveChildWorkflows,
  listWorkflowExecutions,
  reopenWorkflowExecution,
  setWorkflowStatus,
} from "./workflow-executions";
import type { WorkflowExecutionSummary } from "./workflow-executions";

const t = useTestDatabase();

/** `count` ISO timestamps inside one millisecond of now, differing only in microseconds. */
function sameMillisecond(count: number): string[] {
  const millis = new Date().toISOString().slice(0, 23); // 2026-11-29T19:53:01.123
  return Array.from({ length: count }, (_, i) => `${millis}${String(i + 1).padStart(3, "0")}Z`);
}

async function pageAll(
  namespaceId: string,
  limit: number,
  filters: { status?: "RUNNING" | "COMPLETED"; defName?: string } = {},
): Promise<{ pages: WorkflowExecutionSummary[][]; cursors: (string | null)[] }> {
  const pages: WorkflowExecutionSummary[][] = [];
  const cursors: (string | null)[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await listWorkflowExecutions(t.db, { namespaceId, limit, cursor, ...filters });
    pages.push(page.items);
    cursors.push(page.nextCursor);
    if (page.nextCursor === null) return { pages, cursors };
    cursor = page.nextCursor;
  }
  throw new Error("paging did not terminate");
}

describe("insertWorkflowExecution / getWorkflowExecution", () => {
  it("stores a payload containing NUL by stripping it (jsonb cannot hold U+0000)", async () => {
    const namespaceId = randomUUID();
    const inserted = await insertWorkflowExecution(t.db, {
      namespaceId,
      defName: "nul",
      defVersion: 1,
      input: { s: "a\u0000b", nested: ["x\u0000", { "k\u0000ey": "v" }] },
      output: { o: "\u0000" },
      variables: { v: "c\u0000d" },
    });
    const row = await getWorkflowExecution(t.db, namespaceId, inserted.id);
    expect(row?.input).toEqual({ s: "ab", nested: ["x", { key: "v" }] });
    expect(row?.output).toEqual({ o: "" });
    expect(row?.variables).toEqual({ v: "cd" });

    // The failure json() exists for: the same payload serialised plainly.
    await expect(
      t.db
        .insertInto("WorkflowExecutions")
        .values({ namespaceId, defName: "nul", defVersion: 1, input: JSON.stringify({ s: "a\u0000b" }) })
        .execute(),
    ).rejects.toMatchObject({ code: "22P05" });
  });

  it("stores a string cut mid-emoji (a lone surrogate jsonb rejects) as U+FFFD", async () => {
    const namespaceId = randomUUID();
    const cut = "done 😀".slice(0, 6);
    const inserted = await insertWorkflowExecution(t.db, { namespaceId, defName: "cut", defVersion: 1, output: { cut } });
    expect((await getWorkflowExecution(t.db, namespaceId, inserted.id))?.output).toEqual({ cut: "done \ufffd" });
    await expect(
      t.db
        .insertInto("WorkflowExecutions")
        .values({ namespaceId, defName: "cut", defVersion: 1, output: JSON.stringify({ cut }) })
        .execute(),
    ).rejects.toMatchObject({ code: "22P02" });
  });

  it("returns the stored defaults and keeps namespaces apart", async () => {
    const namespaceId = randomUUID();
    const row = await insertWorkflowExecution(t.db, {
      namespaceId,
      defName: "defaults",
      defVersion: 3,
      correlationId: "order-7",
    });
    expect(row).toMatchObject({
      namespaceId,
      defName: "defaults",
      defVersion: 3,
      status: "RUNNING",
      version: 0,
      priority: 0,
      input: {},
      output: {},
      variables: {},
      correlationId: "order-7",
      endedAt: null,
    });
    expect(row.startedAt).toBeInstanceOf(Date);
    expect(await getWorkflowExecution(t.db, namespaceId, row.id)).toEqual(row);
    expect(await getWorkflowExecution(t.db, randomUUID(), row.id)).toBeUndefined();
  });
});

describe("listWorkflowExecutions keyset paging", () => {
  it("pages 12 executions from one millisecond (distinct microseconds) exactly once, newest first", async () => {
    const namespaceId = randomUUID();
    const stamps = sameMillisecond(12);
    const ids: string[] = [];
    // Inserted in shuffled order so the result order cannot come from insertion order.
    for (const i of [7, 2, 11, 0, 5, 9, 3, 10, 1, 8, 4, 6]) {
      const row = await insertWorkflowExecution(t.db, {
        namespaceId,
        defName: "burst",
        defVersion: 1,
        startedAt: stamps[i],
      });
      ids[i] = row.id;
    }

    const { pages, cursors } = await pageAll(namespaceId, 5);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    expect(cursors.at(-1)).toBeNull();
    expect(pages.flat().map((r) => r.id)).toEqual([...ids].reverse());
    // Cursors are opaque base64url, not a readable key.
    for (const c of cursors.slice(0, -1)) expect(c).toMatch(/^[A-Za-z0-9_-]+$/);

    // The trap this guards against is real for this data: a cursor rebuilt from
    // the JS Date of page 1's last row (milliseconds only) finds nothing after it.
    const lastOfFirstPage = pages[0]?.at(-1);
    if (!lastOfFirstPage) throw new Error("no first page");
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS "n" FROM "WorkflowExecutions"
      WHERE "namespaceId" = ${namespaceId}::uuid
        AND ("startedAt", "id") < (${lastOfFirstPage.startedAt.toISOString()}::timestamptz, ${lastOfFirstPage.id}::uuid)`.execute(
      t.db,
    );
    expect(rows[0]?.n).toBe(0);
  });

  it("pages 12 executions with identical startedAt by id, exactly once", async () => {
    const namespaceId = randomUUID();
    const [startedAt] = sameMillisecond(1);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push((await insertWorkflowExecution(t.db, { namespaceId, defName: "same", defVersion: 1, startedAt })).id);
    }
    const { pages } = await pageAll(namespaceId, 5);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    const listed = pages.flat().map((r) => r.id);
    expect(new Set(listed).size).toBe(12);
    // uuid order, which is not necessarily insertion order.
    const { rows } = await sql<{ id: string }>`
      SELECT "id" FROM "WorkflowExecutions" WHERE "namespaceId" = ${namespaceId}::uuid ORDER BY "id" DESC`.execute(
      t.db,
    );
    expect(listed).toEqual(rows.map((r) => r.id));
    expect([...listed].sort()).toEqual([...ids].sort());
  });

  it("stays exact when newer executions arrive between pages", async () => {
    const namespaceId = randomUUID();
    const stamps = sameMillisecond(6);
    for (const startedAt of stamps) await insertWorkflowExecution(t.db, { namespaceId, defName: "live", defVersion: 1, startedAt });
    const first = await listWorkflowExecutions(t.db, { namespaceId, limit: 3 });
    // Newer than everything listed so far: OFFSET would now repeat a row.
    await insertWorkflowExecution(t.db, { namespaceId, defName: "live", defVersion: 1 });
    const second = await listWorkflowExecutions(t.db, { namespaceId, limit: 3, cursor: first.nextCursor ?? undefined });
    const seen = [...first.items, ...second.items].map((r) => r.startedAt.getTime());
    expect(first.items).toHaveLength(3);
    expect(second.items).toHaveLength(3);
    expect(new Set([...first.items, ...second.items].map((r) => r.id)).size).toBe(6);
    expect(seen.every((ms) => ms === seen[0])).toBe(true);
    expect(second.nextCursor).toBeNull();
  });

  it("filters by status and definition name, and never crosses namespaces", async () => {
    const namespaceId = randomUUID();
    const other = randomUUID();
    const stamps = sameMillisecond(9);
    for (const [i, startedAt] of stamps.entries()) {
      await insertWorkflowExecution(t.db, {
        namespaceId,
        defName: i % 3 === 0 ? "a" : "b",
        defVersion: 1,
        status: i % 2 === 0 ? "COMPLETED" : "RUNNING",
        startedAt,
      });
      await insertWorkflowExecution(t.db, { namespaceId: other, defName: "a", defVersion: 1, startedAt });
    }
    const all = await pageAll(namespaceId, 2);
    expect(all.pages.flat()).toHaveLength(9);
    expect(all.pages.flat().every((r) => r.namespaceId === namespaceId)).toBe(true);

    const completed = await pageAll(namespaceId, 2, { status: "COMPLETED" });
    expect(completed.pages.flat().map((r) => r.status)).toEqual(Array(5).fill("COMPLETED"));

    const defA = await pageAll(namespaceId, 2, { defName: "a" });
    expect(defA.pages.flat().map((r) => r.defName)).toEqual(["a", "a", "a"]);

    const both = await pageAll(namespaceId, 1, { defName: "a", status: "RUNNING" });
    expect(both.pages.flat()).toHaveLength(1); // i = 3
    // Listing omits payloads.
    expect(Object.keys(all.pages[0]?.[0] ?? {})).not.toContain("input");
  });

  it("rejects a cursor it did not issue, and a nonsensical limit", async () => {
    const namespaceId = randomUUID();
    await expect(listWorkflowExecutions(t.db, { namespaceId, limit: 5, cursor: "not-a-cursor" })).rejects.toBeInstanceOf(
      InvalidCursorError,
    );
    const forged = Buffer.from(JSON.stringify(["2026-01-01", "x'; DROP TABLE"])).toString("base64url");
    await expect(listWorkflowExecutions(t.db, { namespaceId, limit: 5, cursor: forged })).rejects.toBeInstanceOf(
      InvalidCursorError,
    );
    await expect(listWorkflowExecutions(t.db, { namespaceId, limit: 0 })).rejects.toBeInstanceOf(RangeError);
    expect(await listWorkflowExecutions(t.db, { namespaceId, limit: 5 })).toEqual({ items: [], nextCursor: null });
  });
});

describe("state changes outside an evaluation", () => {
  it("setWorkflowStatus and endWorkflowExecution are compare-and-set on the status and bump the version", async () => {
    const namespaceId = randomUUID();
    const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: "s", defVersion: 1, status: "RUNNING" });
    const now = new Date();
    expect(await setWorkflowStatus(t.db, { workflowId: wf.id, from: ["PAUSED"], to: "RUNNING", now })).toBeUndefined();
    expect(await setWorkflowStatus(t.db, { workflowId: wf.id, from: ["RUNNING"], to: "PAUSED", now })).toMatchObject({ status: "PAUSED", version: wf.version + 1 });
    const ended = await endWorkflowExecution(t.db, { workflowId: wf.id, status: "TERMINATED", reasonForIncompletion: "stop", now });
    expect(ended).toMatchObject({ status: "TERMINATED", reasonForIncompletion: "stop", version: wf.version + 2 });
    expect(ended!.endedAt!.getTime()).toBe(now.getTime());
    expect(await endWorkflowExecution(t.db, { workflowId: wf.id, status: "FAILED", reasonForIncompletion: "again", now })).toBeUndefined();
  });

  it("listLiveChildWorkflows lists running and paused children in id order", async () => {
    const namespaceId = randomUUID();
    const parent = await insertWorkflowExecution(t.db, { namespaceId, defName: "p", defVersion: 1 });
    const kids = [];
    for (const status of ["RUNNING", "PAUSED", "COMPLETED"] as const) {
      kids.push(await insertWorkflowExecution(t.db, { namespaceId, defName: "c", defVersion: 1, status, parentWorkflowId: parent.id, parentTaskId: randomUUID() }));
    }
    expect(await listLiveChildWorkflows(t.db, parent.id)).toEqual(
      kids.slice(0, 2).map((k) => ({ id: k.id, namespaceId, status: k.status })).sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it("reopenWorkflowExecution clears the end, and a restart moves the row to its new month's partition", async () => {
    const namespaceId = randomUUID();
    const longAgo = new Date(Date.now() - 70 * 24 * 3600 * 1000);
    const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: "r", defVersion: 1, status: "FAILED", startedAt: longAgo, output: { x: 1 } });
    await t.db.updateTable("WorkflowExecutions").set({ endedAt: new Date(), reasonForIncompletion: "boom", failedTaskRef: "a" }).where("id", "=", wf.id).execute();
    const now = new Date();
    expect(await reopenWorkflowExecution(t.db, { workflowId: wf.id, from: ["COMPLETED"], now })).toBeUndefined();
    const reopened = await reopenWorkflowExecution(t.db, { workflowId: wf.id, from: ["FAILED"], now, restartedAt: now, defVersion: 2, input: { y: 2 }, variables: { v: 1 } });
    expect(reopened).toMatchObject({ status: "RUNNING", endedAt: null, reasonForIncompletion: null, failedTaskRef: null, output: {}, input: { y: 2 }, variables: { v: 1 }, defVersion: 2 });
    expect(reopened!.startedAt.getTime()).toBe(now.getTime());
    const { rows } = await sql<{ partition: string }>`
      SELECT tableoid::regclass::text AS "partition" FROM "WorkflowExecutions" WHERE "id" = ${wf.id}::uuid`.execute(t.db);
    expect(rows).toHaveLength(1);
    const month = `${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
    expect(rows[0]!.partition).toContain(month);
  });
});

