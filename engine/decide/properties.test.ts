import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isTerminalTaskStatus } from "../statuses";
import { structuredWorkflows } from "../definition/graph-arbitraries";
import type { LeafSite, StructuredShape } from "../definition/graph-arbitraries";
import { node, simple } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import { Harness } from "./test-harness";

/**
 * Random *structured* workflows (sequences, parallel branches, SWITCHes
 * merging again, loops, dynamic forks — the shared generator of
 * engine/definition/graph-arbitraries.ts with WAITs, forks and per-task
 * policies as leaves) run under random completion orders, random batching
 * and random failures. On every
 * evaluation the harness checks that no identity is inserted twice, that
 * deciding again gives no commands (idempotence), and that the partial state
 * refsToLoad describes decides exactly like a state holding every row.
 */

type Leaf = { kind: "task"; optional: boolean; retries: number } | { kind: "wait" } | { kind: "fan"; optional: boolean; retries: number };

const shape: StructuredShape<Leaf> = {
  leaves: [
    fc.record({ kind: fc.constant("task" as const), optional: fc.boolean(), retries: fc.integer({ min: 0, max: 3 }) }),
    fc.constant<Leaf>({ kind: "wait" }),
    fc.record({ kind: fc.constant("fan" as const), optional: fc.boolean(), retries: fc.integer({ min: 0, max: 2 }) }),
  ],
  loopTimes: fc.integer({ min: 1, max: 3 }),
};

function placeLeaf(leaf: Leaf, at: LeafSite): string {
  switch (leaf.kind) {
    case "task":
      return at.place(simple(at.ref("t"), { input: { value: at.valueSource() }, optional: leaf.optional, policy: { retryCount: leaf.retries, retryDelaySeconds: 2 } }));
    case "wait":
      return at.place(node("WAIT", at.ref("w"), { duration: "3s" }));
    case "fan":
      // An optional fork ends COMPLETED_WITH_ERRORS through the shell's aggregate when an instance fails for good.
      return at.place(node("FORK_JOIN_DYNAMIC", at.ref("f"), { forkTaskName: "leaf", items: "${workflow.input.items}", optional: leaf.optional, policy: { retryCount: leaf.retries, retryDelaySeconds: 1 } }));
  }
}

const workflows = structuredWorkflows<Leaf>(shape, placeLeaf);

type World = { choices: number[]; failPercent: number; batch: number; kind: string; items: number[] };

/** How the outside world behaves: which runnable task finishes next, how, and how many finish per evaluation. */
const worlds = fc.record({
  choices: fc.array(fc.nat(), { minLength: 200, maxLength: 200 }),
  failPercent: fc.constantFrom(0, 0, 10, 30),
  batch: fc.integer({ min: 1, max: 3 }),
  kind: fc.constantFrom("c0", "c1", "c2", "zz"),
  items: fc.array(fc.integer(), { maxLength: 3 }),
});

/** Runs one workflow in one random world and checks the outcome (the harness checks each step). */
function runWorld(def: Json, world: World): void {
  const h = new Harness(def, { input: { x: 1, kind: world.kind, items: world.items }, checkPartialState: true });
  let pick = 0;
  const next = (): number => world.choices[pick++ % world.choices.length]!;
  h.evaluate();
  for (let step = 0; step < 2000 && h.workflow.status === "RUNNING"; step++) {
    let runnable = h.runnable();
    // The decider asked for another evaluation (a dynamic fork ended through the shell): the decide queue runs it,
    // now or after more completions have landed.
    if (h.needsEvaluation && (runnable.length === 0 || next() % 2 === 0)) {
      h.evaluate();
      continue;
    }
    if (runnable.length === 0) {
      // Nothing visible yet: jump the clock to the next retry or timer.
      const pending = [...h.rows.filter((r) => !isTerminalTaskStatus(r.status) && r.runAt !== undefined).map((r) => r.runAt!), ...h.timers.map((t) => t.fireAt)].filter((t) => t > h.now);
      expect(pending.length, `stuck with nothing to run: ${JSON.stringify(h.rows)}`).toBeGreaterThan(0);
      h.now = Math.max(h.now, Math.min(...pending));
      runnable = h.runnable();
      if (runnable.length === 0) {
        h.evaluate();
        continue;
      }
    }
    for (let b = 0; b < world.batch && runnable.length > 0; b++) {
      const row = runnable.splice(next() % runnable.length, 1)[0]!;
      if (next() % 100 < world.failPercent) {
        h.finish(row, "FAILED", {});
      } else {
        h.finish(row, "COMPLETED", { value: next() % 10, kind: ["c0", "c1", "c2", "zz"][next() % 4] });
      }
    }
    h.now += 1000;
    h.evaluate();
  }
  expect(h.workflow.status).not.toBe("RUNNING");
  expect(h.rows.filter((r) => !isTerminalTaskStatus(r.status))).toEqual([]);
  if (h.workflow.status === "COMPLETED") {
    // Every top-level node was reached: it ran or was skipped (dead-path elimination leaves a row).
    const top = (def.nodes as Json[]).filter((n) => n.parent === undefined).map((n) => n.ref as string);
    for (const ref of top) expect(h.has(ref), ref).toBe(true);
  } else {
    expect(h.workflow.status).toBe("FAILED");
    const end = h.workflow.end;
    expect(end?.kind).toBe("failWorkflow");
    const failed = h.rows.find((r) => end?.kind === "failWorkflow" && r.taskId === end.failedTaskId)!;
    // A task out of retries, or a dynamic fork one of whose instances was.
    expect(["FAILED", "FAILED_WITH_TERMINAL_ERROR"]).toContain(failed.status);
  }
}

/** Raise locally to search harder (e.g. 3000); 300 keeps the unit suite fast. */
const RUNS = 300;

describe("decide on random structured workflows", () => {
  it("always terminates, never schedules an identity twice, is idempotent, and needs only the rows refsToLoad names", () => {
    fc.assert(
      fc.property(workflows, worlds, (def, world) => runWorld(def, world)),
      { numRuns: RUNS },
    );
  }, 60_000);
});
