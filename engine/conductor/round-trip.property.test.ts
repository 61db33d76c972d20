import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from "../definition";
import type { ConductorWorkflowDef, ConductorWorkflowTask } from "./conductor-schema";
import { exportConductorWorkflow } from "./export-workflow";
import { importConductorWorkflow } from "./import-workflow";
import { graphStructure } from "./structure";

/**
 * Random structured Conductor workflows — sequences, SWITCHes (empty cases,
 * TERMINATE endings), FORK_JOINs (nested, branches left out of joinOn,
 * joinOn naming a task mid-branch or a whole SWITCH), DO_WHILEs, dynamic
 * forks — written in the normal form export produces. For each:
 *   import → export → import gives the same graph structure, and
 *   export(import(x)) is x, except for the refs of FORK_JOINs (import drops
 *   FORK_JOIN tasks — a fork is its edges — so export generates them).
 *
 * Two Conductor shapes have the same graph as a simpler one, and export
 * writes the simpler one (same behaviour, different nesting); the generator
 * leaves them out of the exact comparison:
 * - a FORK_JOIN first in a branch of another, where either leaves a branch
 *   out of its joinOn: that branch cannot be told apart from a branch of the
 *   other fork (their heads all leave the same place), and export decides;
 * - tasks after a SWITCH whose only path that does not terminate is its
 *   default case: they become the end of the default case.
 */

type Block =
  | { kind: "task"; variant: number; policy: boolean }
  | { kind: "switch"; cases: Block[][]; fallback: Block[]; terminate: number }
  | { kind: "fork"; branches: Block[][]; joinAt: number[] }
  | { kind: "loop"; body: Block[] }
  | { kind: "dynamic" };

const blocks = fc.letrec<{ block: Block; seq: Block[]; nonEmpty: Block[] }>((tie) => ({
  block: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ kind: fc.constant("task" as const), variant: fc.nat(6), policy: fc.boolean() }),
    fc.record({
      kind: fc.constant("switch" as const),
      cases: fc.array(tie("seq"), { minLength: 1, maxLength: 3 }),
      fallback: tie("seq"),
      terminate: fc.nat(4),
    }),
    fc.record({
      kind: fc.constant("fork" as const),
      branches: fc.array(tie("nonEmpty"), { minLength: 2, maxLength: 3 }),
      // Per branch: which item joinOn names (mod length + 1; the extra value leaves the branch out).
      joinAt: fc.array(fc.nat(5), { minLength: 3, maxLength: 3 }),
    }),
    fc.record({ kind: fc.constant("loop" as const), body: tie("nonEmpty") }),
    fc.constant<Block>({ kind: "dynamic" }),
  ),
  seq: fc.array(tie("block"), { maxLength: 3 }),
  nonEmpty: fc.array(tie("block"), { minLength: 1, maxLength: 3 }),
}));

const workflowBlocks = fc.array(blocks.block, { minLength: 1, maxLength: 4 });

/** Writes blocks as Conductor tasks in export's normal form. */
class Writer {
  private n = 0;
  private ref(prefix: string): string {
    return `${prefix}${++this.n}`;
  }

  /** A list; `inLoop` keeps loops from nesting. Returns the tasks and, per item, what joinOn names to wait for it. */
  list(items: readonly Block[], inLoop: boolean, inBranch = false): { tasks: ConductorWorkflowTask[]; owners: (string | undefined)[] } {
    const tasks: ConductorWorkflowTask[] = [];
    const owners: (string | undefined)[] = [];
    for (const [i, b] of items.entries()) {
      const w = this.block(b, inLoop, inBranch && i === 0);
      tasks.push(...w.tasks);
      owners.push(w.owner);
    }
    return { tasks, owners };
  }

