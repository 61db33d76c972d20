import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createDb } from "./pool";
import { useTestDatabase } from "./testing/test-database";

describe("createDb's pool", () => {
  const t = useTestDatabase();

  it("survives an idle connection being killed under it, and the next query reconnects", async () => {
    const db = createDb(t.url, { max: 1, applicationName: "pool-kill-test" });
    try {
      const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS "pid"`.execute(db);
      const pid = rows[0]!.pid;
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown) => uncaught.push(error);
      process.on("uncaughtException", onUncaught);
      try {
        await sql`SELECT pg_terminate_backend(${pid})`.execute(t.db);
        // The idle client hears the termination asynchronously; give it a moment to arrive.
        await new Promise((resolve) => setTimeout(resolve, 300));
      } finally {
        process.off("uncaughtException", onUncaught);
      }
      expect(uncaught).toEqual([]);
      const again = await sql<{ pid: number }>`SELECT pg_backend_pid() AS "pid"`.execute(db);
      expect(again.rows[0]!.pid).not.toBe(pid);
    } finally {
      await db.destroy();
    }
  });
});
