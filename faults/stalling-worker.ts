import { createWorker } from "../sdk";

/**
 * A worker that takes one task and never finishes it, for the fault suite to
 * SIGKILL mid-task: it prints "stalling <taskId>" once it holds one, and
 * heartbeats until it dies, so the task's lease lapses its response timeout after.
 */
const worker = createWorker({
  baseUrl: process.env.NF_URL!,
  apiKey: process.env.NF_API_KEY!,
  namespace: "default",
  queue: process.env.NF_QUEUE!,
  concurrency: 1,
  heartbeatIntervalMs: 500,
  logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  handler: (task) => {
    process.stdout.write(`stalling ${task.taskId}\n`);
    return new Promise<never>(() => undefined);
  },
});
process.once("SIGTERM", () => void worker.stop({ timeoutMs: 1 }));
