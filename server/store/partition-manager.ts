import { sql } from "kysely";
import type { Kysely, Transaction } from "kysely";

/**
 * Creates time-range partitions ahead of need and drops expired ones.
 *
 * Range partitioning only pays for itself if something maintains it: a row that
 * lands in DEFAULT cannot be retired by dropping a partition, and every later
 * CREATE … PARTITION OF has to scan DEFAULT to prove it holds no row of the new
 * range. The migrations seed the current and next period; this keeps it that way.
 */

export type PartitionGranularity = "month" | "hour";

/** One range-partitioned table, as the migrations create it. */
export interface PartitionedTableSpec {
  /** Parent table, unquoted (e.g. `WorkflowExecutions`). */
  table: string;
  /** The timestamp column the table is partitioned on. Used to move rows out of DEFAULT. */
  column: string;
  granularity: PartitionGranularity;
  /**
   * Whole periods of history kept behind the current one. A partition is dropped
   * once its upper bound is at or before `start of current period − retention`.
   */
  retention: number;
  /** Periods created after the current one. */
  ahead: number;
}

/** The shared partition convention; the migrations follow it exactly. */
export const PARTITIONED_TABLES: readonly PartitionedTableSpec[] = [
  { table: "WorkflowExecutions", column: "startedAt", granularity: "month", retention: 12, ahead: 2 },
  { table: "WorkflowEvents", column: "at", granularity: "month", retention: 12, ahead: 2 },
  { table: "AuditEvents", column: "at", granularity: "month", retention: 84, ahead: 2 },
  { table: "Timers", column: "fireAt", granularity: "hour", retention: 48, ahead: 24 },
];

/** A partition as read back from pg_catalog. `from`/`to` are null for DEFAULT and for MINVALUE/MAXVALUE bounds. */
export interface PartitionInfo {
  name: string;
  isDefault: boolean;
  from: Date | null;
  to: Date | null;
}

/** The subset of a pino logger the manager uses. */
export interface PartitionLogger {
  debug?(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface PartitionManagerOptions {
  tables?: readonly PartitionedTableSpec[];
  /**
   * How long one DDL statement may wait for the parent's ACCESS EXCLUSIVE lock.
   * Without a bound, a CREATE/DETACH queued behind one long report query blocks
   * every insert queued behind *it*: the lock queue turns maintenance into an
   * outage. Giving up is cheap; the next pass retries.
   */
  lockTimeoutMs?: number;
  logger?: PartitionLogger;
}

/** Thrown after every table was attempted when some of them failed; carries what did succeed. */
export class PartitionMaintenanceError extends Error {
  override name = "PartitionMaintenanceError";
  constructor(
    readonly failures: { table: string; error: unknown }[],
    readonly created: string[],
    readonly dropped: string[],
  ) {
    super(
      `Partition maintenance failed for ${failures.map((f) => `"${f.table}" (${errorMessage(f.error)})`).join(", ")}`,
      { cause: failures[0]?.error },
    );
  }
}

/** Start of the UTC period containing `at`. */
export function periodStart(at: Date, granularity: PartitionGranularity): Date {
  return granularity === "month"
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), at.getUTCHours()));
}

/** `start` moved by `count` periods (negative goes back); `start` must be a period start. */
export function addPeriods(start: Date, granularity: PartitionGranularity, count: number): Date {
  // Date.UTC normalises overflow (month 12 → January next year, hour 24 → next day).
  return granularity === "month"
    ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + count, 1))
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate(), start.getUTCHours() + count));
}

