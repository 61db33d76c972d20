import type { DefinitionGraph, WorkflowDefinition, WorkflowNode } from "../definition";
import { DEFAULT_CASE, MAX_REF_LENGTH, buildGraph, validateDefinition } from "../definition";
import type { ConductorWorkflowDef, ConductorWorkflowTask, NodeFlowTaskExtension } from "./conductor-schema";
import { NOTES_METADATA_KEY } from "./conductor-schema";
import { rewriteNodeExpressions, rewriteStrings, rootRewriter } from "./expression-rewrite";
import { importConductorWorkflow } from "./import-workflow";
import type { ConductorExportProblem } from "./problems";
import { graphStructure, structureDifference } from "./structure";
import { policyToConductor } from "./task-policy-mapping";

/**
 * node-flow graph → Conductor `WorkflowDef`, where the graph is structured.
 *
 * Each level (the top level, each DO_WHILE body) is read as one task list,
 * item by item, the way import writes it: the next item is the node all of
 * the previous item's exits lead to. Along the way
 * - a node with several outgoing edges (or several start nodes, or a SWITCH
 *   case with several edges) is a fork: each target starts a branch, read as
 *   a list until it reaches a node that also waits on something outside the
 *   branch. Where the branches meet is the fork's JOIN: a JOIN node there is
 *   used as is (ref kept); any other merge node gets a generated JOIN before
 *   it. `joinOn` names what each branch ends with — a task, a SWITCH (current
 *   Conductor waits for the case that ran), a loop, a nested JOIN — in the
 *   order of the merge node's incoming edges. A branch that leads nowhere is
 *   in the FORK_JOIN but not in `joinOn`, as import reads it; a branch task
 *   with an edge to the JOIN and one onward is named in `joinOn` mid-branch.
 *   Branches that meet in stages (two of three first) become nested
 *   FORK_JOINs;
 * - a SWITCH's cases are lists from each case handle to the node where the
 *   cases meet again, which becomes the task after the SWITCH; a case whose
 *   handle leads straight there is an empty list;
 * - a DO_WHILE's body is its `loopOver`; a FORK_JOIN_DYNAMIC gets the JOIN
 *   Conductor requires after it (expressions reading the fork's output read
 *   that JOIN).
 *
 * Generated refs are deterministic: `<where>_fork` and `<where>_join`, where
 * `<where>` is the node the fork leaves (`start` at the top, `<loop>_body` at
 * the start of a loop body, `<switch>_<case>` at the start of a case), and
 * `<fork>_join` after a FORK_JOIN_DYNAMIC; `_2`, `_3`… when taken.
 *
 * Refused, naming the node and why (`not-structured`):
 * - SWITCH cases that do not all continue to one node — including a case
 *   that ends its path while others continue (Conductor continues after a
 *   SWITCH whichever case ran), and a node entered from two cases that is not
 *   where the cases meet;
 * - an edge from inside a case to a node outside the SWITCH (a JOIN waiting
 *   on a task of a case not taken would wait forever in Conductor);
 * - a cross edge between parallel branches, and a merge that is not where all
 *   of its fork's branches meet (a branch bypasses it to a later node);
 * - a redundant edge (its source already leads to its target another way).
 *
 * Edges leaving a TERMINATE are never taken; the nodes they lead to (which
 * validation warns never run) are written after the TERMINATE in its list,
 * where Conductor registers them and never schedules them, as import reads them.
 *
 * Policies go to the WorkflowTask's `retryCount`, `startDelay`, `cacheConfig`
 * and, for the rest, an inline `taskDefinition` holding exactly the fields
 * the policy sets (see `task-policy-mapping.ts`) — not a separate TaskDef
 * list: a node's policy belongs to that node, and two nodes running the same
 * task type may differ. Config Conductor has no field for (a node's label,
 * a HUMAN task's assignee, form, outcomes, due time) travels under `nodeFlow`.
 * Positions are not exported; import lays the graph out afresh. Sticky notes
 * (which Conductor has no field for) go to `metadata.nodeFlow.notes`, with the
 * positions they had beside the exported graph.
 *
 * Finally the result is imported back and must give the same structure
 * (generated JOINs discounted), so an export never silently changes what a
 * workflow does.
 *
 * Normal form, i.e. how `export(import(x))` can differ from a Conductor `x`
 * while meaning the same (the round-trip property tests hold everything else
 * equal):
 * - FORK_JOIN refs are generated (import keeps no FORK_JOIN node), as is the
 *   JOIN after a FORK_JOIN_DYNAMIC (`<fork>_join`);
 * - DECISION is written as SWITCH, LAMBDA as INLINE; `retryCount` goes on the
 *   WorkflowTask, never in `taskDefinition`;
 * - every task has `name` (the ref when the node has none) and
 *   `inputParameters`; `optional` only when true; SWITCH always has
 *   `defaultCase`; the WorkflowDef states `schemaVersion` 2, `restartable`,
 *   `timeoutPolicy`, `timeoutSeconds`, `variables`, `outputParameters`, and
 *   `inputParameters` as the inputSchema's property names;
 * - a JOIN that closes no fork waits on the item before it (`joinOn` names
 *   that item, already finished) — its own `joinOn` could name tasks of a
 *   case not taken, on which Conductor would wait forever;
 * - two shapes have the same graph as a simpler one, which export writes:
 *   tasks after a SWITCH whose only path that does not terminate is its
 *   default become the end of the default case; and a FORK_JOIN first in a
 *   branch of another, where either leaves a branch out of its joinOn, is
 *   flattened (that branch cannot be told apart from one of the other fork's).
 *
 * Reading recurses once per level of nesting; a graph nested thousands of
 * levels deep is refused (`too-deep`) rather than overflowing the stack.
 */

