import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as v1 from "@/app/api/v1/[...path]/route";
import { useTestDatabase } from "../db/testing/test-database";
import { chain, simple, workflow } from "../engine/definition/test-fixtures";
import { createApiKey } from "../server/auth/api-keys";
import { waitForWorkflowsToEnd } from "../server/testing/runtime-fixtures";
import { startSidecar } from "../server/testing/sidecar-process";
import type { SidecarProcess } from "../server/testing/sidecar-process";
import { waitUntil } from "../server/testing/wait-until";
import { serveFetchHandler } from "../server/web/testing/serve-fetch-handler";
import { getWebContext } from "../server/web/web-context";
import type { JsonObject } from "./api-types";
import { createNodeFlowClient } from "./http-client";
import type { NodeFlowClient } from "./http-client";
import { createWorker } from "./worker";
import type { NodeFlowWorker, TaskHandler } from "./worker";
import { TerminalError } from "./worker-errors";

/**
 * Workload metrics and traces end to end: the web routes behind node:http, the
 * decider in a real sidecar process with its metrics port open, an SDK worker
 * over HTTP, and an OTLP/HTTP receiver on loopback collecting what both
 * processes and the worker export. A known workload runs; the metrics are read
 * by scraping, the trace by what the receiver got.
 */

const t = useTestDatabase();
const SAVED_ENV = { ...process.env };
const METRICS_TOKEN = "observability-metrics-token";
const QUEUE = "obs_charge";
const TRACKED = "obs_tracked";
const UNTRACKED = "obs_untracked";
const IDLE = "obs_idle";
const IDLE_QUEUE = "obs_nobody_polls";

let dataDir: string;
let sidecar: SidecarProcess;
let sidecarMetricsPort: number;
let api: Server;
let receiver: Server;
let baseUrl: string;
let receiverUrl: string;
let client: NodeFlowClient;
let apiKey: string;
const workers: NodeFlowWorker[] = [];

/** A span as OTLP/JSON carries it, with its resource's service.name. */
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  status: { code?: number };
  events: { name: string }[];
}
const received: ReceivedSpan[] = [];
const receivedContentTypes = new Set<string>();

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { spans: (Omit<ReceivedSpan, "service" | "attributes" | "parentSpanId"> & { parentSpanId?: string; attributes: OtlpAttribute[] })[] }[];
  }[];
}

