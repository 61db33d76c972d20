import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "../definition";
import { chain, edge, node, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import { decide } from "../decide";
import type { Command } from "../decide/types";
import { scriptTable } from "./script-table";
import { SimulationSetupError } from "./setup-error";
import { DEFAULT_START_TIME, simulate } from "./simulate";
import type { Decider, SimulationResult } from "./simulate";
import { failed, inProgress, terminalError } from "./task-results";

const def = (nodes: unknown[], edges: unknown[] = [], extra: Json = {}): WorkflowDefinition => workflow(nodes, edges, extra) as unknown as WorkflowDefinition;
const statuses = (r: SimulationResult): string[] => r.tasks.map((t) => `${t.ref}[${t.iteration}.${t.attempt}]:${t.status}`);
const ok = { task: () => ({}) };
const fastRetry = (retryCount = 3): Json => ({ policy: { retryCount, retryDelaySeconds: 5 } });

describe("simulate: the basics", () => {
  it("runs a chain, passing outputs along through expressions", async () => {
    const wf = def(
      [simple("a", { name: "ta", input: { x: "${workflow.input.x}" } }), simple("b", { name: "tb", input: { y: "${a.output.y}" } })],
      chain("a", "b"),
      { outputParameters: { z: "${b.output.z}" } },
    );
    const r = await simulate(wf, { x: 1 }, { ta: ({ input }) => ({ y: (input.x as number) + 1 }), tb: ({ input }) => ({ z: (input.y as number) * 10 }) });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe("COMPLETED");
    expect(r.output).toEqual({ z: 20 });
    expect(statuses(r)).toEqual(["a[0.0]:COMPLETED", "b[0.0]:COMPLETED"]);
    expect(r.tasks[1]!.input).toEqual({ y: 2 });
    expect(r.now).toBe(DEFAULT_START_TIME);
    expect(r.duplicateSchedules).toEqual([]);
  });

  it("accepts async workers, non-object results and thrown errors", async () => {
    const wf = def([simple("a", { name: "ta" }), simple("b", { name: "tb", ...fastRetry(1) })], chain("a", "b"), { outputParameters: { a: "${a.output}", b: "${b.output}" } });
    const r = await simulate(wf, {}, {
      ta: async () => Promise.resolve(42),
      tb: ({ attempt }) => {
        if (attempt === 0) throw new Error("boom");
        return undefined;
      },
    });
    expect(r.status).toBe("COMPLETED");
    expect(r.output).toEqual({ a: { result: 42 }, b: {} });
    expect(r.tasks.find((t) => t.ref === "b" && t.attempt === 0)).toMatchObject({ status: "FAILED", reasonForIncompletion: "boom" });
  });

  it("retries a failed attempt as a new attempt after the retry delay, on the virtual clock", async () => {
    const wf = def([simple("a", { name: "flaky", policy: { retryCount: 2, retryDelaySeconds: 30 } })]);
    const r = await simulate(wf, {}, { flaky: ({ attempt }) => (attempt < 2 ? failed(`no ${attempt}`) : { done: true }) });
    expect(r.status).toBe("COMPLETED");
    expect(statuses(r)).toEqual(["a[0.0]:FAILED", "a[0.1]:FAILED", "a[0.2]:COMPLETED"]);
    expect(r.tasks.map((t) => t.startedAt! - DEFAULT_START_TIME)).toEqual([0, 30_000, 60_000]);
    expect(r.now - DEFAULT_START_TIME).toBe(60_000);
  });

  it("fails the workflow when retries run out, and never retries a terminal error", async () => {
    const wf = def([simple("a", { name: "ta", ...fastRetry(1) }), simple("b", { name: "tb", ...fastRetry(5) })], chain("a", "b"));
    const exhausted = await simulate(wf, {}, { ta: () => failed("down"), tb: () => ({}) });
    expect(exhausted.status).toBe("FAILED");
    expect(statuses(exhausted)).toEqual(["a[0.0]:FAILED", "a[0.1]:FAILED"]);
    const terminal = await simulate(wf, {}, { ta: () => ({}), tb: () => terminalError("bad input") });
    expect(terminal.status).toBe("FAILED");
    expect(statuses(terminal)).toEqual(["a[0.0]:COMPLETED", "b[0.0]:FAILED_WITH_TERMINAL_ERROR"]);
  });

  it("lets an optional task fail without failing the workflow", async () => {
    const wf = def([simple("a", { name: "ta", optional: true, ...fastRetry(0) }), simple("b", { name: "tb" })], chain("a", "b"));
    const r = await simulate(wf, {}, { ta: () => failed("meh"), tb: () => ({}) });
    expect(r.status).toBe("COMPLETED");
    expect(r.tasks.map((t) => t.status)).toContain("COMPLETED");
    expect(r.tasks.find((t) => t.ref === "b")?.status).toBe("COMPLETED");
  });

  it("re-hands an IN_PROGRESS task to its worker after callbackAfterSeconds", async () => {
    const wf = def([simple("a", { name: "poll" })]);
    const r = await simulate(wf, {}, { poll: ({ pollCount }) => (pollCount < 3 ? inProgress(20, { seen: pollCount }) : { seen: pollCount }) });
    expect(r.status).toBe("COMPLETED");
    expect(r.tasks[0]).toMatchObject({ status: "COMPLETED", pollCount: 3, output: { seen: 3 } });
    expect(r.now - DEFAULT_START_TIME).toBe(40_000);
  });

  it("records a history that survives JSON", async () => {
    const wf = def([simple("a", { name: "task" }), simple("b", { name: "task" })], chain("a", "b"));
    const r = await simulate(wf, {}, ok);
    expect(JSON.parse(JSON.stringify(r.history))).toEqual(r.history);
    expect(r.history.events.map((e) => e.type)).toEqual(["evaluated", "taskPolled", "taskUpdated", "evaluated", "taskPolled", "taskUpdated", "evaluated"]);
    expect(r.steps).toBe(7);
    expect(r.evaluations).toBe(3);
  });
});

describe("simulate: control flow", () => {
  it("forks on several outgoing edges and joins where they meet", async () => {
    const wf = def([simple("a"), simple("b"), simple("c"), node("JOIN", "j"), simple("d")], [edge("a", "b"), edge("a", "c"), edge("b", "j"), edge("c", "j"), edge("j", "d")]);
    for (const seed of [1, 2, 3, 4, 5]) {
      const r = await simulate(wf, {}, ok, { seed });
      expect(r.status).toBe("COMPLETED");
      expect(new Set(r.tasks.map((t) => t.ref))).toEqual(new Set(["a", "b", "c", "j", "d"]));
      expect(r.tasks.at(-1)!.ref).toBe("d");
    }
  });

  it("takes the matching SWITCH case and skips the others (dead-path elimination)", async () => {
    const wf = def(
      [node("SWITCH", "sw", { cases: ["big", "small"], input: { switchCaseValue: "${workflow.input.size}" } }), simple("big_path"), simple("small_path"), node("NOOP", "m")],
      [edge("sw", "big_path", "big"), edge("sw", "small_path", "small"), edge("big_path", "m"), edge("small_path", "m")],
    );
    const r = await simulate(wf, { size: "small" }, ok);
    expect(r.status).toBe("COMPLETED");
    const byRef = Object.fromEntries(r.tasks.map((t) => [t.ref, t.status]));
    expect(byRef).toMatchObject({ sw: "COMPLETED", big_path: "SKIPPED", small_path: "COMPLETED", m: "COMPLETED" });
  });

  it("runs SWITCH scripts through options.scripts, and refuses to start without them", async () => {
    const wf = def(
      [node("SWITCH", "sw", { evaluatorType: "javascript", expression: "$.n > 1 ? 'many' : 'one'", cases: ["many", "one"], input: { n: "${workflow.input.n}" } }), simple("many"), simple("one")],
      [edge("sw", "many", "many"), edge("sw", "one", "one")],
    );
    const scripts = scriptTable({ "$.n > 1 ? 'many' : 'one'": ($) => (($.n as number) > 1 ? "many" : "one") });
    const r = await simulate(wf, { n: 5 }, ok, { scripts });
    expect(r.tasks.filter((t) => t.status === "COMPLETED" && t.taskType === "SIMPLE").map((t) => t.ref)).toEqual(["many"]);
    await expect(simulate(wf, { n: 5 }, ok)).rejects.toThrow(/runs scripts \(SWITCH sw \(javascript\)\): pass options.scripts/);
  });

  it("runs INLINE through options.scripts", async () => {
    const wf = def([node("INLINE", "calc", { evaluatorType: "javascript", expression: "$.a + $.b", input: { a: 2, b: 3 } })], [], { outputParameters: { sum: "${calc.output.result}" } });
    const r = await simulate(wf, {}, {}, { scripts: scriptTable({ "$.a + $.b": ($) => ($.a as number) + ($.b as number) }) });
    expect(r.output).toEqual({ sum: 5 });
  });

  it("loops a DO_WHILE body, iteration being part of each body task's identity", async () => {
    const wf = def([node("DO_WHILE", "loop", { input: { times: 3 } }), simple("body", { parent: "loop", name: "step", input: { i: "${loop.output.iteration}" } }), simple("after")], [edge("loop", "after")]);
    const scripts = scriptTable({ '$["loop"].iteration < $.times': ($) => ($.loop as { iteration: number }).iteration < ($.times as number) });
    const r = await simulate(wf, {}, { step: ({ iteration }) => ({ iteration }), task: () => ({}) }, { scripts });
    expect(r.status).toBe("COMPLETED");
    expect(r.tasks.filter((t) => t.ref === "body").map((t) => t.iteration)).toEqual([1, 2, 3]);
    expect(r.tasks.at(-1)!.ref).toBe("after");
  });

  it("stops a definition that never terminates after maxSteps, with an error instead of hanging", async () => {
    const wf = def([node("DO_WHILE", "loop", { loopCondition: "forever" }), simple("body", { parent: "loop" })]);
    const r = await simulate(wf, {}, ok, { scripts: scriptTable({ forever: () => true }), maxSteps: 500 });
    expect(r.status).toBe("RUNNING");
    expect(r.error?.code).toBe("max-steps");
    expect(r.steps).toBe(500);
  });

  it("fans out a dynamic fork over items", async () => {
    const wf = def([node("FORK_JOIN_DYNAMIC", "fan", { forkTaskName: "square", items: "${workflow.input.xs}" }), simple("after", { name: "task", input: { ys: "${fan.output.results[*].y}" } })], [edge("fan", "after")]);
    const r = await simulate(wf, { xs: [{ x: 1 }, { x: 2 }, { x: 3 }, { x: 4 }] }, { square: ({ input }) => ({ y: (input as { x: number }).x ** 2 }), task: ({ input }) => input }, { seed: 7, checkIdempotence: true, checkLoading: true });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe("COMPLETED");
    expect(r.tasks.filter((t) => t.ref.startsWith("fan#")).length).toBe(4);
    // The fork row ends with Conductor's JOIN output, built from the instance rows when the last one finished.
    expect(r.tasks.find((t) => t.ref === "fan")).toMatchObject({ status: "COMPLETED", output: { results: [{ y: 1 }, { y: 4 }, { y: 9 }, { y: 16 }] } });
    expect(r.tasks.find((t) => t.ref === "after")?.input).toEqual({ ys: [1, 4, 9, 16] });
    expect(r.output).toEqual({ ys: [1, 4, 9, 16] });
    const aggregated = r.history.events.filter((e) => e.type === "evaluated" && e.commands.some((c) => c.kind === "aggregateForkOutput"));
    expect(aggregated).toHaveLength(1);
  });

  it("ends the workflow at TERMINATE, canceling what still runs", async () => {
    const wf = def([simple("a"), node("TERMINATE", "stop", { terminationStatus: "FAILED", terminationReason: "no" }), node("WAIT", "slow", { duration: "1d" })], chain("a", "stop"));
    const r = await simulate(wf, {}, ok);
    expect(r.status).toBe("FAILED");
    expect(r.reasonForIncompletion).toContain("no");
    expect(r.tasks.find((t) => t.ref === "slow")?.status).toBe("CANCELED");
    expect(r.now).toBe(DEFAULT_START_TIME);
  });
});

describe("simulate: time, signals, people and children", () => {
  it("waits out a WAIT duration on the virtual clock", async () => {
    const wf = def([node("WAIT", "w", { duration: "2h" }), simple("after")], chain("w", "after"));
    const r = await simulate(wf, {}, ok);
    expect(r.status).toBe("COMPLETED");
    expect(r.now - DEFAULT_START_TIME).toBe(2 * 3600 * 1000);
    expect(r.history.events.some((e) => e.type === "timerFired" && e.timer === "wait")).toBe(true);
  });

  it("completes a signal WAIT from options.signals, and reports a run nobody signals as stuck", async () => {
    const wf = def([node("WAIT", "approval", { duration: undefined, signal: true }), simple("after")], chain("approval", "after"), { outputParameters: { by: "${approval.output.by}" } });
    const r = await simulate(wf, {}, ok, { signals: { approval: { status: "COMPLETED", output: { by: "ann" }, afterSeconds: 90 } } });
    expect(r.status).toBe("COMPLETED");
    expect(r.output).toEqual({ by: "ann" });
    expect(r.now - DEFAULT_START_TIME).toBe(90_000);
    const stuck = await simulate(wf, {}, ok);
    expect(stuck.status).toBe("RUNNING");
    expect(stuck.error?.code).toBe("stuck");
    expect(stuck.error?.message).toContain('options.signals["approval"]');
  });

  it("hands HUMAN tasks to options.humans", async () => {
    const wf = def([node("HUMAN", "review"), simple("after")], chain("review", "after"), { outputParameters: { outcome: "${review.output.outcome}" } });
    const r = await simulate(wf, {}, ok, { humans: { review: ({ input }) => ({ outcome: (input.outcomes as string[])[0] }) } });
    expect(r.output).toEqual({ outcome: "approve" });
  });

  it("times a slow attempt out and retries it (timeoutPolicy RETRY); a late report is rejected", async () => {
    const wf = def([simple("a", { name: "slow", policy: { timeoutSeconds: 10, timeoutPolicy: "RETRY", retryCount: 1, retryDelaySeconds: 0 } })]);
    const r = await simulate(wf, {}, { slow: ({ attempt }) => (attempt === 0 ? { status: "COMPLETED", output: { late: true }, afterSeconds: 60 } : { fast: true }) });
    expect(r.status).toBe("COMPLETED");
    expect(statuses(r)).toEqual(["a[0.0]:TIMED_OUT", "a[0.1]:COMPLETED"]);
    expect(r.tasks[0]!.output).toEqual({});
  });

  it("times the workflow out (TIME_OUT_WF)", async () => {
    const wf = def([node("WAIT", "w", { duration: "1h" })], [], { timeoutSeconds: 60, timeoutPolicy: "TIME_OUT_WF" });
    const r = await simulate(wf, {}, ok);
    expect(r.status).toBe("TIMED_OUT");
    expect(r.now - DEFAULT_START_TIME).toBe(60_000);
  });

  it("runs sub-workflows recursively and records their runs", async () => {
    const child = def([simple("c1", { name: "child_task" })], [], { name: "child", outputParameters: { v: "${c1.output.v}" } });
    const wf = def([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: "child" }, input: { k: 1 } }), simple("after")], chain("sub", "after"), { outputParameters: { v: "${sub.output.v}" } });
    const r = await simulate(wf, {}, { child_task: () => ({ v: "from child" }), task: () => ({}) }, { subWorkflows: { child } });
    expect(r.status).toBe("COMPLETED");
    expect(r.output).toEqual({ v: "from child" });
    expect(r.children).toHaveLength(1);
    expect(r.children[0]!.result.history.workflow.parentWorkflowId).toBe("wf");
    await expect(simulate(wf, {}, ok)).rejects.toThrow(/pass options.subWorkflows\["child"\]/);
  });

  it("records START_WORKFLOW without waiting for it", async () => {
    const wf = def([node("START_WORKFLOW", "kick", { startWorkflow: { name: "other", input: { a: 1 } } }), simple("after")], chain("kick", "after"));
    const r = await simulate(wf, {}, ok);
    expect(r.status).toBe("COMPLETED");
    expect(r.startedWorkflows).toMatchObject([{ kind: "startWorkflow", name: "other", input: { a: 1 } }]);
  });
});

