/**
 * `npm run bench:engine`: what one evaluation costs the decider, for workflows
 * of 5, 1,000 and 30,000 tasks. The claim under test (invariant 6 of docs/architecture.md):
 * an evaluation loads the frontier plus the rows
 * `refsToLoad` names, so its cost is O(refs used), not O(tasks in the
 * workflow) — the 30,000-task evaluation should be within 1.5× of the 5-task one.
 *
 * Each workload is driven with the real compile + decide through the
 * testkit's in-memory store (the same command semantics as the Postgres
 * evaluator) up to the evaluation being measured: one task has just completed
 * and the decider must react to it. That state is built exactly as the
 * evaluator builds it — frontier plus refsToLoad rows — and then `decide` is
 * timed on it again and again, after a warm-up, with every size of a workload
 * interleaved round-robin (timed one after another, the first size measured
 * came out ~1.5× faster than the others from JIT and GC drift alone).
 *
 * - chain: t0 → t1 → … each reading its predecessor's output; t[N/2] completes.
 * - dynamic fork: one FORK_JOIN_DYNAMIC of N instances; N − 2 are done and
 *   counted, one more completes while the last still runs: decide raises the
 *   fork's `completed` counter (one small updateTask).
 * - dynamic fork, last instance: all but one are done and counted, the last
 *   completes: decide emits `aggregateForkOutput`, and the shell builds the
 *   O(N) output in one SQL statement (once per fork, not measured here: it
 *   is the database's work, see AggregateForkOutputCommand).
 *
 * Besides time, the table shows the bytes of the state decide read and of
 * the commands it returned (JSON): what the evaluator reads and writes.
 *
 * A command, not a test: numbers depend on the machine. Progress goes to
 * stderr, the markdown table to stdout.
 */
import { performance } from "node:perf_hooks";
import { compile, refsToLoad } from "@/engine/compile";
import type { Blueprint } from "@/engine/compile";
import { decide } from "@/engine/decide";
import type { EvaluationState } from "@/engine/decide";
import { validateDefinition } from "@/engine/definition";
import type { ScriptEvaluator } from "@/engine/expressions";
import { isTerminalTaskStatus } from "@/engine/statuses";
import type { TaskStatus } from "@/engine/statuses";
import { TaskStore } from "@/engine/testkit/task-store";

const SIZES = [5, 1_000, 30_000] as const;
const WARMUP_MS = 300;
const MEASURE_MS = 1_500;
const MIN_ITERATIONS = 200;
const MAX_ITERATIONS = 20_000;
const TARGET_RATIO = 1.5;

const noScripts: ScriptEvaluator = { evaluate: () => ({ ok: false, error: "the benchmark workloads have no scripts" }) };
const progress = (line: string): void => void process.stderr.write(`${line}\n`);

interface Workload {
  name: string;
  /** Which completion the measured evaluation reacts to. */
  event: string;
  definition(n: number): unknown;
  input(n: number): Record<string, unknown>;
  /** Drives a fresh store to the state being measured: one task has just completed, nothing has reacted to it. */
  prepare(store: TaskStore, n: number): void;
}

const at = { x: 0, y: 0 };

/** One evaluation with the real decider, applied like the evaluator applies it. */
function evaluate(store: TaskStore, now: number): void {
  const decision = decide(store.blueprint, store.evaluationState(), now, { scripts: noScripts });
  const applied = store.applyDecision(decision.commands, now);
  if (!applied.ok) throw new Error(`benchmark setup: evaluation rolled back: ${applied.reason}`);
}

/** Hands every queued task a worker completes, except those `hold` keeps back. */
function completeQueued(store: TaskStore, now: number, hold: (ref: string) => boolean = () => false): void {
  for (const task of store.frontier()) {
    if (!task.queued || isTerminalTaskStatus(task.status) || hold(task.ref)) continue;
    store.poll(task.taskId, now, "bench");
    store.update(task.taskId, { status: "COMPLETED", output: { v: task.ref } }, now);
  }
}