/** `<Table>_pYYYYMM` (monthly) or `<Table>_pYYYYMMDDHH` (hourly) for the period starting at `start`. */
export function partitionName(table: string, granularity: PartitionGranularity, start: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  const stamp = `${start.getUTCFullYear()}${pad(start.getUTCMonth() + 1)}`;
  return granularity === "month"
    ? `${table}_p${stamp}`
    : `${table}_p${stamp}${pad(start.getUTCDate())}${pad(start.getUTCHours())}`;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- pure catalog SQL; runs against any schema, including test tables
type AnyDb = Kysely<any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
type AnyTrx = Transaction<any>;

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The errors a losing racer sees when another manager created the same partition
 * first. `CREATE TABLE IF NOT EXISTS` is deliberately not used: the losing side of
 * a race no-ops *successfully* and then reports a creation it did not make.
 * - 42P07 duplicate_table: the other CREATE committed before our name check.
 * - 42P17 invalid_object_definition: "would overlap partition" — the range is
 *   already covered (also under another name).
 * - 23505 unique_violation: both transactions got past the name check and
 *   collided on pg_class's unique index instead (seen in the seed project; on
 *   Postgres 18 the parent's ACCESS EXCLUSIVE lock serialises the two CREATEs
 *   before the name check, so our tests provoke only the first two — kept
 *   because misreading it as a failure costs an error every pass).
 */
const CREATED_ELSEWHERE = new Set(["42P07", "42P17", "23505"]);

/** check_violation: "updated partition constraint for default partition … would be violated". */
const ROWS_IN_DEFAULT = "23514";

/** undefined_table: the partition was dropped or detached by another manager first. */
const DROPPED_ELSEWHERE = "42P01";

// Bounds go into SQL as ISO-8601 text, never as JS Dates: node-postgres renders a
// Date in the *process's* local zone, which a `timestamp without time zone` column
// would silently misread. The text form means the same instant for both types.
function isoLiteral(at: Date): string {
  return at.toISOString();
}

/** Creates and drops time-range partitions; see {@link PartitionedTableSpec} for the rules. */
export class PartitionManager {
  private readonly tables: readonly PartitionedTableSpec[];
  private readonly lockTimeoutMs: number;
  private readonly logger: PartitionLogger | undefined;

  constructor(
    private readonly db: AnyDb,
    options: PartitionManagerOptions = {},
  ) {
    this.tables = options.tables ?? PARTITIONED_TABLES;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 5_000;
    this.logger = options.logger;
    for (const spec of this.tables) {
      if (!Number.isInteger(spec.retention) || spec.retention < 1) {
        throw new Error(`Partition retention for "${spec.table}" must be a positive integer, got ${spec.retention}`);
      }
      if (!Number.isInteger(spec.ahead) || spec.ahead < 0) {
        throw new Error(`Partitions ahead for "${spec.table}" must be a non-negative integer, got ${spec.ahead}`);
      }
    }
  }

  /**
   * Creates the partitions of the current period and `ahead` periods after it, for
   * every table. Returns exactly the partitions this call created: when several
   * managers race, each partition is reported by one of them.
   */
  async ensureAhead(now: Date): Promise<string[]> {
    const created: string[] = [];
    const failures: { table: string; error: unknown }[] = [];
    for (const spec of this.tables) {
      try {
        created.push(...(await this.ensureTableAhead(spec, now)));
      } catch (error) {
        failures.push({ table: spec.table, error });
      }
    }
    if (failures.length > 0) throw new PartitionMaintenanceError(failures, created, []);
    return created;
  }

  /**
   * Detaches and drops every partition whose range ended before the retention
   * window; never the DEFAULT partition. Returns the partitions this call dropped.
   */
  async dropExpired(now: Date): Promise<string[]> {
    const dropped: string[] = [];
    const failures: { table: string; error: unknown }[] = [];
    for (const spec of this.tables) {
      try {
        dropped.push(...(await this.dropTableExpired(spec, now)));
      } catch (error) {
        failures.push({ table: spec.table, error });
      }
    }
    if (failures.length > 0) throw new PartitionMaintenanceError(failures, [], dropped);
    return dropped;
  }

