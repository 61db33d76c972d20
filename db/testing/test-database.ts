import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import type { Db } from "../pool";
import { createDb } from "../pool";
import { databaseUrl } from "./test-postgres";

export interface TestDatabase {
  name: string;
  url: string;
  db: Db;
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Creates an empty database (not migrated) and returns its URL; for migration tests. */
export async function createEmptyDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `t_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE "${name}"`);
  return {
    name,
    url: databaseUrl(inject("pgAdminUrl"), name),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/**
 * Gives the calling test file its own database cloned from the migrated
 * template, created before its tests and dropped after. Read `.db` inside tests.
 */
export function useTestDatabase(): TestDatabase {
  const handle = {} as TestDatabase;
  beforeAll(async () => {
    handle.name = `t_${randomBytes(6).toString("hex")}`;
    await adminQuery(`CREATE DATABASE "${handle.name}" TEMPLATE "${inject("pgTemplateDatabase")}"`);
    handle.url = databaseUrl(inject("pgAdminUrl"), handle.name);
    handle.db = createDb(handle.url, { max: 5 });
  });
  afterAll(async () => {
    await handle.db?.destroy();
    if (handle.name) await adminQuery(`DROP DATABASE IF EXISTS "${handle.name}" WITH (FORCE)`);
  });
  return handle;
}
