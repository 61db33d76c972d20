import pg from "pg";
import type { SecretLookup } from "../lib/secret-lookup";
import { redactSecrets, redactText } from "../secrets/redact";
import { completed, failed, failedTerminally } from "./system-task-outcome";
import type { SystemTaskOutcome } from "./system-task-outcome";

/**
 * JDBC: Conductor's JDBC task, against Postgres. The decider puts the node's
 * statement fields into the input as Conductor has them: `connectionId` (or
 * Orkes' `integrationName`), `type` SELECT or UPDATE, `statement` with `?`
 * placeholders, `parameters` (a list, bound in order) and, for UPDATE,
 * `expectedUpdateCount`.
 *
 * A connection is configured, never written into a workflow: the connection
 * named `orders-db` is the Postgres URL (`postgres://user:password@host/db`)
 * stored as the namespace secret `JDBC_ORDERS_DB` — the name upper-cased,
 * every other character `_`. Only someone who may write secrets can add or
 * change one; a workflow can name a connection but never see its URL, which
 * is redacted from every error. The address is the one an administrator
 * stored, so the HTTP tasks' private-network guard does not apply to it.
 *
 * SELECT: `{ result: [row, …] }`, each row an object by column name (dates as
 * ISO text, as JSON carries them). UPDATE (any statement that changes rows:
 * INSERT, UPDATE, DELETE): `{ result: <rows changed> }`, run in a transaction
 * that is rolled back — and the task failed — when `expectedUpdateCount` is
 * given and the count differs. One short-lived connection per task.
 */

export interface JdbcTaskOptions {
  secrets?: SecretLookup;
  /** Default 10 s. */
  connectTimeoutMs?: number;
  /** The statement's own budget (Postgres statement_timeout). Default 30 s. */
  statementTimeoutMs?: number;
  /** A SELECT returning more rows fails rather than fill the output. Default 10 000. */
  maxRows?: number;
}

export const JDBC_TASK_DEFAULTS = { connectTimeoutMs: 10_000, statementTimeoutMs: 30_000, maxRows: 10_000 } as const;

/** The namespace secret holding the URL of the connection named `name`. */
export function jdbcConnectionSecretName(name: string): string {
  return `JDBC_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`.slice(0, 128);
}

/**
 * `?` placeholders as Postgres' `$1, $2, …`, in order; a `?` inside a quoted
 * string, a quoted identifier, a dollar-quoted body or a comment is left alone.
 */
export function toPostgresPlaceholders(statement: string): { text: string; count: number } {
  let out = "";
  let count = 0;
  let i = 0;
  while (i < statement.length) {
    const skipped = quotedLength(statement, i);
    if (skipped > 0) {
      out += statement.slice(i, i + skipped);
      i += skipped;
    } else if (statement[i] === "?") {
      count += 1;
      out += `$${count}`;
      i += 1;
    } else {
      out += statement[i];
      i += 1;
    }
  }
  return { text: out, count };
}

/** The length of the quoted string, quoted identifier, dollar-quoted body or comment starting at `i`; 0 when none does. */
function quotedLength(sql: string, i: number): number {
  if (!"'\"-/$".includes(sql[i]!)) return 0;
  const rest = sql.slice(i);
  const match =
    /^'(?:[^']|'')*'?/.exec(rest) ?? /^"(?:[^"]|"")*"?/.exec(rest) ?? /^--[^\n]*/.exec(rest) ?? /^\/\*[\s\S]*?(?:\*\/|$)/.exec(rest);
  if (match) return match[0].length;
  const tag = /^\$[A-Za-z_]*\$/.exec(rest);
  if (!tag) return 0;
  const end = rest.indexOf(tag[0], tag[0].length);
  return end === -1 ? rest.length : end + tag[0].length;
}