/** Options for {@link exportConductorWorkflow}. */
export interface ConductorExportOptions {
  /** Import the result back and compare structures (default true). */
  verify?: boolean;
}

/** The verdict of {@link exportConductorWorkflow}. */
export type ConductorExportResult = { ok: true; workflowDef: ConductorWorkflowDef } | { ok: false; problems: ConductorExportProblem[] };

/** Exports a valid, structured graph as a Conductor WorkflowDef; never throws. */
export function exportConductorWorkflow(definition: WorkflowDefinition, options: ConductorExportOptions = {}): ConductorExportResult {
  const verdict = validateDefinition(definition);
  if (!verdict.ok) {
    return {
      ok: false,
      problems: verdict.problems.map((p) => {
        const out: ConductorExportProblem = { code: "invalid-definition", message: `${p.message} (${p.code})` };
        if (p.ref !== undefined) out.ref = p.ref;
        return out;
      }),
    };
  }
  let exporter: Exporter;
  let workflowDef: ConductorWorkflowDef;
  try {
    exporter = new Exporter(definition);
    workflowDef = exporter.workflow();
  } catch (e) {
    if (e instanceof ExportRefusal) return { ok: false, problems: [e.problem] };
    // Reading nests one call per level of nesting; a graph nested thousands deep has no sensible Conductor form anyway.
    if (e instanceof RangeError) return { ok: false, problems: [{ code: "too-deep", message: "The graph nests SWITCHes, forks or cases too deeply to export as Conductor task lists" }] };
    throw e;
  }
  if (options.verify !== false) {
    const back = importConductorWorkflow(workflowDef);
    if (!back.ok) {
      const first = back.problems[0]!;
      const p: ConductorExportProblem = { code: "not-structured", message: `The exported workflow does not import back: ${first.message}` };
      if (first.ref !== undefined) p.ref = first.ref;
      return { ok: false, problems: [p] };
    }
    const diff = structureDifference(graphStructure(definition), graphStructure(back.definition, exporter.generatedJoins));
    if (diff !== undefined) {
      return { ok: false, problems: [{ code: "not-structured", ref: diff.ref, message: `Conductor's nested form cannot reproduce the graph around ${JSON.stringify(diff.ref)}: ${diff.message}` }] };
    }
  }
  return { ok: true, workflowDef };
}

class ExportRefusal extends Error {
  constructor(readonly problem: ConductorExportProblem) {
    super(problem.message);
  }
}

function refuse(ref: string, message: string, refs?: string[]): never {
  const problem: ConductorExportProblem = { code: "not-structured", ref, message };
  if (refs !== undefined) problem.refs = refs;
  throw new ExportRefusal(problem);
}

const q = (ref: string): string => JSON.stringify(ref);

/** A place edges leave from: a node, a SWITCH case (`sw\0case`), or a level's start (`\0start:loop`). */
type Handle = string;

const handleOf = (source: string, edgeCase?: string): Handle => (edgeCase === undefined ? source : `${source}\u0000${edgeCase}`);
const startHandle = (level: string | undefined): Handle => `\u0000start:${level ?? ""}`;
/** The node a handle leaves, or undefined for a level's start. */
const sourceOf = (h: Handle): string | undefined => (h.startsWith("\u0000") ? undefined : h.split("\u0000")[0]);

/** One way out of the items emitted so far, and where it leads. */
interface FlowEntry {
  readonly handle: Handle;
  readonly targets: readonly string[];
  /** For messages: which SWITCH case this exit belongs to. */
  readonly label?: string;
}

/** The exits of the last item of a list: what the next item must wait on. */
interface Flow {
  readonly entries: readonly FlowEntry[];
  /** What Conductor's joinOn names to wait for these exits; undefined at a level's start. */
  readonly owner: string | undefined;
}

/** Exits of some item leading to a node outside the list being read — the JOIN of an enclosing fork, if it is structured. */
interface Contribution {
  readonly handles: readonly Handle[];
  readonly owner: string | undefined;
  readonly target: string;
  /** Set when the exits are inside a SWITCH case. */
  readonly inCase?: { readonly sw: string; readonly label: string };
  /** The merge of a fork these exits got past without passing it. */
  readonly bypassed?: string;
}

interface ListResult {
  readonly tasks: ConductorWorkflowTask[];
  /** The exits the list ended with: their targets (if any) are all outside it. */
  readonly exits: Flow;
  /** Edges from earlier items to nodes outside the list, still unexplained. */
  readonly contributions: Contribution[];
}

interface Context {
  readonly level: string | undefined;
  readonly inCase?: { readonly sw: string; readonly label: string };
  /**
   * Reading a fork branch: a JOIN node ends it, and the fork decides whether
   * it is its JOIN or (fed by this branch alone while others go on) a JOIN in
   * sequence within the branch. Without this a JOIN waiting on one branch of
   * several would be read into that branch, which is a different Conductor
   * shape for the same graph.
   */
  readonly branch?: true;
}

