/**
 * The peer's workers (graphile-peer.ts): one process running a graphile-worker
 * pool with as many slots as node-flow's workers have between them, straight
 * to the bench's Postgres, as graphile-worker is meant to be run.
 *
 * The same 3-step chain as node-flow's: a job of step k completes at once and,
 * unless it is the last, adds the job of step k + 1 (graphile-worker's own
 * addJob, from inside the task). The process keeps, per run, when its last
 * step's handler returned; a step's gap is that moment to the next step's
 * handler starting (node-flow's step turnaround is the same span: a completion
 * to the next task's lease). Every 10 ms it sends the parent the runs that
 * ended since (their end time, their gaps), and counts a step seen twice for a
 * run as a duplicate.
 */
import { Logger, run } from "graphile-worker";
import type { Runner, Task } from "graphile-worker";
import { GRAPHILE_SCHEMA, GRAPHILE_TASK } from "./graphile-peer-protocol";
import type { GraphilePeerMessage, GraphilePeerRequest, GraphileStepPayload } from "./graphile-peer-protocol";

const wallMs = () => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  const url = process.env.NF_GRAPHILE_URL;
  const concurrency = Number(process.env.NF_GRAPHILE_CONCURRENCY);
  const steps = Number(process.env.NF_GRAPHILE_STEPS);
  if (!url || !(concurrency > 0) || !(steps > 0)) {
    console.error("graphile-peer-worker.ts is started by `npm run bench` (NF_GRAPHILE_URL, NF_GRAPHILE_CONCURRENCY or NF_GRAPHILE_STEPS is missing).");
    process.exit(2);
  }
  /** Per run still going: the steps seen, and when the last one's handler returned. */
  const going = new Map<number, { steps: Set<number>; lastEndMs: number; gaps: number[] }>();
  let ended: { run: number; endMs: number; gaps: number[] }[] = [];
  let duplicated = 0;
  let stepsDone = 0;

  const step: Task = async (payload, helpers) => {
    const startMs = wallMs();
    const { run: id, step: k } = payload as GraphileStepPayload;
    let state = going.get(id);
    if (state === undefined) {
      state = { steps: new Set(), lastEndMs: startMs, gaps: [] };
      going.set(id, state);
    } else state.gaps.push(startMs - state.lastEndMs);
    if (state.steps.has(k)) duplicated += 1;
    state.steps.add(k);
    if (k < steps) await helpers.addJob(GRAPHILE_TASK, { run: id, step: k + 1 } satisfies GraphileStepPayload);
    stepsDone += 1;
    state.lastEndMs = wallMs();
    if (k === steps) {
      going.delete(id);
      ended.push({ run: id, endMs: state.lastEndMs, gaps: state.gaps });
    }
  };

  const runner: Runner = await run({
    connectionString: url,
    schema: GRAPHILE_SCHEMA,
    concurrency,
    // A connection per slot and the pool's own (graphile-worker's advice).
    maxPoolSize: concurrency + 2,
    noHandleSignals: true,
    logger: new Logger(() => (level, message) => {
      // LogLevel is an ambient const enum (no value under isolatedModules): compared as the string it is.
      if ((level as string) === "error") console.error(`graphile-worker: ${message}`);
    }),
    taskList: { [GRAPHILE_TASK]: step },
  });

  const flusher = setInterval(() => {
    if (ended.length === 0) return;
    process.send?.({ type: "ended", runs: ended } satisfies GraphilePeerMessage);
    ended = [];
  }, 10);
  let stopping = false;
  process.on("message", (raw) => {
    const request = raw as GraphilePeerRequest;
    if (request.type === "count") process.send?.({ type: "count", steps: stepsDone, duplicated } satisfies GraphilePeerMessage);
    else if (!stopping) {
      stopping = true;
      clearInterval(flusher);
      void runner.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    }
  });
  process.send?.({ type: "ready" } satisfies GraphilePeerMessage);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
