import { createHash } from "node:crypto";
import { SpanKind, SpanStatusCode, TraceFlags } from "@opentelemetry/api";
import type { Attributes, HrTime, Link, SpanContext } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan, SpanExporter, TimedEvent } from "@opentelemetry/sdk-trace-base";
import type { TracingConfig } from "./config";

/**
 * Runs as OpenTelemetry traces (docs/observability.md). A run is one
 * trace; each task attempt is a span under the run's span; a worker's own spans
 * join the attempt's span through the `traceparent` its poll hands it.
 *
 * A run outlives processes and restarts, so no span is ever "open" in memory:
 * every id is derived from the run's and the task's ids, and a span is emitted
 * whole, once, after the fact, from timestamps the rows already hold — a task's
 * when the decider reacts to its end, the run's when it ends. Nothing is written
 * for tracing, and no statement is added to any path: the web process computes
 * a polled task's `traceparent` from its ids, and the decider builds spans from
 * the rows its evaluation loaded anyway.
 *
 * The spans are built here as finished `ReadableSpan`s rather than through a
 * Tracer, because a Tracer picks its own ids and start times; the SDK's batch
 * processor and OTLP exporter then do the queueing, batching and sending.
 */

/** The trace of a run: its id, a UUID, is 16 bytes — exactly a trace id. */
export function traceIdOf(workflowId: string): string {
  const hex = workflowId.replace(/-/g, "").toLowerCase();
  if (/^[0-9a-f]{32}$/.test(hex) && !/^0+$/.test(hex)) return hex;
  return digest(`trace:${workflowId}`).slice(0, 32);
}

/** The run's own span: the trace's root. */
export function runSpanIdOf(workflowId: string): string {
  return digest(`run:${workflowId}`).slice(0, 16);
}

/** A task attempt's span (each attempt is its own task row, with its own id). */
export function taskSpanIdOf(taskId: string): string {
  return digest(`task:${taskId}`).slice(0, 16);
}

