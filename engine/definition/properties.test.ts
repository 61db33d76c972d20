import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildGraph } from "./graph";
import type { Problem } from "./problems";
import { brief, edge, node, simple, workflow } from "./test-fixtures";
import type { Json } from "./test-fixtures";
import { validateDefinition } from "./validate";

/**
 * Random *structured* workflows — sequences, parallel branches, SWITCHes
 * merging again, loops — are always valid; one random mutation of them is
 * always reported with the right code.
 */

type Block =
  | { kind: "task" }
  | { kind: "seq"; items: Block[] }
  | { kind: "par"; items: Block[] }
  | { kind: "switch"; cases: Block[]; connectDefault: boolean }
  | { kind: "loop"; body: Block };

const blocks = fc.letrec<{ block: Block }>((tie) => ({
  block: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant<Block>({ kind: "task" }),
    fc.record({ kind: fc.constant("seq" as const), items: fc.array(tie("block"), { minLength: 1, maxLength: 4 }) }),
    fc.record({ kind: fc.constant("par" as const), items: fc.array(tie("block"), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant("switch" as const), cases: fc.array(tie("block"), { minLength: 1, maxLength: 3 }), connectDefault: fc.boolean() }),
    fc.record({ kind: fc.constant("loop" as const), body: tie("block") }),
  ),
}));

interface Built {
  nodes: Json[];
  edges: Json[];
}

/** Lays a block out as nodes and edges; returns the refs it is entered by and left from. */
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
      const r = place(simple(ref("t"), { input: { value: source, id: "${workflow.input.id}" } }));
      return { entries: [r], exits: [r] };
    }
    case "seq": {
      let first: string[] | undefined;
      let exits = readable;
      let prev: string[] | undefined;
      for (const item of block.items) {
        const part = build(item, out, parent, exits.length === 0 ? readable : exits);
        if (prev !== undefined) for (const p of prev) for (const e of part.entries) out.edges.push(edge(p, e));
        first ??= part.entries;
        prev = part.exits;
        exits = part.exits;
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
      const loop = place(node("DO_WHILE", ref("loop")));
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

const codes = (problems: readonly Problem[]): string[] => problems.map((p) => p.code);

describe("random structured workflows", () => {
  it("always validate", () => {
    fc.assert(
      fc.property(workflows, (def) => {
        const result = validateDefinition(def);
        expect(result.ok ? [] : brief(result.problems)).toEqual([]);
        const g = buildGraph(def as unknown as Parameters<typeof buildGraph>[0]);
        expect(g.flatOrder()?.length).toBe((def.nodes as unknown[]).length);
      }),
      { numRuns: 300 },
    );
  });

  it("report a duplicated ref at the later node", () => {
    fc.assert(
      fc.property(workflows, fc.nat(), fc.nat(), (def, a, b) => {
        const nodes = def.nodes as Json[];
        fc.pre(nodes.length >= 2);
        const i = a % nodes.length;
        const j = b % nodes.length;
        fc.pre(i !== j);
        nodes[j] = { ...nodes[j], ref: nodes[i]!.ref };
        const result = validateDefinition(def);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(brief(result.problems)).toContainEqual({ code: "duplicate-ref", ref: nodes[i]!.ref, path: ["nodes", Math.max(i, j), "ref"] });
      }),
      { numRuns: 200 },
    );
  });

  it("report a back edge as a cycle through both its ends", () => {
    fc.assert(
      fc.property(workflows, fc.nat(), fc.nat(), (def, pick, steps) => {
        const edges = def.edges as Json[];
        fc.pre(edges.length >= 1);
        const g = buildGraph(def as unknown as Parameters<typeof buildGraph>[0]);
        const from = edges[pick % edges.length]!;
        // Walk forward from the edge's target, then close the loop back to its source.
        let to = from.target as string;
        for (let s = 0; s < steps % 5; s++) {
          const next = g.successors(to);
          if (next.length === 0) break;
          to = next[s % next.length]!;
        }
        edges.push(edge(to, from.source as string));
        const result = validateDefinition(def);
        expect(result.ok).toBe(false);
        if (result.ok) return;
        const cycle = result.problems.find((p) => p.code === "cycle");
        expect(cycle?.refs).toEqual(expect.arrayContaining([from.source, to]));
      }),
      { numRuns: 200 },
    );
  });

  it("report an expression reading a node downstream of its reader", () => {
    fc.assert(
      fc.property(workflows, fc.nat(), (def, pick) => {
        const nodes = def.nodes as Json[];
        const edges = (def.edges as Json[]).filter((e) => nodes.some((n) => n.ref === e.source && n.type === "SIMPLE"));
        fc.pre(edges.length >= 1);
        const e = edges[pick % edges.length]!;
        const index = nodes.findIndex((n) => n.ref === e.source);
        const reader = nodes[index]!;
        reader.input = { ...(reader.input as Json), late: `\${${e.target as string}.output.value}` };
        const result = validateDefinition(def);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(brief(result.problems)).toEqual([{ code: "expression-not-upstream", ref: reader.ref, path: ["nodes", index, "input", "late"] }]);
      }),
      { numRuns: 200 },
    );
  });

  it("report a SWITCH edge that lost its case", () => {
    fc.assert(
      fc.property(workflows, fc.nat(), (def, pick) => {
        const edges = def.edges as Json[];
        const caseEdges = edges.map((e, k) => [e, k] as const).filter(([e]) => e.case !== undefined);
        fc.pre(caseEdges.length >= 1);
        const [e, k] = caseEdges[pick % caseEdges.length]!;
        delete e.case;
        const result = validateDefinition(def);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(codes(result.problems)).toContain("case-missing");
        if (!result.ok) expect(brief(result.problems)).toContainEqual({ code: "case-missing", ref: e.source, path: ["edges", k] });
      }),
      { numRuns: 200 },
    );
  });
});
