import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Kysely, PostgresDialect, sql } from "kysely";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chain, simple, workflow } from "../../engine/definition/test-fixtures";
import { registerWorkflowDefinition } from "../definitions/register-workflow-definition";
import { evaluateBatch } from "../evaluator/evaluator";
import { startExecution } from "../executions/start-execution";
import { FilesystemBlobStore } from "../lib/blob-store";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { reportTaskResult } from "../tasks/report-task-result";
import { pollTasks } from "../tasks/task-poller";
import { DISTRIBUTION_COLUMN, FOREIGN_KEY_CHANGES, FUNCTIONS, HOT_STATEMENTS, KEY_CHANGES, TABLE_PLACEMENT, TRIGGERS } from "../../db/citus-plan";
import { createPool } from "../../db/pool";
import type { Database } from "../../db/schema";
import { useTestDatabase } from "../../db/testing/test-database";

/**
 * docs/scaling.md's path onto Citus (db/citus-plan.ts), checked against the
 * schema the migrations make and the statements a real run sends. Where the
 * schema breaks one of Citus's rules today, the plan lists the change and this
 * asserts exactly that list: a migration or a statement that adds a violation,
 * or removes one, fails here until the plan (and the doc) say so.
 */

const t = useTestDatabase();

type Kind = "distributed" | "reference" | "local";
const placementOf = (table: string): Kind | undefined => TABLE_PLACEMENT[table]?.kind;
const tablesOf = (kind: Kind) => Object.keys(TABLE_PLACEMENT).filter((name) => placementOf(name) === kind).sort();

interface Table {
  name: string;
  partitioned: boolean;
  /** "notnull", "nullable", or null without the column. */
  distributionColumn: "notnull" | "nullable" | null;
}

async function schemaTables(): Promise<Table[]> {
  const { rows } = await sql<{ name: string; kind: string; dist: "notnull" | "nullable" | null }>`
    SELECT c.relname AS name, c.relkind AS kind,
      (SELECT CASE WHEN a.attnotnull THEN 'notnull' ELSE 'nullable' END FROM pg_attribute a
       WHERE a.attrelid = c.oid AND a.attname = ${DISTRIBUTION_COLUMN} AND NOT a.attisdropped) AS dist
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    ORDER BY 1`.execute(t.db);
  return rows.map((r) => ({ name: r.name, partitioned: r.kind === "p", distributionColumn: r.dist }));
}

