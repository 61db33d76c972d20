import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "../definition";
import { structuredBlocks, structuredWorkflow } from "../definition/graph-arbitraries";
import type { LeafSite } from "../definition/graph-arbitraries";
import { node, simple } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import type { ScriptEvaluator } from "../expressions";
import { isSuccessfulTaskStatus } from "../statuses";
import { replay } from "./replay";
import { simulate } from "./simulate";
import type { SimulationResult, Workers } from "./simulate";
import type { TaskOutcome } from "./task-results";

/**
 * Random structured workflows — sequences, parallel branches joining again,
 * SWITCHes, DO_WHILE loops, dynamic forks, WAITs — run by random workers (success,
 * retryable failure, terminal failure, IN_PROGRESS callbacks, reports slower
 * than the task's timeout) in random completion orders, through the real
 * compile + decide:
 *
 * - every run ends, within the step bound, in a terminal workflow status;
 * - no task identity (ref, iteration, attempt) is ever scheduled twice;
 * - deciding again on the state any evaluation left schedules nothing new
 *   (`checkIdempotence`), and loading only `refsToLoad` rows decides as loading
 *   every row would (`checkLoading`);
 * - the recorded history replays through decide with no divergence;
 * - the outcome agrees with the attempts: a COMPLETED run has every final
 *   attempt successful, a FAILED one a final attempt that failed, and no
 *   (ref, iteration) has more attempts than its retries allow.
 *
 * The block generator is the shared one of engine/definition/graph-arbitraries.ts
 * (which engine/definition/properties.test.ts validates), with dynamic forks,
 * WAITs and per-task policies as leaves.
 */

type Leaf = { kind: "task" } | { kind: "fork"; count: number } | { kind: "wait"; seconds: number };

const blocks = structuredBlocks<Leaf>({
  leaves: [
    fc.constant<Leaf>({ kind: "task" }),
    fc.record({ kind: fc.constant("fork" as const), count: fc.integer({ min: 0, max: 4 }) }),
    fc.record({ kind: fc.constant("wait" as const), seconds: fc.integer({ min: 1, max: 120 }) }),
  ],
  loopTimes: fc.integer({ min: 1, max: 3 }),
});

/** What a task's worker does on one call. */
type Behaviour = "ok" | "fail" | "terminal" | "callback" | "slow";

/** Per task: its policy and what its worker does, call after call (cycling). */
interface TaskPlan {
  retryCount: number;
  retryDelaySeconds: number;
  optional: boolean;
  /** Attempts time out after this many seconds (RETRY policy) when set: a "slow" report arrives after 2×. */
  timeoutSeconds: number;
  behaviours: Behaviour[];
  /** The SWITCH case label this task's output carries. */
  kind: number;
}

const behaviour = fc.constantFrom<Behaviour>("ok", "ok", "ok", "fail", "terminal", "callback", "slow");
const plans = fc.record({
  retryCount: fc.integer({ min: 0, max: 2 }),
  retryDelaySeconds: fc.integer({ min: 0, max: 30 }),
  optional: fc.boolean(),
  timeoutSeconds: fc.constantFrom(0, 0, 20),
  behaviours: fc.array(behaviour, { minLength: 1, maxLength: 4 }),
  kind: fc.integer({ min: 0, max: 3 }),
});

/** Lays a leaf out, recording the plan (drawn by `nextPlan`) of each task and fork under its name. */
function placeLeaf(leaf: Leaf, at: LeafSite, plans: Map<string, TaskPlan>, nextPlan: () => TaskPlan): string {
  switch (leaf.kind) {
    case "task": {
      const r = at.ref("t");
      const plan = nextPlan();
      plans.set(r, plan);
      const policy: Json = { retryCount: plan.retryCount, retryDelaySeconds: plan.retryDelaySeconds };
      if (plan.timeoutSeconds > 0) Object.assign(policy, { timeoutSeconds: plan.timeoutSeconds, timeoutPolicy: "RETRY" });
      return at.place(simple(r, { name: r, input: { value: at.valueSource() }, policy, ...(plan.optional ? { optional: true } : {}) }));
    }
    case "fork": {
      const r = at.ref("fork");
      const plan = nextPlan();
      plans.set(r, plan);
      const items = Array.from({ length: leaf.count }, (_, i) => ({ i }));
      return at.place(node("FORK_JOIN_DYNAMIC", r, { forkTaskName: r, items, policy: { retryCount: plan.retryCount, retryDelaySeconds: plan.retryDelaySeconds } }));
    }
    case "wait":
      return at.place(node("WAIT", at.ref("wait"), { duration: `${leaf.seconds}s` }));
  }
}

interface Scenario {
  definition: WorkflowDefinition;
  plans: Map<string, TaskPlan>;
  seed: number;
  kind: number;
}

