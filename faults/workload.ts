import { sql } from "kysely";
import type { Db } from "../db/pool";
import { createNodeFlowClient, createWorker } from "../sdk";
import type { NodeFlowClient, NodeFlowWorker } from "../sdk";

/**
 * The load a fault lands in: open-loop starts of a 3-step chain (a start every
 * 1/rate s, retried with its idempotency key until it is accepted, as a
 * careful client does), run by SDK workers over HTTP; and the checks a fault
 * must pass afterwards, read from the rows themselves.
 */

export const CHAIN = "fault_chain";
export const STEP_QUEUE = "fault_step";
/** One step whose worker may hold it without a word for 3 s only: for the case that kills a worker mid-task. */
export const STALL = "fault_stall";
export const STALL_RESPONSE_TIMEOUT_SECONDS = 3;
const STEPS = ["step1", "step2", "step3"] as const;

/** Each step adds one: the run's result is its input n + 3, or something went wrong. */
export function chainDefinition(): Record<string, unknown> {
  return {
    schemaVersion: 1,
    name: CHAIN,
    nodes: STEPS.map((ref, i) => ({
      ref,
      type: "SIMPLE",
      name: STEP_QUEUE,
      position: { x: i * 220, y: 0 },
      input: { v: i === 0 ? "${workflow.input.n}" : `\${${STEPS[i - 1]}.output.v}` },
    })),
    edges: STEPS.slice(1).map((ref, i) => ({ source: STEPS[i], target: ref })),
    outputParameters: { result: "${step3.output.v}" },
  };
}

export function stallDefinition(): Record<string, unknown> {
  return {
    schemaVersion: 1,
    name: STALL,
    nodes: [
      {
        ref: "stall",
        type: "SIMPLE",
        name: STALL,
        position: { x: 0, y: 0 },
        input: { v: "${workflow.input.n}" },
        policy: { responseTimeoutSeconds: STALL_RESPONSE_TIMEOUT_SECONDS, retryCount: 0 },
      },
    ],
    edges: [],
    outputParameters: { result: "${stall.output.v}" },
  };
}

/** One run of a handler, as the worker saw it. */
export interface Execution {
  taskId: string;
  workflowId: string;
  refName: string;
}

/** The in-process SDK worker of the suite, recording every handler run. */
export function startChainWorker(options: { baseUrl: string; apiKey: string; leaseSeconds?: number; queue?: string }): { worker: NodeFlowWorker; executions: Execution[] } {
  const executions: Execution[] = [];
  const worker = createWorker<{ v: number }>({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    namespace: "default",
    queue: options.queue ?? STEP_QUEUE,
    concurrency: 8,
    leaseSeconds: options.leaseSeconds ?? 60,
    pollTimeoutMs: 5_000,
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    handler: (task) => {
      executions.push({ taskId: task.taskId, workflowId: task.workflowId, refName: task.refName });
      return { v: Number(task.input.v) + 1 };
    },
  });
  return { worker, executions };
}