/** Runs a JDBC task in namespace `namespaceId` whose resolved input is `input`. Never throws. */
export async function runJdbcTask(namespaceId: string, input: Record<string, unknown>, options: JdbcTaskOptions): Promise<SystemTaskOutcome> {
  const name = text(input.connectionId) ?? text(input.integrationName);
  if (name === undefined) return failedTerminally("JDBC task: the input names no connectionId (or integrationName)");
  const statement = text(input.statement);
  if (statement === undefined) return failedTerminally("JDBC task: the input has no statement");
  const type = typeof input.type === "string" ? input.type.toUpperCase() : "SELECT";
  if (type !== "SELECT" && type !== "UPDATE") return failedTerminally(`JDBC task: type ${JSON.stringify(input.type)} is not SELECT or UPDATE`);
  const parameters = input.parameters ?? [];
  if (!Array.isArray(parameters)) return failedTerminally("JDBC task: parameters must be a list of values for the ? placeholders");
  const expected = input.expectedUpdateCount;
  if (expected !== undefined && expected !== null && !(typeof expected === "number" && Number.isInteger(expected) && expected >= 0)) {
    return failedTerminally("JDBC task: expectedUpdateCount must be a whole number");
  }
  const { text: sqlText, count } = toPostgresPlaceholders(statement);
  if (count !== parameters.length) return failedTerminally(`JDBC task: the statement has ${count} ? placeholder${count === 1 ? "" : "s"} and parameters has ${parameters.length} value${parameters.length === 1 ? "" : "s"}`);

  const secretName = jdbcConnectionSecretName(name);
  if (options.secrets === undefined) return failedTerminally("JDBC task: this runner has no access to secrets, so it cannot open a connection");
  const url = await options.secrets(namespaceId, secretName);
  if (url === null) return failedTerminally(`JDBC task: no connection ${JSON.stringify(name)}: store its Postgres URL as the secret ${secretName} (Settings → Secrets)`);
  if (!/^postgres(?:ql)?:\/\//i.test(url.trim())) return failedTerminally(`JDBC task: the secret ${secretName} is not a postgres:// URL; node-flow's JDBC task speaks Postgres only`);
  const hidden = secretParts(url);

  const client = new pg.Client({
    connectionString: url.trim(),
    connectionTimeoutMillis: options.connectTimeoutMs ?? JDBC_TASK_DEFAULTS.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs ?? JDBC_TASK_DEFAULTS.statementTimeoutMs,
    application_name: "node-flow-jdbc",
  });
  // A connection dropped while idle must not crash the process.
  client.on("error", () => undefined);
  const values = parameters.map(toParameter);
  try {
    await client.connect();
    if (type === "SELECT") {
      const result = await client.query(sqlText, values);
      const maxRows = options.maxRows ?? JDBC_TASK_DEFAULTS.maxRows;
      if (result.rows.length > maxRows) return failedTerminally(`JDBC SELECT returned ${result.rows.length} rows, more than the ${maxRows} a task output holds: add a LIMIT`);
      return completed(redactSecrets({ result: JSON.parse(JSON.stringify(result.rows)) as unknown[] }, hidden));
    }
    await client.query("BEGIN");
    const result = await client.query(sqlText, values);
    const changed = result.rowCount ?? 0;
    if (typeof expected === "number" && changed !== expected) {
      await client.query("ROLLBACK");
      return failedTerminally(`JDBC UPDATE changed ${changed} row${changed === 1 ? "" : "s"}, expected ${expected}: rolled back`, { result: changed });
    }
    await client.query("COMMIT");
    return completed({ result: changed });
  } catch (error) {
    const message = redactText(error instanceof Error ? error.message : String(error), hidden);
    const code = (error as { code?: unknown }).code;
    // SQLSTATE classes 42 (syntax, unknown table or column) and 22 (bad data) fail the same way every time.
    const permanent = typeof code === "string" && (code.startsWith("42") || code.startsWith("22") || code.startsWith("23"));
    const reason = `JDBC ${type} on ${JSON.stringify(name)} failed: ${message}${typeof code === "string" ? ` (SQLSTATE ${code})` : ""}`;
    return permanent ? failedTerminally(reason) : failed(reason);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/** A parameter as pg binds it: a list as a Postgres array, any other object as JSON text, the rest as they are. */
function toParameter(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return JSON.stringify(value);
  return value;
}

/** The URL and its password: what an error or output must never show. */
function secretParts(url: string): string[] {
  const parts = [url.trim()];
  try {
    const password = decodeURIComponent(new URL(url.trim()).password);
    if (password.length >= 4) parts.push(password);
  } catch {
    // Not parseable as a URL: pg will refuse it, and the whole text is redacted.
  }
  return parts;
}
