/**
 * `npm run bench:canvas`: is the editor's canvas still responsive at 1,000
 * nodes? It loads a generated 1,000-node workflow
 * (canvas-bench-workflow.ts: chains, SWITCH branches, DO_WHILE loops with
 * bodies, forks joining) into the real editor page in Chromium and records
 * the time between animation frames while a person's gestures are replayed:
 *
 * 1. pan: a mouse drag on the empty pane, to and fro, ~2 s;
 * 2. zoom: mouse-wheel in and out over the canvas, ~2 s;
 * 3. drag one node in circles, ~2 s;
 * 4. box-select ~50 nodes (Shift-drag) and drag them together, ~3 s.
 *
 * The four gestures run twice: from fit view (the whole workflow, which at
 * 1,000 nodes is React Flow's minimum zoom, so nearly every node is on
 * screen and in the DOM — the hard case), then from a readable zoom (≥ 0.6,
 * how a person edits, where `onlyRenderVisibleElements` leaves a few dozen).
 * Frames are timed by a requestAnimationFrame loop in the page, from the
 * frame timestamps Chromium hands it: a frame that took 50 ms of main-thread
 * work shows as a 50 ms gap. Mouse events are sent at most every 16 ms; the
 * browser acknowledges each one before the next is sent, so a busy page
 * also shows as fewer input events.
 *
 * By default everything is local and thrown away: the app is built when its
 * sources changed (waiting for any `next build` already running here), a
 * Postgres 18 is started in a temporary directory, migrated, given an owner
 * and the workflow, and the web process serves it on a free port. With `--url`
 * it measures a running server instead, signing in with the credentials
 * given and saving the workflow as a new version there.
 *
 * A command, not a test: numbers depend on the machine (and on what else
 * runs on it). Progress goes to stderr, the table to stdout.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import type { Page } from "@playwright/test";
import type { WorkflowDefinition } from "@/engine";
import { FAR_ZOOM, nodeAt, nodesInside, overviewLayout } from "../components/editor/overview-geometry";
import type { OverviewLayout } from "../components/editor/overview-geometry";
import { registerWorkflowDefinition } from "../server/definitions/register-workflow-definition";
import { UsageProblem, buildIfNeeded, integerOption, launchChromium, loadText, machineText, percentile, runBench, signIn, sleep, startLocalStack } from "./browser-stack";
import { generateCanvasWorkflow } from "./canvas-workflow";

interface BenchOptions {
  nodes: number;
  seed: number;
  url: string | undefined;
  email: string | undefined;
  password: string | undefined;
  namespace: string;
  json: string | undefined;
  skipBuild: boolean;
  headed: boolean;
  profile: string | undefined;
}

const USAGE = [
  "npm run bench:canvas -- [--nodes 1000] [--seed 1] [--json results.json] [--skip-build]",
  "npm run bench:canvas -- --url http://host:3000 --email E [--password P] [--namespace default]",
  "  --nodes       size of the generated workflow",
  "  --seed        which generated workflow of that size (the same seed draws the same diagram)",
  "  --json        also write the results to this file, as JSON",
  "  --skip-build  use the existing .next build even when sources are newer",
  "  --url         measure a running node-flow instead of a throwaway local one; the workflow is",
  "                saved there as a new version of canvas_bench_<nodes>. Credentials: --email and",
  "                --password, or NODE_FLOW_OWNER_EMAIL and NODE_FLOW_OWNER_PASSWORD; an editor of",
  "                --namespace (default: default)",
  "  --headed      show the browser (needs a display)",
  "  --profile DIR record each gesture's Chrome trace and JS CPU profile into DIR (open them in DevTools'",
  "                Performance panel) and print where the main thread's time went; profiling slows the page",
  "",
].join("\n");

function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      nodes: { type: "string", default: "1000" },
      seed: { type: "string", default: "1" },
      url: { type: "string" },
      email: { type: "string" },
      password: { type: "string" },
      namespace: { type: "string", default: "default" },
      json: { type: "string" },
      "skip-build": { type: "boolean", default: false },
      headed: { type: "boolean", default: false },
      profile: { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const url = values.url?.trim() || undefined;
  if (url !== undefined && !/^https?:\/\//.test(url)) throw new UsageProblem(`--url must be an http(s) URL, got "${url}"`);
  const email = (values.email ?? env.NODE_FLOW_OWNER_EMAIL)?.trim() || undefined;
  const password = values.password ?? (env.NODE_FLOW_OWNER_PASSWORD || undefined);
  if (url !== undefined && (!email || !password)) {
    throw new UsageProblem("--url needs credentials: --email (or NODE_FLOW_OWNER_EMAIL) and --password (or NODE_FLOW_OWNER_PASSWORD).");
  }
  return {
    nodes: integerOption("nodes", values.nodes, 1, 20_000),
    seed: integerOption("seed", values.seed, 0, 2 ** 31 - 1),
    url: url?.replace(/\/+$/, ""),
    email,
    password,
    namespace: values.namespace ?? "default",
    json: values.json,
    skipBuild: values["skip-build"] ?? false,
    headed: values.headed ?? false,
    profile: values.profile,
  };
}

const say = (line: string): void => void process.stderr.write(`[bench:canvas] ${line}\n`);
// ---------------------------------------------------------------- in the page

/**
 * Installed in every page before its scripts run: a requestAnimationFrame
 * loop that records frame intervals while started, and a long-task observer.
 */