const valueOf = (v: OtlpValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributesOf = (list: OtlpAttribute[]) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** The collector's side of OTLP/HTTP: POST /v1/traces, answered 200 with an empty partial-success body. */
async function collect(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (req.method !== "POST" || req.url !== "/v1/traces") {
    res.writeHead(404).end();
    return;
  }
  receivedContentTypes.add(String(req.headers["content-type"]));
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpExport;
  for (const resourceSpans of body.resourceSpans) {
    const service = String(attributesOf(resourceSpans.resource.attributes)["service.name"]);
    for (const scope of resourceSpans.scopeSpans) {
      for (const span of scope.spans) received.push({ ...span, service, parentSpanId: span.parentSpanId ?? "", attributes: attributesOf(span.attributes) });
    }
  }
  res.writeHead(200, { "content-type": "application/json" }).end("{}");
}

type RouteHandler = (request: Request) => Promise<Response>;
const handlers: Record<string, RouteHandler> = { GET: v1.GET, POST: v1.POST, PUT: v1.PUT, PATCH: v1.PATCH, DELETE: v1.DELETE };
// By path: the web port's /metrics route, the real handler.
const metricsRoute = async () => ((await import(pathToFileURL(path.join(process.cwd(), "app/metrics/route.ts")).href)) as { GET: RouteHandler }).GET;

async function listen(s: Server): Promise<string> {
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

async function close(s: Server | undefined): Promise<void> {
  if (!s) return;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
}

async function freePort(): Promise<number> {
  const probe = createServer();
  const url = await listen(probe);
  await close(probe);
  return Number(new URL(url).port);
}

/** The value of the sample `name{labels}` in a text exposition, or undefined when there is no such line. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = [...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]);
    if (JSON.stringify(found.sort()) === wanted) return Number(match[3]);
  }
  return undefined;
}

/** The sidecar's metrics port (the decider's process: runs and tasks). */
async function scrapeSidecar(): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${sidecarMetricsPort}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/** The web port's /metrics (the worker API's process: polls, active workers, operator terminations; queue gauges). */
async function scrapeWeb(): Promise<string> {
  const response = await (await metricsRoute())(new Request("http://nf.test/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }));
  expect(response.status).toBe(200);
  return response.text();
}

const observabilityEnv = {
  OTEL_TRACES_EXPORTER: "otlp",
  // Spans go out 50 ms after they end rather than the batch processor's 5 s.
  OTEL_BSP_SCHEDULE_DELAY: "50",
  NODE_FLOW_METRICS_WORKFLOWS: `${TRACKED},${IDLE}`,
  NODE_FLOW_METRICS_TASKS: QUEUE,
};

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "nf-obs-"));
  receiver = createServer((req, res) => {
    collect(req, res).catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  receiverUrl = await listen(receiver);
  sidecarMetricsPort = await freePort();
  sidecar = startSidecar({
    databaseUrl: t.url,
    dataDir,
    env: {
      ...observabilityEnv,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
      OTEL_SERVICE_NAME: "nf-sidecar",
      NODE_FLOW_METRICS_PORT: String(sidecarMetricsPort),
    },
  });
  Object.assign(process.env, {
    DATABASE_URL: t.url,
    NODE_FLOW_SECRET: "s".repeat(64),
    NODE_FLOW_DATA_DIR: dataDir,
    NODE_FLOW_ROLES: "api",
    LOG_LEVEL: "warn",
    NODE_FLOW_METRICS_TOKEN: METRICS_TOKEN,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
    OTEL_SERVICE_NAME: "nf-web",
    ...observabilityEnv,
  });
  api = createServer((req, res) => {
    serveFetchHandler(req, res, async (request) => {
      const handler = handlers[request.method];
      return handler ? handler(request) : new Response(null, { status: 405 });
    }).catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  baseUrl = await listen(api);
  const namespace = await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  apiKey = (await createApiKey(t.db, { namespaceId: namespace.id, name: "obs-int", scopes: ["worker", "admin"], createdBy: "observability test" })).key;
  client = createNodeFlowClient({ baseUrl, apiKey, namespace: "default" });
  await sidecar.ready();
});

afterAll(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ timeoutMs: 1000 })));
  const code = await sidecar?.stop();
  await close(api);
  const context = getWebContext();
  await context.close();
  // Both are cached on globalThis; a later file in a reused worker process must not get them closed.
  delete (globalThis as { __nodeFlowWebContext?: unknown }).__nodeFlowWebContext;
  delete (globalThis as { __nodeFlowTracer?: unknown }).__nodeFlowTracer;
  await close(receiver);
  process.env = SAVED_ENV;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  expect(code, sidecar?.output()).toBe(0);
});