class Exporter {
  /** Refs of the JOINs export made up; the verification discounts them. */
  readonly generatedJoins = new Set<string>();
  private readonly graph: DefinitionGraph;
  private readonly byRef = new Map<string, WorkflowNode>();
  private readonly targets = new Map<Handle, string[]>();
  private readonly inHandles = new Map<string, Handle[]>();
  private readonly order = new Map<string, number>();
  private readonly emitted = new Set<string>();
  private readonly used = new Set<string>();
  /** FORK_JOIN_DYNAMIC ref → the JOIN export puts after it. */
  private readonly dynamicJoins = new Map<string, string>();
  private readonly rewriters: ((text: string) => string)[] = [];

  constructor(private readonly definition: WorkflowDefinition) {
    this.graph = buildGraph(definition);
    for (const n of definition.nodes) {
      this.byRef.set(n.ref, n);
      this.used.add(n.ref);
    }
    // Validation rejects duplicate edges, so every edge adds a new target and, per target, a new handle.
    for (const e of definition.edges) {
      const h = handleOf(e.source, e.case);
      const list = this.targets.get(h);
      if (list === undefined) this.targets.set(h, [e.target]);
      else list.push(e.target);
      const ins = this.inHandles.get(e.target);
      if (ins === undefined) this.inHandles.set(e.target, [h]);
      else ins.push(h);
    }
    const levels: (string | undefined)[] = [undefined, ...definition.nodes.filter((n) => n.type === "DO_WHILE").map((n) => n.ref)];
    for (const level of levels) {
      const starts = this.graph.startNodes(level);
      this.targets.set(startHandle(level), [...starts]);
      for (const s of starts) this.inHandles.set(s, [startHandle(level)]);
      (this.graph.topologicalOrder(level) ?? []).forEach((r, i) => this.order.set(r, i));
    }
    for (const n of definition.nodes) {
      if (n.type !== "FORK_JOIN_DYNAMIC") continue;
      const join = this.fresh(`${n.ref}_join`);
      this.dynamicJoins.set(n.ref, join);
      this.rewriters.push(rootRewriter(n.ref, join, ".output"));
    }
  }

  workflow(): ConductorWorkflowDef {
    const d = this.definition;
    const tasks = this.level(undefined);
    const out: ConductorWorkflowDef = { name: d.name, tasks };
    if (d.description !== undefined) out.description = d.description;
    if (d.version !== undefined) out.version = d.version;
    const properties = d.inputSchema?.properties;
    out.inputParameters = typeof properties === "object" && properties !== null && !Array.isArray(properties) ? Object.keys(properties) : [];
    out.outputParameters = (this.rewrite(d.outputParameters) as Record<string, unknown> | undefined) ?? {};
    out.schemaVersion = 2;
    out.restartable = d.restartable ?? true;
    out.workflowStatusListenerEnabled = false;
    if (d.ownerEmail !== undefined) out.ownerEmail = d.ownerEmail;
    out.timeoutPolicy = d.timeoutPolicy ?? "ALERT_ONLY";
    out.timeoutSeconds = d.timeoutSeconds ?? 0;
    out.variables = d.variables ?? {};
    if (d.failureWorkflow !== undefined) out.failureWorkflow = d.failureWorkflow;
    if (d.inputSchema !== undefined) out.inputSchema = { name: `${d.name}_input`, version: 1, type: "JSON", data: d.inputSchema };
    if (d.tags !== undefined) out.tags = d.tags.map((t) => ({ key: t.key, value: t.value }));
    // WorkflowDef has no notes field, but Conductor stores and returns `metadata` as it was given.
    if (d.notes !== undefined && d.notes.length > 0) out.metadata = { [NOTES_METADATA_KEY]: { notes: d.notes } };
    return out;
  }

  private rewrite(value: unknown): unknown {
    let v = value;
    for (const r of this.rewriters) v = rewriteStrings(v, r).value;
    return v;
  }

  /** A ref no node uses, from a base: `base`, `base_2`, … (kept to the ref pattern and length). */
  private fresh(base: string): string {
    const clean = base.replace(/[^A-Za-z0-9_-]/g, "_").replace(/^(?=[^A-Za-z_])/, "_").slice(0, MAX_REF_LENGTH - 6);
    let ref = clean;
    for (let k = 2; this.used.has(ref); k++) ref = `${clean}_${k}`;
    this.used.add(ref);
    return ref;
  }

  private targetsOf(h: Handle): readonly string[] {
    return this.targets.get(h) ?? [];
  }

  private handlesOf(ref: string): Handle[] {
    const node = this.byRef.get(ref)!;
    if (node.type === "SWITCH") return [...node.cases, DEFAULT_CASE].map((c) => handleOf(ref, c));
    return [ref];
  }

  private entriesOf(ref: string): FlowEntry[] {
    return this.handlesOf(ref).map((handle) => ({ handle, targets: this.targetsOf(handle) }));
  }

