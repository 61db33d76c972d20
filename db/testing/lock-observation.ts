import { sql } from "kysely";
import type { Kysely } from "kysely";

// Race tests order two transactions by *observing* Postgres, not by sleeping:
// each side reports its backend pid, and the test waits until one is blocked on
// the other before letting the holder commit.

/** The backend pid of the connection a transaction runs on. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema; only a catalog function is called
export async function backendPid(trx: Kysely<any>): Promise<number> {
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS "pid"`.execute(trx);
  return rows[0]!.pid;
}

/** Resolves once backend `pid` waits on a lock held by `holderPid`; throws after 10 s. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema; only a catalog function is called
export async function blockedBy(db: Kysely<any>, pid: number, holderPid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await sql<{ blockers: number[] }>`SELECT pg_blocking_pids(${pid}::int) AS "blockers"`.execute(db);
    if (rows[0]?.blockers.includes(holderPid)) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`backend ${pid} never blocked on ${holderPid}`);
}