function installRecorder(): void {
  const w = window as unknown as { __nfBench: unknown };
  const longTasks: { start: number; duration: number }[] = [];
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) longTasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: "longtask", buffered: true });
  } catch {
    // No long-task timing in this browser: the column stays empty.
  }
  let frames: number[] = [];
  let running = false;
  let startedAt = 0;
  w.__nfBench = {
    longTasks,
    start() {
      frames = [];
      running = true;
      startedAt = performance.now();
      let last = -1;
      const tick = (t: number) => {
        if (!running) return;
        if (last >= 0) frames.push(t - last);
        last = t;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    },
    stop() {
      running = false;
      const endedAt = performance.now();
      return { frames, longTasks: longTasks.filter((t) => t.start >= startedAt && t.start < endedAt).map((t) => t.duration) };
    },
  };
}

interface Recorded {
  frames: number[];
  longTasks: number[];
}

interface ScenarioResult {
  scenario: string;
  /** The viewport zoom the gesture started at, and how many nodes React Flow had in the DOM then. */
  zoom: number;
  nodesInDom: number;
  inputEvents: number;
  seconds: number;
  frames: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  fps: number;
  longTasks: number;
  longestTask: number;
  note?: string;
}

function summarise(scenario: string, recorded: Recorded, extra: Pick<ScenarioResult, "zoom" | "nodesInDom" | "inputEvents"> & { note?: string }): ScenarioResult {
  const sorted = [...recorded.frames].sort((a, b) => a - b);
  const total = recorded.frames.reduce((sum, f) => sum + f, 0);
  return {
    scenario,
    ...extra,
    seconds: total / 1000,
    frames: recorded.frames.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    fps: total > 0 ? (recorded.frames.length * 1000) / total : 0,
    longTasks: recorded.longTasks.length,
    longestTask: recorded.longTasks.reduce((m, d) => Math.max(m, d), 0),
  };
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

interface ViewState {
  pane: Box;
  /** The viewport's translation (px) and zoom. */
  x: number;
  y: number;
  zoom: number;
  nodesInDom: number;
}

async function viewState(page: Page): Promise<ViewState> {
  return page.evaluate(() => {
    const pane = document.querySelector(".react-flow__pane")!.getBoundingClientRect();
    const transform = getComputedStyle(document.querySelector(".react-flow__viewport")!).transform;
    const m = transform === "none" ? new DOMMatrixReadOnly() : new DOMMatrixReadOnly(transform);
    return { pane: { x: pane.x, y: pane.y, width: pane.width, height: pane.height }, x: m.e, y: m.f, zoom: m.a, nodesInDom: document.querySelectorAll(".react-flow__node").length };
  });
}

/** Page coordinates of a canvas point, and back. */
const toScreen = (view: ViewState, p: { x: number; y: number }) => ({ x: view.pane.x + view.x + p.x * view.zoom, y: view.pane.y + view.y + p.y * view.zoom });
const toFlow = (view: ViewState, p: { x: number; y: number }) => ({ x: (p.x - view.pane.x - view.x) / view.zoom, y: (p.y - view.pane.y - view.y) / view.zoom });

/**
 * A point of the pane where a press lands on the pane itself (not a node, edge or control), nearest the given one.
 * Below FAR_ZOOM the nodes are painted on the overview canvas, not in the DOM: the diagram's geometry says where they are.
 */
async function emptyPanePoint(page: Page, near: { x: number; y: number }, view: ViewState, layout: OverviewLayout): Promise<{ x: number; y: number }> {
  const candidates: { x: number; y: number }[] = [];
  for (let r = 0; r < 400; r += 3) {
    for (let a = 0; a < 16; a++) {
      const p = { x: near.x + r * Math.cos((a * Math.PI) / 8), y: near.y + r * Math.sin((a * Math.PI) / 8) };
      if (view.zoom >= FAR_ZOOM || !nodeAt(layout, toFlow(view, p))) candidates.push(p);
    }
  }
  const point = await page.evaluate((points) => points.find((p) => document.elementFromPoint(p.x, p.y)?.classList.contains("react-flow__pane")) ?? null, candidates);
  if (!point) throw new Error("No empty spot on the canvas to press on.");
  return point;
}

/** The toolbar's Undo: the bench undoes its own drags so every gesture starts on the diagram as generated, and a drag that was taken enables it. */
const undoButton = (page: Page) => page.getByRole("button", { name: "Undo", exact: true });

/** Replays `position(t)` for `ms` milliseconds, one mouse move at most every 16 ms; returns how many moves the page took. */
async function moveFor(page: Page, ms: number, position: (t: number) => { x: number; y: number }): Promise<number> {
  const started = performance.now();
  let events = 0;
  for (let next = started; ; next += 16) {
    const now = performance.now();
    if (now - started >= ms) break;
    if (next > now) await sleep(next - now);
    const t = Math.min(1, (performance.now() - started) / ms);
    const { x, y } = position(t);
    await page.mouse.move(x, y);
    events += 1;
  }
  return events;
}

/** Where `--profile` files go; undefined when not profiling. */
let profileDir: string | undefined;

async function record<T>(page: Page, name: string, gesture: () => Promise<T>): Promise<{ recorded: Recorded; result: T }> {
  const profiler = profileDir ? await startProfiling(page) : undefined;
  await page.evaluate(() => (window as unknown as { __nfBench: { start(): void } }).__nfBench.start());
  const result = await gesture();
  // The frames the last input caused.
  await sleep(100);
  const recorded = await page.evaluate(() => (window as unknown as { __nfBench: { stop(): Recorded } }).__nfBench.stop());
  if (profiler && profileDir) await profiler.stop(path.join(profileDir, name.replace(/[^a-z0-9]+/gi, "-")));
  return { recorded, result };
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string };
}