  /** One level as a task list; everything in it must be read, nothing may lead out. */
  private level(level: string | undefined): ConductorWorkflowTask[] {
    const start = startHandle(level);
    const result = this.listAfter({ entries: [{ handle: start, targets: this.targetsOf(start) }], owner: undefined }, { level });
    const [first] = result.contributions;
    if (first !== undefined) this.unexplained(first);
    for (const entry of result.exits.entries) {
      const [target] = entry.targets;
      if (target !== undefined) this.unexplained({ handles: result.exits.entries.map((e) => e.handle), owner: result.exits.owner, target });
    }
    for (const ref of this.graph.childrenOf(level)) {
      if (!this.emitted.has(ref)) refuse(ref, `${q(ref)} is not reached by reading the workflow as nested task lists`);
    }
    return result.tasks;
  }

  /** Reads a list starting with `ref`. */
  private listFrom(ref: string, ctx: Context): ListResult {
    const item = this.item(ref, undefined, ctx);
    const rest = this.listAfter(item.flow, ctx);
    return { tasks: [...item.tasks, ...rest.tasks], exits: rest.exits, contributions: [...item.contributions, ...rest.contributions] };
  }

  /** Reads a list from the exits `flow` onwards, as far as its items lead only to each other. */
  private listAfter(start: Flow, ctx: Context): ListResult {
    const tasks: ConductorWorkflowTask[] = [];
    const contributions: Contribution[] = [];
    let flow = start;
    for (;;) {
      const { entries } = flow;
      if (entries.length === 0) return { tasks, exits: flow, contributions };
      const first = entries[0]!.targets;
      for (const e of entries) if (!sameSet(e.targets, first)) this.nonUniform(flow);
      if (first.length === 0) return { tasks, exits: flow, contributions };
      const handles = new Set(entries.map((e) => e.handle));
      const internal: string[] = [];
      const external: string[] = [];
      for (const t of first) {
        const ins = this.inHandles.get(t) ?? [];
        const stops = ctx.branch === true && this.byRef.get(t)?.type === "JOIN";
        if (!stops && !this.emitted.has(t) && ins.every((h) => handles.has(h))) internal.push(t);
        else external.push(t);
      }
      if (internal.length === 0) return { tasks, exits: flow, contributions };
      for (const target of external) contributions.push(this.contribution([...handles], flow.owner, target, ctx));
      const item = internal.length === 1 ? this.item(internal[0]!, flow.owner, ctx) : this.fork(flow, internal, ctx);
      tasks.push(...item.tasks);
      contributions.push(...item.contributions);
      flow = item.flow;
    }
  }

  private contribution(handles: readonly Handle[], owner: string | undefined, target: string, ctx: Context): Contribution {
    return ctx.inCase === undefined ? { handles, owner, target } : { handles, owner, target, inCase: ctx.inCase };
  }

  /** Emits the node `ref` (and what it holds) as the next item of a list. */
  private item(ref: string, previousOwner: string | undefined, ctx: Context): { tasks: ConductorWorkflowTask[]; flow: Flow; contributions: Contribution[] } {
    this.emitted.add(ref);
    const node = this.byRef.get(ref)!;
    const task = this.task(node);
    switch (node.type) {
      case "SWITCH": {
        const decisionCases: Record<string, ConductorWorkflowTask[]> = {};
        let defaultCase: ConductorWorkflowTask[] = [];
        const exits: FlowEntry[] = [];
        for (const c of [...node.cases, DEFAULT_CASE]) {
          const label = c === DEFAULT_CASE ? "the default case" : `case ${q(c)}`;
          const handle = handleOf(ref, c);
          const result = this.listAfter({ entries: [{ handle, targets: this.targetsOf(handle), label }], owner: ref }, { level: ctx.level, inCase: { sw: ref, label } });
          const [stray] = result.contributions;
          if (stray !== undefined) this.strayFromCase(stray);
          if (c === DEFAULT_CASE) defaultCase = result.tasks;
          else decisionCases[c] = result.tasks;
          for (const e of result.exits.entries) exits.push({ ...e, label });
        }
        task.decisionCases = decisionCases;
        task.defaultCase = defaultCase;
        return { tasks: [task], flow: { entries: exits, owner: ref }, contributions: [] };
      }
      case "DO_WHILE":
        task.loopOver = this.level(ref);
        return { tasks: [task], flow: { entries: this.entriesOf(ref), owner: ref }, contributions: [] };
      case "TERMINATE":
        // Nothing after it: the path ends. Something after it (never run): it continues the list, as Conductor writes it.
        return { tasks: [task], flow: { entries: this.targetsOf(ref).length === 0 ? [] : this.entriesOf(ref), owner: ref }, contributions: [] };
      case "FORK_JOIN_DYNAMIC": {
        const join = this.dynamicJoins.get(ref)!;
        const joinTask: ConductorWorkflowTask = { name: join, taskReferenceName: join, type: "JOIN", inputParameters: {}, joinOn: [] };
        return { tasks: [task, joinTask], flow: { entries: this.entriesOf(ref), owner: join }, contributions: [] };
      }
      case "JOIN":
        // A JOIN in sequence (not closing a fork): it waits for the item before it, already finished.
        task.joinOn = previousOwner === undefined ? [] : [previousOwner];
        return { tasks: [task], flow: { entries: this.entriesOf(ref), owner: ref }, contributions: [] };
      default:
        return { tasks: [task], flow: { entries: this.entriesOf(ref), owner: ref }, contributions: [] };
    }
  }

