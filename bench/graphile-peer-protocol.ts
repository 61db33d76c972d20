/** What `npm run bench`'s peer (graphile-peer.ts) and its worker process (graphile-peer-worker.ts) share. */

/** A schema of the peer's own, dropped when the bench ends with the rest of its throwaway Postgres. */
export const GRAPHILE_SCHEMA = "nf_bench_graphile";
export const GRAPHILE_TASK = "nf_bench_step";

/** A run is its number; a job is one of its steps, 1 to the chain's length. */
export interface GraphileStepPayload {
  run: number;
  step: number;
}

export type GraphilePeerMessage =
  | { type: "ready" }
  /** Runs whose last step's handler returned since the last message: when (epoch ms), and their step gaps (ms). */
  | { type: "ended"; runs: { run: number; endMs: number; gaps: number[] }[] }
  | { type: "count"; steps: number; duplicated: number };
export type GraphilePeerRequest = { type: "count" } | { type: "stop" };