/**
 * Chrome's trace (what DevTools' Performance panel records: script, style,
 * layout, paint on the renderer's main thread) and V8's sampling profiler,
 * for one gesture.
 */
async function startProfiling(page: Page): Promise<{ stop(base: string): Promise<void> }> {
  const browser = page.context().browser()!;
  await browser.startTracing(page, { categories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "blink.user_timing"] });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 500 });
  await cdp.send("Profiler.start");
  return {
    async stop(base) {
      const { profile } = (await cdp.send("Profiler.stop")) as unknown as { profile: CpuProfile };
      await cdp.detach();
      const trace = await browser.stopTracing();
      writeFileSync(`${base}.cpuprofile`, JSON.stringify(profile));
      writeFileSync(`${base}.trace.json`, trace);
      say(`  profile: ${base}.trace.json, ${base}.cpuprofile`);
      for (const line of summariseTrace(JSON.parse(trace.toString("utf8")) as { traceEvents: TraceEvent[] })) say(`  ${line}`);
      for (const line of summariseProfile(profile)) say(`  ${line}`);
    },
  };
}

/** Self time by event name on the renderer's main thread (nested events subtracted from their parent). */
function summariseTrace(trace: { traceEvents: TraceEvent[] }): string[] {
  const main = trace.traceEvents.find((e) => e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain");
  if (!main) return ["trace: no renderer main thread found"];
  const events = trace.traceEvents.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === "X" && e.dur !== undefined).sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
  const self = new Map<string, number>();
  const stack: { end: number; name: string }[] = [];
  for (const e of events) {
    while (stack.length > 0 && stack.at(-1)!.end <= e.ts) stack.pop();
    const parent = stack.at(-1);
    if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - e.dur!);
    self.set(e.name, (self.get(e.name) ?? 0) + e.dur!);
    stack.push({ end: e.ts + e.dur!, name: e.name });
  }
  const top = [...self.entries()].filter(([, us]) => us > 0).sort((a, b) => b[1] - a[1]).slice(0, 10);
  return ["main thread, self time by trace event:", ...top.map(([name, us]) => `  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`)];
}

