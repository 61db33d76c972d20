/**
 * `npm run bench:live`: how long from the commit of a status change until a
 * person watching the run sees it? Target p95 ≤ 100 ms.
 *
 * A throwaway stack — Postgres 18, the web process, the worker sidecar — and a
 * workflow whose start node forks into `--per-run` WAIT nodes (external
 * signal) that a JOIN closes. Each run is started the way the run dialog
 * starts it (tRPC `runs.start` through the signed-in session), the decider
 * opens every WAIT, and the execution page is opened in Chromium and left
 * alone. The benchmark then completes the WAITs one at a time with the same
 * operator action the page's "Complete" button calls (completeExternalTask,
 * one transaction: the task row, its WorkflowEvent, whose trigger NOTIFYs),
 * and times from that transaction's commit to the frame in which the page
 * paints the node as COMPLETED: the path under test is NOTIFY → the web
 * process's one LISTEN → that run's SSE stream → EventSource → the run store
 * → the node, plus the decider's own evaluation competing for the same two
 * cores, as in production.
 *
 * Timing: the page records, in a MutationObserver on `data-run-status`, the
 * next animation frame after the node turned COMPLETED (the frame that paints
 * it), as performance.timeOrigin + now(); this process records the instant
 * the action's transaction returned. The two clocks are aligned by the
 * round trip with the smallest delay of 20 (the page clock minus this one at
 * the midpoint), so the figure is commit → paint, not either clock's drift.
 *
 * A command, not a test: numbers depend on the machine and on what else runs
 * on it. Progress goes to stderr, the table to stdout.
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import type { Page } from "@playwright/test";
import { createNode, layoutDefinition, validateDefinition } from "@/engine";
import type { WorkflowDefinition, WorkflowNode } from "@/engine";
import { createDb } from "../db/pool";
import type { Db } from "../db/pool";
import { registerWorkflowDefinition } from "../server/definitions/register-workflow-definition";
import { findNamespaceByName } from "../server/store/namespaces";
import { completeExternalTask } from "../server/executions/actions";
import { buildIfNeeded, integerOption, launchChromium, loadText, machineText, percentile, runBench, signIn, sleep, startLocalStack } from "./browser-stack";

const USAGE = [
  "npm run bench:live -- [--changes 200] [--per-run 50] [--json results.json] [--skip-build] [--headed]",
  "  --changes     status changes to time (completions of WAIT tasks), over as many runs as it takes",
  "  --per-run     WAIT nodes per run (1 to 140: the page draws every node of a diagram that small)",
  "  --json        also write the results to this file, as JSON",
  "  --skip-build  use the existing .next build even when sources are newer",
  "  --headed      show the browser (needs a display)",
  "",
].join("\n");

interface Options {
  changes: number;
  perRun: number;
  json: string | undefined;
  skipBuild: boolean;
  headed: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      changes: { type: "string", default: "200" },
      "per-run": { type: "string", default: "50" },
      json: { type: "string" },
      "skip-build": { type: "boolean", default: false },
      headed: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  return {
    changes: integerOption("changes", values.changes, 1, 100_000),
    // Past 150 nodes the editor opens on the start nodes and draws only what is on screen.
    perRun: integerOption("per-run", values["per-run"], 1, 140),
    json: values.json,
    skipBuild: values["skip-build"] ?? false,
    headed: values.headed ?? false,
  };
}

const say = (line: string): void => void process.stderr.write(`[bench:live] ${line}\n`);
const WORKFLOW = "live_bench";
const waitRef = (k: number) => `wait_${String(k).padStart(3, "0")}`;

/** start → wait_000 … wait_{n-1} (each an external signal) → join. */
function liveBenchWorkflow(perRun: number): WorkflowDefinition {
  const origin = { x: 0, y: 0 };
  const waits = Array.from({ length: perRun }, (_, k) => {
    const { duration: _duration, ...wait } = createNode("WAIT", waitRef(k), origin);
    return { ...wait, signal: true as const };
  });
  const definition = layoutDefinition({
    schemaVersion: 1 as const,
    name: WORKFLOW,
    description: "npm run bench:live: a fork of WAIT tasks the benchmark completes one by one",
    nodes: [createNode("NOOP", "start", origin) as WorkflowNode, ...waits, createNode("JOIN", "join", origin) as WorkflowNode],
    edges: [...waits.map((w) => ({ source: "start", target: w.ref })), ...waits.map((w) => ({ source: w.ref, target: "join" }))],
  });
  const validation = validateDefinition(definition);
  if (!validation.ok) throw new Error(`The benchmark's workflow is invalid: ${validation.problems.map((p) => p.message).join("; ")}`);
  return validation.definition;
}

