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

  it("survives the connection of a transaction in hand being killed: its statements fail, the process goes on, the pool reconnects", async () => {
    const db = createDb(t.url, { max: 1, applicationName: "pool-kill-in-use-test" });
    try {
      let pid = 0;
      const failed = db.transaction().execute(async (trx) => {
        pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS "pid"`.execute(trx)).rows[0]!.pid;
        await sql`SELECT pg_terminate_backend(${pid})`.execute(t.db);
        // The client hears the termination between two statements of the transaction.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await sql`SELECT 1`.execute(trx);
      });
      await expect(failed).rejects.toThrow();
      const again = await sql<{ pid: number }>`SELECT pg_backend_pid() AS "pid"`.execute(db);
      expect(again.rows[0]!.pid).not.toBe(pid);
    } finally {
      await db.destroy();
    }
  });
});