/** Self time by JS function (name and script position: the build is minified, the position finds it). */
function summariseProfile(profile: CpuProfile): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    const script = frame.url.replace(/^.*\/_next\//, "");
    const key = `${frame.functionName || "(anonymous)"} ${script ? `${script}:${frame.lineNumber + 1}:${frame.columnNumber + 1}` : ""}`.trim();
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15);
  return ["JS, self time by function:", ...top.map(([key, us]) => `  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`)];
}

/**
 * Where each gesture starts. `fit`: the whole diagram (fit view), at 1,000 nodes React Flow's minimum
 * zoom with nearly every node drawn — the worst case. `reading`: zoomed in from there with the zoom
 * controls until labels are readable (zoom ≥ READING_ZOOM), as a person works, where only what is on
 * screen is drawn.
 */
type ViewMode = "fit" | "reading";
const READING_ZOOM = 0.6;

/** To the mode's starting view, quiet: fit view (then zoom in for `reading`), then two calm frames. */
async function resetView(page: Page, mode: ViewMode): Promise<void> {
  await page.keyboard.press("Escape");
  for (let undone = 0; undone < 20 && (await undoButton(page).isEnabled()); undone++) await undoButton(page).click();
  await page.locator(".react-flow__controls-fitview").click();
  if (mode === "reading") {
    // Fit view may animate: read the zoom once it has landed.
    await settle(page);
    for (let clicks = 0; clicks < 40 && (await viewState(page)).zoom < READING_ZOOM; clicks++) {
      await page.locator(".react-flow__controls-zoomin").click();
      await sleep(60);
    }
  }
  await settle(page);
}