/** In the page: when a node turns COMPLETED, the next frame's time (the frame that paints it), by ref. */
function installCompletionRecorder(): void {
  const w = window as unknown as { __nfLive: Record<string, number> };
  w.__nfLive = {};
  const seen = w.__nfLive;
  const scan = () => {
    const fresh: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>('[data-run-status="COMPLETED"]')) {
      const ref = el.closest<HTMLElement>(".react-flow__node")?.dataset.id;
      if (ref !== undefined && !(ref in seen)) {
        seen[ref] = -1;
        fresh.push(ref);
      }
    }
    if (fresh.length > 0) {
      requestAnimationFrame(() => {
        const at = performance.timeOrigin + performance.now();
        for (const ref of fresh) seen[ref] = at;
      });
    }
  };
  // Installed before the page has a body: the document itself is observed.
  new MutationObserver(scan).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-run-status"] });
  scan();
}

/** Page clock minus this process's, from the round trip with the least delay. */
async function clockOffset(page: Page): Promise<{ offsetMs: number; rttMs: number }> {
  let best = { offsetMs: 0, rttMs: Number.POSITIVE_INFINITY };
  for (let i = 0; i < 20; i++) {
    const sent = performance.timeOrigin + performance.now();
    const pageAt = await page.evaluate(() => performance.timeOrigin + performance.now());
    const back = performance.timeOrigin + performance.now();
    if (back - sent < best.rttMs) best = { offsetMs: pageAt - (sent + back) / 2, rttMs: back - sent };
  }
  return best;
}

async function startRun(page: Page, baseUrl: string, run: number): Promise<string> {
  const response = await page.request.post(`${baseUrl}/api/trpc/runs.start`, {
    data: { namespace: "default", name: WORKFLOW, input: { run } },
    headers: { origin: baseUrl },
  });
  const body = (await response.json().catch(() => null)) as { result?: { data?: { id?: string } }; error?: { message?: string } } | null;
  const id = body?.result?.data?.id;
  if (!response.ok() || id === undefined) throw new Error(`runs.start failed (HTTP ${response.status()}): ${body?.error?.message ?? "no answer"}`);
  return id;
}

/** Until the decider has opened every WAIT of the run. */
async function waitsOpen(db: Db, workflowId: string, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const row = await db
      .selectFrom("TaskExecutions")
      .select((eb) => eb.fn.countAll<string>().as("open"))
      .where("workflowId", "=", workflowId)
      .where("taskType", "=", "WAIT")
      .where("status", "=", "IN_PROGRESS")
      .executeTakeFirstOrThrow();
    if (Number(row.open) === count) return;
    if (Date.now() > deadline) throw new Error(`Run ${workflowId}: ${row.open} of ${count} WAIT tasks in progress after 60 s; is the sidecar's decider running?`);
    await sleep(100);
  }
}

interface Sample {
  run: number;
  ref: string;
  /** The action's transaction, call to return. */
  commitMs: number;
  /** Its return → the frame painting the node COMPLETED. */
  visibleMs: number;
}

const fmt = (value: number) => (Number.isNaN(value) ? "–" : value < 10 ? value.toFixed(1) : value.toFixed(0));

function summary(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0] ?? Number.NaN, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN, mean: sorted.reduce((s, v) => s + v, 0) / Math.max(1, sorted.length) };
}

