import { describe, expect, it } from "vitest";
import { loadMigrations } from "@/db/migrator";
import { useTestDatabase } from "@/db/testing/test-database";
import { loadConfig } from "../../config";
import { createCaller } from "./_app";

const database = useTestDatabase();

describe("system.status", () => {
  it("reports the live server version, the migration state and this process's roles", async () => {
    const config = loadConfig({ DATABASE_URL: database.url, NODE_FLOW_SECRET: "s".repeat(64), NODE_FLOW_ROLES: "api" });
    const status = await createCaller({ db: database.db, config }).system.status();
    expect(status.postgres.versionNum).toBeGreaterThanOrEqual(180000);
    expect(status.postgres.version).toMatch(/^18\./);
    expect(status.postgres.supported).toBe(true);
    expect(status.postgres.database).toBe(database.name);
    expect(status.migrations).toEqual({ applied: loadMigrations().length, pending: [], unknown: [], changed: [] });
    expect(status.roles).toEqual(["api"]);
  });
});