/** Resolves once the page paints two frames in a row within 50 ms each (or after 10 s). */
async function settle(page: Page): Promise<void> {
  await page.evaluate(
    () =>
      new Promise<void>((resolve) => {
        let last = performance.now();
        let calm = 0;
        const give = setTimeout(resolve, 10_000);
        const tick = (t: number) => {
          calm = t - last < 50 ? calm + 1 : 0;
          last = t;
          if (calm >= 2) {
            clearTimeout(give);
            resolve();
          } else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      }),
  );
}

interface LoadResult {
  /** From navigation start until the nodes are drawn (measured, visible, fit view applied). */
  drawnMs: number;
  /** …until the page then paints two frames in a row within 50 ms each. */
  interactiveMs: number;
  longestTaskMs: number;
  nodesInDom: number;
}

async function openEditor(page: Page, baseUrl: string, workflow: string): Promise<LoadResult> {
  await page.goto(`${baseUrl}/workflows/${encodeURIComponent(workflow)}`);
  // Nodes React Flow has not measured yet are drawn hidden, and fitView waits for the measurements.
  const drawn = await page.waitForFunction(
    () => {
      const nodes = document.querySelectorAll<HTMLElement>(".react-flow__node");
      if (nodes.length === 0) return false;
      for (const node of nodes) if (node.style.visibility === "hidden") return false;
      const viewport = document.querySelector<HTMLElement>(".react-flow__viewport");
      if (!viewport || /scale\(1\)$/.test(viewport.style.transform)) return false;
      return performance.now();
    },
    undefined,
    { polling: "raf", timeout: 120_000 },
  );
  const drawnMs = (await drawn.jsonValue()) as number;
  await settle(page);
  return page.evaluate((drawnAt) => {
    const bench = (window as unknown as { __nfBench: { longTasks: { start: number; duration: number }[] } }).__nfBench;
    return {
      drawnMs: drawnAt,
      interactiveMs: performance.now(),
      longestTaskMs: bench.longTasks.reduce((m, t) => Math.max(m, t.duration), 0),
      nodesInDom: document.querySelectorAll(".react-flow__node").length,
    };
  }, drawnMs);
}

/** --url: saves the workflow through the signed-in session (tRPC workflows.save, as the editor's Save does). */
async function saveThroughSession(page: Page, baseUrl: string, namespace: string, definition: WorkflowDefinition): Promise<void> {
  const response = await page.request.post(`${baseUrl}/api/trpc/workflows.save`, {
    data: { namespace, definition, message: "npm run bench:canvas" },
    headers: { origin: baseUrl },
  });
  const body = (await response.json().catch(() => null)) as { result?: { data?: { version?: number } }; error?: { message?: string } } | null;
  if (!response.ok() || !body?.result?.data) throw new Error(`Saving ${definition.name} on ${baseUrl} failed (HTTP ${response.status()}): ${body?.error?.message ?? "no answer"}`);
  say(`Saved ${definition.name} as version ${body.result.data.version ?? "?"} on ${baseUrl}.`);
}

const GESTURE_MS = 2_000;

async function runScenarios(page: Page, mode: ViewMode, definition: WorkflowDefinition): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  // Sizes as drawn before React Flow measures them: close enough to find free canvas and a node's middle.
  const layout = overviewLayout(definition, new Map());
  const named = (scenario: string) => (mode === "fit" ? scenario : `${scenario} (reading zoom)`);

  // 1. Pan: press on empty pane and drag to and fro.
  await resetView(page, mode);
  let view = await viewState(page);
  {
    const centre = { x: view.pane.x + view.pane.width / 2, y: view.pane.y + view.pane.height / 2 };
    const start = await emptyPanePoint(page, centre, view, layout);
    say(`pan: ${view.nodesInDom} nodes in the DOM at zoom ${view.zoom.toFixed(3)}`);
    const { recorded, result } = await record(page, named("pan"), async () => {
      await page.mouse.move(start.x, start.y);
      await page.mouse.down();
      const events = await moveFor(page, GESTURE_MS, (t) => ({ x: start.x + 250 * Math.sin(2 * Math.PI * t), y: start.y + 120 * Math.sin(4 * Math.PI * t) }));
      await page.mouse.up();
      return events;
    });
    results.push(summarise(named("pan"), recorded, { zoom: view.zoom, nodesInDom: view.nodesInDom, inputEvents: result }));
  }

  // 2. Zoom: wheel in for half a second, out for half, twice.
  await resetView(page, mode);
  view = await viewState(page);
  {
    const centre = { x: view.pane.x + view.pane.width / 2, y: view.pane.y + view.pane.height / 2 };
    say("zoom: mouse wheel in and out");
    const { recorded, result } = await record(page, named("zoom"), async () => {
      await page.mouse.move(centre.x, centre.y);
      const started = performance.now();
      let events = 0;
      for (let next = started; performance.now() - started < GESTURE_MS; next += 16) {
        const now = performance.now();
        if (next > now) await sleep(next - now);
        const phase = Math.floor(((performance.now() - started) / GESTURE_MS) * 4);
        await page.mouse.wheel(0, phase % 2 === 0 ? -40 : 40);
        events += 1;
      }
      return events;
    });
    const after = await viewState(page);
    results.push(summarise(named("zoom"), recorded, { zoom: view.zoom, nodesInDom: view.nodesInDom, inputEvents: result, note: `ended at zoom ${after.zoom.toFixed(3)}` }));
  }

  // 3. Drag one node (a task on the top level, nearest the centre) in circles.
  await resetView(page, mode);
  view = await viewState(page);
  {
    const centre = { x: view.pane.x + view.pane.width / 2, y: view.pane.y + view.pane.height / 2 };
    const target = view.zoom < FAR_ZOOM ? farDragTarget(view, layout, centre) : await page.evaluate(({ x, y }) => {
      let best: { id: string; x: number; y: number; d: number } | null = null;
      for (const el of document.querySelectorAll<HTMLElement>(".react-flow__node-task")) {
        if (el.closest(".react-flow__node-loop")) continue;
        const r = el.getBoundingClientRect();
        const cx = r.x + r.width / 2;
        const cy = r.y + r.height / 2;
        // The press must land on the node itself, not on a handle or a neighbour drawn over it.
        if (document.elementFromPoint(cx, cy)?.closest(".react-flow__node") !== el) continue;
        const d = Math.hypot(cx - x, cy - y);
        if (!best || d < best.d) best = { id: el.dataset.id ?? "", x: cx, y: cy, d };
      }
      return best;
    }, centre);
    if (!target) throw new Error("No task node on screen to drag.");
    say(`drag one node: ${target.id}`);
    const { recorded, result } = await record(page, named("drag-one"), async () => {
      await page.mouse.move(target.x, target.y);
      await page.mouse.down();
      const events = await moveFor(page, GESTURE_MS, (t) => ({ x: target.x + 120 * Math.sin(2 * Math.PI * t) + 60 * t, y: target.y + 120 * (1 - Math.cos(2 * Math.PI * t)) }));
      await page.mouse.up();
      return events;
    });
    const taken = await undoButton(page).isEnabled();
    results.push(
      summarise(named("drag 1 node"), recorded, { zoom: view.zoom, nodesInDom: view.nodesInDom, inputEvents: result, ...(taken ? {} : { note: "the node did not move: the drag was not taken" }) }),
    );
  }

  // 4. Box-select about 50 nodes with a Shift-drag, then drag them together.
  await resetView(page, mode);
  view = await viewState(page);
  {
    const centre = { x: view.pane.x + view.pane.width / 2, y: view.pane.y + view.pane.height / 2 };
    const corner = await emptyPanePoint(page, { x: centre.x - 40, y: centre.y - 40 }, view, layout);
    // The smallest square from that corner that holds 50 nodes entirely (React Flow's "full" selection mode).
    const far = view.zoom < FAR_ZOOM;
    const size = await page.evaluate(({ x, y, want, boxes }) => {
      const rects = boxes ?? [...document.querySelectorAll(".react-flow__node")].map((el) => el.getBoundingClientRect());
      const inside = (s: number) => rects.filter((r) => r.x >= x && r.y >= y && r.right <= x + s && r.bottom <= y + s).length;
      let s = 4;
      while (inside(s) < want && s < 2000) s *= 1.1;
      return Math.ceil(s);
    }, { x: corner.x, y: corner.y, want: 50, boxes: far ? screenBoxes(view, layout) : null });
    say(`box-select and drag: a ${size}×${size} px selection from (${corner.x.toFixed(0)}, ${corner.y.toFixed(0)})`);
    const { recorded, result } = await record(page, named("box-select-drag"), async () => {
      await page.keyboard.down("Shift");
      await page.mouse.move(corner.x, corner.y);
      await page.mouse.down();
      let events = await moveFor(page, GESTURE_MS / 2, (t) => ({ x: corner.x + size * t + 1, y: corner.y + size * t + 1 }));
      await page.mouse.move(corner.x + size + 1, corner.y + size + 1);
      await page.mouse.up();
      await page.keyboard.up("Shift");
      const box = { a: toFlow(view, corner), b: toFlow(view, { x: corner.x + size + 1, y: corner.y + size + 1 }) };
      const grab = far
        ? farGrabPoint(view, layout, nodesInside(layout, { x: box.a.x, y: box.a.y, width: box.b.x - box.a.x, height: box.b.y - box.a.y }))
        : await page.evaluate(() => {
            const el = document.querySelector(".react-flow__node.selected");
            if (!el) return null;
            const r = el.getBoundingClientRect();
            return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
          });
      if (!grab) return { events, selected: 0 };
      const selected = far ? await selectedInInspector(page) : await page.locator(".react-flow__node.selected").count();
      await page.mouse.move(grab.x, grab.y);
      await page.mouse.down();
      events += await moveFor(page, GESTURE_MS, (t) => ({ x: grab.x + 150 * Math.sin(2 * Math.PI * t), y: grab.y + 100 * (1 - Math.cos(2 * Math.PI * t)) + 40 * t }));
      await page.mouse.up();
      return { events, selected };
    });
    results.push(
      summarise(named(`box-select ${result.selected} + drag`), recorded, {
        zoom: view.zoom,
        nodesInDom: view.nodesInDom,
        inputEvents: result.events,
        ...(result.selected === 0 ? { note: "the box selected nothing" } : {}),
      }),
    );
  }
  return results;
}

