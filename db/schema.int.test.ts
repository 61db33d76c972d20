import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { json } from "./json";
import { useTestDatabase } from "./testing/test-database";

const t = useTestDatabase();

const pad = (n: number) => String(n).padStart(2, "0");
/** The partition-manager naming convention, computed independently of the SQL that seeded them. */
const monthly = (table: string, at: Date) => `${table}_p${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}`;
const hourly = (table: string, at: Date) => `${monthly(table, at)}${pad(at.getUTCDate())}${pad(at.getUTCHours())}`;

/** The leaf partition a row was routed to. */
async function leafOf(table: string, where: string, value: string): Promise<string | undefined> {
  const { rows } = await sql<{ relname: string }>`
    SELECT c.relname FROM ${sql.table(table)} r JOIN pg_class c ON c."oid" = r.tableoid
    WHERE ${sql.ref(where)} = ${value}::uuid`.execute(t.db);
  return rows[0]?.relname;
}

interface PartitionRow {
  name: string;
  bound: string;
  options: string[] | null;
}

async function partitionsOf(table: string): Promise<PartitionRow[]> {
  // Bounds are rendered in the session's TimeZone: pin UTC for a stable string.
  return t.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL TimeZone = 'UTC'`.execute(trx);
    const { rows } = await sql<PartitionRow>`
      SELECT c.relname AS "name", pg_get_expr(c.relpartbound, c."oid") AS "bound", c.reloptions AS "options"
      FROM pg_inherits i JOIN pg_class c ON c."oid" = i.inhrelid
      WHERE i.inhparent = to_regclass(quote_ident(${table}))
      ORDER BY c.relname`.execute(trx);
    return rows;
  });
}

describe("partitions", () => {
  it("routes a fresh database's writes into the seeded current-period partitions, not DEFAULT", async () => {
    const namespaceId = randomUUID();
    const workflowId = randomUUID();
    const execution = await t.db
      .insertInto("WorkflowExecutions")
      .values({ id: workflowId, namespaceId, defName: "p", defVersion: 1 })
      .returning(["startedAt"])
      .executeTakeFirstOrThrow();
    const event = await t.db
      .insertInto("WorkflowEvents")
      .values({ workflowId, seq: 1, namespaceId, type: "WORKFLOW_STARTED" })
      .returning(["at"])
      .executeTakeFirstOrThrow();
    const audit = await t.db
      .insertInto("AuditEvents")
      .values({ actorType: "system", action: "test.partition" })
      .returning(["id", "at"])
      .executeTakeFirstOrThrow();
    const timer = await t.db
      .insertInto("Timers")
      .values({ fireAt: sql<Date>`now()`, kind: "wait", namespaceId, workflowId })
      .returning(["id", "fireAt"])
      .executeTakeFirstOrThrow();

    expect(await leafOf("WorkflowExecutions", "id", workflowId)).toBe(monthly("WorkflowExecutions", execution.startedAt));
    expect(await leafOf("WorkflowEvents", "workflowId", workflowId)).toBe(monthly("WorkflowEvents", event.at));
    expect(await leafOf("AuditEvents", "id", audit.id)).toBe(monthly("AuditEvents", audit.at));
    expect(await leafOf("Timers", "id", timer.id)).toBe(hourly("Timers", timer.fireAt));
  });

  it("seeds current and next period with the shared names and UTC bounds, plus DEFAULT", async () => {
    const now = new Date();
    const thisMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const monthAfter = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1));
    const literal = (d: Date) => `'${d.toISOString().slice(0, 19).replace("T", " ")}+00'`;

    for (const table of ["WorkflowExecutions", "WorkflowEvents", "AuditEvents"]) {
      const parts = await partitionsOf(table);
      const byName = new Map(parts.map((p) => [p.name, p.bound]));
      expect(byName.get(`${table}_default`), table).toBe("DEFAULT");
      expect(byName.get(monthly(table, thisMonth)), table).toBe(
        `FOR VALUES FROM (${literal(thisMonth)}) TO (${literal(nextMonth)})`,
      );
      expect(byName.get(monthly(table, nextMonth)), table).toBe(
        `FOR VALUES FROM (${literal(nextMonth)}) TO (${literal(monthAfter)})`,
      );
    }

    // The template was migrated moments ago; allow for an hour boundary since.
    const timers = await partitionsOf("Timers");
    expect(timers.map((p) => p.name)).toContain("Timers_default");
    const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000);
    const nextHour = new Date(hour.getTime() + 3_600_000);
    const current = timers.find((p) => p.name === hourly("Timers", hour));
    expect(current?.bound).toBe(`FOR VALUES FROM (${literal(hour)}) TO (${literal(nextHour)})`);
    expect(timers.length).toBeGreaterThanOrEqual(3);
  });

  it("hash-partitions tasks 16 ways and queues 8 ways, with queue autovacuum tuning on every leaf", async () => {
    const tasks = await partitionsOf("TaskExecutions");
    expect(tasks.map((p) => p.name).sort()).toEqual(Array.from({ length: 16 }, (_, i) => `TaskExecutions_p${i}`).sort());
    expect(tasks.every((p) => p.bound.startsWith("FOR VALUES WITH (modulus 16, remainder "))).toBe(true);

    const queues = await partitionsOf("TaskQueues");
    expect(queues.map((p) => p.name).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `TaskQueues_p${i}`).sort());
    for (const q of queues) {
      expect(q.options, q.name).toEqual(
        expect.arrayContaining([
          "autovacuum_vacuum_scale_factor=0.01",
          "autovacuum_vacuum_cost_limit=2000",
          "fillfactor=70",
        ]),
      );
    }
    const { rows } = await sql<{ relname: string; reloptions: string[] | null }>`
      SELECT relname, reloptions FROM pg_class
      WHERE relname IN ('DecideQueues', 'RateLimitBuckets') AND relkind = 'r'`.execute(t.db);
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.reloptions, r.relname).toEqual(
        expect.arrayContaining(["autovacuum_vacuum_scale_factor=0.01", "autovacuum_vacuum_cost_limit=2000"]),
      );
    }
  });
});

describe("TaskExecutions identity", () => {
  it("rejects a duplicate (workflowId, refName, iteration, attempt) while a retry's attempt+1 inserts", async () => {
    const workflowId = randomUUID();
    const task = (iteration: number, attempt: number) => ({
      workflowId,
      namespaceId: randomUUID(),
      refName: "charge",
      iteration,
      attempt,
      taskType: "SIMPLE",
      taskDefName: "charge",
      input: json({}),
    });
    await t.db.insertInto("TaskExecutions").values(task(0, 0)).execute();
    await expect(t.db.insertInto("TaskExecutions").values(task(0, 0)).execute()).rejects.toMatchObject({
      code: "23505",
    });
    // The decider's scheduling form: a re-run schedules nothing twice…
    const again = await t.db
      .insertInto("TaskExecutions")
      .values(task(0, 0))
      .onConflict((oc) => oc.columns(["workflowId", "refName", "iteration", "attempt"]).doNothing())
      .returning("id")
      .execute();
    expect(again).toHaveLength(0);
    // …but a retry (next attempt) and the next loop iteration are new tasks.
    const retry = await t.db
      .insertInto("TaskExecutions")
      .values(task(0, 1))
      .onConflict((oc) => oc.columns(["workflowId", "refName", "iteration", "attempt"]).doNothing())
      .returning("id")
      .execute();
    expect(retry).toHaveLength(1);
    await t.db.insertInto("TaskExecutions").values(task(1, 0)).execute();

    const rows = await t.db
      .selectFrom("TaskExecutions")
      .select(["iteration", "attempt"])
      .where("workflowId", "=", workflowId)
      .orderBy("iteration")
      .orderBy("attempt")
      .execute();
    expect(rows).toEqual([
      { iteration: 0, attempt: 0 },
      { iteration: 0, attempt: 1 },
      { iteration: 1, attempt: 0 },
    ]);
  });
});

describe("WorkflowEvents NOTIFY trigger", () => {
  it("fires on a partition created after the trigger, at commit only", async () => {
    // A far-future month the partition manager would create later: the trigger
    // lives on the parent, so the new partition must inherit it.
    await sql`CREATE TABLE "WorkflowEvents_p209901" PARTITION OF "WorkflowEvents"
      FOR VALUES FROM ('2099-01-01 00:00:00+00') TO ('2099-02-01 00:00:00+00')`.execute(t.db);

    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    try {
      const received: string[] = [];
      const workflowId = randomUUID();
      const committed = new Promise<void>((resolve, reject) => {
        const timeout = setTimeout(() => reject(new Error(`no notification; got ${JSON.stringify(received)}`)), 5_000);
        listener.on("notification", (message) => {
          if (message.channel !== "node_flow_workflow_events" || !message.payload) return;
          received.push(message.payload);
          if (message.payload === `${workflowId}:2`) {
            clearTimeout(timeout);
            resolve();
          }
        });
      });
      // Subscribe before writing, as every real listener must.
      await listener.query("LISTEN node_flow_workflow_events");

      const event = (seq: number) => ({
        workflowId,
        seq,
        at: "2099-01-15 12:00:00.123456+00",
        namespaceId: randomUUID(),
        type: "TASK_COMPLETED",
        data: json({ big: "x".repeat(10_000) }),
      });
      // Rolled back: must never be announced.
      await expect(
        t.db.transaction().execute(async (trx) => {
          await trx.insertInto("WorkflowEvents").values(event(1)).execute();
          throw new Error("rollback");
        }),
      ).rejects.toThrow("rollback");
      await t.db.insertInto("WorkflowEvents").values(event(2)).execute();

      await committed;
      expect(received).toEqual([`${workflowId}:2`]);
      expect(await leafOf("WorkflowEvents", "workflowId", workflowId)).toBe("WorkflowEvents_p209901");
    } finally {
      await listener.end();
    }
  });
});

describe("immutability", () => {
  it("refuses changes to a workflow definition's graph, blueprint, name or version, but not its description", async () => {
    const namespace = await t.db
      .selectFrom("Namespaces")
      .select("id")
      .where("name", "=", "default")
      .executeTakeFirstOrThrow();
    const def = await t.db
      .insertInto("WorkflowDefinitions")
      .values({
        namespaceId: namespace.id,
        name: "orders",
        version: 1,
        graph: json({ nodes: [{ ref: "a", type: "SIMPLE" }], edges: [] }),
        blueprint: json({ successors: { a: [] } }),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const update = t.db.updateTable("WorkflowDefinitions").where("id", "=", def.id);

    await expect(update.set({ graph: json({ nodes: [], edges: [] }) }).execute()).rejects.toMatchObject({
      code: "23000",
    });
    await expect(update.set({ blueprint: json({}) }).execute()).rejects.toMatchObject({ code: "23000" });
    await expect(update.set({ name: "renamed" }).execute()).rejects.toMatchObject({ code: "23000" });
    await expect(update.set({ version: 2 }).execute()).rejects.toMatchObject({ code: "23000" });
    // The same JSON re-serialised with other key order is not a change.
    await update.set({ graph: json({ edges: [], nodes: [{ type: "SIMPLE", ref: "a" }] }) }).execute();
    await update.set({ description: "now documented" }).execute();

    const row = await t.db
      .selectFrom("WorkflowDefinitions")
      .select(["name", "version", "description", "graph"])
      .where("id", "=", def.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      name: "orders",
      version: 1,
      description: "now documented",
      graph: { nodes: [{ ref: "a", type: "SIMPLE" }], edges: [] },
    });
  });

  it("keeps AuditEvents append-only, without blocking the partition manager's DEFAULT recovery", async () => {
    const row = await t.db
      .insertInto("AuditEvents")
      .values({ actorType: "user", actorId: "u1", action: "definition.save", details: json({ a: 1 }) })
      .returning(["id"])
      .executeTakeFirstOrThrow();
    await expect(
      t.db.updateTable("AuditEvents").set({ action: "edited" }).where("id", "=", row.id).execute(),
    ).rejects.toMatchObject({ code: "23000" });
    await expect(t.db.deleteFrom("AuditEvents").where("id", "=", row.id).execute()).rejects.toMatchObject({
      code: "23000",
    });

    // The manager moves rows out of a *detached* DEFAULT with DELETE … RETURNING;
    // Postgres drops cloned triggers on detach, so the move is not refused.
    const moved = await t.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .insertInto("AuditEvents")
          .values({ actorType: "system", action: "far.future", at: "2098-06-01 00:00:00+00" })
          .execute();
        await sql`ALTER TABLE "AuditEvents" DETACH PARTITION "AuditEvents_default"`.execute(trx);
        const deleted = await sql`DELETE FROM "AuditEvents_default" RETURNING "id"`.execute(trx);
        throw Object.assign(new Error("rollback"), { deleted: deleted.rows.length });
      })
      .catch((error: unknown) => (error as { deleted?: number }).deleted);
    expect(moved).toBe(1);
  });
});
