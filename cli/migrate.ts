import { parseArgs } from "node:util";
import { assertDatabaseCapabilities, DatabaseCapabilityError } from "../db/capabilities";
import { migrate, MigrationError, migrationStatus } from "../db/migrator";
import { createDb } from "../db/pool";
import { ConfigError, loadConfig } from "../server/config";
import { checkDatabaseConnection, databaseLocation, DatabaseConnectionError } from "../server/database-connection";
import { displayPath, embeddedPaths, EmbeddedDatabaseError, prepareEmbeddedState, startEmbeddedInProcess } from "./embedded-database";
import type { EmbeddedPostgresHandle } from "./embedded-database";
import { UsageError } from "./help";

export interface MigrateArgs {
  status: boolean;
}

export function parseMigrateArgs(argv: string[]): MigrateArgs {
  try {
    const { values } = parseArgs({ args: argv, options: { status: { type: "boolean", default: false } }, strict: true, allowPositionals: false });
    return { status: values.status ?? false };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

// Migrating needs no signing secret; this stand-in lets loadConfig check the rest.
const PLACEHOLDER_SECRET = "migrate-needs-no-secret-000000000000000000";

/** An environment; NodeJS.ProcessEnv would demand the NODE_ENV that Next's types make required. */
type Env = Record<string, string | undefined>;

const say = (message: string) => process.stdout.write(`${message}\n`);

/**
 * `nf migrate [--status]`: against DATABASE_URL, or, when it is unset, the
 * embedded cluster under the data directory (started for the job and stopped
 * after), so `npm run migrate` works the same way `npm start` does.
 */
export async function runMigrate(argv: string[], env: Env): Promise<number> {
  const args = parseMigrateArgs(argv);
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
      fix = `the embedded Postgres is not answering; delete ${displayPath(paths.dataDir)} to start over`;
    } else {
      const where = databaseLocation(url);
      say(`Using the database "${where.database}" at ${where.host}:${where.port} (DATABASE_URL).`);
    }
    await checkDatabaseConnection(url, { fix });
    const db = createDb(url, { max: 2, applicationName: "node-flow-migrate" });
    try {
      await assertDatabaseCapabilities(db);
      if (args.status) {
        const status = await migrationStatus(db);
        for (const name of status.applied) say(`  applied  ${name}${status.changed.includes(name) ? "  (file changed since it was applied)" : ""}`);
        for (const name of status.pending) say(`  pending  ${name}`);
        for (const name of status.unknown) say(`  unknown  ${name}  (in the database, not in this build)`);
        say(`${status.applied.length} applied, ${status.pending.length} pending, ${status.unknown.length} unknown.`);
        if (status.pending.length > 0) say("Run `npm run migrate` to apply the pending ones.");
      } else {
        const applied = await migrate(db, { onApply: (name) => say(`  applied ${name}`) });
        say(applied.length === 0 ? "Nothing to apply: the database schema is up to date." : `Applied ${applied.length} migration${applied.length === 1 ? "" : "s"}.`);
      }
    } finally {
      await db.destroy();
    }
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`${problem}\n`);
      return 1;
    }
    if (
      error instanceof DatabaseConnectionError ||
      error instanceof DatabaseCapabilityError ||
      error instanceof MigrationError ||
      error instanceof EmbeddedDatabaseError
    ) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await embedded?.stop();
  }
}