  private block(b: Block, inLoop: boolean, firstInBranch: boolean): { tasks: ConductorWorkflowTask[]; owner: string | undefined } {
    switch (b.kind) {
      case "task":
        return this.task(b.variant, b.policy);
      case "switch": {
        const ref = this.ref("sw");
        const decisionCases: Record<string, ConductorWorkflowTask[]> = {};
        b.cases.forEach((c, i) => {
          const tasks = this.list(c, inLoop).tasks;
          // Some non-default case may end the workflow; the default always carries on.
          if (b.terminate === i && b.cases.length > 1) tasks.push(this.terminate());
          decisionCases[`c${i}`] = tasks;
        });
        return {
          tasks: [
            {
              name: ref,
              taskReferenceName: ref,
              type: "SWITCH",
              inputParameters: { switchCaseValue: "${workflow.input.kind}" },
              evaluatorType: "value-param",
              expression: "switchCaseValue",
              decisionCases,
              defaultCase: this.list(b.fallback, inLoop).tasks,
            },
          ],
          owner: ref,
        };
      }
      case "fork": {
        const fork = this.ref("fork");
        const branches = b.branches.map((br) => this.list(br, inLoop, true));
        const nested = firstInBranch || b.branches.some((br) => br[0]?.kind === "fork");
        const joinOn: string[] = [];
        branches.forEach((br, i) => {
          const at = (b.joinAt[i] ?? 0) % (br.owners.length + (nested ? 0 : 1));
          const owner = br.owners[at];
          if (owner !== undefined) joinOn.push(owner);
        });
        if (joinOn.length === 0) joinOn.push(branches[0]!.owners[branches[0]!.owners.length - 1]!);
        const join = this.ref("join");
        return {
          tasks: [
            { name: fork, taskReferenceName: fork, type: "FORK_JOIN", inputParameters: {}, forkTasks: branches.map((br) => br.tasks) },
            { name: join, taskReferenceName: join, type: "JOIN", inputParameters: {}, joinOn },
          ],
          owner: join,
        };
      }
      case "loop": {
        if (inLoop) return this.task(0, false);
        const ref = this.ref("loop");
        return {
          tasks: [
            {
              name: ref,
              taskReferenceName: ref,
              type: "DO_WHILE",
              inputParameters: { times: "${workflow.input.times}" },
              loopCondition: `$.${ref}['iteration'] < $.times`,
              loopOver: this.list(b.body, true).tasks,
            },
          ],
          owner: ref,
        };
      }
      case "dynamic": {
        const ref = this.ref("dyn");
        const join = `${ref}_join`;
        return {
          tasks: [
            { name: ref, taskReferenceName: ref, type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskName: "process_item", forkTaskInputs: "${workflow.input.items}" } },
            { name: join, taskReferenceName: join, type: "JOIN", inputParameters: {}, joinOn: [] },
          ],
          owner: join,
        };
      }
    }
  }

  private terminate(): ConductorWorkflowTask {
    const ref = this.ref("end");
    return { name: ref, taskReferenceName: ref, type: "TERMINATE", inputParameters: { terminationStatus: "COMPLETED" } };
  }

  private task(variant: number, policy: boolean): { tasks: ConductorWorkflowTask[]; owner: string } {
    const ref = this.ref("t");
    const base = { name: `task_${ref}`, taskReferenceName: ref };
    const variants: ConductorWorkflowTask[] = [
      { ...base, type: "SIMPLE", inputParameters: { id: "${workflow.input.id}" } },
      { ...base, type: "HTTP", inputParameters: { http_request: { uri: "https://example.com/${workflow.input.id}", method: "POST", body: { a: 1 } } } },
      { ...base, type: "INLINE", inputParameters: { n: "${workflow.input.n}", evaluatorType: "graaljs", expression: "$.n + 1" } },
      { ...base, type: "WAIT", inputParameters: { duration: "5s" } },
      { ...base, type: "SET_VARIABLE", inputParameters: { seen: true } },
      { ...base, type: "HUMAN", inputParameters: {}, nodeFlow: { assignee: "group:ops", outcomes: ["approve", "reject"] } },
      { ...base, type: "SUB_WORKFLOW", inputParameters: {}, subWorkflowParam: { name: "child", version: 2 } },
    ];
    const task = variants[variant % variants.length]!;
    if (policy) {
      task.retryCount = 1;
      task.taskDefinition = { name: base.name, timeoutSeconds: 30, timeoutPolicy: "RETRY", responseTimeoutSeconds: 10 };
    }
    return { tasks: [task], owner: ref };
  }
}

