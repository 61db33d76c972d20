import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDb } from "../../db/pool";
import { useTestDatabase } from "../../db/testing/test-database";
import { startRunners, stopRunners } from "../sidecar/runners";
import {
  PARTITIONED_TABLES,
  PartitionMaintenanceError,
  PartitionManager,
  addPeriods,
  partitionName,
  periodStart,
} from "./partition-manager";
import type { PartitionedTableSpec } from "./partition-manager";

// Every test runs at its own far-future `now`, so nothing collides with the
// partitions the migrations seed for the real current month, nor with another test.
const at = (iso: string) => new Date(iso);

const t = useTestDatabase();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test tables outside the schema types
type AnyDb = Kysely<any>;

const specOf = (table: string): PartitionedTableSpec => {
  const spec = PARTITIONED_TABLES.find((s) => s.table === table);
  if (!spec) throw new Error(`no spec for ${table}`);
  return spec;
};

async function partitionNames(db: AnyDb, table: string): Promise<string[]> {
  return (await new PartitionManager(db).listPartitions(table)).map((p) => p.name);
}

async function defaultPartitionOf(db: AnyDb, table: string): Promise<string | null> {
  const { rows } = await sql<{ name: string | null }>`
    SELECT pt.partdefid::regclass::text AS "name" FROM pg_partitioned_table pt
    WHERE pt.partrelid = to_regclass(quote_ident(${table})) AND pt.partdefid <> 0`.execute(db);
  return rows[0]?.name?.replaceAll('"', "") ?? null;
}

/** Which partition each row physically sits in, keyed by row id. */
async function rowHomes(db: AnyDb, table: string, idColumn = "id"): Promise<Map<string, string>> {
  const { rows } = await sql<{ id: string; home: string }>`
    SELECT ${sql.ref(idColumn)}::text AS "id", replace(tableoid::regclass::text, '"', '') AS "home"
    FROM ${sql.table(table)}`.execute(db);
  return new Map(rows.map((r) => [r.id, r.home]));
}

describe("period arithmetic", () => {
  it("truncates to UTC months and hours", () => {
    expect(periodStart(at("2203-05-15T12:34:56.789Z"), "month")).toEqual(at("2203-05-01T00:00:00Z"));
    expect(periodStart(at("2203-05-15T12:34:56.789Z"), "hour")).toEqual(at("2203-05-15T12:00:00Z"));
  });

  it("steps across year, month and day boundaries, both ways", () => {
    expect(addPeriods(at("2203-11-01T00:00:00Z"), "month", 2)).toEqual(at("2204-01-01T00:00:00Z"));
    expect(addPeriods(at("2203-01-01T00:00:00Z"), "month", -13)).toEqual(at("2201-12-01T00:00:00Z"));
    expect(addPeriods(at("2203-12-31T23:00:00Z"), "hour", 1)).toEqual(at("2204-01-01T00:00:00Z"));
    expect(addPeriods(at("2203-03-01T00:00:00Z"), "hour", -1)).toEqual(at("2203-02-28T23:00:00Z"));
  });

  it("names partitions <Table>_pYYYYMM and <Table>_pYYYYMMDDHH", () => {
    expect(partitionName("WorkflowExecutions", "month", at("2203-01-01T00:00:00Z"))).toBe("WorkflowExecutions_p220301");
    expect(partitionName("Timers", "hour", at("2203-01-02T03:00:00Z"))).toBe("Timers_p2203010203");
  });
});