  /**
   * One maintenance pass: {@link ensureAhead} then {@link dropExpired}. Returns the
   * number of partitions created plus dropped. Both halves always run; if either
   * failed, one PartitionMaintenanceError reports all failures afterwards.
   */
  async runOnce(now: Date): Promise<number> {
    const failures: { table: string; error: unknown }[] = [];
    let created: string[] = [];
    let dropped: string[] = [];
    try {
      created = await this.ensureAhead(now);
    } catch (error) {
      if (!(error instanceof PartitionMaintenanceError)) throw error;
      failures.push(...error.failures);
      created = error.created;
    }
    try {
      dropped = await this.dropExpired(now);
    } catch (error) {
      if (!(error instanceof PartitionMaintenanceError)) throw error;
      failures.push(...error.failures);
      dropped = error.dropped;
    }
    if (failures.length > 0) throw new PartitionMaintenanceError(failures, created, dropped);
    return created.length + dropped.length;
  }

  /** The partitions of `table` with their bounds, read from pg_catalog. */
  async listPartitions(table: string): Promise<PartitionInfo[]> {
    return this.db.transaction().execute(async (trx) => {
      // Even this read can queue: pg_get_expr takes ACCESS SHARE on every
      // partition, and a concurrent CREATE … PARTITION OF holds DEFAULT exclusively.
      await this.setLockTimeout(trx);
      return listPartitions(trx, table);
    });
  }

  private async ensureTableAhead(spec: PartitionedTableSpec, now: Date): Promise<string[]> {
    // One catalog read per table, then CREATE only what is missing. Every CREATE …
    // PARTITION OF takes ACCESS EXCLUSIVE on the (hot) parent even when it then
    // fails as a duplicate, so "just try them all and catch 42P07" would queue an
    // exclusive lock on each busy table dozens of times a pass, per replica.
    const existing = await this.listPartitions(spec.table);
    const current = periodStart(now, spec.granularity);
    const created: string[] = [];
    for (let i = 0; i <= spec.ahead; i++) {
      const from = addPeriods(current, spec.granularity, i);
      const to = addPeriods(current, spec.granularity, i + 1);
      const name = partitionName(spec.table, spec.granularity, from);
      // Covered already, whatever its name: creating it would only raise 42P17.
      if (existing.some((p) => covers(p, name, from, to))) continue;
      if (await this.createPartition(spec, name, from, to)) created.push(name);
    }
    if (created.length > 0) {
      this.logger?.info({ table: spec.table, count: created.length, first: created[0], last: created.at(-1) }, "created partitions");
    }
    return created;
  }

  /** True when this call created the partition; false when another manager did. */
  private async createPartition(spec: PartitionedTableSpec, name: string, from: Date, to: Date): Promise<boolean> {
    try {
      await this.db.transaction().execute(async (trx) => {
        await this.setLockTimeout(trx);
        await createPartitionStatement(spec, name, from, to).execute(trx);
      });
      // debug, not info: a first start creates ~30 of these, and ensureTableAhead's
      // caller logs the per-table summary.
      this.logger?.debug?.({ table: spec.table, partition: name }, "created partition");
      return true;
    } catch (error) {
      const code = errorCode(error);
      if (code !== undefined && CREATED_ELSEWHERE.has(code)) return false;
      // Postgres refuses to create a partition that would orphan rows already in
      // DEFAULT. Giving up here is the bug that made retention silently never
      // work: every pass failed on the same period forever.
      if (code === ROWS_IN_DEFAULT) return this.createPartitionFromDefault(spec, name, from, to);
      throw error;
    }
  }