  /** Emits a fork from `flow` into `heads`, up to and including where its branches meet. */
  private fork(flow: Flow, heads: readonly string[], ctx: Context): { tasks: ConductorWorkflowTask[]; flow: Flow; contributions: Contribution[] } {
    const base = this.forkBase(flow, ctx);
    // Reserved first, so the fork this call closes gets the plain name and nested ones found on the way `_2`, `_3`….
    const forkRef = this.fresh(`${base}_fork`);
    const inBranch: Context = { ...ctx, branch: true };
    interface Branch {
      tasks: ConductorWorkflowTask[];
      contributions: Contribution[];
      /** joinOn for a branch that ends without leading anywhere (when nothing follows the fork). */
      tail: string | undefined;
      /** The branch's final exits when they lead nowhere. */
      ends: FlowEntry[];
      /** The handles of the branch's final exits. */
      last: Handle[];
    }
    const asBranch = (r: ListResult): Branch => {
      const contributions = [...r.contributions];
      const targets = r.exits.entries[0]?.targets ?? [];
      const handles = r.exits.entries.map((e) => e.handle);
      for (const target of targets) contributions.push(this.contribution(handles, r.exits.owner, target, inBranch));
      const ends = targets.length === 0 ? [...r.exits.entries] : [];
      return { tasks: r.tasks, contributions, tail: r.exits.entries.length > 0 ? r.exits.owner : undefined, ends, last: handles };
    };
    let branches: Branch[] = heads.map((h) => asBranch(this.listFrom(h, inBranch)));

    for (;;) {
      const active = branches.filter((b) => b.contributions.length > 0);
      const targets = [...new Set(active.flatMap((b) => b.contributions.map((c) => c.target)))].sort((a, b) => (this.order.get(a) ?? 0) - (this.order.get(b) ?? 0));
      if (targets.length === 0) {
        // Every branch ends on its own: a JOIN on their ends, and the list ends
        // there too — with the branches' dangling ends as its exits, so a SWITCH
        // case ending like this is still told apart from one that terminates.
        const join = this.fresh(`${base}_join`);
        this.generatedJoins.add(join);
        const joinOn = branches.map((b) => b.tail).filter((t): t is string => t !== undefined);
        return {
          tasks: [forkTask(forkRef, branches.map((b) => b.tasks)), joinTask(join, joinOn)],
          flow: { entries: branches.flatMap((b) => b.ends), owner: join },
          contributions: [],
        };
      }
      const covered = (target: string): boolean => {
        const handles = new Set(active.flatMap((b) => b.contributions.filter((c) => c.target === target).flatMap((c) => c.handles)));
        return (this.inHandles.get(target) ?? []).every((h) => handles.has(h));
      };
      const meetingAt = (target: string): Branch[] => active.filter((b) => b.contributions.some((c) => c.target === target));
      // A JOIN node only one branch leads to — from its end — while others go on elsewhere belongs to that branch.
      const ownJoin = (target: string, branch: Branch): boolean => {
        const toMerge = branch.contributions.filter((c) => c.target === target);
        return this.byRef.get(target)!.type === "JOIN" && toMerge.length === 1 && sameSet(toMerge[0]!.handles, branch.last);
      };
      // Inner merges come first in topological order: take the earliest target some group of branches fully explains.
      const candidates = targets.filter(covered);
      let merge = candidates.find((t) => {
        const meeting = meetingAt(t);
        return meeting.length >= 2 || meeting.length === active.length || ownJoin(t, meeting[0]!);
      });
      const handlesTo = (b: Branch, target: string): Handle[] => b.contributions.filter((c) => c.target === target).flatMap((c) => c.handles);
      // No group owns a target outright, but every branch leads, through the same exits, to the same nodes: close
      // the fork before them and let the enclosing list explain them (they also wait on something outside the fork).
      const together =
        merge === undefined && targets.every((t) => meetingAt(t).length === active.length && active.every((b) => sameSet(handlesTo(b, t), handlesTo(b, targets[0]!))));
      if (merge === undefined) {
        if (together) merge = targets[0]!;
        else if (candidates.length > 0) this.redundant(candidates[0]!, meetingAt(candidates[0]!)[0]!.contributions);
        else this.crossing(targets, active.flatMap((b) => b.contributions));
      }
      const meeting = meetingAt(merge);
      const inMeeting = new Set(meeting);
      // Every target the same branches reach through the same exits: a merge that forks again (a, b → c, d).
      const merges = together
        ? targets
        : candidates.includes(merge)
        ? targets.filter((t) => {
            if (!candidates.includes(t)) return false;
            const m = meetingAt(t);
            return m.length === meeting.length && m.every((b) => inMeeting.has(b) && sameSet(handlesTo(b, t), handlesTo(b, merge)));
          })
        : [merge];
      const mergeSet = new Set(merges);
      const bypassing = (c: Contribution): Contribution => (c.bypassed === undefined ? { ...c, bypassed: merge } : c);
      if (meeting.length === active.length) {
        const all = active.flatMap((b) => b.contributions);
        const closed = this.close(base, forkRef, branches.map((b) => b.tasks), merges, all, candidates.includes(merge));
        return { tasks: closed.tasks, flow: closed.flow, contributions: all.filter((c) => !mergeSet.has(c.target)).map(bypassing) };
      }
      if (meeting.length === 1) {
        const branch = meeting[0]!;
        const joined = this.item(merge, branch.contributions.find((c) => c.target === merge)!.owner, inBranch);
        const rest = this.listAfter(joined.flow, inBranch);
        const extended = asBranch({
          tasks: [...branch.tasks, ...joined.tasks, ...rest.tasks],
          exits: rest.exits,
          contributions: [...branch.contributions.filter((c) => c.target !== merge), ...rest.contributions],
        });
        branches = branches.map((b) => (b === branch ? extended : b));
        continue;
      }
      // Some branches meet first: read them as a nested fork, closed at `merge` and continuing after it.
      const inner = meeting.flatMap((b) => b.contributions);
      const closed = this.close(base, this.fresh(`${base}_fork`), meeting.map((b) => b.tasks), merges, inner, true);
      const rest = this.listAfter(closed.flow, inBranch);
      const leftover = inner.filter((c) => !mergeSet.has(c.target)).map(bypassing);
      const composite = asBranch({ tasks: [...closed.tasks, ...rest.tasks], exits: rest.exits, contributions: [...leftover, ...rest.contributions] });
      const at = branches.indexOf(meeting[0]!);
      branches = branches.filter((b) => !inMeeting.has(b));
      branches.splice(at, 0, composite);
    }
  }