describe("ensureAhead", () => {
  it("creates the current period and the configured periods ahead, with exact bounds, once", async () => {
    const manager = new PartitionManager(t.db);
    const now = at("2203-05-15T12:34:56Z");
    const created = await manager.ensureAhead(now);

    const monthly = (table: string) => [`${table}_p220305`, `${table}_p220306`, `${table}_p220307`];
    const hourly = Array.from({ length: 25 }, (_, i) =>
      partitionName("Timers", "hour", new Date(Date.UTC(2203, 4, 15, 12 + i))),
    );
    expect(hourly[0]).toBe("Timers_p2203051512");
    expect(hourly[24]).toBe("Timers_p2203051612");
    expect(created.sort()).toEqual(
      [...monthly("WorkflowExecutions"), ...monthly("WorkflowEvents"), ...monthly("AuditEvents"), ...hourly].sort(),
    );

    const executions = await manager.listPartitions("WorkflowExecutions");
    expect(executions.find((p) => p.name === "WorkflowExecutions_p220306")).toEqual({
      name: "WorkflowExecutions_p220306",
      isDefault: false,
      from: at("2203-06-01T00:00:00Z"),
      to: at("2203-07-01T00:00:00Z"),
    });
    expect((await manager.listPartitions("Timers")).find((p) => p.name === "Timers_p2203051523")).toMatchObject({
      from: at("2203-05-15T23:00:00Z"),
      to: at("2203-05-16T00:00:00Z"),
    });

    // A row at the start of a created period routes to it, not to DEFAULT.
    await sql`INSERT INTO "AuditEvents" ("at", "actorType", "action") VALUES ('2203-06-01T00:00:00Z', 'system', 'probe')`.execute(
      t.db,
    );
    const { rows } = await sql<{ home: string }>`
      SELECT tableoid::regclass::text AS "home" FROM "AuditEvents" WHERE "action" = 'probe'`.execute(t.db);
    expect(rows).toEqual([{ home: `"AuditEvents_p220306"` }]);

    expect(await manager.ensureAhead(now)).toEqual([]);
    // Later in the same month, one more hourly partition falls due and nothing else.
    expect(await manager.ensureAhead(at("2203-05-15T13:00:00Z"))).toEqual(["Timers_p2203051613"]);
  });

  it("honours a per-table spec (periods ahead, which tables)", async () => {
    const manager = new PartitionManager(t.db, {
      tables: [{ ...specOf("WorkflowEvents"), ahead: 0 }, { ...specOf("Timers"), ahead: 2 }],
    });
    expect(await manager.ensureAhead(at("2210-02-03T04:05:06Z"))).toEqual([
      "WorkflowEvents_p221002",
      "Timers_p2210020304",
      "Timers_p2210020305",
      "Timers_p2210020306",
    ]);
  });

  it("keeps exact UTC bounds when the session runs in another time zone", async () => {
    // pg_get_expr renders bounds in the session TimeZone, and for a `timestamp`
    // column without any offset: read back naively under +05:30, the bounds would
    // come out five and a half hours off and retention would misjudge them.
    await sql`CREATE TABLE "ProbeLocal" ("at" TIMESTAMP NOT NULL) PARTITION BY RANGE ("at")`.execute(t.db);
    await sql`CREATE TABLE "ProbeLocal_default" PARTITION OF "ProbeLocal" DEFAULT`.execute(t.db);
    const pool = new pg.Pool({ connectionString: t.url, max: 1, options: "-c TimeZone=Asia/Kolkata" });
    const kolkata = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) }) as AnyDb;
    try {
      const manager = new PartitionManager(kolkata, {
        tables: [specOf("Timers"), { table: "ProbeLocal", column: "at", granularity: "hour", retention: 2, ahead: 1 }],
      });
      const created = await manager.ensureAhead(at("2220-01-01T00:10:00Z"));
      expect(created[0]).toBe("Timers_p2220010100");
      expect(created.slice(-2)).toEqual(["ProbeLocal_p2220010100", "ProbeLocal_p2220010101"]);
      expect(created).toHaveLength(25 + 2);
      for (const table of ["Timers", "ProbeLocal"]) {
        expect((await manager.listPartitions(table)).find((p) => p.name === `${table}_p2220010100`)).toMatchObject({
          from: at("2220-01-01T00:00:00Z"),
          to: at("2220-01-01T01:00:00Z"),
        });
      }
      expect(await manager.ensureAhead(at("2220-01-01T00:10:00Z"))).toEqual([]);
      // The wall-clock row 00:30 belongs to the 00:00 hour, whatever the session zone.
      await sql`INSERT INTO "ProbeLocal" VALUES ('2220-01-01 00:30:00')`.execute(kolkata);
      const { rows } = await sql<{ home: string }>`SELECT tableoid::regclass::text AS "home" FROM "ProbeLocal"`.execute(t.db);
      expect(rows).toEqual([{ home: `"ProbeLocal_p2220010100"` }]);
      const local = new PartitionManager(kolkata, { tables: [{ table: "ProbeLocal", column: "at", granularity: "hour", retention: 2, ahead: 1 }] });
      expect(await local.dropExpired(at("2220-01-01T02:59:59Z"))).toEqual([]);
      expect(await local.dropExpired(at("2220-01-01T03:00:00Z"))).toEqual(["ProbeLocal_p2220010100"]);
      expect(await local.dropExpired(at("2220-01-01T04:00:00Z"))).toEqual(["ProbeLocal_p2220010101"]);
    } finally {
      await kolkata.destroy();
    }
  });

  it("reports a missing table after trying the others", async () => {
    const manager = new PartitionManager(t.db, {
      tables: [{ table: "NoSuchTable", column: "at", granularity: "month", retention: 1, ahead: 0 }, specOf("AuditEvents")],
    });
    const error = await manager.ensureAhead(at("2230-01-15T00:00:00Z")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PartitionMaintenanceError);
    expect((error as PartitionMaintenanceError).failures.map((f) => f.table)).toEqual(["NoSuchTable"]);
    expect((error as PartitionMaintenanceError).created).toEqual(["AuditEvents_p223001", "AuditEvents_p223002", "AuditEvents_p223003"]);
  });
});

