import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildGraph } from "./graph";
import { structuredWorkflows } from "./graph-arbitraries";
import type { Problem } from "./problems";
import { brief, edge, simple } from "./test-fixtures";
import type { Json } from "./test-fixtures";
import { validateDefinition } from "./validate";

/**
 * Random *structured* workflows — sequences, parallel branches, SWITCHes
 * merging again, loops — are always valid; one random mutation of them is
 * always reported with the right code. The generator is the shared one in
 * ./graph-arbitraries.ts, with plain tasks as its only leaves.
 */

const workflows = structuredWorkflows({ leaves: [fc.constant({ kind: "task" as const })] }, (_task, at) =>
  at.place(simple(at.ref("t"), { input: { value: at.valueSource(), id: "${workflow.input.id}" } })),
);

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

  it("warn of an expression reading a node downstream of its reader", () => {
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
        // A warning: Conductor resolves what has not run yet to null, so the definition is accepted.
        expect(result.ok).toBe(true);
        expect(brief(result.warnings)).toEqual([{ code: "expression-not-upstream", ref: reader.ref, path: ["nodes", index, "input", "late"] }]);
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
