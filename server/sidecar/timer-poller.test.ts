import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ENGINE_TIMER_KINDS } from "../../db/schema";
import type { TimerRow } from "../../db/schema";
import type { FiredTimer } from "../../engine";
import { decodeTimerReason, encodeTimerReason, firedTimerOf } from "./timer-poller";

const taskId = "0195f3a2-7c1e-7000-8000-000000000001";

describe("encodeTimerReason / decodeTimerReason", () => {
  it("round-trips every shape of fired timer", () => {
    const timers: FiredTimer[] = [
      { kind: "workflowTimeout", fireAt: 1_700_000_000_000 },
      { kind: "startToClose", taskId, fireAt: 1_700_000_000_123 },
      { kind: "wait", taskId, key: { ref: "wait_1", iteration: 0, attempt: 0 }, fireAt: 0 },
      { kind: "retry", key: { ref: "loop#3", iteration: 7, attempt: 2 }, fireAt: 1 },
    ];
    for (const timer of timers) expect(decodeTimerReason(encodeTimerReason(timer))).toEqual(timer);
  });

  it("writes the documented format", () => {
    expect(encodeTimerReason({ kind: "taskTimeout", taskId, fireAt: 5 })).toBe(`timer:{"kind":"taskTimeout","taskId":"${taskId}","fireAt":5}`);
  });

  it("round-trips arbitrary timers", () => {
    const timer = fc.record(
      {
        kind: fc.constantFrom(...ENGINE_TIMER_KINDS),
        taskId: fc.uuid(),
        key: fc.record({ ref: fc.string({ minLength: 1 }), iteration: fc.nat(), attempt: fc.nat() }),
        fireAt: fc.integer({ min: -8.64e15, max: 8.64e15 }),
      },
      { requiredKeys: ["kind", "fireAt"] },
    );
    fc.assert(
      fc.property(timer, (t) => {
        expect(decodeTimerReason(encodeTimerReason(t))).toEqual(t);
      }),
    );
  });

  it("returns undefined for other reasons and junk", () => {
    const junk: (string | null)[] = [
      null,
      "",
      "task t1 COMPLETED",
      "stuck-workflow sweeper",
      "timer:",
      "timer:{",
      "timer:null",
      "timer:[]",
      'timer:"wait"',
      "timer:{}",
      'timer:{"kind":"wait"}',
      'timer:{"kind":"bogus","fireAt":1}',
      'timer:{"kind":"wait","fireAt":"1"}',
      'timer:{"kind":"wait","fireAt":1e999}',
      'timer:{"kind":"wait","fireAt":1,"taskId":5}',
      'timer:{"kind":"wait","fireAt":1,"taskId":""}',
      'timer:{"kind":"wait","fireAt":1,"key":"a"}',
      'timer:{"kind":"wait","fireAt":1,"key":{"ref":"a","iteration":-1,"attempt":0}}',
      'timer:{"kind":"wait","fireAt":1,"key":{"ref":"a","iteration":0.5,"attempt":0}}',
      'timer:{"kind":"wait","fireAt":1,"key":{"iteration":0,"attempt":0}}',
      'TIMER:{"kind":"wait","fireAt":1}',
      ' timer:{"kind":"wait","fireAt":1}',
      'timer:{"kind":"__proto__","fireAt":1}',
    ];
    for (const reason of junk) expect(decodeTimerReason(reason), String(reason)).toBeUndefined();
  });

  it("never throws, whatever the reason holds", () => {
    const reasons = fc.oneof(
      fc.string(),
      fc.string().map((s) => `timer:${s}`),
      fc.json().map((j) => `timer:${j}`),
      fc.jsonValue().map((v) => `timer:${JSON.stringify({ kind: "wait", fireAt: 1, key: v, taskId: v })}`),
    );
    fc.assert(
      fc.property(reasons, (reason) => {
        const decoded = decodeTimerReason(reason);
        if (decoded !== undefined) expect(ENGINE_TIMER_KINDS).toContain(decoded.kind);
      }),
    );
  });

  it("drops fields it does not know", () => {
    expect(decodeTimerReason('timer:{"kind":"wait","fireAt":1,"extra":{"x":1}}')).toEqual({ kind: "wait", fireAt: 1 });
  });
});

describe("firedTimerOf", () => {
  const row = (over: Partial<TimerRow>): TimerRow => ({
    id: "t",
    fireAt: new Date(1_000),
    kind: "startToClose",
    namespaceId: "ns",
    workflowId: "wf",
    taskId: null,
    payload: {},
    createdAt: new Date(0),
    claimedAt: new Date(2_000),
    claimedBy: "p",
    ...over,
  });

  it("takes the task key from the payload the evaluator armed it with, when well formed", () => {
    expect(firedTimerOf(row({ taskId, payload: { key: { ref: "a", iteration: 1, attempt: 2 } } }))).toEqual({
      kind: "startToClose",
      taskId,
      key: { ref: "a", iteration: 1, attempt: 2 },
      fireAt: 1_000,
    });
    expect(firedTimerOf(row({ payload: { key: "junk" } }))).toEqual({ kind: "startToClose", fireAt: 1_000 });
    expect(firedTimerOf(row({ payload: null }))).toEqual({ kind: "startToClose", fireAt: 1_000 });
  });
});