describe("dropExpired", () => {
  it("drops partitions once they end before the retention window, never DEFAULT", async () => {
    const manager = new PartitionManager(t.db);
    const start = at("2240-03-10T08:00:00Z");
    await manager.ensureAhead(start);
    // An expired partition goes with its rows: that is what retention means, and
    // AuditEvents' append-only trigger (UPDATE/DELETE) must not stand in the way.
    await sql`INSERT INTO "AuditEvents" ("at", "actorType", "action") VALUES ('2240-03-20T00:00:00Z', 'system', 'old')`.execute(t.db);

    // Clear out whatever else is already expired (the seeded real-time months,
    // earlier tests' periods) so the assertions below are about this test's periods.
    await manager.dropExpired(addPeriods(start, "month", 12));
    const before = await partitionNames(t.db, "WorkflowExecutions");
    expect(before).toContain("WorkflowExecutions_p224003");

    // Twelve whole months after March 2240, March is still inside the window.
    expect(await manager.dropExpired(at("2241-03-31T23:59:59Z"))).toEqual([]);
    expect(await partitionNames(t.db, "WorkflowExecutions")).toContain("WorkflowExecutions_p224003");

    // Thirteen months on, March 2240 has expired for execution history; April and
    // May 2240 have not, and audit history (84 months) keeps all three.
    const dropped = await manager.dropExpired(at("2241-04-01T00:00:00Z"));
    expect(dropped.sort()).toEqual(["WorkflowEvents_p224003", "WorkflowExecutions_p224003"]);
    for (const table of ["WorkflowExecutions", "WorkflowEvents"]) {
      const remaining = await partitionNames(t.db, table);
      expect(remaining).toContain(`${table}_default`);
      expect(remaining).toContain(`${table}_p224004`);
      expect(remaining).toContain(`${table}_p224005`);
      expect(remaining).not.toContain(`${table}_p224003`);
      // Detached *and* dropped: no standalone table is left behind.
      const { rows } = await sql<{ t: string | null }>`SELECT to_regclass(${`"${table}_p224003"`})::text AS "t"`.execute(t.db);
      expect(rows[0]?.t).toBeNull();
    }
    expect(await partitionNames(t.db, "AuditEvents")).toContain("AuditEvents_p224003");
    const audit = () => sql<{ n: number }>`SELECT count(*)::int AS "n" FROM "AuditEvents" WHERE "action" = 'old'`.execute(t.db);
    expect((await audit()).rows[0]?.n).toBe(1);
    expect(await manager.dropExpired(at("2241-04-01T00:00:00Z"))).toEqual([]);

    // 84 whole months after March 2240 it is still kept; one more and it goes.
    expect(await manager.dropExpired(at("2247-03-31T23:59:59Z"))).not.toContain("AuditEvents_p224003");
    expect(await manager.dropExpired(at("2247-04-01T00:00:00Z"))).toEqual(["AuditEvents_p224003"]);
    expect((await audit()).rows[0]?.n).toBe(0);
    expect(await defaultPartitionOf(t.db, "AuditEvents")).toBe("AuditEvents_default");
  });
  it("keeps exactly `retention` whole hours behind the current one", async () => {
    const manager = new PartitionManager(t.db, { tables: [{ ...specOf("Timers"), ahead: 0 }] });
    await manager.ensureAhead(at("2250-06-01T10:30:00Z"));
    await manager.dropExpired(at("2250-06-01T10:30:00Z")); // clear older periods
    expect(await partitionNames(t.db, "Timers")).toContain("Timers_p2250060110");
    // 48 hours later the 10:00 hour is the oldest one kept...
    expect(await manager.dropExpired(at("2250-06-03T10:59:59Z"))).toEqual([]);
    // ...and one hour after that it goes.
    expect(await manager.dropExpired(at("2250-06-03T11:00:00Z"))).toEqual(["Timers_p2250060110"]);
    expect(await partitionNames(t.db, "Timers")).toContain("Timers_default");
  });
});

