import { describe, expect, it } from "vitest";
import { compile } from "../compile";
import type { WorkflowDefinition } from "../definition";
import { chain, edge, node, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import type { EvaluatedEvent, WorkflowHistory } from "./history";
import { HistoryFormatError } from "./history";
import { replay } from "./replay";
import { scriptTable } from "./script-table";
import { simulate } from "./simulate";
import { failed } from "./task-results";

const def = (nodes: unknown[], edges: unknown[] = [], extra: Json = {}): WorkflowDefinition => workflow(nodes, edges, extra) as unknown as WorkflowDefinition;
const ok = { task: () => ({}) };

const order = def(
  [
    simple("reserve", { name: "reserve", input: { items: "${workflow.input.items}" } }),
    simple("charge", { name: "charge", input: { amount: "${workflow.input.amount}" }, policy: { retryCount: 2, retryDelaySeconds: 10 } }),
    simple("ship", { name: "ship", input: { reservation: "${reserve.output.id}" } }),
    node("JOIN", "j"),
    node("WAIT", "cool_off", { duration: "30m" }),
    simple("notify", { name: "notify" }),
  ],
  [edge("reserve", "ship"), edge("charge", "j"), edge("ship", "j"), edge("j", "cool_off"), edge("cool_off", "notify")],
  { outputParameters: { shipped: "${ship.output.tracking}" } },
);
const orderWorkers = {
  reserve: () => ({ id: "r-1" }),
  charge: ({ attempt }: { attempt: number }) => (attempt === 0 ? failed("card declined") : { chargeId: "c-1" }),
  ship: () => ({ tracking: "t-1" }),
  notify: () => ({}),
};

const evaluatedAt = (h: WorkflowHistory, evaluation: number): { step: number; event: EvaluatedEvent } => {
  const step = h.events.findIndex((e) => e.type === "evaluated" && e.evaluation === evaluation);
  return { step, event: h.events[step] as EvaluatedEvent };
};

describe("replay", () => {
  it("replays a recorded history with no divergence, from a definition, a blueprint or JSON text", async () => {
    const r = await simulate(order, { items: ["x"], amount: 5 }, orderWorkers, { seed: 3 });
    expect(r.status).toBe("COMPLETED");
    expect(replay(order, r.history)).toEqual({ ok: true, evaluations: r.evaluations });
    expect(replay(compile(order), JSON.stringify(r.history))).toEqual({ ok: true, evaluations: r.evaluations });
  });

  it("replays runs with loops, scripts, signals and children", async () => {
    const child = def([simple("c1")], [], { name: "child" });
    const wf = def(
      [
        node("DO_WHILE", "loop", { input: { times: 2 } }),
        simple("body", { parent: "loop" }),
        node("WAIT", "sig", { duration: undefined, signal: true }),
        node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: "child" } }),
      ],
      chain("loop", "sig", "sub"),
    );
    const scripts = scriptTable({ '$["loop"].iteration < $.times': ($) => ($.loop as { iteration: number }).iteration < ($.times as number) });
    const r = await simulate(wf, {}, ok, { scripts, signals: { sig: { afterSeconds: 5 } }, subWorkflows: { child }, seed: 11 });
    expect(r.status).toBe("COMPLETED");
    expect(replay(wf, r.history, { scripts })).toEqual({ ok: true, evaluations: r.evaluations });
    expect(replay(child, r.children[0]!.result.history)).toMatchObject({ ok: true });
  });

  it("reports the exact evaluation where a changed definition decides differently", async () => {
    const r = await simulate(order, { items: ["x"], amount: 5 }, orderWorkers);
    // Today's definition reads one more input field in `ship`.
    const changed = def(
      order.nodes.map((n) => (n.ref === "ship" ? { ...n, input: { ...n.input, priority: "high" } } : n)),
      order.edges,
      { outputParameters: order.outputParameters },
    );
    const result = replay(changed, r.history);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const shipScheduled = r.history.events.findIndex((e) => e.type === "evaluated" && e.commands.some((c) => c.kind === "scheduleTask" && c.key.ref === "ship"));
    expect(result.step).toBe(shipScheduled);
    expect(result.explanation).toMatch(/scheduleTask ship\[0\.0\] SIMPLE\): input\.priority was absent and is now "high"/);
    expect(result.expected).toEqual((r.history.events[shipScheduled] as EvaluatedEvent).commands);
    expect(result.actual).not.toEqual(result.expected);
  });

  it("reports a changed retry policy where the attempt's policy snapshot was scheduled", async () => {
    const r = await simulate(order, { items: ["x"], amount: 5 }, orderWorkers);
    const noRetries = def(
      order.nodes.map((n) => (n.ref === "charge" ? { ...n, policy: { retryCount: 0 } } : n)),
      order.edges,
      { outputParameters: order.outputParameters },
    );
    const result = replay(noRetries, r.history);
    expect(result).toMatchObject({ ok: false, step: 0, evaluation: 1 });
    if (result.ok) return;
    expect(result.explanation).toMatch(/scheduleTask charge\[0\.0\] SIMPLE\): policy\.retryCount was 2 and is now 0/);
  });

  it("reports a tampered command list at its step, naming the field", async () => {
    const r = await simulate(order, { items: ["x"], amount: 5 }, orderWorkers);
    const h = JSON.parse(JSON.stringify(r.history)) as WorkflowHistory;
    const { step, event } = evaluatedAt(h, 2);
    const i = event.commands.findIndex((c) => c.kind === "scheduleTask");
    const tampered = event.commands[i]!;
    if (tampered.kind !== "scheduleTask") throw new Error("unreachable");
    tampered.key.attempt = 7;
    const result = replay(order, h);
    expect(result).toMatchObject({ ok: false, step, evaluation: 2 });
    if (result.ok) return;
    expect(result.explanation).toContain(`command ${i} (scheduleTask ${tampered.key.ref}[0.7] SIMPLE): key.attempt was 7 and is now 0`);
  });

  it("reports a dropped command as missing", async () => {
    const r = await simulate(order, { items: ["x"], amount: 5 }, orderWorkers);
    const h = JSON.parse(JSON.stringify(r.history)) as WorkflowHistory;
    const { step, event } = evaluatedAt(h, 1);
    const dropped = event.commands.pop()!;
    const result = replay(order, h);
    expect(result).toMatchObject({ ok: false, step, evaluation: 1 });
    if (result.ok) return;
    expect(result.explanation).toMatch(new RegExp(`returns ${event.commands.length + 1} command\\(s\\) where ${event.commands.length} were recorded; new from command ${event.commands.length}: ${dropped.kind}`));
  });

  it("refuses what is not a history", () => {
    expect(() => replay(order, "{")).toThrow(HistoryFormatError);
    expect(() => replay(order, JSON.stringify({ format: "node-flow.workflow-history", version: 99, workflow: {}, events: [] }))).toThrow(/version 99 is not supported/);
    expect(() => replay(order, { format: "node-flow.workflow-history", version: 1, workflow: { workflowId: "w", name: "n", version: null, input: {}, variables: {}, startedAt: 0 }, events: [{ type: "bogus" }] } as unknown as WorkflowHistory)).toThrow(/events\[0\]: unknown event "bogus"/);
  });
});
