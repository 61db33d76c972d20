import { parseArgs } from "node:util";
import { migrate, migrationStatus } from "../db/migrator";
import { UsageError } from "./help";
import { withOperatorDatabase } from "./operator-database";
import type { Env } from "./operator-database";

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


const say = (message: string) => process.stdout.write(`${message}\n`);

/**
 * `nf migrate [--status]`: against DATABASE_URL, or, when it is unset, the
 * embedded cluster under the data directory (started for the job and stopped
 * after), so `npm run migrate` works the same way `npm start` does.
 */
export async function runMigrate(argv: string[], env: Env): Promise<number> {
  const args = parseMigrateArgs(argv);
  return withOperatorDatabase(
    env,
    {
      applicationName: "node-flow-migrate",
      say,
      embeddedFix: (dataDir) => `the embedded Postgres is not answering; delete ${dataDir} to start over`,
    },
    async (db) => {
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
      return 0;
    },
  );
}
