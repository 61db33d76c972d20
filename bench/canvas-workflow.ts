import { createNode, layoutDefinition, validateDefinition } from "@/engine";
import type { NodeType, WorkflowDefinition, WorkflowNode } from "@/engine";

/**
 * The workflow `npm run bench:canvas` draws: `nodes` nodes (exactly), shaped
 * like a big real one rather than a grid — a start node forks into parallel
 * lanes that join at the end, and each lane is a run of blocks: chains of
 * mixed task types, SWITCH branches merged by an EXCLUSIVE_JOIN, forks
 * joined by a JOIN, and a few DO_WHILE loops with a chain as their body.
 * Inputs read the previous node's output, so the validator's expression
 * checks have real work. Laid out with the engine's `layoutDefinition`, as
 * an import would be. Deterministic for a seed (a small PRNG, no
 * Math.random), so two runs measure the same diagram.
 */
export interface CanvasWorkflowOptions {
  nodes: number;
  seed?: number;
  name?: string;
}

/** mulberry32: small, fast, and plenty for picking shapes. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TASK_MIX: readonly [NodeType, number][] = [
  ["SIMPLE", 50],
  ["HTTP", 15],
  ["INLINE", 10],
  ["JSON_JQ_TRANSFORM", 10],
  ["SET_VARIABLE", 5],
  ["WAIT", 5],
  ["EVENT", 5],
];
const QUEUES = ["fetch_customer", "reserve_stock", "charge_card", "send_email", "score_risk", "sync_crm", "render_invoice", "notify_slack"] as const;
const CASES = ["approved", "priority", "eu", "retry", "large"] as const;

/** Nodes a block needs at least; below them the rest of a lane is a chain. */
const MIN_SWITCH = 4; // switch, two one-node branches, exclusive join
const MIN_FORK = 3; // two one-node branches, join
const MIN_LOOP = 3; // loop, two-node body

