import { sql } from "kysely";
import type { Kysely } from "kysely";

export class DatabaseCapabilityError extends Error {
  override name = "DatabaseCapabilityError";
}

/**
 * Refuses a server older than Postgres 18, then proves `uuidv7()` works: the hot
 * insert tables key on it to keep btree inserts at the right edge.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema: this runs before migrations exist
export async function assertDatabaseCapabilities(db: Kysely<any>): Promise<{ serverVersionNum: number }> {
  const { rows } = await sql<{ v: string }>`SELECT current_setting('server_version_num') AS "v"`.execute(db);
  const serverVersionNum = Number(rows[0]?.v ?? 0);
  if (serverVersionNum < 180000) {
    const major = Math.floor(serverVersionNum / 10000);
    throw new DatabaseCapabilityError(
      `PostgreSQL ${major} is too old: node-flow needs PostgreSQL 18 or newer (server_version_num ${serverVersionNum} < 180000). Point DATABASE_URL at a Postgres 18 server, or unset it to use the embedded one.`,
    );
  }
  try {
    await sql`SELECT uuidv7()`.execute(db);
  } catch (error) {
    throw new DatabaseCapabilityError(
      `uuidv7() is not available on this server (${(error as Error).message}); node-flow needs PostgreSQL 18's built-in uuidv7().`,
    );
  }
  return { serverVersionNum };
}
