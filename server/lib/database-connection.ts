import pg from "pg";

/**
 * Turns "cannot reach the database" into one line an operator can act on. Used
 * by the sidecar and by `nf start`/`nf migrate` before anything else touches the
 * database, so a typo in DATABASE_URL never surfaces as a pool stack trace.
 * Nothing here ever prints the password: messages name host, port, database and
 * user only, and any echo of the URL in a driver message is scrubbed.
 */
export class DatabaseConnectionError extends Error {
  override name = "DatabaseConnectionError";
}

export interface DatabaseLocation {
  host: string;
  port: string;
  database: string;
  user: string;
}

export function databaseLocation(url: string): DatabaseLocation {
  try {
    const parsed = new URL(url);
    return {
      // A Unix socket's directory arrives URL-encoded as the host (the embedded cluster's).
      host: decodeURIComponent(parsed.hostname) || "localhost",
      port: parsed.port || "5432",
      database: decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username) || "postgres",
      user: decodeURIComponent(parsed.username) || "postgres",
    };
  } catch {
    return { host: "?", port: "?", database: "?", user: "?" };
  }
}

/** The URL with its password replaced, for the rare message that must show one. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@");
  }
}

interface DriverError {
  code?: string;
  message?: string;
  errors?: DriverError[];
}

function scrub(message: string, url: string): string {
  let out = message;
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password) out = out.split(password).join("***");
  } catch {
    // An unparseable URL has no password we could find; the regex below still catches URL-shaped echoes.
  }
  return out.replace(/(postgres(?:ql)?:\/\/[^:/@\s]*):[^@\s]*@/g, "$1:***@");
}

/**
 * One line for a failed connection attempt. `fix` is the advice appended to
 * network failures ("check DATABASE_URL", or something else for the embedded database).
 */
export function describeConnectionFailure(error: unknown, url: string, fix = "check DATABASE_URL"): string {
  const where = databaseLocation(url);
  const at = `${where.host}:${where.port}`;
  const e = (error ?? {}) as DriverError;
  // Node's happy-eyeballs connect (localhost → ::1 and 127.0.0.1) throws an
  // AggregateError whose own code may be missing; the per-address errors carry it.
  const code = e.code ?? e.errors?.find((inner) => inner.code)?.code;
  const message = scrub(String(e.message ?? error), url);
  switch (code) {
    case "ECONNREFUSED":
      return `Cannot connect to the database at ${at} (ECONNREFUSED: nothing is listening there): ${fix}.`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `Cannot connect to the database at ${at} (${code}: the host name "${where.host}" does not resolve): ${fix}.`;
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `Cannot connect to the database at ${at} (${code}): ${fix}, and that the host is reachable from here.`;
    case "ECONNRESET":
      return `The database at ${at} closed the connection (ECONNRESET): ${fix} (is it a Postgres server? does it need sslmode=require?).`;
    case "28P01":
      return `The database at ${at} rejected the password for user "${where.user}" (28P01): ${fix}.`;
    case "28000":
      return `The database at ${at} refused user "${where.user}" (28000: ${message}): ${fix}.`;
    case "3D000":
      return `The database "${where.database}" does not exist on ${at} (3D000): create it, or ${fix}.`;
    case "57P03":
      return `The database at ${at} is starting up or shutting down (57P03): wait and try again.`;
    default:
      if (/timeout/i.test(message)) return `Cannot connect to the database at ${at} (timed out): ${fix}, and that the host is reachable from here.`;
      return `Cannot connect to the database at ${at} (${code ? `${code}: ` : ""}${message}): ${fix}.`;
  }
}

/**
 * Opens and closes one connection with a short timeout. Pools retry and queue,
 * which turns a wrong URL into a hang; one plain client fails fast and clearly.
 */
export async function checkDatabaseConnection(url: string, options: { timeoutMs?: number; fix?: string } = {}): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: options.timeoutMs ?? 5_000 });
  // A server that drops the connection later emits 'error' on the client; without a listener Node would crash.
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    throw new DatabaseConnectionError(describeConnectionFailure(error, url, options.fix));
  } finally {
    await client.end().catch(() => undefined);
  }
}