export interface Arrivals {
  /** Stops starting runs; resolves once every start in hand was accepted (or gave up at its deadline). */
  stop(): Promise<void>;
  /** The accepted runs: id and input n. */
  runs(): { id: string; n: number; acceptedAt: number }[];
  /** Starts that were never accepted. */
  failedStarts(): number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Starts a run every 1000/rate ms until stop(); each start retries with its idempotency key for up to `giveUpMs`. */
export function startArrivals(client: NodeFlowClient, options: { rate: number; label: string; giveUpMs?: number }): Arrivals {
  const accepted: { id: string; n: number; acceptedAt: number }[] = [];
  const inHand = new Set<Promise<void>>();
  let failed = 0;
  let stopped = false;
  let n = 0;
  const giveUpMs = options.giveUpMs ?? 60_000;
  const startOne = async (i: number) => {
    const deadline = Date.now() + giveUpMs;
    while (Date.now() < deadline) {
      try {
        const run = await client.startRun({ name: CHAIN, input: { n: i } }, { idempotencyKey: `${options.label}-${i}`, timeoutMs: 5_000, retry: { retries: 1 } });
        accepted.push({ id: run.id, n: i, acceptedAt: Date.now() });
        return;
      } catch {
        await sleep(250);
      }
    }
    failed++;
  };
  const loop = (async () => {
    const began = Date.now();
    while (!stopped) {
      const i = n++;
      const start = startOne(i).finally(() => inHand.delete(start));
      inHand.add(start);
      // Open loop: the next start is due at its time, whatever became of this one.
      const due = began + (n * 1000) / options.rate;
      await sleep(Math.max(0, due - Date.now()));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      await Promise.all([...inHand]);
    },
    runs: () => [...accepted],
    failedStarts: () => failed,
  };
}

export interface FaultCheck {
  runs: number;
  /** Runs not COMPLETED, or COMPLETED with the wrong result. */
  lost: number;
  /** Steps completed more than once, or run by a handler more often than they were leased. */
  duplicates: number;
  /** Steps whose handler ran again after a lease expired (allowed, and shown by a poll count above 1). */
  reRunAfterLease: number;
  detail: string[];
}

/** Waits until every run in `runIds` has ended (or `timeoutMs` passed); returns when the last one did. */
export async function waitForRunsToEnd(db: Db, runIds: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await openRuns(db, runIds).catch(() => runIds.length);
    if (open === 0 || Date.now() > deadline) return;
    await sleep(200);
  }
}

async function openRuns(db: Db, runIds: readonly string[]): Promise<number> {
  if (runIds.length === 0) return 0;
  const { rows } = await sql<{ open: string }>`
    SELECT count(*) AS open FROM "WorkflowExecutions"
    WHERE "id" = ANY(${[...runIds]}::uuid[]) AND "status" IN ('RUNNING', 'PAUSED')`.execute(db);
  return Number(rows[0]?.open ?? 0);
}

/** Every run must be COMPLETED with n + 3, every step completed once, and no handler run more often than its task was leased. */
export async function checkRuns(db: Db, runs: readonly { id: string; n: number }[], executions: readonly Execution[]): Promise<FaultCheck> {
  const detail: string[] = [];
  if (runs.length === 0) return { runs: 0, lost: 0, duplicates: 0, reRunAfterLease: 0, detail: ["no runs were started"] };
  const ids = runs.map((r) => r.id);
  const { rows: workflows } = await sql<{ id: string; status: string; result: unknown }>`
    SELECT "id", "status", "output" -> 'result' AS result FROM "WorkflowExecutions" WHERE "id" = ANY(${ids}::uuid[])`.execute(db);
  const byId = new Map(workflows.map((w) => [w.id, w]));
  let lost = 0;
  for (const run of runs) {
    const row = byId.get(run.id);
    if (row?.status === "COMPLETED" && row.result === run.n + 3) continue;
    lost++;
    if (detail.length < 10) detail.push(`run ${run.id} (n=${run.n}): ${row ? `${row.status}, result ${JSON.stringify(row.result)}` : "missing"}`);
  }
  const { rows: tasks } = await sql<{ id: string; workflowId: string; refName: string; status: string; pollCount: number }>`
    SELECT "id", "workflowId", "refName", "status", "pollCount" FROM "TaskExecutions" WHERE "workflowId" = ANY(${ids}::uuid[])`.execute(db);
  let duplicates = 0;
  const completedPerStep = new Map<string, number>();
  for (const task of tasks) {
    if (task.status !== "COMPLETED") continue;
    const step = `${task.workflowId}/${task.refName}`;
    completedPerStep.set(step, (completedPerStep.get(step) ?? 0) + 1);
  }
  for (const [step, count] of completedPerStep) {
    if (count === 1) continue;
    duplicates++;
    if (detail.length < 20) detail.push(`step ${step} completed ${count} times`);
  }
  const runsPerTask = new Map<string, number>();
  for (const execution of executions) runsPerTask.set(execution.taskId, (runsPerTask.get(execution.taskId) ?? 0) + 1);
  let reRunAfterLease = 0;
  const taskById = new Map(tasks.map((t) => [t.id, t]));
  for (const [taskId, count] of runsPerTask) {
    const task = taskById.get(taskId);
    if (!task || count === 1) continue;
    // A task is handed out again only once its lease expired; each hand-out counts a poll.
    if (count <= task.pollCount) reRunAfterLease++;
    else {
      duplicates++;
      if (detail.length < 20) detail.push(`task ${taskId} ran ${count} times but was leased ${task.pollCount} times`);
    }
  }
  return { runs: runs.length, lost, duplicates, reRunAfterLease, detail };
}

export function clientFor(baseUrl: string, apiKey: string): NodeFlowClient {
  return createNodeFlowClient({ baseUrl, apiKey, namespace: "default" });
}