describe("simulate: misuse", () => {
  it("names the missing worker", async () => {
    const wf = def([simple("a", { name: "charge_card" })]);
    await expect(simulate(wf, {}, {})).rejects.toThrow(/workers\["charge_card"\]/);
  });

  it("refuses an invalid definition with its problems", async () => {
    const err = await simulate(def([simple("a"), simple("a")]), {}, ok).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SimulationSetupError);
    expect((err as SimulationSetupError).code).toBe("invalid-definition");
    expect((err as SimulationSetupError).problems?.map((p) => p.code)).toContain("duplicate-ref");
  });
});

describe("simulate: determinism", () => {
  const wf = def([simple("a"), simple("b"), simple("c"), simple("d"), node("JOIN", "j")], [edge("a", "j"), edge("b", "j"), edge("c", "j"), edge("d", "j")]);
  it("is a pure function of its seed", async () => {
    const one = await simulate(wf, {}, ok, { seed: 42 });
    const two = await simulate(wf, {}, ok, { seed: 42 });
    expect(two.history).toEqual(one.history);
  });
  it("explores different completion orders with different seeds", async () => {
    const orders = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const r = await simulate(wf, {}, ok, { seed });
      orders.add(r.history.events.filter((e) => e.type === "taskUpdated").map((e) => (e.type === "taskUpdated" ? e.key.ref : "")).join(""));
    }
    expect(orders.size).toBeGreaterThan(5);
  });
});

