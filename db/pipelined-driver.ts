import { AbortedTransactionError, CompiledQuery, PostgresDialect } from "kysely";
import type { DatabaseConnection, Driver, Kysely, QueryCompiler, QueryResult, TransactionSettings } from "kysely";

/**
 * A transaction's BEGIN and COMMIT without round trips of their own. The
 * pool's clients run in node-postgres's pipeline mode (a statement is written
 * at once, not after the previous one's answer), and this driver:
 *
 * - sends BEGIN without waiting for it: it goes out with the transaction's
 *   first statement, and that statement's caller hears its failure;
 * - lets a caller send the transaction's last statement and COMMIT together
 *   ({@link executeAndCommit}), after which Kysely's own COMMIT is skipped.
 *
 * Postgres runs what it reads in order, each statement after the one before
 * has ended, so the transaction is exactly what it was — only the waits
 * between its statements are gone. Every other statement still waits for the
 * one before it: Kysely sends one statement at a time per connection.
 *
 * Why: a decider's evaluation was BEGIN, claim, frontiers, references, insert,
 * finish, COMMIT — seven round trips, two of them for BEGIN and COMMIT; every
 * round trip wakes the backend and the caller again (docs/performance.md,
 * item 39).
 */
export class PipelinedPostgresDialect extends PostgresDialect {
  override createDriver(): Driver {
    return new PipelinedDriver(super.createDriver());
  }
}

class PipelinedConnection implements DatabaseConnection {
  /** BEGIN, sent and not yet answered: whoever sends next waits for it too. */
  begin: Promise<unknown> | undefined;
  /** COMMIT went out with the transaction's last statement: Kysely's own COMMIT or ROLLBACK is not sent. */
  ended = false;

  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const begin = this.takeBegin();
    if (begin === undefined) return this.inner.executeQuery<R>(query);
    const [, result] = await Promise.all([begin, this.inner.executeQuery<R>(query)]);
    return result;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    await this.takeBegin();
    yield* this.inner.streamQuery<R>(query, chunkSize);
  }

  takeBegin(): Promise<unknown> | undefined {
    const begin = this.begin;
    this.begin = undefined;
    return begin;
  }
}

class PipelinedDriver implements Driver {
  private readonly wrappers = new WeakMap<DatabaseConnection, PipelinedConnection>();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.wrappers.get(connection);
    if (wrapper === undefined) {
      wrapper = new PipelinedConnection(connection);
      this.wrappers.set(connection, wrapper);
    }
    return wrapper;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = asPipelined(connection);
    c.ended = false;
    if (settings.isolationLevel !== undefined || settings.accessMode !== undefined) return this.inner.beginTransaction(c.inner, settings);
    const begin = c.inner.executeQuery(CompiledQuery.raw("begin"));
    // Awaited by the next statement; this only keeps a failure from being unhandled meanwhile.
    begin.catch(() => undefined);
    c.begin = begin;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = asPipelined(connection);
    if (c.ended) return;
    const begin = c.takeBegin();
    if (begin === undefined) return this.inner.commitTransaction(c.inner);
    await Promise.all([begin, this.inner.commitTransaction(c.inner)]);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = asPipelined(connection);
    if (c.ended) return;
    await c.takeBegin()?.catch(() => undefined);
    return this.inner.rollbackTransaction(c.inner);
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    const c = asPipelined(connection);
    await c.takeBegin();
    return this.inner.savepoint!(c.inner, name, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    const c = asPipelined(connection);
    await c.takeBegin();
    return this.inner.rollbackToSavepoint!(c.inner, name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    const c = asPipelined(connection);
    await c.takeBegin();
    return this.inner.releaseSavepoint!(c.inner, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(asPipelined(connection).inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

function asPipelined(connection: DatabaseConnection): PipelinedConnection {
  if (!(connection instanceof PipelinedConnection)) throw new Error("PipelinedDriver was handed a connection it did not make");
  return connection;
}

/**
 * Runs `query` as the last statement of the transaction `trx` and sends
 * COMMIT behind it in the same write: one round trip for both. The
 * transaction has ended when this settles — committed when it resolves, rolled
 * back when it rejects (with the statement's own error, or Kysely's
 * AbortedTransactionError) — and nothing may be run in `trx` afterwards.
 * Under another dialect (or outside a transaction) it runs `query` alone and
 * leaves the COMMIT to Kysely.
 */
export async function executeAndCommit<R>(trx: Pick<Kysely<never>, "isTransaction" | "getExecutor">, query: CompiledQuery): Promise<QueryResult<R>> {
  return trx.getExecutor().provideConnection(async (connection) => {
    if (!trx.isTransaction || !(connection instanceof PipelinedConnection)) return connection.executeQuery<R>(query);
    const begin = connection.takeBegin();
    const [began, result, commit] = await Promise.allSettled([begin, connection.inner.executeQuery<R>(query), connection.inner.executeQuery(CompiledQuery.raw("commit"))]);
    connection.ended = true;
    if (began.status === "rejected") throw began.reason;
    if (result.status === "rejected") throw result.reason;
    if (commit.status === "rejected") throw commit.reason;
    // A COMMIT answered ROLLBACK: the transaction had already failed (kysely's PostgresDriver reports the tag so).
    if ((commit.value.rows[0] as { command?: string } | undefined)?.command === "ROLLBACK") throw new AbortedTransactionError();
    return result.value;
  });
}