  /**
   * FORK_JOIN over `branches` and the JOIN where they meet, at `merges`. A
   * JOIN node there (and waited on only by the fork) is the JOIN; otherwise a
   * generated JOIN comes first and the merge nodes follow it (several: a new
   * fork) — or, if a merge node also waits on something outside the fork, it
   * is left to whoever owns it.
   */
  private close(
    base: string,
    forkRef: string,
    branches: ConductorWorkflowTask[][],
    merges: readonly string[],
    contributions: readonly Contribution[],
    owned: boolean,
  ): { tasks: ConductorWorkflowTask[]; flow: Flow } {
    const merge = merges[0]!;
    const toMerge = contributions.filter((c) => merges.includes(c.target));
    const ownerOf = new Map<Handle, string>();
    for (const c of toMerge) for (const h of c.handles) if (c.owner !== undefined && !ownerOf.has(h)) ownerOf.set(h, c.owner);
    // joinOn in the order of the merge node's incoming edges (import writes them in joinOn order).
    const joinOn = new Set<string>();
    for (const h of this.inHandles.get(merge) ?? []) {
      const owner = ownerOf.get(h);
      if (owner !== undefined) joinOn.add(owner);
    }
    for (const c of toMerge) if (c.owner !== undefined) joinOn.add(c.owner);
    const fork = forkTask(forkRef, branches);
    const node = this.byRef.get(merge)!;
    if (owned && merges.length === 1 && node.type === "JOIN") {
      this.emitted.add(merge);
      const task = this.task(node);
      const own = this.joinRefs(node.joinOn) ?? [];
      task.joinOn = [...joinOn].every((r) => own.includes(r)) ? [...own] : [...joinOn, ...own.filter((r) => !joinOn.has(r))];
      return { tasks: [fork, task], flow: { entries: this.entriesOf(merge), owner: merge } };
    }
    const join = this.fresh(`${base}_join`);
    this.generatedJoins.add(join);
    const handles = [...new Set(toMerge.flatMap((c) => c.handles))];
    return { tasks: [fork, joinTask(join, [...joinOn])], flow: { entries: handles.map((handle) => ({ handle, targets: merges })), owner: join } };
  }

  private forkBase(flow: Flow, ctx: Context): string {
    const [only] = flow.entries;
    if (flow.owner === undefined) return ctx.level === undefined ? "start" : `${ctx.level}_body`;
    if (flow.entries.length === 1 && only !== undefined && only.handle.includes("\u0000")) return only.handle.replace("\u0000", "_");
    return flow.owner;
  }

  // --- Refusals: say which node, and why Conductor cannot say it. ---

  private nonUniform(flow: Flow): never {
    const groups = new Map<string, FlowEntry[]>();
    for (const e of flow.entries) {
      const key = JSON.stringify([...e.targets].sort());
      groups.set(key, [...(groups.get(key) ?? []), e]);
    }
    const owner = flow.owner ?? "";
    const isSwitch = this.byRef.get(owner)?.type === "SWITCH";
    const labels = (es: readonly FlowEntry[]): string => [...new Set(es.map((e) => e.label ?? q(sourceOf(e.handle) ?? "start")))].join(" and ");
    const all = [...groups.values()];
    const ending = all.find((g) => g[0]!.targets.length === 0);
    const going = all.find((g) => g[0]!.targets.length > 0)!;
    if (isSwitch && ending !== undefined) {
      const at = sourceOf(ending[0]!.handle) ?? owner;
      refuse(
        at,
        `${labels(ending)} of the SWITCH ${q(owner)} ends its path${at === owner ? "" : ` at ${q(at)}`} while ${labels(going)} continue${going.length > 1 ? "" : "s"} to ${going[0]!.targets.map(q).join(", ")}: Conductor continues after a SWITCH whichever case ran. Connect it there too, or end it with a TERMINATE`,
        [owner, at],
      );
    }
    if (isSwitch) {
      const shared = all.find((g) => new Set(g.map((e) => e.label)).size > 1);
      if (shared !== undefined) {
        const node = shared[0]!.targets[0]!;
        refuse(
          node,
          `${q(node)} is reached from ${labels(shared)} of the SWITCH ${q(owner)}, but the cases only meet again later (${labels(all.find((g) => g !== shared)!)} go${all.length > 2 ? "" : "es"} elsewhere): in Conductor each case is its own task list, rejoining only after the SWITCH`,
          [owner, node],
        );
      }
      const other = all.find((g) => g !== going)!;
      refuse(
        owner,
        `The cases of the SWITCH ${q(owner)} continue to different places — ${labels(going)} to ${going[0]!.targets.map(q).join(", ")}, ${labels(other)} to ${other[0]!.targets.map(q).join(", ")}: in Conductor every case continues after the SWITCH at the same task`,
        [owner, ...going[0]!.targets, ...other[0]!.targets],
      );
    }
    refuse(owner, `The exits of ${q(owner)} lead to different places: no nested Conductor form expresses this`);
  }

