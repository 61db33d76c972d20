/**
 * TEST-ONLY: fast-check generators of random *structured* workflow graphs —
 * sequences, parallel branches, SWITCHes merging again at a NOOP, DO_WHILE
 * loops — shared by the property tests (engine/definition, engine/decide,
 * engine/testkit). fast-check is a devDependency: only `*.test.ts` files may
 * import this module, and it is exported from no `index.ts`.
 *
 * Each test brings its own leaves (what a task, a WAIT, a dynamic fork looks
 * like, with whatever knobs it draws) and lays them out through a callback;
 * the containers and their wiring are the same for every test.
 */
import fc from "fast-check";
import { edge, node, workflow } from "./test-fixtures";
import type { Json } from "./test-fixtures";

/** A block that becomes one node, its fields up to the test. */
export interface LeafBlock {
  kind: string;
}

type Container<L> =
  | { kind: "seq"; items: StructuredBlock<L>[] }
  | { kind: "par"; items: StructuredBlock<L>[] }
  | { kind: "switch"; cases: StructuredBlock<L>[]; connectDefault: boolean }
  | { kind: "loop"; body: StructuredBlock<L>; times?: number };

/** A random workflow's shape: the test's leaves inside the shared containers. */
export type StructuredBlock<L> = L | Container<L>;

const CONTAINER_KINDS: ReadonlySet<string> = new Set(["seq", "par", "switch", "loop"]);

export interface StructuredShape<L extends LeafBlock> {
  /**
   * The leaf generators. The first is the base case: fast-check picks it more
   * often as the depth grows, so it must be the plain task. The rest follow
   * the containers in the choice.
   */
  leaves: readonly [fc.Arbitrary<L>, ...fc.Arbitrary<L>[]];
  /** When given, every loop draws `times` from it (its DO_WHILE gets `input.times`); else loops carry no input. */
  loopTimes?: fc.Arbitrary<number>;
}

/** Random structured blocks over the given leaves. */
export function structuredBlocks<L extends LeafBlock>(shape: StructuredShape<L>): fc.Arbitrary<StructuredBlock<L>> {
  const [base, ...more] = shape.leaves;
  return fc.letrec<{ block: StructuredBlock<L> }>((tie) => {
    const loop: fc.Arbitrary<Container<L>> =
      shape.loopTimes === undefined
        ? fc.record({ kind: fc.constant("loop" as const), body: tie("block") })
        : fc.record({ kind: fc.constant("loop" as const), body: tie("block"), times: shape.loopTimes });
    const choices: fc.Arbitrary<StructuredBlock<L>>[] = [
      base,
      fc.record({ kind: fc.constant("seq" as const), items: fc.array(tie("block"), { minLength: 1, maxLength: 4 }) }),
      fc.record({ kind: fc.constant("par" as const), items: fc.array(tie("block"), { minLength: 2, maxLength: 3 }) }),
      fc.record({ kind: fc.constant("switch" as const), cases: fc.array(tie("block"), { minLength: 1, maxLength: 3 }), connectDefault: fc.boolean() }),
      loop,
      ...more,
    ];
    return { block: fc.oneof({ depthSize: "small", withCrossShrink: true }, ...choices) };
  }).block;
}

/** Where a leaf is being laid out. */
export interface LeafSite {
  /** A fresh ref: `prefix` and the number of nodes placed so far. */
  ref(prefix: string): string;
  /** Adds a node (inside the enclosing loop, if any); returns its ref. */
  place(n: Json): string;
  /** An expression reading an upstream node's `output.value`, or `${workflow.input.x}` when there is none. */
  valueSource(): string;
}

/** Lays one leaf out (through `at.place`) and returns the ref of the node it became. */
export type PlaceLeaf<L> = (leaf: L, at: LeafSite) => string;

interface Built {
  nodes: Json[];
  edges: Json[];
}

/** Lays a block out as nodes and edges; returns the refs it is entered by and left from. */
function build<L extends LeafBlock>(block: StructuredBlock<L>, out: Built, parent: string | undefined, readable: string[], placeLeaf: PlaceLeaf<L>): { entries: string[]; exits: string[] } {
  const ref = (prefix: string): string => `${prefix}${out.nodes.length}`;
  const place = (n: Json): string => {
    if (parent !== undefined) n.parent = parent;
    out.nodes.push(n);
    return n.ref as string;
  };
  if (!CONTAINER_KINDS.has(block.kind)) {
    const valueSource = (): string => (readable.length === 0 ? "${workflow.input.x}" : `\${${readable[out.nodes.length % readable.length]!}.output.value}`);
    const r = placeLeaf(block as L, { ref, place, valueSource });
    return { entries: [r], exits: [r] };
  }
  const container = block as Container<L>;
  switch (container.kind) {
    case "seq": {
      let first: string[] | undefined;
      let exits = readable;
      let prev: string[] | undefined;
      for (const item of container.items) {
        const part = build(item, out, parent, exits.length === 0 ? readable : exits, placeLeaf);
        if (prev !== undefined) for (const p of prev) for (const e of part.entries) out.edges.push(edge(p, e));
        first ??= part.entries;
        prev = part.exits;
        exits = part.exits;
      }
      return { entries: first ?? [], exits: prev ?? [] };
    }
    case "par": {
      const parts = container.items.map((item) => build(item, out, parent, readable, placeLeaf));
      return { entries: parts.flatMap((p) => p.entries), exits: parts.flatMap((p) => p.exits) };
    }
    case "switch": {
      const cases = container.cases.map((_, i) => `c${i}`);
      const input = { switchCaseValue: readable.length === 0 ? "${workflow.input.kind}" : `\${${readable[0]!}.output.kind}` };
      const sw = place(node("SWITCH", ref("sw"), { cases, input }));
      const merge: string[] = [];
      container.cases.forEach((b, i) => {
        const part = build(b, out, parent, [sw], placeLeaf);
        for (const e of part.entries) out.edges.push(edge(sw, e, cases[i]));
        merge.push(...part.exits);
      });
      const m = place(node("NOOP", ref("m")));
      for (const x of merge) out.edges.push(edge(x, m));
      if (container.connectDefault) out.edges.push(edge(sw, m, "default"));
      return { entries: [sw], exits: [m] };
    }
    case "loop": {
      if (parent !== undefined) return build(container.body, out, parent, readable, placeLeaf); // loops do not nest
      const loop = place(node("DO_WHILE", ref("loop"), container.times === undefined ? {} : { input: { times: container.times } }));
      build(container.body, out, loop, [loop, ...readable], placeLeaf);
      return { entries: [loop], exits: [loop] };
    }
  }
}

/** The definition (as test JSON) a block lays out to; its output is the first exit's output. */
export function structuredWorkflow<L extends LeafBlock>(block: StructuredBlock<L>, placeLeaf: PlaceLeaf<L>): Json {
  const out: Built = { nodes: [], edges: [] };
  const { exits } = build(block, out, undefined, [], placeLeaf);
  return workflow(out.nodes, out.edges, { outputParameters: { last: `\${${exits[0]!}.output}` } });
}

/** Random structured definitions: `structuredBlocks(shape)` laid out by `structuredWorkflow`. */
export function structuredWorkflows<L extends LeafBlock>(shape: StructuredShape<L>, placeLeaf: PlaceLeaf<L>): fc.Arbitrary<Json> {
  return structuredBlocks(shape).map((block) => structuredWorkflow(block, placeLeaf));
}