describe("recovery from rows in DEFAULT", () => {
  it("creates the partition by moving exactly its rows out of DEFAULT (AuditEvents, append-only)", async () => {
    const manager = new PartitionManager(t.db, { tables: [specOf("AuditEvents")] });
    // No partition exists for these months, so every row lands in DEFAULT — the
    // state a database is in after running without a partition manager.
    const inserted = await sql<{ id: string; at: Date }>`
      INSERT INTO "AuditEvents" ("at", "actorType", "action", "details")
      SELECT v.at::timestamptz, 'system', 'recovery', jsonb_build_object('n', v.n)
      FROM (VALUES (1, '2260-07-01T00:00:00Z'), (2, '2260-07-31T23:59:59.999999Z'), (3, '2260-08-15T00:00:00Z'),
                   (4, '2260-06-30T23:59:59.999999Z'), (5, '2260-12-01T00:00:00Z')) AS v(n, at)
      RETURNING "id"::text AS "id", "at"`.execute(t.db);
    const ids = inserted.rows.map((r) => r.id);
    const homesBefore = await rowHomes(t.db, "AuditEvents");
    expect(ids.map((id) => homesBefore.get(id))).toEqual(Array(5).fill("AuditEvents_default"));

    const created = await manager.ensureAhead(at("2260-07-10T00:00:00Z"));
    expect(created).toEqual(["AuditEvents_p226007", "AuditEvents_p226008", "AuditEvents_p226009"]);

    const homes = await rowHomes(t.db, "AuditEvents");
    expect(ids.map((id) => homes.get(id))).toEqual([
      "AuditEvents_p226007",
      "AuditEvents_p226007",
      "AuditEvents_p226008",
      // Outside the created ranges: untouched in DEFAULT.
      "AuditEvents_default",
      "AuditEvents_default",
    ]);
    // Moved, not copied: each id once, contents intact.
    const { rows } = await sql<{ id: string; n: number; at: Date }>`
      SELECT "id"::text AS "id", ("details"->>'n')::int AS "n", "at" FROM "AuditEvents" WHERE "action" = 'recovery' ORDER BY "details"->>'n'`.execute(
      t.db,
    );
    expect(rows.map((r) => [r.id, r.at.toISOString()])).toEqual(inserted.rows.map((r) => [r.id, r.at.toISOString()]));

    // DEFAULT is attached again and still catches out-of-range rows; the
    // append-only trigger was re-cloned onto it.
    expect(await defaultPartitionOf(t.db, "AuditEvents")).toBe("AuditEvents_default");
    await sql`INSERT INTO "AuditEvents" ("at", "actorType", "action") VALUES ('2299-01-01T00:00:00Z', 'system', 'late')`.execute(t.db);
    const late = await sql<{ home: string }>`
      SELECT tableoid::regclass::text AS "home" FROM "AuditEvents" WHERE "action" = 'late'`.execute(t.db);
    expect(late.rows).toEqual([{ home: `"AuditEvents_default"` }]);
    await expect(sql`DELETE FROM "AuditEvents" WHERE "action" = 'late'`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`UPDATE "AuditEvents" SET "action" = 'x' WHERE "action" = 'recovery'`.execute(t.db)).rejects.toThrow(
      /append-only/,
    );

    expect(await manager.ensureAhead(at("2260-07-10T00:00:00Z"))).toEqual([]);
  });

  it("recovers WorkflowExecutions rows for the current period", async () => {
    const manager = new PartitionManager(t.db, { tables: [specOf("WorkflowExecutions")] });
    const ids = await insertWorkflowExecutions(t.db, ["2270-01-05T00:00:00Z", "2270-01-20T00:00:00Z", "2271-06-01T00:00:00Z"]);
    expect(await manager.ensureAhead(at("2270-01-10T00:00:00Z"))).toEqual([
      "WorkflowExecutions_p227001",
      "WorkflowExecutions_p227002",
      "WorkflowExecutions_p227003",
    ]);
    const homes = await rowHomes(t.db, "WorkflowExecutions");
    expect(ids.map((id) => homes.get(id))).toEqual([
      "WorkflowExecutions_p227001",
      "WorkflowExecutions_p227001",
      "WorkflowExecutions_default",
    ]);
  });

  describe("on a table with identity and generated columns", () => {
    const spec: PartitionedTableSpec = { table: "ProbeEvents", column: "at", granularity: "month", retention: 1, ahead: 0 };
    beforeAll(async () => {
      await sql`
        CREATE TABLE "ProbeEvents" (
          "id" INT GENERATED ALWAYS AS IDENTITY,
          "at" TIMESTAMPTZ NOT NULL,
          "note" TEXT NOT NULL,
          "shout" TEXT GENERATED ALWAYS AS (upper("note")) STORED,
          PRIMARY KEY ("id", "at")
        ) PARTITION BY RANGE ("at")`.execute(t.db);
      await sql`CREATE TABLE "ProbeEvents_default" PARTITION OF "ProbeEvents" DEFAULT`.execute(t.db);
    });

    it("keeps identities as they were and recomputes generated columns", async () => {
      await sql`INSERT INTO "ProbeEvents" ("at", "note") VALUES ('2280-01-02Z', 'a'), ('2280-01-03Z', 'b'), ('2280-02-01Z', 'c')`.execute(
        t.db,
      );
      const manager = new PartitionManager(t.db, { tables: [spec] });
      expect(await manager.ensureAhead(at("2280-01-31T23:00:00Z"))).toEqual(["ProbeEvents_p228001"]);
      const { rows } = await sql<{ id: number; note: string; shout: string; home: string }>`
        SELECT "id", "note", "shout", tableoid::regclass::text AS "home" FROM "ProbeEvents" ORDER BY "id"`.execute(t.db);
      expect(rows).toEqual([
        { id: 1, note: "a", shout: "A", home: `"ProbeEvents_p228001"` },
        { id: 2, note: "b", shout: "B", home: `"ProbeEvents_p228001"` },
        { id: 3, note: "c", shout: "C", home: `"ProbeEvents_default"` },
      ]);
    });

    it("is all or nothing: a failed move leaves DEFAULT attached with every row, and no partition", async () => {
      await sql`INSERT INTO "ProbeEvents" ("at", "note") VALUES ('2281-05-02Z', 'fine'), ('2281-05-03Z', 'poison'), ('2281-06-01Z', 'other')`.execute(
        t.db,
      );
      // A row trigger declared on the parent is cloned onto the new partition, so
      // the move's INSERT fails half-way through — after DETACH and CREATE.
      await sql`CREATE FUNCTION "probe_refuse_poison"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW."note" = 'poison' THEN RAISE EXCEPTION 'poisoned row'; END IF; RETURN NEW; END $$`.execute(t.db);
      await sql`CREATE TRIGGER "probe_refuse_poison" BEFORE INSERT ON "ProbeEvents" FOR EACH ROW EXECUTE FUNCTION "probe_refuse_poison"()`.execute(
        t.db,
      );
      const manager = new PartitionManager(t.db, { tables: [spec] });
      const before = await rowHomes(t.db, "ProbeEvents");
      const error = await manager.ensureAhead(at("2281-05-15T00:00:00Z")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PartitionMaintenanceError);
      expect(String((error as PartitionMaintenanceError).failures[0]?.error)).toMatch(/poisoned row/);

      expect(await partitionNames(t.db, "ProbeEvents")).not.toContain("ProbeEvents_p228105");
      expect(await defaultPartitionOf(t.db, "ProbeEvents")).toBe("ProbeEvents_default");
      expect(await rowHomes(t.db, "ProbeEvents")).toEqual(before);

      // Fix the cause and the next pass recovers.
      await sql`DROP TRIGGER "probe_refuse_poison" ON "ProbeEvents"`.execute(t.db);
      expect(await manager.ensureAhead(at("2281-05-15T00:00:00Z"))).toEqual(["ProbeEvents_p228105"]);
      const homes = [...(await rowHomes(t.db, "ProbeEvents")).values()].sort();
      expect(homes.filter((h) => h === "ProbeEvents_p228105")).toHaveLength(2);
    });
  });
});

