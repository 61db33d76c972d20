import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { GraphEdgeInput, GraphNodeInput } from "./graph";
import { buildGraph } from "./graph";

const n = (ref: string, type = "SIMPLE", parent?: string): GraphNodeInput => ({ ref, type, parent });
const e = (source: string, target: string, c?: string): GraphEdgeInput => ({ source, target, case: c });

// before → loop{ s1 → s2, s3 } → after;  before → side
const looped = buildGraph({
  nodes: [n("before"), n("loop", "DO_WHILE"), n("s1", "SIMPLE", "loop"), n("s2", "SIMPLE", "loop"), n("s3", "SIMPLE", "loop"), n("after"), n("side")],
  edges: [e("before", "loop"), e("s1", "s2"), e("loop", "after"), e("before", "side")],
});

describe("DefinitionGraph", () => {
  it("answers successors, predecessors and edges, deduplicating refs", () => {
    const g = buildGraph({ nodes: [n("sw", "SWITCH"), n("a"), n("b")], edges: [e("sw", "a", "x"), e("sw", "a", "y"), e("sw", "b", "default"), e("a", "b")] });
    expect(g.successors("sw")).toEqual(["a", "b"]);
    expect(g.predecessors("b")).toEqual(["sw", "a"]);
    expect(g.outgoing("sw").map((x) => x.case)).toEqual(["x", "y", "default"]);
    expect(g.incoming("a").map((x) => x.index)).toEqual([0, 1]);
    expect(() => g.successors("nope")).toThrow(RangeError);
  });

  it("knows containers, children, ancestors and start nodes per level", () => {
    expect(looped.isContainer("loop")).toBe(true);
    expect(looped.childrenOf()).toEqual(["before", "loop", "after", "side"]);
    expect(looped.childrenOf("loop")).toEqual(["s1", "s2", "s3"]);
    expect(looped.descendantsOf("loop")).toEqual(["s1", "s2", "s3"]);
    expect(looped.parentOf("s2")).toBe("loop");
    expect(looped.ancestorsOf("s2")).toEqual(["loop"]);
    expect(looped.startNodes()).toEqual(["before"]);
    expect(looped.startNodes("loop")).toEqual(["s1", "s3"]);
  });

  it("orders each level topologically, and the whole graph with bodies after their loop", () => {
    expect(looped.topologicalOrder()).toEqual(["before", "loop", "side", "after"]);
    expect(looped.topologicalOrder("loop")).toEqual(["s1", "s3", "s2"]);
    expect(looped.flatOrder()).toEqual(["before", "loop", "s1", "s3", "s2", "side", "after"]);
  });

  it("finds upstream refs through loop boundaries", () => {
    expect([...looped.upstreamRefs("after")].sort()).toEqual(["before", "loop", "s1", "s2", "s3"]);
    expect([...looped.upstreamRefs("s2")].sort()).toEqual(["before", "loop", "s1"]);
    expect([...looped.upstreamRefs("s1")].sort()).toEqual(["before", "loop"]);
    expect([...looped.upstreamRefs("side")]).toEqual(["before"]);
    expect(looped.isUpstream("s3", "after")).toBe(true);
    expect(looped.isUpstream("s3", "s2")).toBe(false);
    expect(looped.isUpstream("loop", "s1")).toBe(true);
    expect(looped.isUpstream("side", "after")).toBe(false);
    expect(looped.isUpstream("after", "after")).toBe(false);
    expect(looped.isUpstream("ghost", "after")).toBe(false);
  });

  it("treats an empty loop as finishing after it starts", () => {
    const g = buildGraph({ nodes: [n("a"), n("l", "DO_WHILE"), n("b")], edges: [e("a", "l"), e("l", "b")] });
    expect(g.isUpstream("a", "b")).toBe(true);
  });

  it("drops edges it cannot execute, and says why", () => {
    const g = buildGraph({
      nodes: [n("a"), n("l", "DO_WHILE"), n("c", "SIMPLE", "l"), n("a", "NOOP")],
      edges: [e("x", "a"), e("a", "y"), e("a", "a"), e("a", "c"), e("a", "l")],
    });
    expect(g.droppedEdges).toEqual([
      { index: 0, reason: "unknown-source" },
      { index: 1, reason: "unknown-target" },
      { index: 2, reason: "self-loop" },
      { index: 3, reason: "crosses-container" },
    ]);
    expect(g.edges.map((x) => x.index)).toEqual([4]);
    expect(g.typeOf("a")).toBe("SIMPLE"); // the first node of a ref wins
  });

  it("ignores parents that are unknown, not containers, the node itself, or cyclic", () => {
    const g = buildGraph({
      nodes: [n("a", "SIMPLE", "zz"), n("b", "SIMPLE", "a"), n("c", "DO_WHILE", "c"), n("l1", "DO_WHILE", "l2"), n("l2", "DO_WHILE", "l1"), n("x", "SIMPLE", "l1")],
      edges: [],
    });
    expect(["a", "b", "c", "l1", "l2"].map((r) => g.parentOf(r))).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(g.parentOf("x")).toBe("l1");
  });

  it("reports one cycle per strongly connected component, with its members", () => {
    const g = buildGraph({
      nodes: ["a", "b", "c", "d", "x", "y"].map((r) => n(r)),
      edges: [e("a", "b"), e("b", "c"), e("c", "a"), e("c", "d"), e("b", "d"), e("d", "b"), e("x", "y"), e("y", "x")],
    });
    const cycles = g.cycles();
    expect(cycles.map((c) => c.refs)).toEqual([["a", "b", "c"], ["x", "y"]]);
    expect(cycles[0]?.edges).toEqual([0, 1, 2]);
    expect(cycles[0]?.members).toEqual(["a", "b", "c", "d"]);
    expect(g.topologicalOrder()).toBeUndefined();
    expect(g.flatOrder()).toBeUndefined();
    expect(g.unreachable()).toEqual(["a", "b", "c", "d", "x", "y"]);
  });

  it("handles a 100k-node chain without recursion", () => {
    const count = 100_000;
    const nodes = Array.from({ length: count }, (_, i) => n(`n${i}`));
    const edges = Array.from({ length: count - 1 }, (_, i) => e(`n${i}`, `n${i + 1}`));
    const g = buildGraph({ nodes, edges });
    expect(g.topologicalOrder()?.length).toBe(count);
    expect(g.cycles()).toEqual([]);
    expect(g.unreachable()).toEqual([]);
    expect(g.upstreamRefs(`n${count - 1}`).size).toBe(count - 1);
    expect(g.areUpstream([{ ref: "n0", of: `n${count - 1}` }, { ref: `n${count - 1}`, of: "n0" }])).toEqual([true, false]);
    const closed = buildGraph({ nodes, edges: [...edges, e(`n${count - 1}`, "n0")] });
    expect(closed.cycles()[0]?.refs.length).toBe(count);
  });

  it("answers batches of upstream questions exactly as one search per node would", () => {
    // Random DAGs (edges only forward in index order) with some loops and a few back edges.
    const graphs = fc
      .record({
        size: fc.integer({ min: 1, max: 40 }),
        edges: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 80 }),
        loops: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }),
        backEdges: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 2 }),
      })
      .map(({ size, edges, loops, backEdges }) => {
        const parent: (string | undefined)[] = Array.from({ length: size }, () => undefined);
        const types = Array.from({ length: size }, () => "SIMPLE");
        for (const [l, c] of loops) {
          const loop = l % size;
          const child = c % size;
          if (loop === child || parent[loop] !== undefined) continue;
          types[loop] = "DO_WHILE";
          parent[child] = `n${loop}`;
        }
        const nodes = types.map((t, i) => n(`n${i}`, t, parent[i]));
        const es = [...edges.map(([a, b]) => [Math.min(a % size, b % size), Math.max(a % size, b % size)]), ...backEdges.map(([a, b]) => [a % size, b % size])]
          .filter(([a, b]) => a !== b)
          .map(([a, b]) => e(`n${a!}`, `n${b!}`));
        return { nodes, edges: es };
      });
    fc.assert(
      fc.property(graphs, (input) => {
        const g = buildGraph(input);
        const queries = g.refs.flatMap((of) => g.refs.map((ref) => ({ ref, of })));
        const batch = g.areUpstream(queries);
        queries.forEach((q, k) => {
          expect(batch[k], `${q.ref} before ${q.of}`).toBe(g.upstreamRefs(q.of).has(q.ref));
        });
      }),
      { numRuns: 200 },
    );
  });
});