  /**
   * Creates a partition whose range already has rows in DEFAULT: detach DEFAULT,
   * create the partition, move the in-range rows, re-attach DEFAULT. One
   * transaction, because a crash between DETACH and ATTACH would leave the table
   * with no DEFAULT and fail every out-of-range insert until someone noticed.
   *
   * Known costs: ACCESS EXCLUSIVE on the parent for the duration (reads and writes
   * wait), and re-attaching DEFAULT scans it in full. Row triggers fire for moved
   * rows (e.g. WorkflowEvents' NOTIFY): notifications are hints, never a guarantee,
   * so a duplicate is harmless. A foreign key *referencing* the parent would make
   * the DETACH fail; the partitioned tables have none.
   */
  private async createPartitionFromDefault(
    spec: PartitionedTableSpec,
    name: string,
    from: Date,
    to: Date,
  ): Promise<boolean> {
    try {
      const moved = await this.db.transaction().execute(async (trx) => {
        await this.setLockTimeout(trx);
        // Take the strongest lock first: DETACH/CREATE/ATTACH would each take it
        // anyway, and upgrading piecemeal lets two recovering managers deadlock.
        await sql`LOCK TABLE ${sql.id(spec.table)} IN ACCESS EXCLUSIVE MODE`.execute(trx);
        // Re-read under the lock: a manager that recovered this period while we
        // waited has already moved the rows, and we must neither redo nor claim it.
        const partitions = await listPartitions(trx, spec.table);
        if (partitions.some((p) => covers(p, name, from, to))) return null;
        const defaultPartition = partitions.find((p) => p.isDefault);
        if (!defaultPartition) throw new Error(`"${spec.table}" reported rows in DEFAULT but has no DEFAULT partition`);

        const parent = sql.id(spec.table);
        const fallback = sql.id(defaultPartition.name);
        await sql`ALTER TABLE ${parent} DETACH PARTITION ${fallback}`.execute(trx);
        await createPartitionStatement(spec, name, from, to).execute(trx);
        // Explicit column list: SELECT * would follow the detached table's own
        // column order, which differs from the parent's if DEFAULT was ever
        // attached rather than created as PARTITION OF. Generated columns are
        // recomputed on insert and may not be written; OVERRIDING SYSTEM VALUE
        // keeps GENERATED ALWAYS identities as they were.
        const columns = await insertableColumns(trx, spec.table);
        const list = sql.join(columns.map((c) => sql.id(c)));
        const result = await sql`
          WITH "moved" AS (
            DELETE FROM ${fallback}
            WHERE ${sql.id(spec.column)} >= ${isoLiteral(from)} AND ${sql.id(spec.column)} < ${isoLiteral(to)}
            RETURNING ${list}
          )
          INSERT INTO ${sql.id(name)} (${list}) OVERRIDING SYSTEM VALUE
          SELECT ${list} FROM "moved"`.execute(trx);
        await sql`ALTER TABLE ${parent} ATTACH PARTITION ${fallback} DEFAULT`.execute(trx);
        return Number(result.numAffectedRows ?? 0n);
      });
      if (moved === null) return false;
      this.logger?.warn(
        { table: spec.table, partition: name, movedRows: moved },
        "created partition by moving its rows out of DEFAULT",
      );
      return true;
    } catch (error) {
      const code = errorCode(error);
      if (code !== undefined && CREATED_ELSEWHERE.has(code)) return false;
      throw error;
    }
  }

  private async dropTableExpired(spec: PartitionedTableSpec, now: Date): Promise<string[]> {
    const cutoff = addPeriods(periodStart(now, spec.granularity), spec.granularity, -spec.retention);
    const partitions = await this.listPartitions(spec.table);
    const dropped: string[] = [];
    // Bounds come from pg_catalog, not from names: a partition made by hand (or by
    // an older naming scheme) still expires, and DEFAULT has no bounds at all.
    for (const p of partitions) {
      if (p.isDefault || p.to === null || p.to > cutoff) continue;
      if (await this.dropPartition(spec, p.name)) dropped.push(p.name);
    }
    return dropped;
  }