/** A span context from a W3C traceparent, parsed by hand: the test depends on no propagator. */
function parentFrom(traceparent: string) {
  const [, traceId, spanId] = traceparent.split("-");
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: traceId!, spanId: spanId!, traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

describe("workload metrics and traces", () => {
  it("counts a known workload, and exports a run as a trace the worker's spans join", async () => {
    // The worker's own tracing, as an application would set it up: its spans to the same collector.
    const workerProvider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "test-worker" }),
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${receiverUrl}/v1/traces` }))],
    });
    const tracer = workerProvider.getTracer("test-worker");
    const traceparents = new Map<string, string | undefined>();
    const handler: TaskHandler = async (task, ctx) => {
      traceparents.set(`${task.workflowId}/${task.refName}/${task.attempt}`, ctx.traceparent);
      const span = tracer.startSpan(`charge ${task.refName}`, { attributes: { attempt: task.attempt } }, parentFrom(ctx.traceparent!));
      try {
        if (task.input.mode === "terminal") throw new TerminalError("declined");
        if (task.refName === "a" && task.attempt === 0) throw new Error("the gateway timed out");
        return { ok: true };
      } finally {
        span.end();
        await workerProvider.forceFlush();
      }
    };
    const worker = createWorker({ baseUrl, apiKey, namespace: "default", queue: QUEUE, handler, pollTimeoutMs: 2000 });
    workers.push(worker);

    const policy = { retryCount: 1, retryDelaySeconds: 0 };
    const register = (definition: JsonObject) => client.registerDefinition(definition);
    await register(workflow([simple("a", { name: QUEUE, policy }), simple("b", { name: QUEUE, policy })], chain("a", "b"), { name: TRACKED }));
    await register(workflow([simple("a", { name: QUEUE, input: { mode: "terminal" }, policy })], [], { name: UNTRACKED }));
    await register(workflow([simple("wait", { name: IDLE_QUEUE })], [], { name: IDLE }));

    const tracked = await client.startRun({ name: TRACKED, input: {} });
    const untracked = await client.startRun({ name: UNTRACKED, input: {} });
    await waitForWorkflowsToEnd(t.db, [tracked.id, untracked.id], { timeoutMs: 20_000, context: () => sidecar.output().slice(-2000) });
    expect((await client.getRun(tracked.id)).status).toBe("COMPLETED");
    expect((await client.getRun(untracked.id)).status).toBe("FAILED");

    // The decider's process: runs and tasks, by workflow (the untracked one folded into "other") and task type.
    const runs = await scrapeSidecar();
    expect(sample(runs, "node_flow_runs_started_total", { workflow: TRACKED })).toBe(1);
    expect(sample(runs, "node_flow_runs_started_total", { workflow: "other" })).toBe(1);
    expect(sample(runs, "node_flow_runs_finished_total", { workflow: TRACKED, status: "COMPLETED" })).toBe(1);
    expect(sample(runs, "node_flow_runs_finished_total", { workflow: "other", status: "FAILED" })).toBe(1);
    expect(sample(runs, "node_flow_run_duration_seconds_count", { workflow: TRACKED, status: "COMPLETED" })).toBe(1);
    expect(sample(runs, "node_flow_task_duration_seconds_count", { workflow: TRACKED, task_type: QUEUE, status: "FAILED" })).toBe(1);
    expect(sample(runs, "node_flow_task_duration_seconds_count", { workflow: TRACKED, task_type: QUEUE, status: "COMPLETED" })).toBe(2);
    expect(sample(runs, "node_flow_task_duration_seconds_count", { workflow: "other", task_type: QUEUE, status: "FAILED_WITH_TERMINAL_ERROR" })).toBe(1);
    // Never a run id, nor a name outside the allow-list.
    for (const id of [tracked.id, untracked.id]) expect(runs).not.toContain(id);
    expect(runs).not.toContain(UNTRACKED);

    // A run waiting on a queue nobody polls — outside NODE_FLOW_METRICS_TASKS, so counted as "other": its depth and
    // age on the web port, then an operator's terminate.
    const idle = await client.startRun({ name: IDLE, input: {} });
    let web = "";
    await waitUntil(
      async () => {
        web = await scrapeWeb();
        return sample(web, "node_flow_task_queue_depth", { namespace: "default", queue: "other", state: "ready" }) === 1;
      },
      { what: "the idle run's task to be queued", timeoutMs: 10_000, intervalMs: 100, describe: () => web },
    );
    await waitUntil(async () => (sample((web = await scrapeWeb()), "node_flow_task_queue_oldest_ready_age_seconds", { namespace: "default", queue: "other" }) ?? 0) > 0, {
      what: "the oldest ready task to have an age",
      timeoutMs: 5_000,
      intervalMs: 50,
      describe: () => web,
    });
    expect(web).not.toContain(IDLE_QUEUE);
    expect(sample(web, "node_flow_task_queue_depth", { namespace: "default", queue: QUEUE, state: "ready" }) ?? 0).toBe(0);
    expect(sample(web, "node_flow_task_queue_oldest_ready_age_seconds", { namespace: "default", queue: QUEUE }) ?? 0).toBe(0);
    // The worker polls this process: counted by queue, and the worker counted active on it.
    expect(sample(web, "node_flow_worker_polls_total", { queue: QUEUE })).toBeGreaterThanOrEqual(3);
    expect(sample(web, "node_flow_active_workers", { queue: QUEUE })).toBe(1);
    await client.terminateRun(idle.id, { reason: "not needed" });
    web = await scrapeWeb();
    expect(sample(web, "node_flow_runs_finished_total", { workflow: IDLE, status: "TERMINATED" })).toBe(1);
    expect(web).not.toContain(idle.id);

    // The trace: the run's id is its trace id; the run's span is the root, each attempt a span under it, and the
    // worker's spans under the attempt it worked on, through the traceparent its poll carried.
    const traceId = tracked.id.replace(/-/g, "");
    const spansOf = (id: string) => received.filter((s) => s.traceId === id);
    await waitUntil(() => spansOf(traceId).length >= 7, {
      what: "the tracked run's spans",
      timeoutMs: 10_000,
      intervalMs: 50,
      describe: () => JSON.stringify(received.map((s) => [s.service, s.traceId, s.name]), null, 1),
    });
    const spans = spansOf(traceId);
    const root = spans.filter((s) => s.parentSpanId === "");
    expect(root.map((s) => [s.service, s.name, s.attributes["node_flow.workflow.status"]])).toEqual([["nf-sidecar", `run ${TRACKED}`, "COMPLETED"]]);
    const attempts = spans.filter((s) => s.service === "nf-sidecar" && s.parentSpanId === root[0]!.spanId);
    expect(attempts.map((s) => [s.attributes["node_flow.task.ref"], s.attributes["node_flow.task.attempt"], s.attributes["node_flow.task.status"], s.attributes["node_flow.task.retried"]]).sort()).toEqual([
      ["a", 0, "FAILED", true],
      ["a", 1, "COMPLETED", false],
      ["b", 0, "COMPLETED", false],
    ]);
    expect(attempts.find((s) => s.attributes["node_flow.task.status"] === "FAILED")?.status.code).toBe(2);
    for (const attempt of attempts) expect(attempt.events.map((e) => e.name)).toEqual(["started"]);
    const workerSpans = spans.filter((s) => s.service === "test-worker");
    expect(workerSpans.map((s) => s.name).sort()).toEqual(["charge a", "charge a", "charge b"]);
    for (const span of workerSpans) {
      const parent = attempts.find((a) => a.spanId === span.parentSpanId);
      expect(parent, `the parent of ${span.name}`).toBeDefined();
      expect(parent!.attributes["node_flow.task.attempt"]).toBe(span.attributes.attempt);
      expect(traceparents.get(`${tracked.id}/${String(parent!.attributes["node_flow.task.ref"])}/${String(span.attributes.attempt)}`)).toBe(`00-${traceId}-${parent!.spanId}-01`);
    }
    // The terminated run's span comes from the web process, which ended it.
    const idleTrace = idle.id.replace(/-/g, "");
    await waitUntil(() => spansOf(idleTrace).some((s) => s.service === "nf-web"), { what: "the terminated run's span", timeoutMs: 10_000, intervalMs: 50 });
    expect(spansOf(idleTrace).find((s) => s.service === "nf-web")).toMatchObject({ name: `run ${IDLE}`, parentSpanId: "", attributes: { "node_flow.workflow.status": "TERMINATED" } });
    expect([...receivedContentTypes]).toEqual(["application/json"]);
    await workerProvider.shutdown();
  });
});