/** Every node's box on the page (the overview paints them; they are not in the DOM below FAR_ZOOM). */
function screenBoxes(view: ViewState, layout: OverviewLayout): { x: number; y: number; right: number; bottom: number }[] {
  return layout.boxes.map((b) => {
    const a = toScreen(view, b);
    return { x: a.x, y: a.y, right: a.x + b.width * view.zoom, bottom: a.y + b.height * view.zoom };
  });
}

/** Below FAR_ZOOM: the middle of the top-level task nearest `near` where a press lands on that task itself. */
function farDragTarget(view: ViewState, layout: OverviewLayout, near: { x: number; y: number }): { id: string; x: number; y: number } | null {
  let best: { id: string; x: number; y: number; d: number } | null = null;
  for (const b of layout.boxes) {
    if (b.isLoop || b.node.parent !== undefined || b.node.type === "SWITCH") continue;
    const middle = { x: b.x + b.width / 2, y: b.y + b.height / 2 };
    if (nodeAt(layout, middle) !== b) continue;
    const p = toScreen(view, middle);
    const d = Math.hypot(p.x - near.x, p.y - near.y);
    if (!best || d < best.d) best = { id: b.ref, ...p, d };
  }
  return best;
}

/** Below FAR_ZOOM: a point that presses on one of the selected nodes. */
function farGrabPoint(view: ViewState, layout: OverviewLayout, selected: readonly string[]): { x: number; y: number } | null {
  for (const ref of selected) {
    const b = layout.byRef.get(ref)!;
    const middle = { x: b.x + b.width / 2, y: b.y + b.height / 2 };
    if (nodeAt(layout, middle) === b) return toScreen(view, middle);
  }
  return null;
}

