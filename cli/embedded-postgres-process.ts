/**
 * Hosts the embedded Postgres for `nf start`, forked by embedded-database.ts.
 *
 * Why a process of its own: embedded-postgres spawns `postgres` in its caller's
 * process group, so a Ctrl-C in the terminal reaches Postgres directly and it
 * fast-shuts down at once, while the worker is still finishing the batch in hand
 * against it. Forked `detached`, this host and its Postgres sit in their own
 * group: only `nf start` stops them, and only after web and worker are down.
 *
 * It also must not outlive `nf start`: when the IPC channel closes (the parent
 * exited, even by SIGKILL) it stops Postgres and exits. And it does not outlive
 * its Postgres: when the postmaster dies unasked, it exits with code 3.
 */
import type { EmbeddedProcessMessage } from "./embedded-database";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Resolves once the message is handed to the channel, so an exit right after cannot drop it. */
function send(message: EmbeddedProcessMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, undefined, undefined, () => resolve());
  });
}

async function main(): Promise<void> {
  const dataDir = process.env.NF_EMBEDDED_POSTGRES_DIR;
  const password = process.env.NF_EMBEDDED_POSTGRES_PASSWORD;
  const port = Number(process.env.NF_EMBEDDED_POSTGRES_PORT) || undefined;
  if (!dataDir || !password || !process.send) {
    console.error("embedded-postgres-process.ts is started by `nf start`, not by hand.");
    process.exit(2);
  }

  // The launcher drops the package's own exit and signal hooks (see
  // db/embedded-postgres.ts), so this file alone owns shutdown; its sync 'exit'
  // hook still SIGINTs Postgres if this process dies some other way.
  const { startEmbeddedPostgres } = await import("../db/embedded-postgres");

  let stopRequested = false;
  let running: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  const shutdown = async () => {
    if (stopRequested) return;
    stopRequested = true;
    // Still starting: main() stops it as soon as start() returns.
    if (!running) return;
    await running.stop();
    process.exit(0);
  };
  for (const signal of SIGNALS) process.on(signal, () => void shutdown());
  process.on("disconnect", () => void shutdown());

  try {
    running = await startEmbeddedPostgres({
      dataDir,
      persistent: true,
      port,
      password,
      // `npm run bench -- --pg-stat-statements` loads the extension (settings need a server start).
      settings: process.env.NF_EMBEDDED_POSTGRES_SETTINGS ? (JSON.parse(process.env.NF_EMBEDDED_POSTGRES_SETTINGS) as Record<string, string>) : undefined,
      onLog: (line) => console.log(line),
    });
  } catch (error) {
    // First line only: initdb's failure arrives as a multi-line dump.
    const message = (error instanceof Error ? error.message : String(error)).split("\n").find((line) => line.trim()) ?? "unknown error";
    await send({ type: "failed", message: `The embedded Postgres did not start: ${message.trim()}` });
    process.exit(1);
  }
  if (stopRequested) {
    await running.stop();
    process.exit(0);
  }
  await send({ type: "ready", port: running.port });
  // Postgres died under us (killed, out of memory): say how and exit, so `nf start` notices at once and
  // starts a new host, whose Postgres runs crash recovery on the same data directory.
  const died = await running.exited;
  if (died.stopped || stopRequested) return;
  console.log(`postgres ${died.signal ? `was killed by ${died.signal}` : `exited with code ${died.code}`}`);
  process.exit(3);
}

void main();