describe("concurrent managers", () => {
  const MANAGERS = 4;
  let pools: AnyDb[] = [];
  beforeAll(async () => {
    pools = Array.from({ length: MANAGERS }, () => createDb(t.url, { max: 1 }) as AnyDb);
    // Warm every connection so the managers start together rather than in connect order.
    await Promise.all(pools.map((db) => sql`SELECT 1`.execute(db)));
  });
  afterAll(async () => {
    await Promise.all(pools.map((db) => db.destroy()));
  });

  it("creates each partition exactly once and exactly one manager reports it", async () => {
    for (const [round, iso] of ["2300-01-15T00:00:00Z", "2300-06-15T05:00:00Z", "2301-11-30T23:30:00Z"].entries()) {
      const now = at(iso);
      const before = new Set(await allPartitionNames(t.db));
      const managers = pools.map((db) => new PartitionManager(db, { lockTimeoutMs: 20_000 }));
      const results = await Promise.all(managers.map((m) => m.ensureAhead(now)));
      const reported = results.flat();
      const after = await allPartitionNames(t.db);
      const made = after.filter((n) => !before.has(n));

      expect(new Set(reported).size, `round ${round}: a partition was reported twice`).toBe(reported.length);
      expect(reported.sort()).toEqual(made.sort());
      expect(made).toHaveLength(3 * 3 + 25);
      expect(new Set(after).size).toBe(after.length);
    }
  });

  it("recovers a period from DEFAULT once when several managers hit it together", async () => {
    const ids = await sql<{ id: string }>`
      INSERT INTO "AuditEvents" ("at", "actorType", "action")
      SELECT timestamptz '2310-04-01T00:00:00Z' + make_interval(hours => g), 'system', 'race' FROM generate_series(0, 199) g
      RETURNING "id"::text AS "id"`.execute(t.db);
    const tables = [{ ...specOf("AuditEvents"), ahead: 0 }];
    const results = await Promise.all(
      pools.map((db) => new PartitionManager(db, { tables, lockTimeoutMs: 20_000 }).ensureAhead(at("2310-04-20T00:00:00Z"))),
    );
    expect(results.flat()).toEqual(["AuditEvents_p231004"]);
    const homes = await rowHomes(t.db, "AuditEvents");
    expect(ids.rows.every((r) => homes.get(r.id) === "AuditEvents_p231004")).toBe(true);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS "n" FROM "AuditEvents" WHERE "action" = 'race'`.execute(t.db);
    expect(rows[0]?.n).toBe(200);
  });

  describe("a creator blocked behind another transaction's uncommitted CREATE", () => {
    // Deterministic versions of the race: the catalog read sees nothing (the other
    // CREATE is uncommitted), then our CREATE queues on the parent's lock, and
    // fails once the other side commits. On a table *without* DEFAULT: with one,
    // the catalog read itself waits (pg_get_expr takes ACCESS SHARE on each
    // partition, and the other CREATE holds DEFAULT exclusively to scan it), and
    // then simply sees the committed partition.
    const spec: PartitionedTableSpec = { table: "ProbeRace", column: "at", granularity: "month", retention: 1, ahead: 0 };
    beforeAll(async () => {
      await sql`CREATE TABLE "ProbeRace" ("at" TIMESTAMPTZ NOT NULL) PARTITION BY RANGE ("at")`.execute(t.db);
    });

    async function raceAgainst(ddl: string, now: Date, lockTimeoutMs = 20_000) {
      const blocker = new pg.Client({ connectionString: t.url });
      await blocker.connect();
      try {
        await blocker.query("BEGIN");
        await blocker.query(ddl);
        const manager = new PartitionManager(pools[0]!, { tables: [spec], lockTimeoutMs });
        const outcome = manager.ensureAhead(now).then(
          (created) => ({ created, error: undefined }),
          (error: unknown) => ({ created: undefined, error }),
        );
        await vi.waitFor(
          async () => {
            const { rows } = await sql<{ n: number }>`
              SELECT count(*)::int AS "n" FROM pg_locks WHERE NOT granted AND relation = '"ProbeRace"'::regclass`.execute(t.db);
            expect(rows[0]?.n).toBe(1);
          },
          { timeout: 5_000, interval: 10 },
        );
        await blocker.query("COMMIT");
        return await outcome;
      } finally {
        await blocker.end();
      }
    }

    it("same name: the loser reports nothing (42P07)", async () => {
      const { created, error } = await raceAgainst(
        `CREATE TABLE "ProbeRace_p236101" PARTITION OF "ProbeRace" FOR VALUES FROM ('2361-01-01Z') TO ('2361-02-01Z')`,
        at("2361-01-15T00:00:00Z"),
      );
      expect(error).toBeUndefined();
      expect(created).toEqual([]);
    });

    it("same range under another name: the loser reports nothing (42P17)", async () => {
      const { created, error } = await raceAgainst(
        `CREATE TABLE "ProbeRace_handmade" PARTITION OF "ProbeRace" FOR VALUES FROM ('2362-01-01Z') TO ('2362-02-01Z')`,
        at("2362-01-15T00:00:00Z"),
      );
      expect(error).toBeUndefined();
      expect(created).toEqual([]);
      const names = await partitionNames(t.db, "ProbeRace");
      expect(names).toContain("ProbeRace_handmade");
      expect(names).not.toContain("ProbeRace_p236201");
    });

    it("gives up after lockTimeoutMs instead of queueing every insert behind it", async () => {
      const blocker = new pg.Client({ connectionString: t.url });
      await blocker.connect();
      try {
        await blocker.query("BEGIN");
        await blocker.query(`LOCK TABLE "WorkflowEvents" IN ACCESS SHARE MODE`);
        const manager = new PartitionManager(pools[0]!, { tables: [{ ...specOf("WorkflowEvents"), ahead: 0 }], lockTimeoutMs: 100 });
        const error = await manager.ensureAhead(at("2363-01-15T00:00:00Z")).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PartitionMaintenanceError);
        expect((error as PartitionMaintenanceError).failures[0]?.error).toMatchObject({ code: "55P03" });
      } finally {
        await blocker.query("ROLLBACK");
        await blocker.end();
      }
      expect(await partitionNames(t.db, "WorkflowEvents")).not.toContain("WorkflowEvents_p236301");
    });
  });

  it("drops each expired partition once", async () => {
    await new PartitionManager(t.db).ensureAhead(at("2320-01-01T00:00:00Z"));
    const later = at("2330-01-01T00:00:00Z");
    const before = new Set(await allPartitionNames(t.db));
    const results = await Promise.all(pools.map((db) => new PartitionManager(db, { lockTimeoutMs: 20_000 }).dropExpired(later)));
    const reported = results.flat();
    const allAfter = await allPartitionNames(t.db);
    const removed = [...before].filter((n) => !allAfter.includes(n));
    expect(new Set(reported).size).toBe(reported.length);
    expect(reported.sort()).toEqual(removed.sort());
    expect(removed).toContain("WorkflowExecutions_p232001");
    expect(allAfter.filter((n) => n.endsWith("_default")).sort()).toEqual(
      ["AuditEvents_default", "Timers_default", "WorkflowEvents_default", "WorkflowExecutions_default"],
    );
  });
});

describe("the poller's partition loop", () => {
  it("maintains partitions from the first pass at start-up", async () => {
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const runners = startRunners(["poller"], { db: t.db, logger, clock: () => at("2350-09-09T09:09:09Z"), only: ["partitions"] });
    expect(runners.map((r) => r.name)).toEqual(["partitions"]);
    await vi.waitFor(() => expect(runners[0]?.stats.passes).toBe(1), { timeout: 10_000 });
    expect(await stopRunners(runners, 5_000)).toBe(true);
    expect(runners[0]?.stats.errors).toBe(0);
    expect(await partitionNames(t.db, "WorkflowExecutions")).toContain("WorkflowExecutions_p235011");
    expect(await partitionNames(t.db, "Timers")).toContain("Timers_p2350091009");
  });
});

async function allPartitionNames(db: AnyDb): Promise<string[]> {
  const manager = new PartitionManager(db);
  const names: string[] = [];
  for (const spec of PARTITIONED_TABLES) names.push(...(await manager.listPartitions(spec.table)).map((p) => p.name));
  return names;
}

async function insertWorkflowExecutions(db: AnyDb, startedAts: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const startedAt of startedAts) {
    const { rows } = await sql<{ id: string }>`
      INSERT INTO "WorkflowExecutions" ("namespaceId", "defName", "defVersion", "startedAt", "input")
      VALUES (uuidv7(), 'recovery', 1, ${startedAt}, ${JSON.stringify({ startedAt })}::jsonb)
      RETURNING "id"::text AS "id"`.execute(db);
    ids.push(rows[0]!.id);
  }
  return ids;
}