const chain: Workload = {
  name: "chain",
  event: "t[N/2] completes",
  definition: (n) => ({
    schemaVersion: 1,
    name: `bench_chain_${n}`,
    nodes: Array.from({ length: n }, (_, i) => ({ ref: `t${i}`, type: "SIMPLE", name: "work", position: at, input: { prev: i === 0 ? "${workflow.input.seed}" : `\${t${i - 1}.output.v}` } })),
    edges: Array.from({ length: n - 1 }, (_, i) => ({ source: `t${i}`, target: `t${i + 1}` })),
    outputParameters: { last: `\${t${n - 1}.output.v}` },
  }),
  input: () => ({ seed: 1 }),
  prepare(store, n) {
    const target = Math.floor(n / 2);
    let now = store.workflow.startedAt;
    evaluate(store, now);
    for (let i = 0; i < target; i++) {
      now += 1000;
      completeQueued(store, now);
      evaluate(store, now);
      if (i % 5000 === 4999) progress(`    … ${i + 1}/${target} tasks done`);
    }
    completeQueued(store, now + 1000);
  },
};

const forkDefinition = (n: number): unknown => ({
  schemaVersion: 1,
  name: `bench_fork_${n}`,
  nodes: [
    { ref: "fan", type: "FORK_JOIN_DYNAMIC", forkTaskName: "work", items: "${workflow.input.items}", position: at },
    { ref: "after", type: "SIMPLE", name: "work", position: at },
  ],
  edges: [{ source: "fan", target: "after" }],
});

const fork: Workload = {
  name: "dynamic fork",
  event: "instance N−2 completes (N−2 counted, 1 running)",
  definition: forkDefinition,
  input: (n) => ({ items: Array.from({ length: n }, (_, i) => ({ i })) }),
  prepare(store, n) {
    const now = store.workflow.startedAt;
    evaluate(store, now); // schedules the n instances
    const a = `fan#${n - 2}`;
    const b = `fan#${n - 1}`;
    completeQueued(store, now + 1000, (ref) => ref === a || ref === b);
    evaluate(store, now + 1000); // counts n − 2 completions in one evaluation
    completeQueued(store, now + 2000, (ref) => ref === b);
  },
};

const forkLast: Workload = {
  name: "dynamic fork, last instance",
  event: "the last instance completes (N−1 counted): aggregateForkOutput",
  definition: forkDefinition,
  input: (n) => ({ items: Array.from({ length: n }, (_, i) => ({ i })) }),
  prepare(store, n) {
    const now = store.workflow.startedAt;
    evaluate(store, now);
    const last = `fan#${n - 1}`;
    completeQueued(store, now + 1000, (ref) => ref === last);
    evaluate(store, now + 1000); // counts n − 1 completions
    completeQueued(store, now + 2000);
  },
};

const WORKLOADS = [chain, fork, forkLast];

interface Prepared {
  workload: Workload;
  n: number;
  rows: number;
  blueprint: Blueprint;
  state: EvaluationState;
  now: number;
  pending: string[];
  unprocessed: { ref: string; status: TaskStatus }[];
  commands: number;
  /** JSON bytes of the state decide reads and of the commands it returns. */
  stateBytes: number;
  commandBytes: number;
  decideSamples: number[];
  refsSamples: number[];
}

function prepare(workload: Workload, n: number): Prepared {
  progress(`${workload.name}, ${n.toLocaleString("en")} tasks: building the run…`);
  const valid = validateDefinition(workload.definition(n));
  if (!valid.ok) throw new Error(`benchmark definition invalid: ${valid.problems[0]?.message ?? ""}`);
  const blueprint = compile(valid.definition);
  const store = new TaskStore(blueprint, { workflowId: "bench", name: blueprint.name, version: null, input: workload.input(n), variables: {}, startedAt: 1_893_456_000_000 });
  workload.prepare(store, n);
  const state = store.evaluationState();
  const now = store.workflow.startedAt + 10_000_000;
  const commands = decide(blueprint, state, now, { scripts: noScripts }).commands;
  if (!commands.some((c) => c.kind === "scheduleTask" || c.kind === "updateTask" || c.kind === "completeTask" || c.kind === "aggregateForkOutput")) {
    throw new Error(`benchmark setup: the measured evaluation moves nothing on (${commands.map((c) => c.kind).join(", ")})`);
  }
  const rows = store.allTasks().length;
  progress(`  ${rows.toLocaleString("en")} rows stored; the evaluation reads ${state.frontier.length} frontier + ${state.loaded.length} loaded rows`);
  return {
    workload,
    n,
    rows,
    blueprint,
    state,
    now,
    pending: state.frontier.filter((t) => !isTerminalTaskStatus(t.status)).map((t) => t.ref),
    unprocessed: state.frontier.filter((t) => isTerminalTaskStatus(t.status)).map((t) => ({ ref: t.ref, status: t.status })),
    commands: commands.length,
    stateBytes: JSON.stringify(state).length,
    commandBytes: JSON.stringify(commands).length,
    decideSamples: [],
    refsSamples: [],
  };
}

