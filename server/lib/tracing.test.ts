import { SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { RunTracer, runSpanIdOf, taskSpanIdOf, traceIdOf, traceparentOf } from "./tracing";

const RUN = "0190f5a2-7c3e-7a11-8b2c-3d4e5f607182";
const TASK = "0190f5a2-7c3f-7000-9000-aaaaaaaaaaaa";

function tracer() {
  const exporter = new InMemorySpanExporter();
  return { exporter, tracer: new RunTracer({ config: { url: "http://127.0.0.1:1/v1/traces", serviceName: "nf-test" }, exporter }) };
}

describe("span ids", () => {
  it("takes a run's UUID as its trace id, and derives stable span ids of the W3C sizes", () => {
    expect(traceIdOf(RUN)).toBe("0190f5a27c3e7a118b2c3d4e5f607182");
    expect(runSpanIdOf(RUN)).toMatch(/^[0-9a-f]{16}$/);
    expect(taskSpanIdOf(TASK)).toMatch(/^[0-9a-f]{16}$/);
    expect(taskSpanIdOf(TASK)).toBe(taskSpanIdOf(TASK));
    expect(taskSpanIdOf(TASK)).not.toBe(runSpanIdOf(TASK));
    // Not a UUID (or the all-zero id, which W3C forbids): hashed to 32 hex digits rather than refused.
    expect(traceIdOf("not-a-uuid")).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf("00000000-0000-0000-0000-000000000000")).not.toBe("0".repeat(32));
  });

  it("hands a worker the attempt's span as its parent", () => {
    expect(traceparentOf(RUN, TASK)).toBe(`00-${traceIdOf(RUN)}-${taskSpanIdOf(TASK)}-01`);
  });
});

describe("RunTracer", () => {
  it("emits a task attempt under the run's span, timed from its rows, with the queue wait as an event", async () => {
    const { exporter, tracer: t } = tracer();
    t.taskEnded({
      workflowId: RUN,
      taskId: TASK,
      refName: "charge",
      taskType: "SIMPLE",
      taskDefName: "charge_card",
      iteration: 0,
      attempt: 1,
      status: "FAILED",
      scheduledAt: new Date("2026-01-01T00:00:00.000Z"),
      startedAt: new Date("2026-01-01T00:00:00.250Z"),
      endedAt: new Date("2026-01-01T00:00:01.500Z"),
      workerId: "w1",
      reasonForIncompletion: "the gateway timed out",
      retried: true,
    });
    await t.flush();
    const [span] = exporter.getFinishedSpans();
    expect(span).toBeDefined();
    expect(span!.name).toBe("charge (attempt 2)");
    expect(span!.spanContext()).toMatchObject({ traceId: traceIdOf(RUN), spanId: taskSpanIdOf(TASK) });
    expect(span!.parentSpanContext?.spanId).toBe(runSpanIdOf(RUN));
    expect(span!.startTime).toEqual([Date.parse("2026-01-01T00:00:00.000Z") / 1000, 0]);
    expect(span!.duration).toEqual([1, 500_000_000]);
    expect(span!.events.map((e) => e.name)).toEqual(["started"]);
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: "the gateway timed out" });
    expect(span!.attributes).toMatchObject({ "node_flow.task.attempt": 1, "node_flow.task.retried": true, "node_flow.task.worker_id": "w1" });
    expect(span!.resource.attributes["service.name"]).toBe("nf-test");
    await t.shutdown();
  });

  it("emits a run as the trace's root, linked to its parent's task when it is a sub-workflow", async () => {
    const { exporter, tracer: t } = tracer();
    const parent = "0190f5a2-0000-7000-8000-000000000001";
    t.runEnded({
      workflowId: RUN,
      workflowName: "orders",
      workflowVersion: 3,
      namespaceId: "ns",
      status: "COMPLETED",
      startedAt: new Date("2026-01-01T00:00:00.000Z"),
      // A clock behind the start: the span is clamped to zero length rather than ending before it starts.
      endedAt: new Date("2025-12-31T23:59:59.900Z"),
      parentWorkflowId: parent,
      parentTaskId: TASK,
    });
    await t.flush();
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe("run orders");
    expect(span!.parentSpanContext).toBeUndefined();
    expect(span!.spanContext().spanId).toBe(runSpanIdOf(RUN));
    expect(span!.duration).toEqual([0, 0]);
    expect(span!.status.code).toBe(SpanStatusCode.OK);
    expect(span!.links.map((l) => l.context)).toMatchObject([{ traceId: traceIdOf(parent), spanId: taskSpanIdOf(TASK) }]);
    await t.shutdown();
  });

  it("says once that exports fail, and once that they work again", async () => {
    let up = false;
    const collector: SpanExporter = {
      export: (_spans: ReadableSpan[], done) => done(up ? { code: 0 } : { code: 1, error: new Error("ECONNREFUSED") }),
      shutdown: () => Promise.resolve(),
    };
    const said: string[] = [];
    const t = new RunTracer({
      config: { url: "http://collector.test/v1/traces", serviceName: "nf-test" },
      exporter: collector,
      logger: { warn: (_fields, message) => said.push(`warn ${message}`), info: (_fields, message) => said.push(`info ${message}`) },
    });
    const run = { workflowId: RUN, workflowName: "orders", workflowVersion: 1, namespaceId: "ns", status: "COMPLETED", startedAt: new Date(0), endedAt: new Date(1) };
    for (let i = 0; i < 3; i++) {
      t.runEnded(run);
      // The flush itself rejects with the failed export's error.
      await expect(t.flush()).rejects.toThrow("ECONNREFUSED");
    }
    up = true;
    t.runEnded(run);
    await t.flush();
    expect(said).toEqual(["warn exporting spans failed; spans are dropped until the collector takes them", "info exporting spans works again"]);
    await t.shutdown();
  });
});
