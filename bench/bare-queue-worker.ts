/**
 * One worker of `npm run bench`'s bare queue (bare-queue.ts), in a process of
 * its own like the SDK workers, but straight to Postgres: no HTTP and no
 * workflow, a job leased and completed as bench-bare-queue-sql.ts says.
 *
 * With nothing to lease it parks on LISTEN, with a 100 ms timeout (a missed
 * notification costs latency only, as in node-flow). Over IPC it tells the
 * parent how many jobs it completed.
 */
import pg from "pg";
import { LEASE_JOB, LISTEN_BARE_QUEUE, completeJob } from "./bare-queue-sql";
import type { BareQueueWorkerMessage, BareQueueWorkerRequest } from "./bare-queue-sql";

async function main(): Promise<void> {
  const url = process.env.NF_BARE_QUEUE_URL;
  if (!url) {
    console.error("bare-queue-worker.ts is started by `npm run bench` (NF_BARE_QUEUE_URL is missing).");
    process.exit(2);
  }
  const owner = `bare-${process.pid}`;
  const complete = completeJob(process.env.NF_BARE_QUEUE_NOTIFY !== "0");
  const client = new pg.Client({ connectionString: url, application_name: "node-flow-bench-bare-queue" });
  const listener = new pg.Client({ connectionString: url, application_name: "node-flow-bench-bare-queue" });
  await client.connect();
  await listener.connect();
  let wake: (() => void) | undefined;
  listener.on("notification", () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  });
  await listener.query(LISTEN_BARE_QUEUE);

  let completed = 0;
  let stopping = false;
  process.on("message", (raw) => {
    const request = raw as BareQueueWorkerRequest;
    if (request.type === "count") process.send?.({ type: "count", completed } satisfies BareQueueWorkerMessage);
    else stopping = true;
  });
  process.send?.({ type: "ready" } satisfies BareQueueWorkerMessage);

  while (!stopping) {
    // Named: prepared once per connection, as node-flow's own statements are (db/pool.ts).
    const { rows } = await client.query<{ id: string }>({ name: "lease", text: LEASE_JOB, values: [owner] });
    const job = rows[0];
    if (job === undefined) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 100);
      });
      continue;
    }
    await client.query({ name: "complete", text: complete, values: [job.id, owner] });
    completed++;
  }
  await Promise.all([client.end(), listener.end()]);
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