const elapsed = (fn: () => void): number => {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
};

/**
 * Times every size of a workload round-robin (a batch of each per round), so
 * JIT warm-up, GC and CPU frequency drift spread over all sizes alike instead
 * of favouring whichever ran first.
 */
function measure(prepared: Prepared[]): void {
  const once = (p: Prepared): void => void decide(p.blueprint, p.state, p.now, { scripts: noScripts });
  const before = prepared.map((p) => JSON.stringify(p.state));
  const warmEnd = performance.now() + WARMUP_MS;
  while (performance.now() < warmEnd) for (const p of prepared) for (let i = 0; i < 10; i++) once(p);
  const spent = new Map<Prepared, number>(prepared.map((p) => [p, 0]));
  let round = 0;
  for (;;) {
    const open = prepared.filter((p) => p.decideSamples.length < MAX_ITERATIONS && (p.decideSamples.length < MIN_ITERATIONS || spent.get(p)! < MEASURE_MS));
    if (open.length === 0) break;
    for (const p of open) {
      for (let i = 0; i < 20; i++) {
        const t = elapsed(() => once(p));
        p.decideSamples.push(t);
        spent.set(p, spent.get(p)! + t);
        p.refsSamples.push(elapsed(() => void refsToLoad(p.blueprint, p.pending, p.unprocessed)));
      }
    }
    if (++round % 200 === 0) progress(`  … ${prepared.map((p) => `${p.n}: ${p.decideSamples.length} runs`).join(", ")}`);
  }
  prepared.forEach((p, i) => {
    if (JSON.stringify(p.state) !== before[i]) throw new Error("decide mutated its state");
    p.decideSamples.sort((a, b) => a - b);
    p.refsSamples.sort((a, b) => a - b);
  });
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function main(): void {
  progress(`engine benchmark: per-evaluation cost of decide(), Node ${process.version}`);
  const results: Prepared[] = [];
  for (const workload of WORKLOADS) {
    const prepared = SIZES.map((n) => prepare(workload, n));
    progress(`${workload.name}: timing decide and refsToLoad, all sizes interleaved…`);
    measure(prepared);
    results.push(...prepared);
  }

  const ms = (v: number): string => (v < 0.1 ? v.toFixed(4) : v.toFixed(3));
  const lines = [
    "",
    "| workload | measured evaluation | tasks (N) | rows stored | frontier rows | loaded rows | state bytes | command bytes | refsToLoad median (ms) | decide median (ms) | decide p95 (ms) | runs |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...results.map(
      (r) =>
        `| ${r.workload.name} | ${r.workload.event} | ${r.n.toLocaleString("en")} | ${r.rows.toLocaleString("en")} | ${r.state.frontier.length} | ${r.state.loaded.length} | ${r.stateBytes.toLocaleString("en")} | ${r.commandBytes.toLocaleString("en")} | ${ms(quantile(r.refsSamples, 0.5))} | ${ms(quantile(r.decideSamples, 0.5))} | ${ms(quantile(r.decideSamples, 0.95))} | ${r.decideSamples.length} |`,
    ),
    "",
  ];
  for (const workload of WORKLOADS) {
    const mine = results.filter((r) => r.workload === workload);
    const small = mine[0]!;
    const large = mine.at(-1)!;
    const ratio = quantile(large.decideSamples, 0.5) / quantile(small.decideSamples, 0.5);
    lines.push(`- ${workload.name}: ${large.n.toLocaleString("en")}-task / ${small.n}-task decide median = **${ratio.toFixed(2)}×** (${ratio <= TARGET_RATIO ? "within" : "OVER"} the ${TARGET_RATIO}× target)`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

main();