function conductorWorkflow(items: readonly Block[]): ConductorWorkflowDef {
  return {
    name: "random_flow",
    tasks: new Writer().list(items, false).tasks,
    inputParameters: [],
    outputParameters: {},
    schemaVersion: 2,
    restartable: true,
    workflowStatusListenerEnabled: false,
    timeoutPolicy: "ALERT_ONLY",
    timeoutSeconds: 0,
    variables: {},
  };
}

/** `def` with every FORK_JOIN's ref replaced by its position in reading order, so generated refs compare equal. */
function maskForkRefs(def: ConductorWorkflowDef): unknown {
  let k = 0;
  const renames = new Map<string, string>();
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== "object" || v === null) return v;
    const o = v as Record<string, unknown>;
    if (o.type === "FORK_JOIN" && typeof o.taskReferenceName === "string") {
      const masked = `fork#${++k}`;
      renames.set(o.taskReferenceName, masked);
      return { ...Object.fromEntries(Object.entries(o).map(([key, x]) => [key, walk(x)])), name: masked, taskReferenceName: masked };
    }
    return Object.fromEntries(Object.entries(o).map(([key, x]) => [key, walk(x)]));
  };
  return walk(def);
}

function imported(def: unknown) {
  const result = importConductorWorkflow(def);
  if (!result.ok) throw new Error(`import failed: ${JSON.stringify(result.problems, null, 1)}\n${JSON.stringify(def, null, 1)}`);
  return result.definition;
}

function exported(def: Parameters<typeof exportConductorWorkflow>[0]) {
  const result = exportConductorWorkflow(def);
  if (!result.ok) throw new Error(`export failed: ${JSON.stringify(result.problems, null, 1)}\n${JSON.stringify(def, null, 1)}`);
  return result.workflowDef;
}

describe("Conductor round trip over random structured workflows", () => {
  it("import → export → import preserves the graph structure", () => {
    fc.assert(
      fc.property(workflowBlocks, (items) => {
        const x = conductorWorkflow(items);
        const first = imported(x);
        const again = imported(exported(first));
        const a = graphStructure(first);
        const b = graphStructure(again);
        expect(new Map(b.nodes)).toEqual(new Map(a.nodes));
        expect([...b.edges].sort()).toEqual([...a.edges].sort());
      }),
      { numRuns: 200 },
    );
  }, 60_000);

  it("export(import(x)) is x up to the generated FORK_JOIN refs", () => {
    fc.assert(
      fc.property(workflowBlocks, (items) => {
        const x = conductorWorkflow(items);
        expect(maskForkRefs(exported(imported(x)))).toEqual(maskForkRefs(x));
      }),
      { numRuns: 200 },
    );
  }, 60_000);
});


/**
 * The other direction: structured graphs as people draw them — forks whose
 * branches merge at any node, several start nodes, a merge that forks again,
 * SWITCHes merging at a node, loops — export, and import back to the same
 * graph except for the JOINs export generated (each replaced by edges from
 * its inputs to its outputs, which is what a JOIN means).
 */
type Drawn =
  | { kind: "task" }
  | { kind: "seq"; items: Drawn[] }
  | { kind: "par"; items: Drawn[] }
  | { kind: "switch"; cases: Drawn[]; mergeAtNoop: boolean }
  | { kind: "loop"; body: Drawn };

const drawn = fc.letrec<{ block: Drawn }>((tie) => ({
  block: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant<Drawn>({ kind: "task" }),
    fc.record({ kind: fc.constant("seq" as const), items: fc.array(tie("block"), { minLength: 1, maxLength: 4 }) }),
    fc.record({ kind: fc.constant("par" as const), items: fc.array(tie("block"), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant("switch" as const), cases: fc.array(tie("block"), { minLength: 1, maxLength: 3 }), mergeAtNoop: fc.boolean() }),
    fc.record({ kind: fc.constant("loop" as const), body: tie("block") }),
  ),
}));