const scenarios: fc.Arbitrary<Scenario> = fc
  .record({ block: blocks, plans: fc.array(plans, { minLength: 40, maxLength: 40 }), seed: fc.integer(), kind: fc.integer({ min: 0, max: 3 }) })
  .map(({ block, plans: pool, seed, kind }) => {
    const plans = new Map<string, TaskPlan>();
    let n = 0;
    const nextPlan = (): TaskPlan => pool[n++ % pool.length]!;
    const definition = structuredWorkflow<Leaf>(block, (leaf, at) => placeLeaf(leaf, at, plans, nextPlan)) as unknown as WorkflowDefinition;
    return { definition, plans, seed, kind };
  });

/** The palette's loop condition, `$["<ref>"].iteration < $.times`, without a sandbox. */
const loopScripts: ScriptEvaluator = {
  evaluate(script, bindings) {
    const m = /^\$\[("(?:[^"\\]|\\.)*")\]\.iteration < \$\.times$/.exec(script);
    if (m === null) return { ok: false, error: `unexpected script ${script}` };
    const $ = bindings.$ as Record<string, unknown>;
    const loop = $[JSON.parse(m[1]!) as string] as { iteration: number };
    return { ok: true, value: loop.iteration < Number($.times) };
  },
};

/** Workers following each task's plan; the call's behaviour is picked by (iteration, attempt, poll) so it never depends on call order. */
function workersFor(plans: Map<string, TaskPlan>): Workers {
  const workers: Record<string, Workers[string]> = {};
  for (const [name, plan] of plans) {
    workers[name] = ({ iteration, attempt, pollCount, forkIndex }): TaskOutcome => {
      const b = plan.behaviours[(iteration + attempt + pollCount - 1 + (forkIndex ?? 0)) % plan.behaviours.length]!;
      const output = { value: `${name}:${iteration}.${attempt}`, kind: `c${plan.kind}` };
      switch (b) {
        case "ok":
          return { status: "COMPLETED", output };
        case "fail":
          return { status: "FAILED", reason: "flaky" };
        case "terminal":
          return { status: "FAILED_WITH_TERMINAL_ERROR", reason: "bad input" };
        case "callback":
          // Twice at most, so the task still ends: the third poll completes.
          return pollCount < 3 ? { status: "IN_PROGRESS", callbackAfterSeconds: 15 } : { status: "COMPLETED", output };
        case "slow":
          return { status: "COMPLETED", output, afterSeconds: plan.timeoutSeconds > 0 ? plan.timeoutSeconds * 2 : 5 };
      }
    };
  }
  return workers;
}

const MAX_STEPS = 20_000;

async function run(s: Scenario): Promise<SimulationResult> {
  return simulate(s.definition, { x: 1, kind: `c${s.kind}` }, workersFor(s.plans), {
    scripts: loopScripts,
    seed: s.seed,
    maxSteps: MAX_STEPS,
    checkIdempotence: true,
    checkLoading: true,
  });
}

const key = (t: { ref: string; iteration: number }): string => `${t.ref}@${t.iteration}`;

describe("random structured workflows under random workers and completion orders", () => {
  it("terminate, schedule no identity twice, decide idempotently and replay without divergence", async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (s) => {
        const r = await run(s);
        expect(r.error).toBeUndefined();
        expect(["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"]).toContain(r.status);
        expect(r.steps).toBeLessThan(MAX_STEPS);
        expect(r.duplicateSchedules).toEqual([]);
        const identities = r.tasks.map((t) => `${t.ref}@${t.iteration}.${t.attempt}`);
        expect(new Set(identities).size).toBe(identities.length);
        expect(replay(s.definition, r.history, { scripts: loopScripts })).toEqual({ ok: true, evaluations: r.evaluations });
      }),
      { numRuns: 300 },
    );
  }, 120_000);

  it("end in a status the final attempts agree with, within the retries allowed", async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (s) => {
        const r = await run(s);
        const final = new Map<string, SimulationResult["tasks"][number]>();
        const attempts = new Map<string, number>();
        for (const t of r.tasks) {
          final.set(key(t), t);
          attempts.set(key(t), (attempts.get(key(t)) ?? 0) + 1);
        }
        for (const [k, n] of attempts) {
          const ref = k.slice(0, k.lastIndexOf("@"));
          const plan = s.plans.get(ref) ?? s.plans.get(ref.split("#")[0]!);
          if (plan !== undefined) expect(n, `${k} attempts`).toBeLessThanOrEqual(plan.retryCount + 1);
          else expect(n, `${k} attempts`).toBe(1);
        }
        const finals = [...final.values()];
        if (r.status === "COMPLETED") {
          for (const t of finals) expect(isSuccessfulTaskStatus(t.status), `${key(t)} ended ${t.status} in a COMPLETED run`).toBe(true);
        } else {
          expect(r.status).toBe("FAILED");
          expect(finals.some((t) => t.status === "FAILED" || t.status === "FAILED_WITH_TERMINAL_ERROR" || t.status === "TIMED_OUT")).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  }, 120_000);

  it("with every worker succeeding, always complete", async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (s) => {
        const happy = new Map([...s.plans].map(([k, p]) => [k, { ...p, behaviours: ["ok" as const] }]));
        const r = await run({ ...s, plans: happy });
        expect(r.status).toBe("COMPLETED");
        expect(r.tasks.every((t) => t.status === "COMPLETED" || t.status === "SKIPPED")).toBe(true);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
