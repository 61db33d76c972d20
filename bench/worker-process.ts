/**
 * One SDK worker of `npm run bench`, in a process of its own (forked by system-bench.ts),
 * so the workers talk to the server over real HTTP from outside its event loop
 * and their CPU is theirs, as remote workers' would be.
 *
 * It polls one queue with `createWorker` and completes every task at once with
 * `{}`: the benchmark measures the engine, not a handler. Over IPC it tells the
 * parent how many tasks it completed (for the progress line) and, when asked
 * ("flush"), the ids of the tasks it completed since the last flush — the
 * parent checks those against the database, so a lost or doubled completion
 * shows up.
 */
import { createWorker } from "../sdk";
import type { WorkerLogger } from "../sdk";

export type BenchWorkerRequest = { type: "flush" } | { type: "stop" };
export type BenchWorkerMessage =
  | { type: "ready" }
  | { type: "progress"; completed: number }
  | { type: "flushed"; taskIds: string[]; refused: number; errors: number }
  | { type: "stopped"; completed: number; refused: number; errors: number }
  | { type: "warning"; message: string };

function send(message: BenchWorkerMessage): void {
  process.send?.(message);
}

function main(): void {
  const env = process.env;
  const required = (name: string): string => {
    const value = env[name];
    if (!value) {
      console.error(`worker-process.ts is started by \`the system bench\` (${name} is missing).`);
      process.exit(2);
    }
    return value;
  };
  const logger: WorkerLogger = {
    info: () => undefined,
    warn: (fields, message) => send({ type: "warning", message: `${message} ${JSON.stringify(fields)}` }),
    error: (fields, message) => send({ type: "warning", message: `${message} ${JSON.stringify(fields)}` }),
  };
  let completed = 0;
  let pending: string[] = [];
  const worker = createWorker({
    baseUrl: required("NF_BENCH_URL"),
    apiKey: required("NF_BENCH_API_KEY"),
    namespace: required("NF_BENCH_NAMESPACE"),
    queue: required("NF_BENCH_QUEUE"),
    workerId: required("NF_BENCH_WORKER_ID"),
    concurrency: Number(env.NF_BENCH_SLOTS ?? "1"),
    // Parked polls come back every few seconds, so a stop never waits long.
    pollTimeoutMs: 5_000,
    logger,
    handler: () => ({}),
    onEvent: (event) => {
      if (event.type === "task-finished" && event.outcome === "completed") {
        completed += 1;
        pending.push(event.task.taskId);
      }
    },
  });
  const ticker = setInterval(() => send({ type: "progress", completed }), 250);
  process.on("message", (raw) => {
    const request = raw as BenchWorkerRequest;
    const stats = worker.stats();
    if (request.type === "flush") {
      send({ type: "flushed", taskIds: pending, refused: stats.refused + stats.unconfirmed, errors: stats.reportErrors + stats.pollErrors });
      pending = [];
    } else if (request.type === "stop") {
      clearInterval(ticker);
      void worker.stop({ timeoutMs: 5_000 }).then(() => {
        const final = worker.stats();
        send({ type: "stopped", completed, refused: final.refused + final.unconfirmed, errors: final.reportErrors + final.pollErrors });
        process.disconnect?.();
        process.exit(0);
      });
    }
  });
  // Without a parent there is nobody to report to.
  process.on("disconnect", () => process.exit(0));
  send({ type: "ready" });
}

main();