describe("the Citus plan against the schema", () => {
  it("classifies every table of the schema, and only those", async () => {
    const names = (await schemaTables()).map((table) => table.name);
    expect(Object.keys(TABLE_PLACEMENT).sort()).toEqual(names);
  });

  it('gives every distributed table a NOT NULL "namespaceId" (Citus refuses a row without one)', async () => {
    const tables = await schemaTables();
    const distributedTables = tables.filter((table) => placementOf(table.name) === "distributed");
    expect(distributedTables.map((table) => table.name)).toEqual(tablesOf("distributed"));
    expect(distributedTables.filter((table) => table.distributionColumn !== "notnull").map((table) => table.name)).toEqual([]);
  });

  it("keeps reference tables small: none is partitioned (the big, time-retired tables are), none is written by the hot path", async () => {
    const tables = await schemaTables();
    expect(tables.filter((table) => placementOf(table.name) === "reference" && table.partitioned).map((table) => table.name)).toEqual([]);
    const written = captured.flatMap((text) => occurrences(text).filter((o) => o.verb !== "read" && placementOf(o.table) === "reference").map((o) => o.table));
    expect(written).toEqual([]);
  });

  it("lists exactly the primary and unique keys of distributed tables that lack the distribution column", async () => {
    const { rows } = await sql<{ table: string; index: string; columns: string[] }>`
      SELECT t.relname AS "table", i.relname AS "index",
        ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY AS k(n, o)
              JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n ORDER BY k.o)::text[] AS columns
      FROM pg_index x
      JOIN pg_class i ON i.oid = x.indexrelid
      JOIN pg_class t ON t.oid = x.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = 'public' AND x.indisunique AND t.relkind IN ('r', 'p') AND NOT t.relispartition
      ORDER BY 1, 2`.execute(t.db);
    const byName = (a: { index: string }, b: { index: string }) => (a.index < b.index ? -1 : a.index > b.index ? 1 : 0);
    const violations = rows
      .filter((row) => placementOf(row.table) === "distributed" && !row.columns.includes(DISTRIBUTION_COLUMN))
      .map((row) => ({ table: row.table, index: row.index, today: row.columns }));
    expect(violations.sort(byName)).toEqual([...KEY_CHANGES].sort(byName));
    // A unique index on an expression (Users' lower(email)) has no column to check: only reference or local tables may have one.
    const expressionKeys = rows.filter((row) => row.columns.length === 0 || row.columns.some((column) => column === null));
    expect(expressionKeys.filter((row) => placementOf(row.table) === "distributed")).toEqual([]);
  });

  it("lists exactly the foreign keys Citus would refuse, and allows the rest", async () => {
    const { rows } = await sql<{ table: string; columns: string[]; references: string; referencedColumns: string[] }>`
      SELECT r.relname AS "table", f.relname AS "references",
        ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(n, o)
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS columns,
        ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(n, o)
              JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS "referencedColumns"
      FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_class f ON f.oid = c.confrelid
      WHERE c.contype = 'f' AND NOT r.relispartition
      ORDER BY 1, 3, 2`.execute(t.db);
    const refused: typeof rows = [];
    for (const row of rows) {
      const from = placementOf(row.table);
      const to = placementOf(row.references);
      // Allowed: distributed → distributed on the distribution column (same position both sides),
      // distributed → reference, reference → reference, local → reference, local → local.
      const colocated =
        from === "distributed" &&
        to === "distributed" &&
        row.columns.indexOf(DISTRIBUTION_COLUMN) >= 0 &&
        row.columns.indexOf(DISTRIBUTION_COLUMN) === row.referencedColumns.indexOf(DISTRIBUTION_COLUMN);
      const allowed = colocated || (to === "reference" && from !== undefined) || (from === "local" && to === "local");
      if (!allowed) refused.push(row);
    }
    expect(refused).toEqual(FOREIGN_KEY_CHANGES);
  });

  it("lists every trigger on a distributed or reference table, at its level", async () => {
    const { rows } = await sql<{ name: string; table: string; row: boolean }>`
      SELECT tg.tgname AS name, c.relname AS "table", (tg.tgtype & 1) = 1 AS "row"
      FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND NOT tg.tgisinternal AND NOT c.relispartition
      ORDER BY 1`.execute(t.db);
    const shardTriggers = Object.fromEntries(
      rows
        .filter((row) => placementOf(row.table) !== "local")
        .map((row) => [row.name, { table: row.table, level: row.row ? "row" : "statement" }]),
    );
    const planned = Object.fromEntries(Object.entries(TRIGGERS).map(([name, plan]) => [name, { table: plan.table, level: plan.level }]));
    expect(shardTriggers).toEqual(planned);
  });

  it("states each table's placement in docs/scaling.md as the plan does", () => {
    const doc = readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "scaling.md"), "utf8");
    const stated: Record<string, Kind[]> = {};
    // The doc's placement table: "| distributed | `A`, `B` … |".
    for (const line of doc.split("\n")) {
      const row = /^\| (distributed|reference|local)\b[^|]*\| (.+) \|$/.exec(line);
      if (!row) continue;
      for (const name of row[2]!.matchAll(/`(\w+)`/g)) (stated[name[1]!] ??= []).push(row[1] as Kind);
    }
    expect(stated).toEqual(Object.fromEntries(Object.keys(TABLE_PLACEMENT).map((name) => [name, [placementOf(name)]])));
  });
});

// ---------------------------------------------------------------------------
// The hot path's statements, captured from a real run: a 3-task chain started,
// evaluated, leased and reported by the functions the web process and the
// sidecar call, on a pool that records every text its connections send
// (pipelined followers included).

const captured: string[] = [];
let functionBodies: { name: string; body: string; args: string[] }[] = [];
let scripts: QuickJsScriptEvaluator | undefined;
let blobDir: string | undefined;

