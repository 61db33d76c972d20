import { CompiledQuery, sql } from "kysely";
import type { Kysely, RawBuilder } from "kysely";
import type { Database } from "./schema";

/**
 * Statements sent on one connection back to back, without waiting for each
 * other's answers: node-postgres's pipeline mode, which every pool of
 * createPool turns on (db/pool.ts). Postgres runs them in order, each with its
 * own Sync — each its own statement with its own snapshot, exactly as if they
 * had been sent one at a time — and the answers come back together: one round
 * trip where there were several.
 *
 * Why: on these machines a round trip, not the statement, is most of what a
 * short statement costs the process that waits for it (docs/performance.md,
 * items 23 and 53), and a step of a run is a chain of them — the decider's
 * claim and frontier, its finish and commit, a report and the deciders' wake.
 *
 * Only statements whose text and parameters do not depend on an earlier one's
 * answer can travel together; a later one that must see an earlier one's
 * result reads it in SQL (a transaction-local setting, say).
 */

/**
 * Rides to the client as the lead statement's last parameter (Kysely passes
 * parameters through untouched); the client wrapper in db/pool.ts takes it
 * off, sends the lead and then these, and leaves their answers here.
 */
export class Followers {
  /** One settled answer per follower, in order; set by the client when it sends them. */
  results: Promise<PromiseSettledResult<{ rows: unknown[] }>[]> | undefined;
  constructor(readonly statements: readonly { sql: string; parameters: readonly unknown[] }[]) {}
}

type RowsOf<T extends readonly RawBuilder<unknown>[]> = { -readonly [K in keyof T]: T[K] extends RawBuilder<infer O> ? O[] : never };

/**
 * Runs `queries` on one connection of `db` (a transaction, or the pool) in one
 * round trip and returns each one's rows, in order. Every statement runs
 * whether or not an earlier one failed; inside a transaction a failure aborts
 * it, so the ones after fail too ("current transaction is aborted") — except a
 * COMMIT, which then answers ROLLBACK. Rejects with the first failure, once
 * every answer is in.
 *
 * A COMMIT among the followers ends the caller's Kysely transaction early: the
 * client answers the COMMIT Kysely sends when the callback returns with this
 * one's outcome instead of sending another (db/pool.ts). Nothing may run in
 * the transaction after it.
 */
export async function executeTogether<T extends readonly [RawBuilder<unknown>, ...RawBuilder<unknown>[]]>(
  db: Kysely<Database>,
  ...queries: T
): Promise<RowsOf<T>> {
  const [lead, ...rest] = queries.map((query) => query.compile(db));
  const followers = new Followers(rest.map((c) => ({ sql: c.sql, parameters: c.parameters })));
  const carrier = CompiledQuery.raw(lead!.sql, [...lead!.parameters, followers]);
  const run = async (on: Kysely<Database>) => {
    const outcome = await on.executeQuery(carrier).then(
      (result) => ({ ok: true as const, rows: result.rows }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    // Unset when the lead never reached a connection (the pool failed): nothing was sent.
    return { outcome, settled: followers.results === undefined ? [] : await followers.results };
  };
  // Outside a transaction, one connection held until the last answer is in, so no other caller's statement queues behind the followers.
  const { outcome: leadOutcome, settled } = db.isTransaction ? await run(db) : await db.connection().execute(run);
  if (!leadOutcome.ok) throw leadOutcome.error;
  if (followers.results === undefined) throw new Error("executeTogether needs a pool made by createPool (db/pool.ts): the followers were not sent");
  const rows: unknown[][] = [leadOutcome.rows];
  for (const answer of settled) {
    if (answer.status === "rejected") throw answer.reason;
    rows.push(answer.value.rows);
  }
  return rows as RowsOf<T>;
}

/**
 * A statement sent behind another in the same round trip cannot take the
 * first one's answer as a parameter; it reads what it needs in SQL instead.
 * These two hand a set of ids across, in a transaction-local setting:
 * {@link passIds} is a scalar subquery for the first statement's select list
 * — uncorrelated, so it runs once, when the first row is returned (none
 * returned, none set) — and {@link passedIds} the uuid[] the statement behind
 * it reads (empty when nothing was set in the transaction).
 */
export function passIds(setting: string, relation: string, column: string): RawBuilder<unknown> {
  return sql`(SELECT set_config(${sql.lit(setting)}, array_agg(${sql.ref(column)})::text, true) FROM ${sql.table(relation)})`;
}

/** The ids {@link passIds} left in `setting` in this transaction, as uuid[]. */
export function passedIds(setting: string): RawBuilder<string[]> {
  return sql<string[]>`coalesce(nullif(current_setting(${sql.lit(setting)}, true), ''), '{}')::uuid[]`;
}
