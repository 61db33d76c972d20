import { assertDatabaseCapabilities, DatabaseCapabilityError } from "../db/capabilities";
import { MigrationError } from "../db/migrator";
import { createDb } from "../db/pool";
import type { Db } from "../db/pool";
import { ConfigError, loadConfig } from "../server/lib/config";
import { checkDatabaseConnection, databaseLocation, DatabaseConnectionError } from "../server/lib/database-connection";
import { displayPath, embeddedPaths, EmbeddedDatabaseError, prepareEmbeddedState, startEmbeddedInProcess } from "./embedded-database";
import type { EmbeddedPostgresHandle } from "./embedded-database";

/** An environment; NodeJS.ProcessEnv would demand the NODE_ENV that Next's types make required. */
export type Env = Record<string, string | undefined>;

// Operator commands need no signing secret; this stand-in lets loadConfig check the rest.
const PLACEHOLDER_SECRET = "operator-needs-no-secret-0000000000000000";

export interface OperatorDatabaseOptions {
  applicationName: string;
  /** Progress lines (stdout for migrate; stderr for bootstrap, whose stdout is the key). */
  say: (message: string) => void;
  /** What to tell the user when the embedded Postgres does not answer, given its data directory. */
  embeddedFix: (dataDir: string) => string;
  /** Errors of the command itself that are reported as one line and exit 1, like the database's. */
  userErrors?: readonly (abstract new (...args: never[]) => Error)[];
}

/**
 * The shell of `nf migrate` and `nf bootstrap`: against DATABASE_URL, or, when
 * it is unset, the embedded cluster under the data directory (started for the
 * job and stopped after), connection and capabilities checked; then `body`.
 * Known problems (config, connection, capabilities, migrations, the embedded
 * cluster, `userErrors`) are one line on stderr and exit 1; anything else throws.
 */
export async function withOperatorDatabase(env: Env, options: OperatorDatabaseOptions, body: (db: Db) => Promise<number>): Promise<number> {
  const { say } = options;
  const databaseUrlFromEnv = env.DATABASE_URL?.trim() ? env.DATABASE_URL : undefined;
  let embedded: EmbeddedPostgresHandle | undefined;
  try {
    const config = loadConfig({
      ...env,
      DATABASE_URL: databaseUrlFromEnv ?? "postgres://embedded.invalid/node_flow",
      NODE_FLOW_SECRET: env.NODE_FLOW_SECRET?.trim() ? env.NODE_FLOW_SECRET : PLACEHOLDER_SECRET,
    });
    let url = config.databaseUrl;
    let fix = "check DATABASE_URL";
    if (!databaseUrlFromEnv) {
      const paths = embeddedPaths(config.dataDir);
      const { state } = prepareEmbeddedState(paths);
      say(`DATABASE_URL is not set: using the embedded Postgres 18 in ${displayPath(paths.dataDir)}/.`);
      embedded = await startEmbeddedInProcess(paths, state);
      url = embedded.url;
      fix = options.embeddedFix(displayPath(paths.dataDir));
    } else {
      const where = databaseLocation(url);
      say(`Using the database "${where.database}" at ${where.host}:${where.port} (DATABASE_URL).`);
    }
    await checkDatabaseConnection(url, { fix });
    const db = createDb(url, { max: 2, applicationName: options.applicationName });
    try {
      await assertDatabaseCapabilities(db);
      return await body(db);
    } finally {
      await db.destroy();
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`${problem}\n`);
      return 1;
    }
    const known = [DatabaseConnectionError, DatabaseCapabilityError, MigrationError, EmbeddedDatabaseError, ...(options.userErrors ?? [])];
    if (error instanceof Error && known.some((kind) => error instanceof kind)) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await embedded?.stop();
  }
}
