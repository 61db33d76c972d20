import { isContainerType } from "./node-types";

/**
 * Graph helpers shared by the editor, the validator, the compiler and the
 * decider. Everything is O(nodes + edges) and iterative — a 100k-node chain
 * must not overflow the stack — and deterministic: ties follow the order
 * nodes appear in the definition.
 *
 * The graph tolerates invalid input (the editor asks about drafts), and keeps
 * only what could execute: the first node of each ref; a `parent` only when it
 * names a DO_WHILE other than the node itself without forming a parent cycle
 * (otherwise the node counts as top-level); and only edges whose ends both
 * exist, differ and sit at the same container level. {@link DefinitionGraph.droppedEdges}
 * says which edges were left out and why; `validateDefinition` reports them all.
 */

/** What the graph reads from a node. `WorkflowNode` satisfies it. */
export interface GraphNodeInput {
  readonly ref: string;
  readonly type: string;
  readonly parent?: string | undefined;
}

/** What the graph reads from an edge. `WorkflowEdge` satisfies it. */
export interface GraphEdgeInput {
  readonly source: string;
  readonly target: string;
  readonly case?: string | undefined;
}

/** What the graph is built from. `WorkflowDefinition` satisfies it. */
export interface GraphInput {
  readonly nodes: readonly GraphNodeInput[];
  readonly edges: readonly GraphEdgeInput[];
}

/** An edge the graph kept. */
export interface GraphEdge {
  /** Position of the edge in the input's `edges`. */
  readonly index: number;
  readonly source: string;
  readonly target: string;
  readonly case?: string | undefined;
}

/** Why an edge is not part of the graph. */
export type DroppedEdgeReason = "unknown-source" | "unknown-target" | "self-loop" | "crosses-container";

/** An edge the graph left out. */
export interface DroppedEdge {
  /** Position of the edge in the input's `edges`. */
  readonly index: number;
  readonly reason: DroppedEdgeReason;
}

/** A cycle: `refs[i] → refs[i + 1]` (wrapping) through input edge `edges[i]`. */
export interface GraphCycle {
  readonly refs: readonly string[];
  readonly edges: readonly number[];
  /** Every node of the strongly connected component the cycle runs through (each lies on some cycle), in definition order. */
  readonly members: readonly string[];
}

/** A question for {@link DefinitionGraph.areUpstream}: does `ref` finish before `of` starts? */
export interface UpstreamQuery {
  readonly ref: string;
  readonly of: string;
}

// Typed-array reads below index arrays sized by construction; `!` marks them.

/** Compressed adjacency: the successors of v are adj[start[v]] … adj[start[v + 1] - 1]. */
interface Csr {
  readonly start: Int32Array;
  readonly adj: Int32Array;
}

function toCsr(vertexCount: number, from: readonly number[], to: readonly number[]): Csr {
  const start = new Int32Array(vertexCount + 1);
  for (const f of from) start[f + 1]!++;
  for (let v = 0; v < vertexCount; v++) start[v + 1]! += start[v]!;
  const fill = start.slice(0, vertexCount);
  const adj = new Int32Array(from.length);
  for (let e = 0; e < from.length; e++) adj[fill[from[e]!]!++] = to[e]!;
  return { start, adj };
}

/**
 * Tarjan's strongly connected components without recursion. Components are
 * numbered in reverse topological order: an edge between two components
 * always goes from the higher number to the lower.
 */