describe("simulate: the checks catch a broken decider", () => {
  const wf = def([simple("a"), simple("b")], chain("a", "b"));
  const real = decide;

  it("reports a decider that schedules an identity twice", async () => {
    let last: Command | undefined;
    const repeating: Decider = (bp, state, now, deps) => {
      const d = real(bp, state, now, deps);
      const extra = last === undefined ? [] : [last];
      last = d.commands.find((c) => c.kind === "scheduleTask") ?? last;
      return { ...d, commands: [...extra, ...d.commands] };
    };
    const r = await simulate(wf, {}, ok, { decide: repeating });
    expect(r.duplicateSchedules).toContainEqual({ ref: "a", iteration: 0, attempt: 0 });
  });

  it("throws on a decider that is not idempotent", async () => {
    let calls = 0;
    let template: Extract<Command, { kind: "scheduleTask" }> | undefined;
    const restless: Decider = (bp, state, now, deps) => {
      const d = real(bp, state, now, deps);
      for (const c of d.commands) if (c.kind === "scheduleTask") template ??= c;
      calls++;
      // A fresh attempt of `a` on every call: the re-decision after any evaluation inserts a new row.
      if (template !== undefined) d.commands.unshift({ ...template, key: { ref: "a", iteration: 0, attempt: 100 + calls } });
      return d;
    };
    await expect(simulate(wf, {}, ok, { decide: restless, checkIdempotence: true })).rejects.toThrow(/deciding again after evaluation \d+ .* would insert scheduleTask/);
  });

  it("throws on a decider that needs rows refsToLoad did not load", async () => {
    const greedy: Decider = (bp, state, now, deps) => {
      const d = real(bp, state, now, deps);
      return state.loaded.length > 2 ? { ...d, commands: [...d.commands, { kind: "requestEvaluation", reason: "saw more" }] } : d;
    };
    await expect(simulate(def([simple("a"), simple("b"), simple("c"), simple("d")], chain("a", "b", "c", "d")), {}, ok, { decide: greedy, checkLoading: true })).rejects.toThrow(
      /refsToLoad left out a row decide reads/,
    );
  });
});

