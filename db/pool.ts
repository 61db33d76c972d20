import { createHash } from "node:crypto";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { Followers } from "./pipeline";
import type { Database } from "./schema";

// BIGINT (int8) columns come back as strings by default; every BIGINT here is a
// counter or a BIGSERIAL id well inside 2^53, so parse them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export type Db = Kysely<Database>;

export interface DbOptions {
  /** Pool size; the web process and the sidecar each hold their own pool. */
  max?: number;
  applicationName?: string;
  /**
   * Run parameterised statements as named prepared statements, so each
   * connection plans each statement once instead of on every execution (see
   * {@link preparedStatementName}). On by default.
   */
  preparedStatements?: boolean;
  /**
   * Every statement this pool runs finds its rows by a key or another index
   * (the sidecar's pool: claims, frontiers, timers, sweeps), so plan them with
   * sequential scans disabled. A generic plan is made once per connection and
   * kept until a table it reads is analyzed or vacuumed; made while a
   * partition is small, a key lookup is a coin toss a sequential scan often
   * wins, and the plan then reads the partition whole on every call as it
   * fills. The closed-loop bench caught the decider's claim reading the
   * month's whole "WorkflowExecutions" partition this way (0.7–2.3 million
   * rows over a 20-second run). A statement with no index to use still gets a
   * sequential scan: Postgres 18 counts disabled plan nodes rather than
   * refusing them. Off by default: the web process also serves the console's
   * lists and searches, where reading a table whole can be the right plan.
   */
  keyLookupsOnly?: boolean;
}

/**
 * Prepared statements per connection at most; past this, new statements run
 * unnamed (planned each time, as before). Distinct texts are bounded anyway —
 * every statement is built by code, and only IN-lists and multi-row VALUES
 * vary with their length — but a plan over a partitioned table holds every
 * partition's scan, so a leak here would be memory in every backend.
 */
const MAX_PREPARED_PER_CONNECTION = 500;
const names = new Map<string, string>();

/**
 * The name a statement text is prepared under: a hash of the text, so one text
 * has one name on every connection and two texts never share one (node-postgres
 * refuses to reuse a name for a different text).
 *
 * Why prepare at all: unnamed statements are re-planned on every execution,
 * and planning dominates on the engine's partitioned tables. Measured with
 * `npm run bench -- --pg-stat-statements` (embedded Postgres 18, 2 shared cores, 25
 * runs/s of a 3-task chain): planning took 4.3 s against 0.5 s of execution
 * for lockWorkflow's SELECT … FOR UPDATE (every monthly partition of
 * WorkflowExecutions is planned), 2.3 s against 0.1 s for loadFrontier (16
 * hash partitions), and across the 25 costliest statements about three times
 * their execution time.
 *
 * And why force generic plans (plan_cache_mode): under the default (auto) a
 * prepared statement keeps re-planning whenever its generic plan is estimated
 * dearer than a custom one, which on a partitioned table it always is — the
 * generic plan's cost counts every partition, though executor-start pruning
 * then opens only the one its parameters name. The engine's statements find
 * rows by key (the partial indexes' predicates are literals in the text, never
 * parameters), so a generic plan loses nothing. Same bench, 4 workers, medians
 * of the runs made back to back on a machine at load 12 to 23 (other work):
 *   unnamed statements:          statement time 75–85 ms/run (plan 56–64), Postgres CPU 101–104 ms/run
 *   prepared, plan mode auto:    statement time 30–49 ms/run (plan 18–27), Postgres CPU 52–72 ms/run
 *   prepared, generic plans:     statement time 23.5 ms/run  (plan 8.2),   Postgres CPU 49 ms/run
 * (The remaining planning is the statements without parameters and each
 * connection's first execution of each statement.)
 */
export function preparedStatementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `nf_${createHash("sha1").update(text).digest("base64url").slice(0, 20)}`;
    // Bounded like the per-connection cap: a runaway set of texts costs hashing, not memory.
    if (names.size < 10_000) names.set(text, name);
  }
  return name;
}

type QueryFunction = (...args: unknown[]) => unknown;
type Answer = { command?: string; rows: unknown[] };

/** The command a text without parameters is ("begin", "commit", …, lower case), or "" for one with parameters. */
const bareCommand = (text: string, values: unknown): string =>
  values === undefined || (Array.isArray(values) && values.length === 0) ? text.trim().toLowerCase() : "";