beforeAll(async () => {
  const pool = createPool(t.url, { max: 2 });
  // Before createPool's own listener, so the statements it sends straight to the connection pass through here too.
  pool.prependListener("connect", (client: pg.PoolClient) => {
    const send = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const [first] = args;
      const text = typeof first === "string" ? first : (first as { text?: unknown } | null)?.text;
      if (typeof text === "string") captured.push(text);
      return send(...args);
    };
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    scripts = await createQuickJsScriptEvaluator();
    blobDir = await mkdtemp(path.join(tmpdir(), "nf-citus-plan-"));
    const blobs = new FilesystemBlobStore({ root: blobDir });
    const namespace = await t.db.insertInto("Namespaces").values({ name: `ns-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow();
    const namespaceId = namespace.id;
    const registered = await registerWorkflowDefinition(t.db, {
      namespaceId,
      definition: workflow([simple("a"), simple("b"), simple("c")], chain("a", "b", "c"), { name: "citus_chain" }),
    });
    if (!registered.ok) throw new Error(`registering the chain failed: ${JSON.stringify(registered)}`);

    const started = await startExecution({ db, blobs }, { namespaceId, name: "citus_chain", input: {} });
    if (!started.ok) throw new Error(`the start failed: ${JSON.stringify(started)}`);
    const poll = () => pollTasks({ db, notifier: null }, { namespaceId, queueName: "task", count: 1, timeoutMs: 0, workerId: "w1", leaseSeconds: 30 });
    await evaluateBatch({ db, scripts }, { limit: 50 });
    let leased = await poll();
    for (let step = 0; step < 6 && leased.length > 0; step++) {
      const task = leased[0]!.task;
      const report = await reportTaskResult(
        { db, blobs },
        { namespaceId, workflowId: task.workflowId, taskId: task.id, status: "COMPLETED", output: {}, workerId: "w1", next: { count: 1, leaseSeconds: 30 } },
      );
      if (!report.ok) throw new Error(`a report was refused: ${JSON.stringify(report)}`);
      await evaluateBatch({ db, scripts }, { limit: 50 });
      leased = report.leased.length > 0 ? report.leased : await poll();
    }
    const run = await t.db.selectFrom("WorkflowExecutions").select("status").where("id", "=", started.workflowId).executeTakeFirstOrThrow();
    // A run that did not finish would leave part of the path unexercised.
    if (run.status !== "COMPLETED") throw new Error(`the chain ended ${run.status}, not COMPLETED`);

    const { rows } = await sql<{ name: string; definition: string; args: string[] | null }>`
      SELECT p.proname AS name, pg_get_functiondef(p.oid) AS definition, p.proargnames::text[] AS args
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.prokind = 'f' AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql')`.execute(t.db);
    functionBodies = rows.map((row) => ({ name: row.name, body: row.definition, args: row.args ?? [] }));
  } finally {
    await db.destroy();
  }
});

afterAll(async () => {
  await scripts?.close();
  if (blobDir) await rm(blobDir, { recursive: true, force: true });
});

interface Occurrence {
  table: string;
  verb: "read" | "insert" | "update" | "delete";
  /** The statement constrains (or, for an insert, writes) this occurrence's "namespaceId". */
  bound: boolean;
}

const KEYWORDS = new Set(["where", "set", "on", "join", "left", "inner", "cross", "using", "order", "group", "limit", "for", "returning", "values", "select", "union", "and", "or", "offset", "as"]);
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Every schema table a statement names, with whether it binds the
 * distribution column there: an insert whose column list has it, or an
 * equality (`=`, `= ANY`, `IN`) on "<alias>"."namespaceId" — unqualified
 * when the table has no alias. A statement that merely selects the column
 * does not bind it. Good enough for this codebase's SQL, which quotes every
 * identifier; the test fails loudly on a statement it cannot place.
 */
function occurrences(text: string): Occurrence[] {
  const found: Occurrence[] = [];
  const pattern = /\b(from|join|update|into)\s+"(\w+)"(\s*\()?(?:\s+(?:as\s+)?("?)(\w+)\4)?/gi;
  for (const match of text.matchAll(pattern)) {
    const [, keyword, table, openParen, , aliasText] = match;
    if (placementOf(table!) === undefined) continue;
    const lower = keyword!.toLowerCase();
    const before = text.slice(Math.max(0, match.index - 12), match.index).toLowerCase();
    const verb = lower === "into" ? "insert" : lower === "update" ? "update" : before.includes("delete") ? "delete" : "read";
    if (verb === "insert") {
      const columns = openParen ? text.slice(match.index + match[0].length, text.indexOf(")", match.index + match[0].length)) : "";
      found.push({ table: table!, verb, bound: columns.includes(`"${DISTRIBUTION_COLUMN}"`) });
      continue;
    }
    const alias = aliasText && !KEYWORDS.has(aliasText.toLowerCase()) ? aliasText : undefined;
    const qualifier = alias === undefined ? `(?:"${escape(table!)}"\\.)?` : `(?:"${escape(alias)}"|${escape(alias)})\\.`;
    const column = `${qualifier}"${DISTRIBUTION_COLUMN}"`;
    const binds = new RegExp(`(?<![\\w."])${column}\\s*(?:=|in\\s*\\()|=\\s*${column}`, "i");
    found.push({ table: table!, verb, bound: binds.test(text) });
  }
  return found;
}

/** The distributed tables whose ON CONFLICT target lacks the distribution column. */
function conflictsLacking(text: string): string[] {
  const tables: string[] = [];
  for (const match of text.matchAll(/on conflict\s*\(([^)]*)\)/gi)) {
    const into = [...text.slice(0, match.index).matchAll(/\binto\s+"(\w+)"/gi)].at(-1)?.[1];
    if (into !== undefined && placementOf(into) === "distributed" && !match[1]!.includes(`"${DISTRIBUTION_COLUMN}"`)) tables.push(into);
  }
  return tables;
}

const uniqueSorted = (values: readonly string[]) => [...new Set(values)].sort();
const lacking = (text: string) => uniqueSorted(occurrences(text).filter((o) => !o.bound && placementOf(o.table) === "distributed").map((o) => o.table));
const callsIn = (text: string) => uniqueSorted([...text.matchAll(/"(nf_\w+)"\s*\(/g)].map((m) => m[1]!));

describe("the Citus plan against the hot path's statements", () => {
  it("captured a whole run", () => {
    expect(captured.some((text) => text.includes('"nf_report_task"'))).toBe(true);
    expect(captured.some((text) => text.includes('"nf_finish_evaluations"'))).toBe(true);
  });

  it("places every hot statement that touches a distributed table, as the plan says", () => {
    const seen = new Map<string, { lacks: string[]; onConflict: string[]; calls: string[] }>();
    const unplaced: string[] = [];
    for (const text of new Set(captured)) {
      const touches = occurrences(text).some((o) => placementOf(o.table) === "distributed") || callsIn(text).length > 0;
      if (!touches) continue;
      const matches = HOT_STATEMENTS.filter((statement) => statement.match.test(text));
      if (matches.length !== 1) {
        unplaced.push(`${matches.length} plan entries match: ${text.replace(/\s+/g, " ").slice(0, 160)}`);
        continue;
      }
      const [entry] = matches;
      const computed = { lacks: lacking(text), onConflict: uniqueSorted(conflictsLacking(text)), calls: callsIn(text) };
      const earlier = seen.get(entry!.name);
      // A statement built with varying lengths (VALUES lists) is the same entry; its verdict must not vary.
      if (earlier) expect(computed, entry!.name).toEqual(earlier);
      seen.set(entry!.name, computed);
    }
    expect(unplaced).toEqual([]);
    const planned = Object.fromEntries(HOT_STATEMENTS.map((s) => [s.name, { lacks: [...s.lacks], onConflict: [...s.onConflict], calls: [...s.calls] }]));
    expect(Object.fromEntries(seen)).toEqual(planned);
  });

  it("knows every SQL function that touches a distributed table: whether it can be delegated, and what it lacks", () => {
    const computed: Record<string, { delegable: boolean; lacks: string[]; onConflict: string[] }> = {};
    for (const fn of functionBodies) {
      const touches = occurrences(fn.body).some((o) => placementOf(o.table) === "distributed");
      if (!touches) continue;
      // Statement by statement, so an unqualified "namespaceId" in one does not bind a table of another.
      const statements = fn.body.split(";");
      computed[fn.name] = {
        delegable: fn.args.includes("p_namespace"),
        lacks: uniqueSorted(statements.flatMap(lacking)),
        onConflict: uniqueSorted(statements.flatMap(conflictsLacking)),
      };
    }
    const planned = Object.fromEntries(
      Object.entries(FUNCTIONS).map(([name, plan]) => [name, { delegable: plan.delegable, lacks: [...plan.lacks], onConflict: [...plan.onConflict] }]),
    );
    expect(computed).toEqual(planned);
  });
});
