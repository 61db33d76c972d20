import { sql } from "kysely";
import type { Kysely, RawBuilder } from "kysely";

/**
 * The tables this transaction has read by sequential scans so far
 * (pg_stat_xact_user_tables: the backend's own counts, before they are
 * flushed). Plan tests call it inside the transaction that ran the statements
 * under test, on partitions kept small and analyzed, where a key lookup's
 * cached plan could be a scan (docs/performance.md, items 41–42).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema; only a statistics view is read
export async function tablesScannedInTransaction(trx: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ relname: string }>`SELECT "relname" FROM pg_stat_xact_user_tables WHERE "seq_scan" > 0 ORDER BY 1`.execute(trx);
  return rows.map((r) => r.relname);
}

/**
 * `statement`'s plan (EXPLAIN's lines joined) with sequential scans disabled,
 * as the sidecar and the key-lookup functions plan (db/pool.ts,
 * keyLookupsOnly): on a test database's tiny tables the planner rightly
 * prefers a scan, so a plan test asks which index the statement *can* use.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema; the statement is the caller's
export async function planWithoutSeqScans(db: Kysely<any>, statement: RawBuilder<unknown>): Promise<string> {
  return db.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(trx);
    const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${statement}`.execute(trx);
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  });
}