/** The W3C `traceparent` a worker's spans for this task attempt take as their parent. */
export function traceparentOf(workflowId: string, taskId: string): string {
  return `00-${traceIdOf(workflowId)}-${taskSpanIdOf(taskId)}-01`;
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** A run that ended. */
export interface EndedRun {
  workflowId: string;
  workflowName: string;
  workflowVersion: number;
  namespaceId: string;
  status: string;
  startedAt: Date;
  endedAt: Date;
  reasonForIncompletion?: string | null;
  correlationId?: string | null;
  /** A sub-workflow's parent run and SUB_WORKFLOW task: its trace links to that task's span. */
  parentWorkflowId?: string | null;
  parentTaskId?: string | null;
}

/** A task attempt that ended. */
export interface EndedTask {
  workflowId: string;
  taskId: string;
  refName: string;
  taskType: string;
  taskDefName: string;
  iteration: number;
  attempt: number;
  status: string;
  scheduledAt: Date;
  startedAt: Date | null;
  endedAt: Date;
  workerId?: string | null;
  reasonForIncompletion?: string | null;
  /** The decider scheduled another attempt of it. */
  retried: boolean;
}

const FAILED = new Set(["FAILED", "FAILED_WITH_TERMINAL_ERROR", "TIMED_OUT", "TERMINATED"]);

/** Where the tracer says that exports fail, and that they work again (a pino logger fits). */
export interface TracingLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

export interface RunTracerOptions {
  config: TracingConfig;
  logger?: TracingLogger;
  /** Where spans go; the OTLP/HTTP exporter to `config.url` by default (tests may pass another). */
  exporter?: SpanExporter;
  /** Longest wait between a span's end and its export; the batch processor's default (5 s) otherwise. */
  scheduledDelayMillis?: number;
}

/** Emits finished runs and task attempts as spans. One per process: {@link configureTracing}. */
export class RunTracer {
  private readonly processor: BatchSpanProcessor;
  private readonly resource;

  constructor(options: RunTracerOptions) {
    const exporter = new ReportingExporter(options.exporter ?? new OTLPTraceExporter({ url: options.config.url }), options.config.url, options.logger);
    this.processor = new BatchSpanProcessor(exporter, options.scheduledDelayMillis === undefined ? {} : { scheduledDelayMillis: options.scheduledDelayMillis });
    this.resource = resourceFromAttributes({ "service.name": options.config.serviceName });
  }

  runEnded(run: EndedRun): void {
    const attributes: Attributes = {
      "node_flow.workflow.id": run.workflowId,
      "node_flow.workflow.name": run.workflowName,
      "node_flow.workflow.version": run.workflowVersion,
      "node_flow.namespace.id": run.namespaceId,
      "node_flow.workflow.status": run.status,
    };
    if (run.correlationId) attributes["node_flow.workflow.correlation_id"] = run.correlationId;
    const links: Link[] =
      run.parentWorkflowId && run.parentTaskId
        ? [{ context: remoteContext(traceIdOf(run.parentWorkflowId), taskSpanIdOf(run.parentTaskId)), attributes: { "node_flow.link": "parent task" } }]
        : [];
    this.emit({
      name: `run ${run.workflowName}`,
      context: remoteContext(traceIdOf(run.workflowId), runSpanIdOf(run.workflowId)),
      start: run.startedAt.getTime(),
      end: run.endedAt.getTime(),
      attributes,
      failed: FAILED.has(run.status),
      message: run.reasonForIncompletion ?? undefined,
      links,
    });
  }

  taskEnded(task: EndedTask): void {
    const attributes: Attributes = {
      "node_flow.workflow.id": task.workflowId,
      "node_flow.task.id": task.taskId,
      "node_flow.task.ref": task.refName,
      "node_flow.task.type": task.taskType,
      "node_flow.task.def_name": task.taskDefName,
      "node_flow.task.iteration": task.iteration,
      "node_flow.task.attempt": task.attempt,
      "node_flow.task.status": task.status,
      "node_flow.task.retried": task.retried,
    };
    if (task.workerId) attributes["node_flow.task.worker_id"] = task.workerId;
    const events: TimedEvent[] = [];
    // The span starts when the attempt was queued; "started" marks the lease (or the system task's start), so the
    // gap before it is the queue wait.
    if (task.startedAt !== null) events.push({ name: "started", time: hrTime(task.startedAt.getTime()), attributes: task.workerId ? { "node_flow.task.worker_id": task.workerId } : {} });
    this.emit({
      name: `${task.refName}${task.attempt > 0 ? ` (attempt ${task.attempt + 1})` : ""}`,
      context: remoteContext(traceIdOf(task.workflowId), taskSpanIdOf(task.taskId)),
      parent: remoteContext(traceIdOf(task.workflowId), runSpanIdOf(task.workflowId)),
      start: task.scheduledAt.getTime(),
      end: task.endedAt.getTime(),
      attributes,
      failed: FAILED.has(task.status),
      message: task.reasonForIncompletion ?? undefined,
      events,
    });
  }

  /** Sends what is queued (tests; shutdown). */
  flush(): Promise<void> {
    return this.processor.forceFlush();
  }

  /** Sends what is queued and stops. */
  shutdown(): Promise<void> {
    return this.processor.shutdown();
  }

  private emit(span: {
    name: string;
    context: SpanContext;
    parent?: SpanContext;
    start: number;
    end: number;
    attributes: Attributes;
    failed: boolean;
    message: string | undefined;
    links?: Link[];
    events?: TimedEvent[];
  }): void {
    // Clocks of different processes (a worker's start, the decider's end) can disagree by a little; a span never ends
    // before it starts.
    const end = Math.max(span.end, span.start);
    const readable: ReadableSpan = {
      name: span.name,
      kind: SpanKind.INTERNAL,
      spanContext: () => span.context,
      ...(span.parent ? { parentSpanContext: span.parent } : {}),
      startTime: hrTime(span.start),
      endTime: hrTime(end),
      duration: hrTime(end - span.start),
      status: span.failed ? { code: SpanStatusCode.ERROR, ...(span.message ? { message: span.message } : {}) } : { code: SpanStatusCode.OK },
      attributes: span.attributes,
      links: span.links ?? [],
      events: span.events ?? [],
      ended: true,
      resource: this.resource,
      instrumentationScope: { name: "node-flow" },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
    this.processor.onEnd(readable);
  }
}

type ExportCallback = Parameters<SpanExporter["export"]>[1];

/**
 * The batch processor drops a failed export silently (OpenTelemetry's diag
 * logger is off by default), so a wrong endpoint would look like "no traces"
 * forever. Says so once when exports start failing, and once when they work
 * again — not once per batch.
 */
class ReportingExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly url: string,
    private readonly logger: TracingLogger | undefined,
  ) {}

  export(spans: ReadableSpan[], done: ExportCallback): void {
    this.inner.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0 (@opentelemetry/core, not a dependency of ours).
      const code: number = result.code;
      if (code !== 0) {
        if (!this.failing) this.logger?.warn({ url: this.url, err: result.error, spans: spans.length }, "exporting spans failed; spans are dropped until the collector takes them");
        this.failing = true;
      } else if (this.failing) {
        this.failing = false;
        this.logger?.info({ url: this.url }, "exporting spans works again");
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

function remoteContext(traceId: string, spanId: string): SpanContext {
  return { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

function hrTime(epochMs: number): HrTime {
  const seconds = Math.floor(epochMs / 1000);
  return [seconds, Math.round((epochMs - seconds * 1000) * 1e6)];
}

// On globalThis for the reason processMetrics() is (metrics.ts): `next dev` re-evaluates modules.
const holder = globalThis as typeof globalThis & { __nodeFlowTracer?: RunTracer | null };

/** Sets this process's tracer from the config, once, at boot; tracing off leaves none. */
export function configureTracing(config: TracingConfig | undefined, logger?: TracingLogger): RunTracer | undefined {
  if (holder.__nodeFlowTracer === undefined) holder.__nodeFlowTracer = config ? new RunTracer({ config, ...(logger ? { logger } : {}) }) : null;
  return holder.__nodeFlowTracer ?? undefined;
}

/** This process's tracer, or undefined while tracing is off (or not configured yet). */
export function processTracer(): RunTracer | undefined {
  return holder.__nodeFlowTracer ?? undefined;
}