  private async dropPartition(spec: PartitionedTableSpec, name: string): Promise<boolean> {
    try {
      // DETACH … CONCURRENTLY would avoid the exclusive lock, but Postgres refuses it
      // while a DEFAULT partition exists (and inside a transaction), so this is the
      // plain form, bounded by lock_timeout, with the DROP in the same transaction
      // so no orphaned standalone table survives a crash.
      await this.db.transaction().execute(async (trx) => {
        await this.setLockTimeout(trx);
        await sql`ALTER TABLE ${sql.id(spec.table)} DETACH PARTITION ${sql.id(name)}`.execute(trx);
        await sql`DROP TABLE ${sql.id(name)}`.execute(trx);
      });
      this.logger?.info({ table: spec.table, partition: name }, "dropped expired partition");
      return true;
    } catch (error) {
      if (errorCode(error) === DROPPED_ELSEWHERE) return false;
      throw error;
    }
  }

  private async setLockTimeout(trx: AnyTrx): Promise<void> {
    await sql`SELECT set_config('lock_timeout', ${`${this.lockTimeoutMs}ms`}, true)`.execute(trx);
  }
}

function covers(p: PartitionInfo, name: string, from: Date, to: Date): boolean {
  return p.name === name || (p.from !== null && p.to !== null && p.from < to && from < p.to);
}

function createPartitionStatement(spec: PartitionedTableSpec, name: string, from: Date, to: Date) {
  // Utility statements take no bind parameters, hence literals (our own ISO strings).
  return sql`CREATE TABLE ${sql.id(name)} PARTITION OF ${sql.id(spec.table)}
    FOR VALUES FROM (${sql.lit(isoLiteral(from))}) TO (${sql.lit(isoLiteral(to))})`;
}

// Matches `FOR VALUES FROM ('…') TO ('…')`; DEFAULT and MINVALUE/MAXVALUE bounds do not match.
const RANGE_BOUND_PATTERN = String.raw`FROM \('([^']*)'\) TO \('([^']*)'\)`;

async function listPartitions(trx: AnyTrx, table: string): Promise<PartitionInfo[]> {
  // pg_get_expr renders the bounds in the session's TimeZone (and without an
  // offset for `timestamp` columns); pin it to UTC for this transaction so the
  // text parses back to the instant the partition was created with.
  await sql`SELECT set_config('TimeZone', 'UTC', true)`.execute(trx);
  const parent = await sql<{ partitioned: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pg_partitioned_table pt WHERE pt.partrelid = c."oid") AS "partitioned"
    FROM pg_class c WHERE c."oid" = to_regclass(quote_ident(${table}))`.execute(trx);
  const row = parent.rows[0];
  if (!row) throw new Error(`Table "${table}" does not exist: have the migrations run?`);
  if (!row.partitioned) throw new Error(`Table "${table}" is not partitioned`);
  const { rows } = await sql<{ name: string; isDefault: boolean; from: Date | null; to: Date | null }>`
    SELECT c.relname AS "name",
           c."oid" = pt.partdefid AS "isDefault",
           b.m[1]::timestamptz AS "from",
           b.m[2]::timestamptz AS "to"
    FROM pg_partitioned_table pt
    JOIN pg_inherits i ON i.inhparent = pt.partrelid
    JOIN pg_class c ON c."oid" = i.inhrelid
    CROSS JOIN LATERAL (
      SELECT regexp_match(pg_get_expr(c.relpartbound, c."oid"), ${RANGE_BOUND_PATTERN}) AS m
    ) b
    WHERE pt.partrelid = to_regclass(quote_ident(${table}))
    ORDER BY c.relname`.execute(trx);
  return rows.map((r) => ({
    name: r.name,
    isDefault: r.isDefault,
    // 'infinity' bounds parse to an invalid Date; treat them like MINVALUE/MAXVALUE.
    from: r.from && !Number.isNaN(r.from.getTime()) ? r.from : null,
    to: r.to && !Number.isNaN(r.to.getTime()) ? r.to : null,
  }));
}

async function insertableColumns(trx: AnyTrx, table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT a.attname AS "name" FROM pg_attribute a
    WHERE a.attrelid = to_regclass(quote_ident(${table})) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
    ORDER BY a.attnum`.execute(trx);
  return rows.map((r) => r.name);
}