  private strayFromCase(c: Contribution): never {
    const from = c.owner ?? c.inCase!.sw;
    refuse(
      from,
      `${q(from)}, in ${c.inCase!.label} of the SWITCH ${q(c.inCase!.sw)}, also leads to ${q(c.target)} outside the SWITCH: in Conductor a case's tasks continue only after the SWITCH, and a JOIN waiting on a task of a case not taken would wait forever`,
      [from, c.inCase!.sw, c.target],
    );
  }

  /** `target` waits on `c`'s exits and on something else the list structure does not explain. */
  private unexplained(c: Contribution): never {
    if (c.inCase !== undefined) this.strayFromCase(c);
    const target = c.target;
    const sources = c.handles.map(sourceOf).filter((s): s is string => s !== undefined);
    const others = (this.inHandles.get(target) ?? []).map(sourceOf).filter((s): s is string => s !== undefined && !sources.includes(s));
    for (const s of sources) {
      const via = others.find((o) => this.graph.isUpstream(s, o));
      if (via !== undefined) {
        refuse(s, `The edge ${q(s)} → ${q(target)} is redundant: ${q(s)} already leads to ${q(target)} through ${q(via)}. Remove it: in Conductor a task follows exactly the item before it`, [s, target, via]);
      }
    }
    const from = sources[sources.length - 1] ?? target;
    if (c.bypassed !== undefined) {
      refuse(
        c.bypassed,
        `${q(c.bypassed)} joins the branches of its fork, but ${q(from)} in one of them also leads to ${q(target)} without passing ${q(c.bypassed)}: in Conductor a fork's branches meet at one JOIN. Route ${q(from)} through ${q(c.bypassed)}, or let ${q(target)} be where the branches meet`,
        [c.bypassed, from, target],
      );
    }
    refuse(
      target,
      `${q(target)} waits on ${q(from)}${others.length > 0 ? ` and on ${others.map(q).join(", ")}` : ""}, which are on parallel paths that do not meet at one JOIN first: a cross edge between branches has no nested Conductor form`,
      [target, from, ...others],
    );
  }

  private crossing(targets: readonly string[], contributions: readonly Contribution[]): never {
    for (const target of targets) {
      const mine = new Set(contributions.filter((c) => c.target === target).flatMap((c) => c.handles));
      const foreign = (this.inHandles.get(target) ?? []).find((h) => !mine.has(h));
      if (foreign === undefined) continue;
      const c = contributions.find((x) => x.target === target)!;
      this.unexplained({ ...c, handles: [...mine] });
    }
    this.unexplained(contributions[0]!);
  }

  private redundant(merge: string, contributions: readonly Contribution[]): never {
    this.unexplained(contributions.find((c) => c.target === merge)!);
  }

  // --- Node → WorkflowTask. ---

  /** joinOn refs as Conductor needs them: waiting on a FORK_JOIN_DYNAMIC means waiting on the JOIN after it. */
  private joinRefs<T extends readonly string[] | undefined>(refs: T): T {
    return (refs === undefined ? undefined : refs.map((r) => this.dynamicJoins.get(r) ?? r)) as T;
  }

