import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { loadMigrations } from "@/db/migrator";
import { useTestDatabase } from "@/db/testing/test-database";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

const database = useTestDatabase();

describe("system.status", () => {
  it("reports the live server version, the migration state and this process's roles", async () => {
    const user = await insertTestUser(database.db, "viewer@example.com");
    const status = await callerAs(database.db, database.url, userPrincipal(user)).system.status();
    expect(status.postgres.versionNum).toBeGreaterThanOrEqual(180000);
    expect(status.postgres.version).toMatch(/^18\./);
    expect(status.postgres.supported).toBe(true);
    expect(status.postgres.database).toBe(database.name);
    expect(status.migrations).toEqual({ applied: loadMigrations().length, pending: [], unknown: [], changed: [] });
    expect(status.roles).toEqual(["api"]);
  });

  it("refuses an anonymous caller", async () => {
    await expect(callerAs(database.db, database.url, null).system.status()).rejects.toSatisfy(
      (error: unknown) => error instanceof TRPCError && error.code === "UNAUTHORIZED",
    );
  });
});
