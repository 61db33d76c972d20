import path from "node:path";
import { pathToFileURL } from "node:url";
import { TRPCError } from "@trpc/server";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import type { Problem } from "@/engine";
import { authenticateApiKey, createApiKey } from "../../auth/api-keys";
import type { Principal } from "../../auth/principal";
import { upsertNamespaceMember } from "../../store/namespace-members";
import { insertNamespace } from "../../store/namespaces";
import { listLatestWorkflowDefinitionsStatement } from "../../store/workflow-definitions";
import { insertWorkflowExecution } from "../../store/workflow-executions";
import { DefinitionProblemsError } from "../problem-errors";
import { callerAs, insertTestUser, useWebEnvironment, userPrincipal } from "../testing";

/**
 * The editor's server side: save (a new version each time, with its
 * message), get (the graph exactly as saved), versions, delete (archive), the
 * list's last run, and who may do which. On a real Postgres.
 */
const database = useTestDatabase();

let owner: Principal;
let editor: Principal;
let viewer: Principal;
let nsId: string;

function as(principal: Principal) {
  return callerAs(database.db, database.url, principal);
}

/** A valid two-node workflow with deliberately odd positions, so a lost or rounded coordinate shows. */
function orders(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemaVersion: 1,
    name: "orders",
    description: "Takes an order",
    nodes: [
      { ref: "charge", type: "SIMPLE", name: "charge", label: "Charge card", position: { x: 12.5, y: -40 }, input: { amount: "${workflow.input.amount}" } },
      { ref: "ship", type: "SIMPLE", name: "ship", position: { x: 312.25, y: 160 }, input: { paid: "${charge.output.ok}" } },
    ],
    edges: [{ source: "charge", target: "ship" }],
    outputParameters: { shipped: "${ship.output.ok}" },
    ...extra,
  };
}

function code(expected: string) {
  return (error: unknown) => error instanceof TRPCError && error.code === expected;
}

beforeAll(async () => {
  const db = database.db;
  nsId = (await insertNamespace(db, { name: "shop" })).id;
  await insertNamespace(db, { name: "elsewhere" });
  owner = userPrincipal(await insertTestUser(db, "owner@example.com", { isOwner: true }));
  const ed = await insertTestUser(db, "editor@example.com");
  await upsertNamespaceMember(db, { namespaceId: nsId, userId: ed.id, role: "editor" });
  editor = userPrincipal(ed);
  const vi = await insertTestUser(db, "viewer@example.com");
  await upsertNamespaceMember(db, { namespaceId: nsId, userId: vi.id, role: "viewer" });
  viewer = userPrincipal(vi);
});

