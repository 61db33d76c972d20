import { sql } from "kysely";
import type { Db } from "@/db/pool";
import { loadMigrations, migrationStatus } from "@/db/migrator";
import type { Migration } from "@/db/migrator";
import type { Config, Role } from "../lib/config";
import { MIN_SERVER_VERSION_NUM } from "./health";

export interface SystemStatus {
  postgres: {
    /** `server_version`, e.g. "18.1". */
    version: string;
    versionNum: number;
    supported: boolean;
    database: string;
  };
  migrations: {
    applied: number;
    pending: string[];
    unknown: string[];
    changed: string[];
  };
  /** The roles of the process answering, which is the web process: its sidecar's roles are its own. */
  roles: Role[];
  nodeVersion: string;
}

/** What the Settings → System panel shows; reads the live database, never a cache. */
export async function readSystemStatus(
  db: Db,
  config: Pick<Config, "roles">,
  migrations: Migration[] = loadMigrations(),
): Promise<SystemStatus> {
  const { rows } = await sql<{ version: string; versionNum: string; database: string }>`
    SELECT current_setting('server_version') AS "version",
           current_setting('server_version_num') AS "versionNum",
           current_database() AS "database"`.execute(db);
  const row = rows[0];
  if (!row) throw new Error("SELECT current_setting(…) returned no row");
  const versionNum = Number(row.versionNum);
  const status = await migrationStatus(db, migrations);
  return {
    postgres: {
      version: row.version,
      versionNum,
      supported: versionNum >= MIN_SERVER_VERSION_NUM,
      database: row.database,
    },
    migrations: {
      applied: status.applied.length,
      pending: status.pending,
      unknown: status.unknown,
      changed: status.changed,
    },
    roles: config.roles,
    nodeVersion: process.version,
  };
}