/**
 * What every pooled client does to the text queries Kysely sends (a query
 * config object, or one with a callback, is passed on as it is):
 *
 * - A parameterised text runs as a named prepared statement (see
 *   {@link preparedStatementName}); BEGIN, COMMIT and SAVEPOINT gain nothing.
 * - A transaction's BEGIN travels with its first statement (the client is in
 *   pipeline mode, db/pipeline.ts): Kysely's BEGIN is answered at once and sent,
 *   and the next statement follows it without waiting — one round trip instead
 *   of two for every transaction. That statement's answer waits for BEGIN's,
 *   and a BEGIN that failed fails it (a BEGIN on a live connection has nothing
 *   to fail on but the connection, which fails the statement too).
 * - A lead statement carrying {@link Followers} (executeTogether) is sent, then
 *   each follower behind it, and their answers are left in the carrier.
 * - A COMMIT sent as a follower ended the transaction: the COMMIT Kysely sends
 *   after the transaction's callback returns gets that one's answer and is not
 *   sent again. A ROLLBACK (the callback threw) is always sent: after a
 *   follower's COMMIT there is no transaction left, which Postgres answers with
 *   a warning.
 */
function wrapClient(client: pg.PoolClient, prepare: boolean): void {
  const original = client.query.bind(client) as QueryFunction;
  let prepared = 0;
  let begin: Promise<unknown> | undefined;
  let committed: Promise<Answer> | undefined;

  const send = (text: string, values: readonly unknown[] | undefined): Promise<Answer> => {
    if (!prepare || values === undefined || values.length === 0) return original(text, values === undefined ? undefined : [...values]) as Promise<Answer>;
    const name = preparedStatementName(text);
    const parsed = (client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements;
    if (parsed[name] === undefined) {
      if (prepared >= MAX_PREPARED_PER_CONNECTION) return original(text, [...values]) as Promise<Answer>;
      prepared += 1;
    }
    return original({ name, text, values: [...values] }) as Promise<Answer>;
  };

  const query: QueryFunction = (...args) => {
    const [text, values, callback] = args;
    if (typeof text !== "string" || callback !== undefined || !(values === undefined || Array.isArray(values))) return original(...args);
    const command = bareCommand(text, values);
    if (command === "begin") {
      committed = undefined;
      begin = original(text) as Promise<unknown>;
      // Its failure is the next statement's (below); until then it must not count as unhandled.
      begin.catch(() => undefined);
      return Promise.resolve({ command: "BEGIN", rowCount: null, rows: [], fields: [] });
    }
    if (command === "commit" && committed !== undefined) {
      const answer = committed;
      committed = undefined;
      return answer;
    }
    if (command === "rollback") committed = undefined;

    let parameters = values as unknown[] | undefined;
    const carried = parameters?.at(-1);
    const followers = carried instanceof Followers ? carried : undefined;
    if (followers) parameters = parameters!.slice(0, -1);
    const lead = send(text, parameters);
    if (followers) {
      const answers = followers.statements.map((statement) => {
        const answer = send(statement.sql, statement.parameters);
        if (bareCommand(statement.sql, statement.parameters) === "commit") committed = answer;
        return answer;
      });
      followers.results = Promise.allSettled(answers);
    }
    if (begin === undefined) return lead;
    const opened = begin;
    begin = undefined;
    return Promise.all([opened, lead]).then(([, answer]) => answer);
  };
  (client as unknown as { query: QueryFunction }).query = query;
}

export function createPool(connectionString: string, options: DbOptions = {}): pg.Pool {
  const prepared = options.preparedStatements ?? true;
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    // Statements sent without waiting for the answers before them (db/pipeline.ts, wrapClient); awaited one at a
    // time, as Kysely does, a client behaves as before.
    pipeline: true,
    application_name: options.applicationName ?? "node-flow",
  });
  // An idle client whose connection dies (Postgres restarting, an operator's
  // pg_terminate_backend, a dropped database) is discarded by the pool, which
  // then emits 'error'; with no listener that is an uncaught exception and the
  // whole process — a sidecar mid-batch — dies. The next query opens a fresh
  // connection, and a query that was in flight rejects to its own caller.
  pool.on("error", () => undefined);
  const settings = [
    // Generic plans, always, for the prepared statements (see preparedStatementName).
    ...(prepared ? ["SET plan_cache_mode = force_generic_plan"] : []),
    ...(options.keyLookupsOnly ? ["SET enable_seqscan = off"] : []),
  ].join("; ");
  pool.on("connect", (client) => {
    // The same for a client in use: a connection that dies while a caller holds it (a transaction between two
    // statements, or executeTogether awaiting its followers) fails every statement in flight and every later one
    // on it, and the pool drops it on release (it is no longer queryable) — but the client also emits 'error',
    // which with no listener is an uncaught exception.
    client.on("error", () => undefined);
    // SETs, not the startup "options": those would replace the caller's own
    // (PGOPTIONS, or options= in the URL). One query, queued first, so it runs
    // before any query of whoever the pool hands the client to (node-postgres
    // warns about a query queued behind another); should it fail, the defaults stay.
    if (settings !== "") client.query(settings).catch(() => undefined);
    wrapClient(client, prepared);
  });
  return pool;
}

/** A Kysely instance over its own pool; `db.destroy()` closes the pool. */
export function createDb(connectionString: string, options: DbOptions = {}): Db {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: createPool(connectionString, options) }) });
}