  private task(original: WorkflowNode): ConductorWorkflowTask {
    let node = original;
    if (this.rewriters.length > 0) {
      node = { ...original, ...(original.policy === undefined ? {} : { policy: { ...original.policy } }) };
      for (const r of this.rewriters) rewriteNodeExpressions(node, r);
    }
    const name = node.name ?? node.ref;
    const task: ConductorWorkflowTask = { name, taskReferenceName: node.ref, type: node.type };
    if (node.description !== undefined) task.description = node.description;
    const input: Record<string, unknown> = { ...(node.input ?? {}) };
    task.inputParameters = input;
    if (node.optional === true) task.optional = true;
    const policy = policyToConductor(node.policy, name);
    if (policy.startDelay !== undefined) task.startDelay = policy.startDelay;
    if (policy.retryCount !== undefined) task.retryCount = policy.retryCount;
    if (policy.taskDefinition !== undefined) task.taskDefinition = policy.taskDefinition;
    if (policy.cacheConfig !== undefined) task.cacheConfig = policy.cacheConfig;
    const ext: NodeFlowTaskExtension = {};
    if (node.label !== undefined) ext.label = node.label;
    switch (node.type) {
      case "SIMPLE":
      case "SET_VARIABLE":
      case "NOOP":
        break;
      case "HTTP":
      case "HTTP_POLL":
        input.http_request = node.httpRequest;
        break;
      case "JDBC":
        Object.assign(input, node.jdbc);
        break;
      case "LIST_MCP_TOOLS":
      case "CALL_MCP_TOOL":
        Object.assign(input, node.mcp);
        break;
      case "LLM_CHAT_COMPLETE":
      case "LLM_TEXT_COMPLETE":
      case "LLM_GENERATE_EMBEDDINGS":
      case "LLM_INDEX_TEXT":
      case "LLM_SEARCH_INDEX":
        Object.assign(input, node.llm);
        break;
      case "AGENT":
        Object.assign(input, node.agent);
        break;
      case "INLINE":
        input.evaluatorType = node.evaluatorType;
        input.expression = node.expression;
        break;
      case "JSON_JQ_TRANSFORM":
        input.queryExpression = node.queryExpression;
        break;
      case "EVENT":
        task.sink = node.sink;
        break;
      case "SWITCH":
        task.evaluatorType = node.evaluatorType;
        task.expression = node.expression;
        break;
      case "JOIN":
        break;
      case "EXCLUSIVE_JOIN":
        if (node.joinOn !== undefined) task.joinOn = this.joinRefs(node.joinOn);
        if (node.defaultExclusiveJoinTask !== undefined) task.defaultExclusiveJoinTask = this.joinRefs(node.defaultExclusiveJoinTask);
        break;
      case "FORK_JOIN_DYNAMIC":
        if (node.dynamicForkTasksParam !== undefined) {
          task.dynamicForkTasksParam = node.dynamicForkTasksParam;
          if (node.dynamicForkTasksInputParamName !== undefined) task.dynamicForkTasksInputParamName = node.dynamicForkTasksInputParamName;
        } else if (node.forkTaskType === "SUB_WORKFLOW") {
          input.forkTaskWorkflow = node.forkTaskName;
          // Conductor reads the version as a string (ForkJoinDynamicTaskMapper casts it).
          if (node.forkTaskVersion !== undefined) input.forkTaskWorkflowVersion = String(node.forkTaskVersion);
          input.forkTaskInputs = node.items;
        } else {
          input.forkTaskName = node.forkTaskName;
          input.forkTaskInputs = node.items;
        }
        break;
      case "DO_WHILE":
        if (node.loopCondition !== undefined) task.loopCondition = node.loopCondition;
        if (node.items !== undefined) task.items = node.items;
        if (node.evaluatorType !== undefined) task.evaluatorType = node.evaluatorType;
        if (node.keepLastN !== undefined) input.keepLastN = node.keepLastN;
        break;
      case "DYNAMIC":
        task.dynamicTaskNameParam = node.dynamicTaskNameParam;
        break;
      case "WAIT":
        if (node.duration !== undefined) input.duration = node.duration;
        if (node.until !== undefined) input.until = node.until;
        break;
      case "HUMAN":
        if (node.assignee !== undefined) ext.assignee = node.assignee;
        if (node.form !== undefined) ext.form = node.form;
        if (node.outcomes !== undefined) ext.outcomes = node.outcomes;
        if (node.dueIn !== undefined) ext.dueIn = node.dueIn;
        if (node.title !== undefined) ext.title = node.title;
        if (node.approvals !== undefined) ext.approvals = node.approvals;
        if (node.allowSelfApproval !== undefined) ext.allowSelfApproval = node.allowSelfApproval;
        if (node.escalation !== undefined) ext.escalation = node.escalation;
        break;
      case "SUB_WORKFLOW":
        if (node.workflowDefinition !== undefined) {
          const inner = exportConductorWorkflow(node.workflowDefinition);
          if (!inner.ok) {
            const [p] = inner.problems;
            refuse(node.ref, `The inline workflow of ${q(node.ref)} cannot be exported: ${p?.message ?? "unknown problem"}`, p?.ref === undefined ? undefined : [node.ref, p.ref]);
          }
          task.subWorkflowParam = { name: node.workflowDefinition.name, workflowDefinition: inner.workflowDef };
          if (node.workflowDefinition.version !== undefined) task.subWorkflowParam.version = node.workflowDefinition.version;
        } else if (node.subWorkflowParam !== undefined) {
          task.subWorkflowParam = { name: node.subWorkflowParam.name };
          if (node.subWorkflowParam.version !== undefined) task.subWorkflowParam.version = node.subWorkflowParam.version;
        }
        break;
      case "START_WORKFLOW":
        input.startWorkflow = node.startWorkflow;
        break;
      case "TERMINATE":
        input.terminationStatus = node.terminationStatus;
        if (node.terminationReason !== undefined) input.terminationReason = node.terminationReason;
        if (node.workflowOutput !== undefined) input.workflowOutput = node.workflowOutput;
        break;
    }
    if (Object.keys(ext).length > 0) task.nodeFlow = ext;
    return task;
  }
}

function forkTask(ref: string, branches: ConductorWorkflowTask[][]): ConductorWorkflowTask {
  return { name: ref, taskReferenceName: ref, type: "FORK_JOIN", inputParameters: {}, forkTasks: branches };
}

function joinTask(ref: string, joinOn: string[]): ConductorWorkflowTask {
  return { name: ref, taskReferenceName: ref, type: "JOIN", inputParameters: {}, joinOn };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  if (a.length <= 8) return a.every((x) => b.includes(x));
  const set = new Set(b);
  return a.every((x) => set.has(x));
}