/** How many nodes the side panel says are selected: "N nodes selected", or one node's inspector. */
async function selectedInInspector(page: Page): Promise<number> {
  const many = page.getByText(/^\d+ nodes selected$/);
  if ((await many.count()) > 0) return Number.parseInt((await many.first().textContent()) ?? "0", 10);
  return (await page.locator("aside[data-node-ref]").count()) > 0 ? 1 : 0;
}

// ---------------------------------------------------------------- the command

/** Cleanups run once, last added first, on success, failure or Ctrl-C. */
const fmt = (value: number) => (Number.isNaN(value) ? "–" : value < 10 ? value.toFixed(1) : value.toFixed(0));

function report(options: BenchOptions, target: string, definition: WorkflowDefinition, load: LoadResult, scenarios: ScenarioResult[], chromiumVersion: string, loadBefore: string): string {
  const lines = [
    `# node-flow canvas benchmark (npm run bench:canvas): ${definition.nodes.length} nodes, ${definition.edges.length} edges (seed ${options.seed})`,
    "",
    `Machine: ${machineText()}; load average ${loadBefore} before, ${loadText()} after.`,
    `Chromium ${chromiumVersion} (headless, software rendering: --disable-gpu), viewport 1280×800; ${target}.`,
    "",
    `Load: nodes drawn ${load.drawnMs.toFixed(0)} ms after navigation start, interactive (two frames in a row under 50 ms) at ${load.interactiveMs.toFixed(0)} ms; longest task ${load.longestTaskMs.toFixed(0)} ms; ${load.nodesInDom} nodes in the DOM.`,
    "",
    "Frame times (ms between animation frames) during each gesture, from the fit view (the whole diagram), then from a readable zoom:",
    "",
    "| scenario | zoom | nodes in DOM | input events | frames | p50 | p95 | p99 | max | fps | long tasks (longest) |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...scenarios.map(
      (s) =>
        `| ${s.scenario} | ${s.zoom.toFixed(3)} | ${s.nodesInDom} | ${s.inputEvents} | ${s.frames} | ${fmt(s.p50)} | ${fmt(s.p95)} | ${fmt(s.p99)} | ${fmt(s.max)} | ${s.fps.toFixed(1)} | ${s.longTasks} (${fmt(s.longestTask)}) |`,
    ),
    "",
    ...scenarios.filter((s) => s.note).map((s) => `Note, ${s.scenario}: ${s.note}.`),
    "60 fps is 16.7 ms a frame; a p95 over ~34 ms (two missed frames) is a canvas that feels sticky.",
    "",
  ];
  return lines.join("\n");
}

