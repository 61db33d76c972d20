import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isTerminalTaskStatus } from "../statuses";
import { edge, node, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import { Harness } from "./test-harness";

/**
 * Random *structured* workflows (sequences, parallel branches, SWITCHes
 * merging again, loops, dynamic forks — the shapes of
 * engine/definition/properties.test.ts plus forks) run under random
 * completion orders, random batching and random failures. On every
 * evaluation the harness checks that no identity is inserted twice, that
 * deciding again gives no commands (idempotence), and that the partial state
 * refsToLoad describes decides exactly like a state holding every row.
 */

type Block =
  | { kind: "task"; optional: boolean; retries: number }
  | { kind: "wait" }
  | { kind: "seq"; items: Block[] }
  | { kind: "par"; items: Block[] }
  | { kind: "switch"; cases: Block[]; connectDefault: boolean }
  | { kind: "loop"; body: Block; times: number }
  | { kind: "fan"; optional: boolean; retries: number };

const blocks = fc.letrec<{ block: Block }>((tie) => ({
  block: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ kind: fc.constant("task" as const), optional: fc.boolean(), retries: fc.integer({ min: 0, max: 3 }) }),
    fc.constant<Block>({ kind: "wait" }),
    fc.record({ kind: fc.constant("seq" as const), items: fc.array(tie("block"), { minLength: 1, maxLength: 4 }) }),
    fc.record({ kind: fc.constant("par" as const), items: fc.array(tie("block"), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant("switch" as const), cases: fc.array(tie("block"), { minLength: 1, maxLength: 3 }), connectDefault: fc.boolean() }),
    fc.record({ kind: fc.constant("loop" as const), body: tie("block"), times: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ kind: fc.constant("fan" as const), optional: fc.boolean(), retries: fc.integer({ min: 0, max: 2 }) }),
  ),
}));

interface Built {
  nodes: Json[];
  edges: Json[];
}

function build(block: Block, out: Built, parent: string | undefined, readable: string[]): { entries: string[]; exits: string[] } {
  const ref = (prefix: string): string => `${prefix}${out.nodes.length}`;
  const place = (n: Json): string => {
    if (parent !== undefined) n.parent = parent;
    out.nodes.push(n);
    return n.ref as string;
  };
  switch (block.kind) {
    case "task": {
      const source = readable.length === 0 ? "${workflow.input.x}" : `\${${readable[out.nodes.length % readable.length]!}.output.value}`;
      const r = place(simple(ref("t"), { input: { value: source }, optional: block.optional, policy: { retryCount: block.retries, retryDelaySeconds: 2 } }));
      return { entries: [r], exits: [r] };
    }
    case "wait": {
      const r = place(node("WAIT", ref("w"), { duration: "3s" }));
      return { entries: [r], exits: [r] };
    }
    case "fan": {
      // An optional fork ends COMPLETED_WITH_ERRORS through the shell's aggregate when an instance fails for good.
      const r = place(node("FORK_JOIN_DYNAMIC", ref("f"), { forkTaskName: "leaf", items: "${workflow.input.items}", optional: block.optional, policy: { retryCount: block.retries, retryDelaySeconds: 1 } }));
      return { entries: [r], exits: [r] };
    }
    case "seq": {
      let first: string[] | undefined;
      let prev: string[] | undefined;
      for (const item of block.items) {
        const part = build(item, out, parent, prev ?? readable);
        if (prev !== undefined) for (const p of prev) for (const e of part.entries) out.edges.push(edge(p, e));
        first ??= part.entries;
        prev = part.exits;
      }
      return { entries: first ?? [], exits: prev ?? [] };
    }
    case "par": {
      const parts = block.items.map((item) => build(item, out, parent, readable));
      return { entries: parts.flatMap((p) => p.entries), exits: parts.flatMap((p) => p.exits) };
    }
    case "switch": {
      const cases = block.cases.map((_, i) => `c${i}`);
      const input = { switchCaseValue: readable.length === 0 ? "${workflow.input.kind}" : `\${${readable[0]!}.output.kind}` };
      const sw = place(node("SWITCH", ref("sw"), { cases, input }));
      const merge: string[] = [];
      block.cases.forEach((b, i) => {
        const part = build(b, out, parent, [sw]);
        for (const e of part.entries) out.edges.push(edge(sw, e, cases[i]));
        merge.push(...part.exits);
      });
      const m = place(node("NOOP", ref("m")));
      for (const x of merge) out.edges.push(edge(x, m));
      if (block.connectDefault) out.edges.push(edge(sw, m, "default"));
      return { entries: [sw], exits: [m] };
    }
    case "loop": {
      if (parent !== undefined) return build(block.body, out, parent, readable); // loops do not nest
      const loop = place(node("DO_WHILE", ref("loop"), { input: { times: block.times } }));
      build(block.body, out, loop, [loop, ...readable]);
      return { entries: [loop], exits: [loop] };
    }
  }
}

const workflows = blocks.block.map((block) => {
  const out: Built = { nodes: [], edges: [] };
  const { exits } = build(block, out, undefined, []);
  return workflow(out.nodes, out.edges, { outputParameters: { last: `\${${exits[0]!}.output}` } });
});

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