function stronglyConnected(vertexCount: number, g: Csr): { comp: Int32Array; count: number } {
  const index = new Int32Array(vertexCount).fill(-1);
  const low = new Int32Array(vertexCount);
  const comp = new Int32Array(vertexCount).fill(-1);
  const onStack = new Uint8Array(vertexCount);
  const stack = new Int32Array(vertexCount);
  const callVertex = new Int32Array(vertexCount);
  const callEdge = new Int32Array(vertexCount);
  let sp = 0;
  let counter = 0;
  let count = 0;
  for (let root = 0; root < vertexCount; root++) {
    if (index[root] !== -1) continue;
    let cp = 0;
    callVertex[cp] = root;
    callEdge[cp++] = g.start[root]!;
    index[root] = low[root] = counter++;
    stack[sp++] = root;
    onStack[root] = 1;
    while (cp > 0) {
      const v = callVertex[cp - 1]!;
      const e = callEdge[cp - 1]!;
      if (e < g.start[v + 1]!) {
        callEdge[cp - 1] = e + 1;
        const w = g.adj[e]!;
        if (index[w] === -1) {
          index[w] = low[w] = counter++;
          stack[sp++] = w;
          onStack[w] = 1;
          callVertex[cp] = w;
          callEdge[cp++] = g.start[w]!;
        } else if (onStack[w] === 1 && index[w]! < low[v]!) {
          low[v] = index[w]!;
        }
        continue;
      }
      if (low[v] === index[v]) {
        let w: number;
        do {
          w = stack[--sp]!;
          onStack[w] = 0;
          comp[w] = count;
        } while (w !== v);
        count++;
      }
      cp--;
      if (cp > 0) {
        const u = callVertex[cp - 1]!;
        if (low[v]! < low[u]!) low[u] = low[v]!;
      }
    }
  }
  return { comp, count };
}

/**
 * The reachability structure behind the upstream queries. Each DO_WHILE
 * becomes two vertices — its start (vertex n + k) and its end (its own index)
 * — so that what precedes a loop precedes its body, and the body precedes what
 * follows the loop: pred → start(L) → start(child), child → L (end) → succ,
 * and start(L) → L for an empty body.
 */
interface Reachability {
  readonly startVertex: Int32Array;
  readonly forward: Csr;
  readonly reverse: Csr;
  readonly comp: Int32Array;
  readonly compCount: number;
  readonly compSize: Int32Array;
  /** Vertices grouped by component. */
  readonly members: Csr;
}

/** Words per vertex mask in {@link DefinitionGraph.areUpstream}: 256 sources answered per pass. */
const MASK_WORDS = 8;

/** The structure of a definition's graph; build it with {@link buildGraph}. */
export class DefinitionGraph {
  /** Distinct refs, in definition order; a node's graph index is its position here. */
  readonly refs: readonly string[];
  /** Edges kept, in definition order. */
  readonly edges: readonly GraphEdge[];
  /** Edges left out, in definition order. */
  readonly droppedEdges: readonly DroppedEdge[];

  private readonly indexOf: ReadonlyMap<string, number>;
  private readonly types: readonly string[];
  private readonly parent: Int32Array;
  private readonly container: Uint8Array;
  /** Members of each level: index 0 is the top level, i + 1 the body of node i. */
  private readonly levels: readonly (readonly number[])[];
  private readonly out: readonly (readonly number[])[];
  private readonly in: readonly (readonly number[])[];
  private reach: Reachability | undefined;

  private constructor(input: GraphInput) {
    const refs: string[] = [];
    const types: string[] = [];
    const declaredParent: (string | undefined)[] = [];
    const indexOf = new Map<string, number>();
    for (const node of input.nodes) {
      if (indexOf.has(node.ref)) continue;
      indexOf.set(node.ref, refs.length);
      refs.push(node.ref);
      types.push(node.type);
      declaredParent.push(node.parent);
    }
    const n = refs.length;
    const container = new Uint8Array(n);
    for (let i = 0; i < n; i++) if (isContainerType(types[i]!)) container[i] = 1;

    const parent = new Int32Array(n).fill(-1);
    for (let i = 0; i < n; i++) {
      const p = declaredParent[i] === undefined ? undefined : indexOf.get(declaredParent[i]!);
      if (p !== undefined && p !== i && container[p] === 1) parent[i] = p;
    }
    breakParentCycles(parent);

    const levels: number[][] = Array.from({ length: n + 1 }, () => []);
    for (let i = 0; i < n; i++) levels[parent[i]! + 1]!.push(i);

    const edges: GraphEdge[] = [];
    const dropped: DroppedEdge[] = [];
    const out: number[][] = Array.from({ length: n }, () => []);
    const inn: number[][] = Array.from({ length: n }, () => []);
    input.edges.forEach((edge, index) => {
      const s = indexOf.get(edge.source);
      const t = indexOf.get(edge.target);
      let reason: DroppedEdgeReason | undefined;
      if (s === undefined) reason = "unknown-source";
      else if (t === undefined) reason = "unknown-target";
      else if (s === t) reason = "self-loop";
      else if (parent[s] !== parent[t]) reason = "crosses-container";
      if (reason !== undefined || s === undefined || t === undefined) {
        dropped.push({ index, reason: reason ?? "unknown-source" });
        return;
      }
      out[s]!.push(edges.length);
      inn[t]!.push(edges.length);
      edges.push(edge.case === undefined ? { index, source: edge.source, target: edge.target } : { index, source: edge.source, target: edge.target, case: edge.case });
    });

    this.refs = refs;
    this.types = types;
    this.indexOf = indexOf;
    this.parent = parent;
    this.container = container;
    this.levels = levels;
    this.edges = edges;
    this.droppedEdges = dropped;
    this.out = out;
    this.in = inn;
  }

