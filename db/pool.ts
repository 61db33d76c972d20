import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database } from "./schema";

// BIGINT (int8) columns come back as strings by default; every BIGINT here is a
// counter or a BIGSERIAL id well inside 2^53, so parse them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export type Db = Kysely<Database>;

export interface DbOptions {
  /** Pool size; the web process and the sidecar each hold their own pool. */
  max?: number;
  applicationName?: string;
}

export function createPool(connectionString: string, options: DbOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? "node-flow",
  });
  // An idle client whose connection dies (Postgres restarting, an operator's
  // pg_terminate_backend, a dropped database) is discarded by the pool, which
  // then emits 'error'; with no listener that is an uncaught exception and the
  // whole process — a sidecar mid-batch — dies. The next query opens a fresh
  // connection, and a query that was in flight rejects to its own caller.
  pool.on("error", () => undefined);
  return pool;
}

/** A Kysely instance over its own pool; `db.destroy()` closes the pool. */
export function createDb(connectionString: string, options: DbOptions = {}): Db {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: createPool(connectionString, options) }) });
}