describe("workflows.save and workflows.get", () => {
  it("saves a new version each time, with its message, and get returns the identical graph", async () => {
    const first = await as(editor).workflows.save({ namespace: "shop", definition: orders(), message: "  First cut  " });
    expect(first).toMatchObject({ name: "orders", version: 1 });
    const second = await as(editor).workflows.save({ namespace: "shop", definition: orders({ description: "Takes and ships an order" }) });
    expect(second.version).toBe(2);

    const latest = await as(viewer).workflows.get({ namespace: "shop", name: "orders" });
    // Exactly as saved, positions included, plus the version it was assigned
    // (JSONB keeps values, not key order: equal as values, not as text).
    expect(latest.definition).toStrictEqual({ ...orders({ description: "Takes and ships an order" }), version: 2 });
    expect(latest).toMatchObject({ name: "orders", version: 2, message: null, latestVersion: 2, archived: false, createdBy: `user:${(editor as { userId: string }).userId}` });
    expect(latest.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    const v1 = await as(viewer).workflows.get({ namespace: "shop", name: "orders", version: 1 });
    expect(v1).toMatchObject({ version: 1, message: "First cut", latestVersion: 2, description: "Takes an order" });
    expect(v1.definition.nodes).toEqual(orders().nodes);

    // Stored in the row, not only echoed.
    const row = await database.db.selectFrom("WorkflowDefinitions").select(["message"]).where("namespaceId", "=", nsId).where("name", "=", "orders").where("version", "=", 1).executeTakeFirstOrThrow();
    expect(row.message).toBe("First cut");
  });

  it("refuses an invalid definition with BAD_REQUEST carrying every engine problem, and stores nothing", async () => {
    const broken = orders({
      name: "broken",
      nodes: [
        { ref: "charge", type: "SIMPLE", position: { x: 0, y: 0 } },
        { ref: "ship", type: "SIMPLE", name: "ship", position: { x: 0, y: 100 }, input: { x: "${nowhere.output.y}" } },
      ],
    });
    const error = await as(editor).workflows.save({ namespace: "shop", definition: broken }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe("BAD_REQUEST");
    const cause = (error as TRPCError).cause;
    expect(cause).toBeInstanceOf(DefinitionProblemsError);
    const problems = (cause as DefinitionProblemsError).problems;
    expect(problems.map((p) => [p.code, p.ref, p.path])).toEqual([["missing-field", "charge", ["nodes", 0, "name"]]]);
    const stored = await database.db.selectFrom("WorkflowDefinitions").select("id").where("name", "=", "broken").execute();
    expect(stored).toEqual([]);
  });

  it("saves a definition whose expression names an unknown ref, and returns that as a warning", async () => {
    // Conductor registers it and resolves the reference to null at run time; node-flow saves it and says so.
    const lenient = orders({
      name: "lenient",
      nodes: [{ ref: "ship", type: "SIMPLE", name: "ship", position: { x: 0, y: 0 }, input: { x: "${nowhere.output.y}" } }],
      edges: [],
      outputParameters: {},
    });
    const saved = await as(editor).workflows.save({ namespace: "shop", definition: lenient });
    expect(saved.warnings.map((w) => [w.code, w.ref, w.severity])).toEqual([["expression-unknown-ref", "ship", "warning"]]);
    const stored = await database.db.selectFrom("WorkflowDefinitions").select("version").where("name", "=", "lenient").execute();
    expect(stored).toEqual([{ version: saved.version }]);
  });

  it("refuses something that is not a definition at all the same way", async () => {
    await expect(as(editor).workflows.save({ namespace: "shop", definition: [1, 2] })).rejects.toSatisfy(
      (e: unknown) => e instanceof TRPCError && e.code === "BAD_REQUEST" && e.cause instanceof DefinitionProblemsError,
    );
    await expect(as(editor).workflows.save({ namespace: "shop", definition: orders(), message: "x".repeat(2001) })).rejects.toSatisfy(code("BAD_REQUEST"));
  });

  it("answers NOT_FOUND for an unknown name or version", async () => {
    await expect(as(viewer).workflows.get({ namespace: "shop", name: "nope" })).rejects.toSatisfy(code("NOT_FOUND"));
    await expect(as(viewer).workflows.get({ namespace: "shop", name: "orders", version: 99 })).rejects.toSatisfy(code("NOT_FOUND"));
  });

  it("a viewer cannot save or delete (FORBIDDEN), and nothing changes", async () => {
    await expect(as(viewer).workflows.save({ namespace: "shop", definition: orders() })).rejects.toSatisfy(code("FORBIDDEN"));
    await expect(as(viewer).workflows.delete({ namespace: "shop", name: "orders" })).rejects.toSatisfy(code("FORBIDDEN"));
    expect((await as(viewer).workflows.get({ namespace: "shop", name: "orders" })).version).toBe(2);
  });

  it("keeps namespaces apart: the same name elsewhere is its own history, and a non-member gets NOT_FOUND", async () => {
    await as(owner).workflows.save({ namespace: "elsewhere", definition: orders({ description: "Other team" }) });
    expect((await as(owner).workflows.get({ namespace: "elsewhere", name: "orders" })).version).toBe(1);
    expect((await as(owner).workflows.get({ namespace: "shop", name: "orders" })).version).toBe(2);
    await expect(as(editor).workflows.get({ namespace: "elsewhere", name: "orders" })).rejects.toSatisfy(code("NOT_FOUND"));
    await expect(as(editor).workflows.save({ namespace: "elsewhere", definition: orders() })).rejects.toSatisfy(code("NOT_FOUND"));
  });
});

describe("workflows.versions", () => {
  it("lists every version newest first with message, author, description and node count", async () => {
    const history = await as(viewer).workflows.versions({ namespace: "shop", name: "orders" });
    expect(history.map((v) => [v.version, v.message, v.description, v.nodeCount, v.archived, v.createdByDisplay])).toEqual([
      [2, null, "Takes and ships an order", 2, false, "editor@example.com"],
      [1, "First cut", "Takes an order", 2, false, "editor@example.com"],
    ]);
    expect(await as(viewer).workflows.versions({ namespace: "shop", name: "never-saved" })).toEqual([]);
  });

  it("names an API key author by its key's name", async () => {
    const { principal } = await keyPrincipal("release-bot");
    await as(principal).workflows.save({ namespace: "shop", definition: orders({ name: "bot-made" }), message: "from CI" });
    const [v] = await as(viewer).workflows.versions({ namespace: "shop", name: "bot-made" });
    expect(v).toMatchObject({ version: 1, message: "from CI", createdByDisplay: "API key release-bot" });
  });
});

async function keyPrincipal(name: string): Promise<{ key: string; principal: Principal }> {
  const { key } = await createApiKey(database.db, { namespaceId: nsId, name, scopes: ["admin"], createdBy: "test" });
  const principal = await authenticateApiKey(database.db, key);
  if (!principal) throw new Error("the key did not authenticate");
  return { key, principal };
}

describe("workflows.list: the last run", () => {
  it("shows each workflow's most recently started run, and null for one that never ran", async () => {
    await as(editor).workflows.save({ namespace: "shop", definition: orders({ name: "quiet" }) });
    await insertWorkflowExecution(database.db, { namespaceId: nsId, defName: "orders", defVersion: 1, status: "COMPLETED", startedAt: "2025-05-01T10:00:00Z" });
    const newest = await insertWorkflowExecution(database.db, { namespaceId: nsId, defName: "orders", defVersion: 2, status: "FAILED", startedAt: "2025-06-02T08:30:00.123456Z" });
    await insertWorkflowExecution(database.db, { namespaceId: nsId, defName: "orders", defVersion: 2, status: "RUNNING", startedAt: "2025-04-01T00:00:00Z" });

    const rows = await as(viewer).workflows.list({ namespace: "shop" });
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName.orders?.lastRun).toEqual({ id: newest.id, status: "FAILED", startedAt: "2025-06-02T08:30:00.123Z" });
    expect(byName.quiet?.lastRun).toBeNull();
    expect(byName.orders).toMatchObject({ latestVersion: 2, versionCount: 2 });
  });

  it("reads one run per listed workflow through the definition index, however busy the namespace", async () => {
    // A busy namespace: 20,000 runs of other workflows this month, and statistics that know it.
    await sql`INSERT INTO "WorkflowExecutions" ("namespaceId", "defName", "defVersion", "status", "startedAt")
      SELECT ${nsId}::uuid, 'noise-' || (i % 40), 1, 'COMPLETED', now() - make_interval(secs => i)
      FROM generate_series(1, 20000) AS i`.execute(database.db);
    await sql`ANALYZE "WorkflowExecutions"`.execute(database.db);
    const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${listLatestWorkflowDefinitionsStatement(database.db, { namespace: "shop" })}`.execute(database.db);
    const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
    // Per listed name: the first entry of each partition's ("namespaceId","defName","startedAt" DESC, "id" DESC)
    // index, merged in index order under LIMIT 1 — no Sort of runs, no scan of the namespace's runs.
    expect(plan).toMatch(/Limit[\s\S]*Merge Append/);
    // The month holding the 20,000 runs is read through the definition index; a
    // near-empty partition may use any index, which costs nothing there.
    const { rows: month } = await sql<{ ym: string }>`SELECT to_char(now(), 'YYYYMM') AS "ym"`.execute(database.db);
    expect(plan).toContain(`Index Scan using "WorkflowExecutions_p${month[0]?.ym}_namespaceId_defName_startedAt_id_idx"`);
    expect(plan).not.toMatch(/Seq Scan on "?WorkflowExecutions/);
    const runs = await as(viewer).workflows.list({ namespace: "shop" });
    expect(runs.find((r) => r.name === "orders")?.lastRun?.status).toBe("FAILED");
  });
});

describe("workflows.delete", () => {
  it("archives every version: gone from the list and from get-latest, each version still readable, history intact", async () => {
    const result = await as(editor).workflows.delete({ namespace: "shop", name: "orders" });
    expect(result).toEqual({ name: "orders", archivedVersions: [1, 2] });

    expect((await as(viewer).workflows.list({ namespace: "shop" })).map((r) => r.name)).not.toContain("orders");
    await expect(as(viewer).workflows.get({ namespace: "shop", name: "orders" })).rejects.toSatisfy(code("NOT_FOUND"));
    const v2 = await as(viewer).workflows.get({ namespace: "shop", name: "orders", version: 2 });
    expect(v2).toMatchObject({ version: 2, archived: true, latestVersion: null });
    expect((await as(viewer).workflows.versions({ namespace: "shop", name: "orders" })).map((v) => [v.version, v.archived])).toEqual([
      [2, true],
      [1, true],
    ]);
    // Runs keep their definition rows.
    expect(await database.db.selectFrom("WorkflowDefinitions").select("version").where("namespaceId", "=", nsId).where("name", "=", "orders").execute()).toHaveLength(2);
    // The other namespace's "orders" is untouched.
    expect((await as(owner).workflows.get({ namespace: "elsewhere", name: "orders" })).archived).toBe(false);
  });

  it("writes an audit event, and a second delete is NOT_FOUND", async () => {
    const events = await database.db
      .selectFrom("AuditEvents")
      .select(["action", "resourceId", "details", "actorType"])
      .where("namespaceId", "=", nsId)
      .where("action", "=", "workflowDefinition.archive")
      .execute();
    expect(events).toEqual([{ action: "workflowDefinition.archive", resourceId: "orders", details: { name: "orders", versions: [1, 2] }, actorType: "user" }]);
    await expect(as(editor).workflows.delete({ namespace: "shop", name: "orders" })).rejects.toSatisfy(code("NOT_FOUND"));
  });

  it("saving the name again starts a new live version after the archived ones", async () => {
    const again = await as(editor).workflows.save({ namespace: "shop", definition: orders(), message: "Back" });
    expect(again.version).toBe(3);
    expect((await as(viewer).workflows.list({ namespace: "shop" })).find((r) => r.name === "orders")).toMatchObject({ latestVersion: 3, versionCount: 1 });
  });
});

describe("over HTTP, the way the editor meets a refused save", () => {
  useWebEnvironment(database);
  type Handler = (request: Request) => Promise<Response>;
  let POST: Handler;

  beforeAll(async () => {
    // Imported by path: server/ may not import app/ statically (layer rule), and this is the real handler.
    const module = (await import(pathToFileURL(path.join(process.cwd(), "app/api/trpc/[trpc]/route.ts")).href)) as { POST: Handler };
    POST = module.POST;
  });

  it("puts the engine's problems in error.data.problems", async () => {
    const { key } = await keyPrincipal("http-saver");
    const response = await POST(
      new Request("http://localhost:3000/api/trpc/workflows.save", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ namespace: "shop", definition: orders({ name: "http-broken", edges: [{ source: "charge", target: "ghost" }] }) }),
      }),
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string; data: { code: string; problems: Problem[] | null; zodError: unknown } } };
    expect(body.error.data.code).toBe("BAD_REQUEST");
    expect(body.error.data.zodError).toBeNull();
    expect(body.error.data.problems?.map((p) => p.code)).toContain("unknown-ref");
    expect(body.error.data.problems?.every((p) => Array.isArray(p.path) && typeof p.message === "string")).toBe(true);
    expect(body.error.message).toMatch(/not valid/);
  });
});