  /** Builds the graph of a definition (or of a draft: see the module comment). */
  static build(input: GraphInput): DefinitionGraph {
    return new DefinitionGraph(input);
  }

  /** Number of nodes in the graph. */
  get size(): number {
    return this.refs.length;
  }

  /** True when a node has this ref. */
  has(ref: string): boolean {
    return this.indexOf.has(ref);
  }

  /** The node's type, or undefined for an unknown ref. */
  typeOf(ref: string): string | undefined {
    const i = this.indexOf.get(ref);
    return i === undefined ? undefined : this.types[i];
  }

  /** True when the node is a container (DO_WHILE). */
  isContainer(ref: string): boolean {
    const i = this.indexOf.get(ref);
    return i !== undefined && this.container[i] === 1;
  }

  /** Edges leaving the node, in definition order (several may share a target under different cases). */
  outgoing(ref: string): readonly GraphEdge[] {
    return (this.out[this.must(ref)] ?? []).map((e) => this.edges[e]!);
  }

  /** Edges entering the node, in definition order. */
  incoming(ref: string): readonly GraphEdge[] {
    return (this.in[this.must(ref)] ?? []).map((e) => this.edges[e]!);
  }

  /** Distinct targets of the node's edges, in definition order. */
  successors(ref: string): readonly string[] {
    return unique(this.outgoing(ref).map((e) => e.target));
  }

  /** Distinct sources of the node's incoming edges, in definition order. */
  predecessors(ref: string): readonly string[] {
    return unique(this.incoming(ref).map((e) => e.source));
  }

  /** The DO_WHILE whose body holds the node, or undefined at the top level. */
  parentOf(ref: string): string | undefined {
    const p = this.parent[this.must(ref)]!;
    return p < 0 ? undefined : this.refs[p];
  }

  /** Enclosing containers, innermost first. */
  ancestorsOf(ref: string): readonly string[] {
    const out: string[] = [];
    for (let p = this.parent[this.must(ref)]!; p >= 0; p = this.parent[p]!) out.push(this.refs[p]!);
    return out;
  }

  /** The nodes of one level: the container's body, or the top level when `container` is undefined. */
  childrenOf(container?: string): readonly string[] {
    return this.level(container).map((i) => this.refs[i]!);
  }

  /** Every node inside a container, at any depth, in definition order of each level (breadth first). */
  descendantsOf(container: string): readonly string[] {
    const out: string[] = [];
    const queue = [...this.level(container)];
    for (let q = 0; q < queue.length; q++) {
      const i = queue[q]!;
      out.push(this.refs[i]!);
      if (this.container[i] === 1) queue.push(...this.levels[i + 1]!);
    }
    return out;
  }

  /**
   * Nodes of a level that no edge enters: the workflow's start nodes (top
   * level), or the nodes a loop iteration starts with (a container's body).
   */
  startNodes(container?: string): readonly string[] {
    return this.level(container)
      .filter((i) => this.in[i]!.length === 0)
      .map((i) => this.refs[i]!);
  }