runBench(say, "Chromium, next, the sidecar and Postgres", async (stop) => {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const loadBefore = loadText();
  const began = performance.now();
  const definition = liveBenchWorkflow(options.perRun);
  await buildIfNeeded(options.skipBuild, stop, say);
  const stack = await startLocalStack(
    {
      label: "live-bench",
      namespace: "default",
      sidecar: true,
      prepare: async (db, namespaceId) => {
        const registered = await registerWorkflowDefinition(db, { namespaceId, definition, createdBy: "bench:live" });
        if (!registered.ok) throw new Error(`The benchmark's workflow was refused: ${JSON.stringify(registered).slice(0, 500)}`);
      },
    },
    stop,
    say,
  );
  const db = createDb(stack.databaseUrl, { max: 2, applicationName: "node-flow-live-bench" });
  stop.add(() => db.destroy());
  const namespace = await findNamespaceByName(db, "default");
  if (!namespace) throw new Error('There is no namespace "default".');

  say("Launching Chromium…");
  const { browser, context } = await launchChromium(options.headed, stop);
  await context.addInitScript(installCompletionRecorder);
  const page = await context.newPage();
  await signIn(page, stack.baseUrl, stack.email, stack.password);

  const samples: Sample[] = [];
  let lastProgress = 0;
  for (let run = 1; samples.length < options.changes; run++) {
    stop.throwIfStopping();
    const workflowId = await startRun(page, stack.baseUrl, run);
    await waitsOpen(db, workflowId, options.perRun);
    await page.goto(`${stack.baseUrl}/executions/${workflowId}`);
    await page.waitForFunction(
      (n) => document.querySelectorAll('.react-flow__node [data-run-status="IN_PROGRESS"]').length >= n,
      options.perRun,
      { timeout: 60_000 },
    );
    // Let the page's first burst (history, snapshot, fit view) settle before timing anything.
    await sleep(500);
    const { offsetMs } = await clockOffset(page);
    const thisRun = Math.min(options.perRun, options.changes - samples.length);
    for (let k = 0; k < thisRun; k++) {
      stop.throwIfStopping();
      const ref = waitRef(k);
      const called = performance.timeOrigin + performance.now();
      const result = await completeExternalTask({ db }, { namespaceId: namespace.id, workflowId, taskRef: ref, actor: { type: "system", id: "bench:live" }, output: { k } });
      const committed = performance.timeOrigin + performance.now();
      if (!result.ok) throw new Error(`Completing ${ref} of ${workflowId} was refused: ${result.message}`);
      const handle = await page.waitForFunction((r) => {
          // -1 while the painting frame is pending: falsy values keep waitForFunction polling.
          const at = (window as unknown as { __nfLive: Record<string, number> }).__nfLive[r] ?? 0;
          return at > 0 ? at : 0;
        }, ref, { timeout: 15_000, polling: 10 });
      const paintedAt = (await handle.jsonValue());
      await handle.dispose();
      samples.push({ run, ref, commitMs: committed - called, visibleMs: paintedAt - offsetMs - committed });
      if (performance.now() - lastProgress > 2_000 || samples.length === options.changes) {
        lastProgress = performance.now();
        say(`${samples.length}/${options.changes} changes timed (run ${run}); last ${fmt(samples.at(-1)!.visibleMs)} ms`);
      }
      // People do not act in lockstep with the page: a small irregular gap between changes.
      await sleep(20 + ((k * 37) % 60));
    }
  }

  const visible = summary(samples.map((s) => s.visibleMs));
  const commit = summary(samples.map((s) => s.commitMs));
  const lines = [
    `# node-flow live-view benchmark (npm run bench:live): ${samples.length} status changes, ${options.perRun} WAIT nodes per run`,
    "",
    `Machine: ${machineText()}; load average ${loadBefore} before, ${loadText()} after.`,
    `Chromium ${browser.version()} (headless), the execution page at 1280×800; the web process, the worker sidecar and Postgres 18 on this machine.`,
    "",
    "| measure (ms) | min | p50 | p95 | p99 | max | mean |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    `| commit → node painted COMPLETED | ${fmt(visible.min)} | ${fmt(visible.p50)} | ${fmt(visible.p95)} | ${fmt(visible.p99)} | ${fmt(visible.max)} | ${fmt(visible.mean)} |`,
    `| the action's transaction (call → commit) | ${fmt(commit.min)} | ${fmt(commit.p50)} | ${fmt(commit.p95)} | ${fmt(commit.p99)} | ${fmt(commit.max)} | ${fmt(commit.mean)} |`,
    "",
    `Target: p95 ≤ 100 ms — ${visible.p95 <= 100 ? "met" : "missed"}.`,
    "",
  ];
  process.stdout.write(lines.join("\n"));
  if (options.json) {
    writeFileSync(
      options.json,
      `${JSON.stringify({ benchmark: "bench:live", at: new Date().toISOString(), machine: machineText(), loadAverage: { before: loadBefore, after: loadText() }, options, visible, commit, samples }, null, 2)}\n`,
    );
    say(`Wrote ${options.json}.`);
  }
  say(`Done in ${((performance.now() - began) / 1000).toFixed(0)} s.`);
});