function drawGraph(root: Drawn): WorkflowDefinition {
  const nodes: WorkflowNode[] = [];
  const edges: WorkflowEdge[] = [];
  let n = 0;
  const add = (node: Omit<WorkflowNode, "position">, parent: string | undefined): string => {
    const full = { ...node, position: { x: 0, y: 0 } } as WorkflowNode;
    if (parent !== undefined) full.parent = parent;
    nodes.push(full);
    return full.ref;
  };
  const link = (from: { ref: string; case?: string }[], to: string[]): void => {
    for (const f of from) for (const t of to) edges.push(f.case === undefined ? { source: f.ref, target: t } : { source: f.ref, target: t, case: f.case });
  };
  /** Lays a block out; returns its entry nodes and its exits. */
  const build = (b: Drawn, parent: string | undefined, inLoop: boolean): { entries: string[]; exits: { ref: string; case?: string }[] } => {
    switch (b.kind) {
      case "task": {
        const ref = add({ ref: `t${++n}`, type: "SIMPLE", name: "work", input: { id: "${workflow.input.id}" } }, parent);
        return { entries: [ref], exits: [{ ref }] };
      }
      case "seq": {
        let first: string[] | undefined;
        let exits: { ref: string; case?: string }[] = [];
        for (const item of b.items) {
          const part = build(item, parent, inLoop);
          if (first === undefined) first = part.entries;
          else link(exits, part.entries);
          exits = part.exits;
        }
        return { entries: first ?? [], exits };
      }
      case "par": {
        const parts = b.items.map((item) => build(item, parent, inLoop));
        return { entries: parts.flatMap((p) => p.entries), exits: parts.flatMap((p) => p.exits) };
      }
      case "switch": {
        const cases = b.cases.map((_, i) => `c${i}`);
        const sw = add({ ref: `sw${++n}`, type: "SWITCH", evaluatorType: "value-param", expression: "k", cases, input: { k: "${workflow.input.k}" } } as Omit<WorkflowNode, "position">, parent);
        const exits: { ref: string; case?: string }[] = [{ ref: sw, case: "default" }];
        b.cases.forEach((c, i) => {
          const part = build(c, parent, inLoop);
          link([{ ref: sw, case: cases[i]! }], part.entries);
          exits.push(...part.exits);
        });
        if (!b.mergeAtNoop) return { entries: [sw], exits };
        const merge = add({ ref: `m${++n}`, type: "NOOP" }, parent);
        link(exits, [merge]);
        return { entries: [sw], exits: [{ ref: merge }] };
      }
      case "loop": {
        if (inLoop) return build({ kind: "task" }, parent, inLoop);
        const loop = add({ ref: `loop${++n}`, type: "DO_WHILE", loopCondition: "$.loop['iteration'] < 3" } as Omit<WorkflowNode, "position">, parent);
        build(b.body, loop, true);
        return { entries: [loop], exits: [{ ref: loop }] };
      }
    }
  };
  build(root, undefined, false);
  return { schemaVersion: 1, name: "drawn", nodes, edges };
}

describe("Conductor export of drawn structured graphs", () => {
  it("exports, and imports back to the same graph up to generated JOINs", () => {
    fc.assert(
      fc.property(drawn.block, (root) => {
        const graph = drawGraph(root);
        const back = imported(exported(graph));
        const generated = new Set(back.nodes.filter((x) => !graph.nodes.some((y) => y.ref === x.ref)).map((x) => x.ref));
        for (const ref of generated) expect(back.nodes.find((x) => x.ref === ref)?.type).toBe("JOIN");
        const a = graphStructure(graph);
        const b = graphStructure(back, generated);
        expect(new Map(b.nodes)).toEqual(new Map(a.nodes));
        expect([...b.edges].sort()).toEqual([...a.edges].sort());
      }),
      { numRuns: 200 },
    );
  }, 60_000);
});