runBench(say, "Chromium, next and Postgres", async (stop) => {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const loadBefore = loadText();
  const began = performance.now();
  const definition = generateCanvasWorkflow({ nodes: options.nodes, seed: options.seed });
  if (options.profile) {
    mkdirSync(options.profile, { recursive: true });
    profileDir = options.profile;
  }
  let baseUrl: string;
  let email: string;
  let password: string;
  let target: string;
  if (options.url) {
    baseUrl = options.url;
    email = options.email ?? "";
    password = options.password ?? "";
    target = `the server at ${baseUrl}`;
  } else {
    await buildIfNeeded(options.skipBuild, stop, say);
    const local = await startLocalStack(
      {
        label: "canvas-bench",
        namespace: options.namespace,
        sidecar: false,
        prepare: async (db, namespaceId) => {
          const registered = await registerWorkflowDefinition(db, { namespaceId, definition, createdBy: "bench:canvas" });
          if (!registered.ok) throw new Error(`The generated workflow was refused: ${JSON.stringify(registered).slice(0, 500)}`);
          say(`Registered ${registered.name} v${registered.version} (${definition.nodes.length} nodes, ${definition.edges.length} edges).`);
        },
      },
      stop,
      say,
    );
    ({ baseUrl, email, password } = local);
    target = "a throwaway local server (the web process, embedded Postgres 18) on this machine";
  }

  say("Launching Chromium…");
  const { browser, context } = await launchChromium(options.headed, stop);
  await context.addInitScript(installRecorder);
  const page = await context.newPage();
  // The editor asks before leaving a changed diagram; the gestures changed it.
  page.on("dialog", (dialog) => void dialog.accept());

  say(`Signing in as ${email} through the sign-in form…`);
  await signIn(page, baseUrl, email, password);
  if (options.url) await saveThroughSession(page, baseUrl, options.namespace, definition);
  stop.throwIfStopping();

  say(`Opening the editor on ${definition.name}…`);
  const loadProfiler = profileDir ? await startProfiling(page) : undefined;
  const load = await openEditor(page, baseUrl, definition.name);
  if (loadProfiler && profileDir) await loadProfiler.stop(path.join(profileDir, "load"));
  say(`Drawn after ${load.drawnMs.toFixed(0)} ms, interactive after ${load.interactiveMs.toFixed(0)} ms (${load.nodesInDom} nodes in the DOM).`);
  const scenarios = [...(await runScenarios(page, "fit", definition)), ...(await runScenarios(page, "reading", definition))];
  const chromiumVersion = browser.version();

  const text = report(options, target, definition, load, scenarios, chromiumVersion, loadBefore);
  process.stdout.write(text);
  if (options.json) {
    const results = {
      benchmark: "bench:canvas",
      at: new Date().toISOString(),
      machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model.trim() ?? null, memoryGiB: Math.round(os.totalmem() / 2 ** 30), loadAverage: { before: loadBefore, after: loadText() } },
      chromium: chromiumVersion,
      target,
      workflow: { name: definition.name, nodes: definition.nodes.length, edges: definition.edges.length, seed: options.seed },
      load,
      scenarios,
    };
    writeFileSync(options.json, `${JSON.stringify(results, null, 2)}\n`);
    say(`Wrote ${options.json}.`);
  }
  say(`Done in ${((performance.now() - began) / 1000).toFixed(0)} s.`);
});