describe("simulate: delays of tasks nothing polls, and totalTimeoutSeconds, on the virtual clock", () => {
  it.each([
    ["startDelay", { startDelay: 30 }, 30_000],
    ["no delay", {}, 0],
  ] as const)("a HUMAN task with %s reaches its person only when it starts", async (_name, policy, startsAt) => {
    let seenAt: number | undefined;
    const wf = def([node("HUMAN", "review", { policy }), simple("after")], chain("review", "after"));
    const r = await simulate(wf, {}, ok, {
      humans: {
        review: ({ now }) => {
          seenAt = now;
          return { outcome: "approve" };
        },
      },
    });
    expect(r.status).toBe("COMPLETED");
    expect(seenAt).toBe(DEFAULT_START_TIME + startsAt);
    if (startsAt > 0) {
      expect(r.tasks[0]).toMatchObject({ ref: "review", startedAt: DEFAULT_START_TIME + startsAt });
      expect(r.history.events.some((e) => e.type === "timerFired" && e.timer === "startDelay")).toBe(true);
    }
  });

  it("retries a failed SUB_WORKFLOW after its retry delay, starting a new child then", async () => {
    const child = def([simple("c1", { name: "child_task", policy: { retryCount: 0 } })], [], { name: "child" });
    const wf = def([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: "child" }, policy: { retryCount: 1, retryDelaySeconds: 45 } })]);
    let calls = 0;
    const r = await simulate(wf, {}, { child_task: () => (calls++ === 0 ? failed("first child fails") : { ok: true }) }, { subWorkflows: { child } });
    expect(r.status).toBe("COMPLETED");
    expect(statuses(r)).toEqual(["sub[0.0]:FAILED", "sub[0.1]:COMPLETED"]);
    expect(r.tasks[1]!.startedAt! - r.tasks[0]!.endedAt!).toBe(45_000);
    expect(r.children.map((c) => c.result.history.workflow.startedAt - DEFAULT_START_TIME)).toEqual([0, 45_000]);
  });

  it("stops retrying once totalTimeoutSeconds is spent", async () => {
    const wf = def([simple("a", { name: "flaky", policy: { retryCount: 10, retryDelaySeconds: 10, totalTimeoutSeconds: 35, timeoutPolicy: "RETRY" } })]);
    const r = await simulate(wf, {}, { flaky: () => failed("nope") });
    expect(r.status).toBe("FAILED");
    // Attempts start at +0, +10, +20, +30 (each before +35); a fifth would start at +40 ≥ +35: refused.
    expect(statuses(r)).toEqual(["a[0.0]:FAILED", "a[0.1]:FAILED", "a[0.2]:FAILED", "a[0.3]:TIMED_OUT"]);
    expect(r.tasks[3]!.reasonForIncompletion).toContain("totalTimeoutSeconds (35s)");
  });

  it("times out a slow attempt when totalTimeoutSeconds ends, though its own timeout has not", async () => {
    const wf = def([simple("a", { name: "slow", policy: { retryCount: 3, retryDelaySeconds: 0, timeoutSeconds: 1000, totalTimeoutSeconds: 50, timeoutPolicy: "RETRY" } })]);
    const r = await simulate(wf, {}, { slow: ({ attempt }) => (attempt === 0 ? failed("first") : { status: "COMPLETED", output: {}, afterSeconds: 500 }) });
    expect(r.status).toBe("FAILED");
    expect(statuses(r)).toEqual(["a[0.0]:FAILED", "a[0.1]:TIMED_OUT"]);
    expect(r.now - DEFAULT_START_TIME).toBe(50_000);
  });
});