  /**
   * The nodes of one level in an order where every edge points forward (Kahn;
   * ties in definition order), or undefined when the level has a cycle.
   */
  topologicalOrder(container?: string): readonly string[] | undefined {
    const members = this.level(container);
    const indegree = new Map<number, number>();
    for (const i of members) indegree.set(i, this.in[i]!.length);
    const queue = members.filter((i) => indegree.get(i) === 0);
    for (let q = 0; q < queue.length; q++) {
      for (const e of this.out[queue[q]!]!) {
        const t = this.indexOf.get(this.edges[e]!.target)!;
        const d = indegree.get(t)! - 1;
        indegree.set(t, d);
        if (d === 0) queue.push(t);
      }
    }
    return queue.length === members.length ? queue.map((i) => this.refs[i]!) : undefined;
  }

  /**
   * Every node, each level in topological order, a container's body right
   * after the container: the order a sequential reader of the workflow meets
   * the nodes. Undefined when any level has a cycle.
   */
  flatOrder(): readonly string[] | undefined {
    const top = this.topologicalOrder();
    if (top === undefined) return undefined;
    const out: string[] = [];
    const stack: { order: readonly string[]; next: number }[] = [{ order: top, next: 0 }];
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      if (frame.next >= frame.order.length) {
        stack.pop();
        continue;
      }
      const ref = frame.order[frame.next++]!;
      out.push(ref);
      if (this.isContainer(ref)) {
        const body = this.topologicalOrder(ref);
        if (body === undefined) return undefined;
        stack.push({ order: body, next: 0 });
      }
    }
    return out;
  }

  /**
   * One cycle per strongly connected component of the edges (a shortest one
   * through the component's first node), components in definition order of
   * that node. Self-loops are dropped edges, not cycles.
   */
  cycles(): readonly GraphCycle[] {
    const n = this.size;
    const from: number[] = [];
    const to: number[] = [];
    for (const e of this.edges) {
      from.push(this.indexOf.get(e.source)!);
      to.push(this.indexOf.get(e.target)!);
    }
    const { comp, count } = stronglyConnected(n, toCsr(n, from, to));
    const size = new Int32Array(count);
    for (let i = 0; i < n; i++) size[comp[i]!]!++;
    const members = new Map<number, string[]>();
    for (let i = 0; i < n; i++) {
      if (size[comp[i]!]! < 2) continue;
      const list = members.get(comp[i]!);
      if (list === undefined) members.set(comp[i]!, [this.refs[i]!]);
      else list.push(this.refs[i]!);
    }
    const found: GraphCycle[] = [];
    const seen = new Uint8Array(count);
    const via = new Int32Array(n).fill(-1);
    for (let root = 0; root < n; root++) {
      const c = comp[root]!;
      if (size[c]! < 2 || seen[c] === 1) continue;
      seen[c] = 1;
      // Breadth-first from root inside the component until an edge returns to root.
      const queue = [root];
      const touched = [root];
      via[root] = -2;
      let closing = -1;
      for (let q = 0; q < queue.length && closing < 0; q++) {
        for (const e of this.out[queue[q]!]!) {
          const t = this.indexOf.get(this.edges[e]!.target)!;
          if (comp[t] !== c) continue;
          if (t === root) {
            closing = e;
            break;
          }
          if (via[t] !== -1) continue;
          via[t] = e;
          touched.push(t);
          queue.push(t);
        }
      }
      const cycleEdges: number[] = [closing];
      for (let v = this.indexOf.get(this.edges[closing]!.source)!; v !== root; ) {
        const e = via[v]!;
        cycleEdges.push(e);
        v = this.indexOf.get(this.edges[e]!.source)!;
      }
      cycleEdges.reverse();
      for (const v of touched) via[v] = -1;
      found.push({ refs: cycleEdges.map((e) => this.edges[e]!.source), edges: cycleEdges.map((e) => this.edges[e]!.index), members: members.get(c) ?? [] });
    }
    return found;
  }

  /**
   * Nodes no start node leads to, in definition order. Entering a container
   * reaches its body's start nodes; a body node is reached along its
   * siblings' edges. Only cycles without an entry leave nodes unreachable.
   */
  unreachable(): readonly string[] {
    const n = this.size;
    const reached = new Uint8Array(n);
    const queue = this.levels[0]!.filter((i) => this.in[i]!.length === 0);
    for (const i of queue) reached[i] = 1;
    for (let q = 0; q < queue.length; q++) {
      const v = queue[q]!;
      const next = this.out[v]!.map((e) => this.indexOf.get(this.edges[e]!.target)!);
      if (this.container[v] === 1) for (const c of this.levels[v + 1]!) if (this.in[c]!.length === 0) next.push(c);
      for (const t of next) {
        if (reached[t] === 1) continue;
        reached[t] = 1;
        queue.push(t);
      }
    }
    const out: string[] = [];
    for (let i = 0; i < n; i++) if (reached[i] === 0) out.push(this.refs[i]!);
    return out;
  }

  /**
   * Refs that have finished whenever `ref` starts: everything with a path of
   * edges to it (a container's whole body included), plus its enclosing
   * containers, which are running (so `${loop.output.iteration}` may be read
   * inside a loop). Excludes `ref` itself. One backward search, O(nodes + edges).
   */
  upstreamRefs(ref: string): ReadonlySet<string> {
    const x = this.must(ref);
    const r = this.reachability();
    const n = this.size;
    const visited = new Uint8Array(r.forward.start.length - 1);
    const queue = [r.startVertex[x]!];
    visited[queue[0]!] = 1;
    const found = new Set<string>();
    for (let q = 0; q < queue.length; q++) {
      const v = queue[q]!;
      for (let e = r.reverse.start[v]!; e < r.reverse.start[v + 1]!; e++) {
        const u = r.reverse.adj[e]!;
        if (visited[u] === 1) continue;
        visited[u] = 1;
        queue.push(u);
        if (u < n && u !== x) found.add(this.refs[u]!);
      }
    }
    for (const a of this.ancestorsOf(ref)) found.add(a);
    return found;
  }

  /** Whether `ref` finishes before `of` starts (see {@link upstreamRefs}). False for unknown refs and for a node and itself. */
  isUpstream(ref: string, of: string): boolean {
    return this.areUpstream([{ ref, of }])[0] === true;
  }

  /**
   * {@link isUpstream} for many pairs at once, for the validator and compiler:
   * answering each pair by search would be O(n) apiece, quadratic over a large
   * definition. Instead the sources are taken 256 at a time in topological
   * order and their reach is pushed forward as bit masks, each pass only over
   * the components between its sources and its targets — linear when
   * references are local (the common case), and O(sources / 256 × (n + e))
   * at worst.
   */
  areUpstream(queries: readonly UpstreamQuery[]): boolean[] {
    const answers: boolean[] = new Array<boolean>(queries.length).fill(false);
    const r = this.reachability();
    const pending: { query: number; source: number; target: number }[] = [];
    queries.forEach((q, k) => {
      const s = this.indexOf.get(q.ref);
      const x = this.indexOf.get(q.of);
      if (s === undefined || x === undefined || s === x) return;
      for (let p = this.parent[x]!; p >= 0; p = this.parent[p]!) {
        if (p === s) {
          answers[k] = true;
          return;
        }
      }
      const cs = r.comp[s]!;
      const ct = r.comp[r.startVertex[x]!]!;
      if (cs === ct) answers[k] = r.compSize[cs]! > 1;
      else if (cs > ct) pending.push({ query: k, source: s, target: ct });
      // cs < ct: components are numbered against edge direction, so unreachable.
    });
    if (pending.length === 0) return answers;

    // Group by source, sources in topological order (higher component first).
    pending.sort((a, b) => r.comp[b.source]! - r.comp[a.source]! || a.source - b.source);
    const sources: number[] = [];
    const slotOf = new Map<number, number>();
    for (const p of pending) {
      if (!slotOf.has(p.source)) {
        slotOf.set(p.source, sources.length);
        sources.push(p.source);
      }
    }
    const perPass = MASK_WORDS * 32;
    const masks = new Uint32Array(r.compCount * MASK_WORDS);
    let cursor = 0;
    for (let first = 0; first < sources.length; first += perPass) {
      const last = Math.min(first + perPass, sources.length);
      const batch: typeof pending = [];
      while (cursor < pending.length && slotOf.get(pending[cursor]!.source)! < last) batch.push(pending[cursor++]!);
      let high = -1;
      let low = Number.MAX_SAFE_INTEGER;
      for (let s = first; s < last; s++) {
        const c = r.comp[sources[s]!]!;
        const bit = s - first;
        masks[c * MASK_WORDS + (bit >>> 5)]! |= 1 << (bit & 31);
        if (c > high) high = c;
      }
      for (const p of batch) if (p.target < low) low = p.target;
      for (let c = high; c > low; c--) {
        const base = c * MASK_WORDS;
        let any = 0;
        for (let w = 0; w < MASK_WORDS; w++) any |= masks[base + w]!;
        if (any === 0) continue;
        for (let m = r.members.start[c]!; m < r.members.start[c + 1]!; m++) {
          const u = r.members.adj[m]!;
          for (let e = r.forward.start[u]!; e < r.forward.start[u + 1]!; e++) {
            const d = r.comp[r.forward.adj[e]!]!;
            if (d === c || d < low) continue;
            const target = d * MASK_WORDS;
            for (let w = 0; w < MASK_WORDS; w++) masks[target + w]! |= masks[base + w]!;
          }
        }
      }
      for (const p of batch) {
        const bit = slotOf.get(p.source)! - first;
        answers[p.query] = (masks[p.target * MASK_WORDS + (bit >>> 5)]! & (1 << (bit & 31))) !== 0;
      }
      masks.fill(0, low * MASK_WORDS, (high + 1) * MASK_WORDS);
    }
    return answers;
  }

  private must(ref: string): number {
    const i = this.indexOf.get(ref);
    if (i === undefined) throw new RangeError(`No node has the ref ${JSON.stringify(ref)}`);
    return i;
  }

  private level(container: string | undefined): readonly number[] {
    return container === undefined ? this.levels[0]! : this.levels[this.must(container) + 1]!;
  }

  private reachability(): Reachability {
    if (this.reach !== undefined) return this.reach;
    const n = this.size;
    const startVertex = new Int32Array(n);
    let vertexCount = n;
    for (let i = 0; i < n; i++) startVertex[i] = this.container[i] === 1 ? vertexCount++ : i;
    const from: number[] = [];
    const to: number[] = [];
    const link = (a: number, b: number): void => {
      from.push(a);
      to.push(b);
    };
    for (const e of this.edges) link(this.indexOf.get(e.source)!, startVertex[this.indexOf.get(e.target)!]!);
    for (let i = 0; i < n; i++) {
      if (this.container[i] === 1) link(startVertex[i]!, i);
      const p = this.parent[i]!;
      if (p >= 0) {
        link(startVertex[p]!, startVertex[i]!);
        link(i, p);
      }
    }
    const forward = toCsr(vertexCount, from, to);
    const reverse = toCsr(vertexCount, to, from);
    const { comp, count } = stronglyConnected(vertexCount, forward);
    const compSize = new Int32Array(count);
    const vertices: number[] = [];
    const comps: number[] = [];
    for (let v = 0; v < vertexCount; v++) {
      compSize[comp[v]!]!++;
      comps.push(comp[v]!);
      vertices.push(v);
    }
    this.reach = { startVertex, forward, reverse, comp, compCount: count, compSize, members: toCsr(count, comps, vertices) };
    return this.reach;
  }
}

/** Builds the graph helpers for a definition or a draft (see {@link DefinitionGraph}). */
export function buildGraph(input: GraphInput): DefinitionGraph {
  return DefinitionGraph.build(input);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** Clears `parent` for every node on a cycle of parents (a → b → a), in O(n). */
function breakParentCycles(parent: Int32Array): void {
  const n = parent.length;
  const state = new Uint8Array(n); // 0 new, 1 on the current walk, 2 settled
  const walk: number[] = [];
  for (let i = 0; i < n; i++) {
    if (state[i] !== 0) continue;
    walk.length = 0;
    let v = i;
    while (v >= 0 && state[v] === 0) {
      state[v] = 1;
      walk.push(v);
      v = parent[v]!;
    }
    if (v >= 0 && state[v] === 1) {
      // v is on this walk: everything from v onwards is the cycle.
      for (let k = walk.indexOf(v); k < walk.length; k++) parent[walk[k]!] = -1;
    }
    for (const w of walk) state[w] = 2;
  }
}