export function generateCanvasWorkflow(options: CanvasWorkflowOptions): WorkflowDefinition {
  const total = options.nodes;
  if (!Number.isInteger(total) || total < 1) throw new Error(`nodes must be a positive integer, got ${total}`);
  const random = prng(options.seed ?? 1);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const weighted = (): NodeType => {
    let roll = random() * TASK_MIX.reduce((sum, [, w]) => sum + w, 0);
    for (const [type, weight] of TASK_MIX) if ((roll -= weight) < 0) return type;
    return "SIMPLE";
  };

  const nodes: WorkflowNode[] = [];
  const edges: WorkflowDefinition["edges"] = [];
  let counter = 0;
  const origin = { x: 0, y: 0 };
  const add = (node: WorkflowNode): string => {
    nodes.push(node);
    return node.ref;
  };
  const ref = (prefix: string) => `${prefix}_${++counter}`;
  const connect = (from: readonly string[], to: string, edgeCase?: string) => {
    for (const source of from) edges.push(edgeCase === undefined ? { source, target: to } : { source, target: to, case: edgeCase });
  };
  /** A task node reading `upstream`'s output (or the workflow input, at the top of a loop body). */
  const task = (upstream: string | undefined, parent: string | undefined): string => {
    const type = weighted();
    const r = ref(type.toLowerCase());
    const value = upstream === undefined ? "${workflow.input.value}" : `\${${upstream}.output.result}`;
    const node = createNode(type, r, origin, parent) as WorkflowNode;
    switch (node.type) {
      case "SIMPLE":
        node.name = pick(QUEUES);
        node.input = { value };
        break;
      case "HTTP":
        node.httpRequest = { uri: `https://api.example.com/${pick(QUEUES)}`, method: "POST", body: { value } };
        break;
      case "WAIT":
        break;
      case "SET_VARIABLE":
        node.input = { [r]: value };
        break;
      default:
        node.input = { value };
    }
    return add(node);
  };
  /** `length` tasks in a row after `from`; returns the last. */
  const chain = (from: readonly string[], length: number, parent?: string, upstream?: string): string[] => {
    let tail = from;
    let previous = upstream;
    for (let i = 0; i < length; i++) {
      const r = task(previous, parent);
      connect(tail, r);
      tail = [r];
      previous = r;
    }
    return [...tail];
  };
  /** Splits `budget` nodes over `parts` branches of at least one each. */
  const split = (budget: number, parts: number): number[] => {
    const sizes = Array.from({ length: parts }, () => 1);
    for (let left = budget - parts; left > 0; left--) sizes[int(0, parts - 1)]! += 1;
    return sizes;
  };

  let loopsLeft = Math.max(1, Math.round(total / 150));
  /** Blocks after `from` using exactly `budget` nodes; returns the exit refs. */
  const blocks = (from: readonly string[], budget: number): string[] => {
    let tail = [...from];
    let left = budget;
    while (left > 0) {
      const upstream = tail.length === 1 ? tail[0] : undefined;
      const roll = random();
      if (roll < 0.25 && left >= MIN_SWITCH + 2) {
        const size = Math.min(left, int(MIN_SWITCH, 10));
        const sw = createNode("SWITCH", ref("switch"), origin) as WorkflowNode;
        const label = pick(CASES);
        if (sw.type === "SWITCH") {
          sw.cases = [label];
          sw.input = { switchCaseValue: upstream === undefined ? "${workflow.input.kind}" : `\${${upstream}.output.kind}` };
        }
        connect(tail, add(sw));
        const [caseLength, defaultLength] = split(size - 2, 2) as [number, number];
        const taken = chain([], caseLength, undefined, sw.ref);
        edges.push({ source: sw.ref, target: nodes[nodes.length - caseLength]!.ref, case: label });
        const fallback = chain([], defaultLength, undefined, sw.ref);
        edges.push({ source: sw.ref, target: nodes[nodes.length - defaultLength]!.ref, case: "default" });
        const merge = add(createNode("EXCLUSIVE_JOIN", ref("merge"), origin));
        connect([...taken, ...fallback], merge);
        tail = [merge];
        left -= size;
      } else if (roll < 0.45 && left >= MIN_FORK + 2) {
        const branches = left >= 8 && random() < 0.4 ? 3 : 2;
        const size = Math.min(left, int(Math.max(MIN_FORK, branches + 1), 9));
        const exits: string[] = [];
        for (const length of split(size - 1, branches)) exits.push(...chain(tail, length, undefined, upstream));
        const join = add(createNode("JOIN", ref("join"), origin));
        connect(exits, join);
        tail = [join];
        left -= size;
      } else if (roll < 0.55 && loopsLeft > 0 && left >= MIN_LOOP + 2) {
        loopsLeft -= 1;
        const size = Math.min(left, int(4, 7));
        const loop = add(createNode("DO_WHILE", ref("loop"), origin));
        connect(tail, loop);
        chain([], size - 1, loop);
        // chain([]) leaves the body's first node without an edge in: it is the body's start node.
        tail = [loop];
        left -= size;
      } else {
        const size = Math.min(left, int(1, 4));
        tail = chain(tail, size, undefined, upstream);
        left -= size;
      }
    }
    return tail;
  };

  if (total < 8) {
    chain([], total);
  } else {
    const start = add(createNode("SIMPLE", ref("start"), origin));
    // Wide enough to look like a real fan-out, narrow enough that each lane has room for blocks.
    const lanes = Math.max(2, Math.min(8, Math.round(total / 125)));
    const budgets = split(total - 3, lanes);
    const exits: string[] = [];
    for (const budget of budgets) {
      // Each lane opens with a task, so the fork is the start node's own edges.
      const first = chain([start], 1, undefined, start);
      exits.push(...blocks(first, budget - 1));
    }
    const join = add(createNode("JOIN", ref("join"), origin));
    connect(exits, join);
    chain([join], 1, undefined, join);
  }

  const definition = layoutDefinition({
    schemaVersion: 1 as const,
    name: options.name ?? `canvas_bench_${total}`,
    description: `Generated by npm run bench:canvas: ${total} nodes (seed ${options.seed ?? 1}).`,
    nodes,
    edges,
  });
  const validation = validateDefinition(definition);
  if (!validation.ok) {
    const first = validation.problems.slice(0, 5).map((p) => `${p.code} ${p.ref ?? ""}: ${p.message}`);
    throw new Error(`generated workflow is invalid (a generator bug):\n  ${first.join("\n  ")}`);
  }
  return validation.definition;
}
