import { z } from "zod";
import type { DefinitionLimits, LlmNodeType, Problem, ProblemCode, TaskPolicy, WorkflowDefinition, WorkflowEdge, WorkflowNode } from "../definition";
import { AgentConfigSchema, DEFAULT_CASE, DEFINITION_LIMITS, LLM_CONFIG_KEYS, LLM_REQUIRED_KEYS, MAX_NOTES, NoteSchema, buildGraph, validateDefinition } from "../definition";
import { checkJsonLimits } from "../definition/json-limits";
import type { ConductorSubWorkflowParams, ConductorWorkflowDef, ConductorWorkflowTask } from "./conductor-schema";
import { CONDUCTOR_REFUSED_TASK_TYPES, CONDUCTOR_TASK_TYPES, ConductorWorkflowDefSchema, NOTES_METADATA_KEY } from "./conductor-schema";
import { rewriteNodeExpressions, rewriteStrings, rootRewriter } from "./expression-rewrite";
import type { LayoutOptions } from "./layout";
import { layoutDefinition } from "./layout";
import type { ConductorImportProblem, ConductorImportWarning } from "./problems";
import { policyFromConductor } from "./task-policy-mapping";

/**
 * Conductor `WorkflowDef` (nested task lists) → node-flow graph.
 *
 * Task lists become edges: each task waits on whatever the previous item of
 * its list ends with. What each construct becomes:
 * - **SWITCH / DECISION**: a SWITCH node; one edge per case to the case's
 *   first task (labelled with the case), and every case's last task to the
 *   task after the SWITCH, where the cases rejoin. An empty case (or an empty
 *   `defaultCase`) is an edge from that case's handle straight to the task
 *   after the SWITCH — Conductor continues after a SWITCH whichever case ran.
 *   DECISION's `caseValueParam` becomes a value-param SWITCH, its
 *   `caseExpression` a javascript one.
 * - **TERMINATE** ends its path: nothing leaves it. A task right after a
 *   TERMINATE in the same list, or after a SWITCH all of whose paths
 *   terminate, never runs — Conductor accepts it, and so does node-flow: it
 *   is kept, wired from the TERMINATE(s) by edges that are never taken, and
 *   validation warns of it (`never-runs`).
 * - **FORK_JOIN + JOIN**: the FORK_JOIN itself disappears — a fork is several
 *   edges leaving one place — and the JOIN stays a JOIN node (its ref, and
 *   its output keyed by `joinOn`, survive). Its incoming edges follow
 *   Conductor's meaning of `joinOn`: the JOIN waits for exactly the tasks
 *   named there, so
 *     - a branch whose tasks `joinOn` does not name is not waited for: its
 *       last task keeps no outgoing edge and the branch runs on, in parallel
 *       with what follows the JOIN (the workflow still completes only when it
 *       has finished, in Conductor as in node-flow);
 *     - a task named in the middle of a branch gets an edge to the JOIN, and
 *       its branch carries on after it;
 *     - a SWITCH named in `joinOn` means the end of the case that ran (current
 *       Conductor resolves a SWITCH to its executed branch's terminal task), so
 *       the JOIN gets edges from every case's end;
 *     - a DO_WHILE means the whole loop; a task inside a loop body, the loop
 *       (with a warning); a TERMINATE is dropped (nothing to wait for);
 *     - entries of one branch named together (users often list every task)
 *       stay in `joinOn`, but only the last of them gets an edge — the others
 *       have finished by then;
 *     - a task outside the fork that has finished before the fork anyway needs
 *       no edge; one that has not (a parallel branch of an enclosing fork) gets
 *       one, since Conductor waits for it;
 *     - when nothing in the fork is waited for (empty `joinOn`), the JOIN is
 *       reached right from the fork point, running in parallel with the
 *       branches, as Conductor's JOIN completes at once.
 * - **FORK_JOIN_DYNAMIC** waits for all of its instances itself, so the JOIN
 *   Conductor requires after it is absorbed: expressions and `joinOn` entries
 *   naming that JOIN are redirected to the FORK_JOIN_DYNAMIC, whose output
 *   is the joined output (decide's `aggregateForkOutput`: keyed by instance
 *   ref like Conductor's JOIN; `{results: [...]}` for the items form, which
 *   the warning points out). Its `forkTaskName`/`forkTaskInputs` input (or
 *   `forkTaskWorkflow`) becomes the items form.
 * - **EXCLUSIVE_JOIN**: a node in sequence after its SWITCH, `joinOn` and
 *   `defaultExclusiveJoinTask` kept.
 * - **DO_WHILE**: a container; the `loopOver` tasks are its body (`parent`),
 *   wired among themselves only. `loopCondition` or `items`, `keepLastN` from
 *   its input.
 * - **LAMBDA** becomes INLINE: Conductor runs a LAMBDA's `scriptExpression` as
 *   a function body, so the INLINE expression wraps it the same way
 *   (`function scriptFun(){…} scriptFun();`); the output is `result` in both.
 * - **SUB_WORKFLOW** with an inline `workflowDefinition` imports that
 *   definition recursively; START_WORKFLOW, WAIT, HTTP, INLINE, JQ and
 *   TERMINATE take their configuration out of `inputParameters` into the
 *   node's typed fields, leaving the rest as the node's `input`.
 * - An inline `taskDefinition` (and `retryCount`, `startDelay`,
 *   `cacheConfig`) becomes the node's policy (see `task-policy-mapping.ts`).
 * - Any other task type (KAFKA_PUBLISH, JDBC, USER_DEFINED, …) is refused by
 *   name. Unknown fields are ignored; known fields node-flow cannot represent
 *   are dropped with a warning.
 *
 * The result gets a tidy layered layout (`layout.ts`) and must pass
 * `validateDefinition`; its problems come back pointing at the Conductor task.
 * Never throws; linear in the input, which is first held to the definition
 * size limits.
 */

/** Options for {@link importConductorWorkflow}. */
export interface ConductorImportOptions {
  /** Size limits for the input and the resulting graph (tests use small ones). */
  limits?: Partial<DefinitionLimits>;
  /** Layout spacing. */
  layout?: Partial<LayoutOptions>;
}

/** The verdict of {@link importConductorWorkflow}. */
export type ConductorImportResult =
  | { ok: true; definition: WorkflowDefinition; warnings: ConductorImportWarning[] }
  | { ok: false; problems: ConductorImportProblem[]; warnings: ConductorImportWarning[] };

type Path = (string | number)[];

/** The suffix Conductor's parser gives a LAMBDA script, so it runs as a function body. */
const LAMBDA_WRAP = { head: "function scriptFun(){", tail: "} scriptFun();" } as const;

/** Conductor JSON nests ~3 levels per task list; allow that much more than the graph form's bound. */
const CONDUCTOR_DEPTH_FACTOR = 4;

/** Imports a Conductor WorkflowDef as a node-flow graph definition; never throws. */
export function importConductorWorkflow(def: unknown, options: ConductorImportOptions = {}): ConductorImportResult {
  const limits: DefinitionLimits = { ...DEFINITION_LIMITS, ...options.limits };
  const warnings: ConductorImportWarning[] = [];
  if (typeof def !== "object" || def === null || Array.isArray(def)) {
    return { ok: false, problems: [{ code: "invalid-workflow-def", message: "A Conductor WorkflowDef is a JSON object", path: [] }], warnings };
  }
  const size = checkJsonLimits(def, { ...limits, maxDepth: limits.maxDepth * CONDUCTOR_DEPTH_FACTOR });
  if (size.problems.length > 0) {
    return { ok: false, problems: size.problems.map((p) => ({ code: p.code, message: p.message, path: p.path })), warnings };
  }
  const parsed = ConductorWorkflowDefSchema.safeParse(def);
  if (!parsed.success) return { ok: false, problems: zodProblems(parsed.error, def), warnings };
  const converted = convertWorkflow(parsed.data, [], 0, limits, options.layout ?? {}, warnings);
  if (converted.problems.length > 0 || converted.definition === undefined) return { ok: false, problems: converted.problems, warnings };
  return { ok: true, definition: converted.definition, warnings };
}

function zodProblems(error: z.ZodError, root: unknown): ConductorImportProblem[] {
  const out: ConductorImportProblem[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map((k) => (typeof k === "symbol" ? String(k) : k));
    const where = path.length === 0 ? "" : `${path.join(".")}: `;
    const ref = refAt(root, path);
    const problem: ConductorImportProblem = { code: "invalid-workflow-def", message: `${where}${issue.message}`, path };
    if (ref !== undefined) problem.ref = ref;
    out.push(problem);
  }
  return out;
}

/** The taskReferenceName of the innermost task object on `path`, if any. */
function refAt(root: unknown, path: readonly (string | number)[]): string | undefined {
  let v = root;
  let ref: string | undefined;
  for (const key of path) {
    if (typeof v !== "object" || v === null) break;
    const r = (v as Record<string, unknown>).taskReferenceName;
    if (typeof r === "string") ref = r;
    v = (v as Record<string, unknown>)[key as string];
  }
  if (typeof v === "object" && v !== null && typeof (v as Record<string, unknown>).taskReferenceName === "string") {
    ref = (v as Record<string, unknown>).taskReferenceName as string;
  }
  return ref;
}

const NON_EMPTY = (v: unknown): boolean =>
  v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0) && !(typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0);

function convertWorkflow(
  def: ConductorWorkflowDef,
  at: Path,
  inlineDepth: number,
  limits: DefinitionLimits,
  layout: Partial<LayoutOptions>,
  warnings: ConductorImportWarning[],
): { definition?: WorkflowDefinition; problems: ConductorImportProblem[] } {
  const importer = new Importer(at, inlineDepth, limits, layout, warnings);
  importer.buildWorkflow(def.tasks);
  const out: WorkflowDefinition = { schemaVersion: 1, name: def.name, nodes: importer.nodes, edges: importer.edges };
  if (def.version !== undefined && def.version !== null && def.version >= 1) out.version = def.version;
  if (typeof def.description === "string") out.description = def.description;
  const schema = def.inputSchema;
  if (schema !== undefined && schema !== null) {
    if (schema.data !== undefined && schema.data !== null && (schema.type === undefined || schema.type === null || schema.type === "JSON")) out.inputSchema = schema.data;
    else importer.warn("field-dropped", "inputSchema is a reference to a schema registry (or not JSON Schema); node-flow needs the schema inline in `data`", [...at, "inputSchema"]);
  }
  const documented = def.inputParameters ?? [];
  const properties = out.inputSchema?.properties;
  const known = typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
  const undocumented = documented.filter((n) => !known.includes(n));
  if (undocumented.length > 0) {
    importer.warn("field-dropped", `inputParameters (documentation only in Conductor) ${undocumented.join(", ")} dropped: describe inputs with inputSchema`, [...at, "inputParameters"]);
  }
  if (NON_EMPTY(def.outputParameters)) out.outputParameters = def.outputParameters!;
  if (NON_EMPTY(def.variables)) out.variables = def.variables!;
  if (def.timeoutSeconds !== undefined && def.timeoutSeconds !== null) out.timeoutSeconds = def.timeoutSeconds;
  if (def.timeoutPolicy !== undefined && def.timeoutPolicy !== null) out.timeoutPolicy = def.timeoutPolicy;
  if (typeof def.failureWorkflow === "string" && def.failureWorkflow !== "") out.failureWorkflow = def.failureWorkflow;
  if (typeof def.restartable === "boolean") out.restartable = def.restartable;
  if (typeof def.ownerEmail === "string" && def.ownerEmail !== "") {
    if (z.email().safeParse(def.ownerEmail).success) out.ownerEmail = def.ownerEmail;
    else importer.warn("field-dropped", `ownerEmail ${JSON.stringify(def.ownerEmail)} is not an email address`, [...at, "ownerEmail"]);
  }
  if (def.tags !== undefined && def.tags !== null && def.tags.length > 0) out.tags = def.tags.map((t) => ({ key: t.key, value: t.value }));
  importNotes(def.metadata, at, importer, out);
  const dropped: [keyof ConductorWorkflowDef, string][] = [
    ["failureWorkflowVersion", "the failure workflow always runs at its latest version"],
    ["workflowStatusListenerSink", "no workflow status listener"],
    ["outputSchema", "outputs are not checked against a schema"],
    ["rateLimitConfig", "no workflow-level rate limit"],
    ["cacheConfig", "no workflow-level output cache"],
    ["maskedFields", "no field masking"],
    ["inputTemplate", "no workflow-level input defaults: put them in the callers, or in inputSchema `default`s"],
  ];
  for (const [field, why] of dropped) if (NON_EMPTY(def[field])) importer.warn("field-dropped", `${field} dropped: ${why}`, [...at, field]);
  if (def.workflowStatusListenerEnabled === true) importer.warn("field-dropped", "workflowStatusListenerEnabled dropped: no workflow status listener", [...at, "workflowStatusListenerEnabled"]);

  if (importer.problems.length > 0) return { problems: importer.problems };
  importer.rewriteWorkflowExpressions(out);
  const laidOut = layoutDefinition(out, layout);
  const verdict = validateDefinition(laidOut, { limits });
  // The outermost validation covers inline sub-workflows too: report their warnings once, from there.
  if (inlineDepth === 0) for (const w of verdict.warnings) importer.warnFromValidation(w);
  if (!verdict.ok) return { problems: verdict.problems.map((p) => importer.fromValidation(p)) };
  return { definition: laidOut, problems: [] };
}

/** Sticky notes an export put under `metadata.nodeFlow.notes`; anything else in `metadata` is Conductor's own. */
function importNotes(metadata: ConductorWorkflowDef["metadata"], at: Path, importer: Importer, out: WorkflowDefinition): void {
  const ext = metadata?.[NOTES_METADATA_KEY];
  if (typeof ext !== "object" || ext === null || !("notes" in ext) || ext.notes === undefined) return;
  const notes = NotesSchema.safeParse(ext.notes);
  const where = [...at, "metadata", NOTES_METADATA_KEY, "notes"];
  if (!notes.success) {
    importer.warn("field-dropped", `${where.join(".")} dropped: not a list of notes (${notes.error.issues[0]?.message ?? "invalid"})`, where);
    return;
  }
  const ids = new Set(notes.data.map((n) => n.id));
  if (ids.size !== notes.data.length) {
    importer.warn("field-dropped", `${where.join(".")} dropped: two notes share an id`, where);
    return;
  }
  if (notes.data.length > 0) out.notes = notes.data;
}

const NotesSchema = z.array(NoteSchema).max(MAX_NOTES);

/** Where a list's last item hands over: the sources (and SWITCH cases) the next task's edges start from. */
interface Exit {
  readonly source: string;
  readonly case?: string;
}

/** The frontier between list items. At the start of a level, no exits is normal; later, it means every path ended. */
interface Frontier {
  readonly exits: readonly Exit[];
  readonly atStart: boolean;
  /** Where paths ended in a TERMINATE: a task after every path has ended is wired from these (never taken). */
  readonly dead?: readonly Exit[];
}

const START: Frontier = Object.freeze({ exits: [], atStart: true });

/** A JOIN whose incoming edges are wired once every task exists (joinOn may name tasks built later). */
interface PendingJoin {
  readonly ref: string;
  readonly joinOn: readonly string[];
  readonly path: Path;
  /** The level the JOIN sits at. */
  readonly parent: string | undefined;
  /** Refs built inside the fork's branches, each with its branch's index; undefined for a JOIN not closing a FORK_JOIN. */
  readonly members: ReadonlyMap<string, number> | undefined;
  /** Where the fork started, for a JOIN that waits on nothing inside it. */
  readonly entry: Frontier;
}

class Importer {
  readonly nodes: WorkflowNode[] = [];
  readonly edges: WorkflowEdge[] = [];
  readonly problems: ConductorImportProblem[] = [];
  private readonly edgeKeys = new Set<string>();
  private readonly byRef = new Map<string, WorkflowNode>();
  private readonly taskPath = new Map<string, Path>();
  /** Exits of each SWITCH's whole region (every case's end), for joinOn. */
  private readonly switchExits = new Map<string, readonly Exit[]>();
  /** FORK_JOIN refs, which have no node. */
  private readonly forkRefs = new Map<string, Path>();
  /** JOIN absorbed into the FORK_JOIN_DYNAMIC before it → that fork. */
  private readonly aliases = new Map<string, string>();
  private readonly pendingJoins: PendingJoin[] = [];
  /** The forks being built, innermost last: what each branch built so far, and which branch is being built. */
  private readonly memberStack: { members: Map<string, number>; branch: number }[] = [];

  constructor(
    private readonly at: Path,
    private readonly inlineDepth: number,
    private readonly limits: DefinitionLimits,
    private readonly layout: Partial<LayoutOptions>,
    private readonly warnings: ConductorImportWarning[],
  ) {}

  problem(code: ConductorImportProblem["code"], message: string, path: Path, ref?: string): void {
    const p: ConductorImportProblem = { code, message, path };
    if (ref !== undefined) p.ref = ref;
    this.problems.push(p);
  }

  warn(code: ConductorImportWarning["code"], message: string, path: Path, ref?: string): void {
    const w: ConductorImportWarning = { code, message, path };
    if (ref !== undefined) w.ref = ref;
    this.warnings.push(w);
  }

  buildWorkflow(tasks: readonly ConductorWorkflowTask[]): void {
    this.buildList(tasks, [...this.at, "tasks"], START, undefined);
    if (this.problems.length === 0) this.wireJoins();
  }

  private addNode(node: WorkflowNode, path: Path): boolean {
    if (this.byRef.has(node.ref) || this.forkRefs.has(node.ref)) {
      const first = this.taskPath.get(node.ref) ?? this.forkRefs.get(node.ref) ?? [];
      this.problem("duplicate-ref", `The taskReferenceName ${JSON.stringify(node.ref)} is also used at ${formatPath(first)}`, path, node.ref);
      return false;
    }
    this.nodes.push(node);
    this.byRef.set(node.ref, node);
    this.taskPath.set(node.ref, path);
    for (const frame of this.memberStack) frame.members.set(node.ref, frame.branch);
    return true;
  }

  private addEdge(exit: Exit, target: string): void {
    const key = JSON.stringify([exit.source, target, exit.case ?? null]);
    if (this.edgeKeys.has(key)) return;
    this.edgeKeys.add(key);
    this.edges.push(exit.case === undefined ? { source: exit.source, target } : { source: exit.source, target, case: exit.case });
  }

  private connect(frontier: Frontier, target: string): void {
    for (const exit of frontier.exits) this.addEdge(exit, target);
  }

  /** Builds one task list, wiring its first item to `frontier`; returns where the list ends. */
  private buildList(tasks: readonly ConductorWorkflowTask[], path: Path, frontier: Frontier, parent: string | undefined): Frontier {
    let current = frontier;
    for (let i = 0; i < tasks.length; i++) {
      const task = tasks[i]!;
      const at: Path = [...path, i];
      if (!current.atStart && current.exits.length === 0) {
        // Every path before it ended in a TERMINATE: Conductor registers it and never schedules it.
        // Kept, wired from those TERMINATEs, so the editor shows it (with validation's never-runs warning).
        const dead = current.dead ?? [];
        if (dead.length === 0) return current;
        current = { exits: dead, atStart: false };
      }
      const type = task.type ?? "SIMPLE";
      if (type === "FORK_JOIN") {
        const next = tasks[i + 1];
        if (next === undefined || (next.type ?? "SIMPLE") !== "JOIN") {
          this.problem("missing-join", `The FORK_JOIN ${JSON.stringify(task.taskReferenceName)} must be followed by a JOIN (Conductor requires one)`, at, task.taskReferenceName);
          return { exits: [], atStart: false };
        }
        current = this.buildFork(task, at, next, [...path, i + 1], current, parent);
        i++;
        continue;
      }
      if (type === "FORK_JOIN_DYNAMIC") {
        const next = tasks[i + 1];
        if (next === undefined || (next.type ?? "SIMPLE") !== "JOIN") {
          this.problem("missing-join", `The FORK_JOIN_DYNAMIC ${JSON.stringify(task.taskReferenceName)} must be followed by a JOIN (Conductor requires one)`, at, task.taskReferenceName);
          return { exits: [], atStart: false };
        }
        current = this.buildTask(task, at, current, parent);
        if (!this.byRef.has(next.taskReferenceName) && !this.forkRefs.has(next.taskReferenceName)) {
          this.aliases.set(next.taskReferenceName, task.taskReferenceName);
          this.taskPath.set(next.taskReferenceName, [...path, i + 1]);
        } else {
          this.problem("duplicate-ref", `The taskReferenceName ${JSON.stringify(next.taskReferenceName)} is used more than once`, [...path, i + 1], next.taskReferenceName);
        }
        i++;
        continue;
      }
      current = this.buildTask(task, at, current, parent);
    }
    return current;
  }

  private buildFork(fork: ConductorWorkflowTask, at: Path, join: ConductorWorkflowTask, joinAt: Path, frontier: Frontier, parent: string | undefined): Frontier {
    if (this.byRef.has(fork.taskReferenceName) || this.forkRefs.has(fork.taskReferenceName)) {
      this.problem("duplicate-ref", `The taskReferenceName ${JSON.stringify(fork.taskReferenceName)} is used more than once`, at, fork.taskReferenceName);
    } else {
      this.forkRefs.set(fork.taskReferenceName, at);
    }
    const branches = fork.forkTasks ?? [];
    if (branches.length === 0) this.problem("missing-config", `The FORK_JOIN ${JSON.stringify(fork.taskReferenceName)} has no forkTasks`, at, fork.taskReferenceName);
    const frame = { members: new Map<string, number>(), branch: 0 };
    this.memberStack.push(frame);
    branches.forEach((branch, b) => {
      frame.branch = b;
      this.buildList(branch, [...at, "forkTasks", b], frontier, parent);
    });
    this.memberStack.pop();
    const members = frame.members;
    const node = this.baseNode(join, joinAt, "JOIN") as WorkflowNode;
    if (!this.addNode(withParent(node, parent), joinAt)) return { exits: [], atStart: false };
    this.pendingJoins.push({ ref: join.taskReferenceName, joinOn: join.joinOn ?? [], path: joinAt, parent, members, entry: frontier });
    return { exits: [{ source: join.taskReferenceName }], atStart: false };
  }

  /** Builds a non-fork task (and, for SWITCH and DO_WHILE, what it holds) after `frontier`. */
  private buildTask(task: ConductorWorkflowTask, at: Path, frontier: Frontier, parent: string | undefined): Frontier {
    const ref = task.taskReferenceName;
    if (at.length > this.at.length + this.limits.maxDepth * CONDUCTOR_DEPTH_FACTOR) {
      this.problem("too-deep", "Task lists nest too deeply", at, ref);
      return { exits: [], atStart: false };
    }
    const node = this.convertTask(task, at);
    if (!this.addNode(withParent(node, parent), at)) return frontier;
    this.connect(frontier, ref);
    switch (node.type) {
      case "TERMINATE":
        return { exits: [], atStart: false, dead: [{ source: ref }] };
      case "SWITCH": {
        const exits: Exit[] = [];
        const dead: Exit[] = [];
        const cases = task.decisionCases ?? {};
        for (const c of node.cases) {
          const end = this.buildList(cases[c] ?? [], [...at, "decisionCases", c], { exits: [{ source: ref, case: c }], atStart: false }, parent);
          exits.push(...end.exits);
          dead.push(...(end.dead ?? []));
        }
        const end = this.buildList(task.defaultCase ?? [], [...at, "defaultCase"], { exits: [{ source: ref, case: DEFAULT_CASE }], atStart: false }, parent);
        exits.push(...end.exits);
        dead.push(...(end.dead ?? []));
        this.switchExits.set(ref, exits);
        return { exits, atStart: false, dead };
      }
      case "DO_WHILE":
        this.buildList(task.loopOver ?? [], [...at, "loopOver"], START, ref);
        return { exits: [{ source: ref }], atStart: false };
      case "JOIN":
        this.pendingJoins.push({ ref, joinOn: task.joinOn ?? [], path: at, parent, members: undefined, entry: frontier });
        return { exits: [{ source: ref }], atStart: false };
      default:
        return { exits: [{ source: ref }], atStart: false };
    }
  }

  /** The fields every node type shares, taken from a task. */
  private baseNode(task: ConductorWorkflowTask, at: Path, type: WorkflowNode["type"], consumed: readonly string[] = []): Record<string, unknown> {
    const node: Record<string, unknown> = { ref: task.taskReferenceName, type };
    if (typeof task.name === "string" && task.name !== "") node.name = task.name;
    const ext = task.nodeFlow;
    if (typeof ext?.label === "string") node.label = ext.label;
    if (typeof task.description === "string") node.description = task.description;
    node.position = { x: 0, y: 0 };
    const input = rest(task.inputParameters, consumed);
    if (input !== undefined) node.input = input;
    const { policy, dropped } = policyFromConductor(task);
    if (policy !== undefined) node.policy = policy satisfies TaskPolicy;
    for (const d of dropped) this.warn("field-dropped", `${d} dropped: node-flow has no equivalent`, at, task.taskReferenceName);
    if (task.optional === true) node.optional = true;
    if (task.asyncComplete === true && type !== "WAIT" && type !== "HUMAN") {
      this.warn("field-dropped", "asyncComplete dropped: the task completes on its own result, not by an external update", [...at, "asyncComplete"], task.taskReferenceName);
    }
    if (task.permissive === true) this.warn("field-dropped", "permissive dropped", [...at, "permissive"], task.taskReferenceName);
    if (NON_EMPTY(task.onStateChange)) this.warn("field-dropped", "onStateChange dropped: node-flow publishes no task state-change events", [...at, "onStateChange"], task.taskReferenceName);
    return node;
  }

  /** A task as a node; an unsupported one becomes a NOOP placeholder (and a problem) so the rest still wires up and validates. */
  private convertTask(task: ConductorWorkflowTask, at: Path): WorkflowNode {
    const ref = task.taskReferenceName;
    const type = task.type ?? "SIMPLE";
    const input = task.inputParameters ?? {};
    const placeholder = (): WorkflowNode => this.baseNode(task, at, "NOOP") as WorkflowNode;
    const missing = (what: string): WorkflowNode => {
      this.problem("missing-config", `The ${type} ${JSON.stringify(ref)} needs ${what}`, at, ref);
      return placeholder();
    };
    const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
    const node = (t: WorkflowNode["type"], consumed: readonly string[], extra: Record<string, unknown>): WorkflowNode => {
      const n = this.baseNode(task, at, t, consumed);
      for (const [k, v] of Object.entries(extra)) if (v !== undefined) n[k] = v;
      return n as unknown as WorkflowNode;
    };
    const refusal = Object.prototype.hasOwnProperty.call(CONDUCTOR_REFUSED_TASK_TYPES, type) ? CONDUCTOR_REFUSED_TASK_TYPES[type] : undefined;
    if (refusal !== undefined) {
      this.problem("unsupported-task-type", `${JSON.stringify(ref)} is a ${type} task, which node-flow refuses: ${refusal}`, [...at, "type"], ref);
      return placeholder();
    }
    if (!(CONDUCTOR_TASK_TYPES as readonly string[]).includes(type)) {
      this.problem(
        "unsupported-task-type",
        `${JSON.stringify(ref)} is a ${type} task, which node-flow does not run. Supported: ${CONDUCTOR_TASK_TYPES.filter((t) => t !== "FORK_JOIN" && t !== "JOIN").join(", ")} (and FORK_JOIN + JOIN)`,
        [...at, "type"],
        ref,
      );
      return placeholder();
    }
    switch (type as (typeof CONDUCTOR_TASK_TYPES)[number]) {
      case "SIMPLE":
        if (str(task.name) === undefined) return missing("a name: the task type its workers poll");
        return node("SIMPLE", [], {});
      case "HTTP": {
        const request = input.http_request;
        if (request === undefined) {
          if (typeof input.uri !== "string") return missing("inputParameters.http_request (or uri and method in inputParameters)");
          const flat = this.httpNumbers(pick(input, HTTP_REQUEST_KEYS), [...at, "inputParameters"], ref);
          return node("HTTP", HTTP_REQUEST_KEYS, { httpRequest: flat });
        }
        if (typeof request !== "object" || request === null || Array.isArray(request)) {
          this.problem("unsupported-feature", `The HTTP task ${JSON.stringify(ref)}: http_request must be an object; node-flow cannot take the whole request from an expression`, [...at, "inputParameters", "http_request"], ref);
          return placeholder();
        }
        const extra = Object.keys(request).filter((k) => !(HTTP_REQUEST_KEYS as readonly string[]).includes(k));
        if (extra.length > 0) this.warn("field-dropped", `http_request fields ${extra.join(", ")} dropped: node-flow has no equivalent`, [...at, "inputParameters", "http_request"], ref);
        return node("HTTP", ["http_request"], { httpRequest: this.httpNumbers(pick(request as Record<string, unknown>, HTTP_REQUEST_KEYS), [...at, "inputParameters", "http_request"], ref) });
      }
      case "HTTP_POLL": {
        const request = input.http_request;
        if (typeof request !== "object" || request === null || Array.isArray(request)) return missing("inputParameters.http_request {uri, method, terminationCondition, pollingInterval, pollingStrategy}");
        const spec = request as Record<string, unknown>;
        if (str(spec.terminationCondition) === undefined) return missing("http_request.terminationCondition");
        const extra = Object.keys(spec).filter((k) => !(HTTP_POLL_REQUEST_KEYS as readonly string[]).includes(k));
        if (extra.length > 0) this.warn("field-dropped", `http_request fields ${extra.join(", ")} dropped: node-flow has no equivalent`, [...at, "inputParameters", "http_request"], ref);
        const httpRequest = pick(spec, HTTP_POLL_REQUEST_KEYS);
        // Conductor reads these as numbers whichever way they are written.
        for (const key of ["pollingInterval", "maxPollCount", "connectionTimeOut", "readTimeOut"]) {
          const v = httpRequest[key];
          if (typeof v === "string" && /^\d+$/.test(v)) httpRequest[key] = Number(v);
        }
        return node("HTTP_POLL", ["http_request"], { httpRequest });
      }
      case "JDBC": {
        if (str(input.statement) === undefined) return missing("inputParameters.statement");
        if (str(input.connectionId) === undefined && str(input.integrationName) === undefined) return missing("inputParameters.connectionId (or integrationName)");
        const jdbc = pick(input, JDBC_KEYS);
        if (jdbc.type === undefined) jdbc.type = "SELECT";
        return node("JDBC", JDBC_KEYS, { jdbc });
      }
      case "LIST_MCP_TOOLS":
      case "CALL_MCP_TOOL": {
        if (str(input.mcpServer) === undefined) return missing("inputParameters.mcpServer");
        if (type === "CALL_MCP_TOOL" && str(input.method) === undefined) return missing("inputParameters.method (the tool's name)");
        const keys = type === "CALL_MCP_TOOL" ? MCP_CALL_KEYS : MCP_LIST_KEYS;
        return node(type === "CALL_MCP_TOOL" ? "CALL_MCP_TOOL" : "LIST_MCP_TOOLS", keys, { mcp: pick(input, keys) });
      }
      case "LLM_CHAT_COMPLETE":
      case "LLM_TEXT_COMPLETE":
      case "LLM_GENERATE_EMBEDDINGS":
      case "LLM_INDEX_TEXT":
      case "LLM_SEARCH_INDEX": {
        const llmType = type as LlmNodeType;
        const absent = LLM_REQUIRED_KEYS[llmType].find((key) => input[key] === undefined || input[key] === null || input[key] === "");
        if (absent !== undefined) return missing(`inputParameters.${absent}`);
        return node(llmType, LLM_CONFIG_KEYS[llmType], { llm: pick(input, LLM_CONFIG_KEYS[llmType]) });
      }
      case "AGENT": {
        // node-flow's own task type (Conductor compiles its agents to workflows): what export wrote, read back.
        const absent = ["llmProvider", "model", "prompt"].find((key) => input[key] === undefined || input[key] === null || input[key] === "");
        if (absent !== undefined) return missing(`inputParameters.${absent}`);
        return node("AGENT", AGENT_CONFIG_KEYS, { agent: pick(input, AGENT_CONFIG_KEYS) });
      }
      case "USER_TASK":
        // Conductor's test harness and Orkes' human tasks: something outside completes it. node-flow's HUMAN is that task.
        this.warn("legacy-form", "USER_TASK imported as HUMAN: it waits in the inbox (or for a TaskResult) and its output is what completes it", at, ref);
        return node("HUMAN", [], {});
      case "INLINE": {
        const expression = str(input.expression);
        if (expression === undefined) return missing("inputParameters.expression");
        let evaluatorType = input.evaluatorType;
        if (evaluatorType === undefined) {
          this.warn("assumed-default", "inputParameters.evaluatorType missing: javascript assumed", [...at, "inputParameters"], ref);
          evaluatorType = "javascript";
        }
        if (evaluatorType !== "javascript" && evaluatorType !== "graaljs") {
          this.problem("unsupported-feature", `The INLINE ${JSON.stringify(ref)} uses the evaluator ${JSON.stringify(evaluatorType)}; node-flow runs javascript and graaljs`, [...at, "inputParameters", "evaluatorType"], ref);
          return placeholder();
        }
        return node("INLINE", ["evaluatorType", "expression"], { evaluatorType, expression });
      }
      case "LAMBDA": {
        const script = str(input.scriptExpression) ?? str(task.scriptExpression);
        if (script === undefined) return missing("a scriptExpression");
        this.warn("legacy-form", "LAMBDA imported as INLINE: its script runs as a function body, its value is output.result as before", at, ref);
        return node("INLINE", ["scriptExpression"], { evaluatorType: "javascript", expression: `${LAMBDA_WRAP.head}${script}${LAMBDA_WRAP.tail}` });
      }
      case "JSON_JQ_TRANSFORM": {
        const queryExpression = str(input.queryExpression);
        if (queryExpression === undefined) return missing("inputParameters.queryExpression");
        return node("JSON_JQ_TRANSFORM", ["queryExpression"], { queryExpression });
      }
      case "SET_VARIABLE":
        return node("SET_VARIABLE", [], {});
      case "NOOP":
        return node("NOOP", [], {});
      case "EVENT": {
        const sink = str(task.sink);
        if (sink === undefined) return missing("a sink");
        return node("EVENT", [], { sink });
      }
      case "SWITCH":
      case "DECISION": {
        let evaluatorType: string;
        let expression: string | undefined;
        if (type === "DECISION") {
          if (str(task.caseExpression) !== undefined) {
            evaluatorType = "javascript";
            expression = task.caseExpression!;
          } else if (str(task.caseValueParam) !== undefined) {
            evaluatorType = "value-param";
            expression = task.caseValueParam!;
          } else return missing("a caseValueParam or a caseExpression");
          this.warn("legacy-form", `DECISION imported as a ${evaluatorType} SWITCH`, at, ref);
        } else {
          if (str(task.evaluatorType) === undefined || str(task.expression) === undefined) return missing("an evaluatorType and an expression");
          evaluatorType = task.evaluatorType!;
          expression = task.expression!;
          if (evaluatorType !== "value-param" && evaluatorType !== "javascript" && evaluatorType !== "graaljs") {
            this.problem("unsupported-feature", `The SWITCH ${JSON.stringify(ref)} uses the evaluator ${JSON.stringify(evaluatorType)}; node-flow has value-param, javascript and graaljs`, [...at, "evaluatorType"], ref);
            return placeholder();
          }
        }
        const cases = Object.keys(task.decisionCases ?? {});
        if (cases.includes(DEFAULT_CASE)) {
          this.problem(
            "unsupported-feature",
            `The SWITCH ${JSON.stringify(ref)} has a case named "default", which node-flow reserves for defaultCase: rename the case (and what produces its value)`,
            [...at, "decisionCases", DEFAULT_CASE],
            ref,
          );
          return placeholder();
        }
        return node("SWITCH", [], { evaluatorType, expression, cases });
      }
      case "JOIN":
        return node("JOIN", [], {});
      case "EXCLUSIVE_JOIN": {
        const extra: Record<string, unknown> = {};
        if (NON_EMPTY(task.joinOn)) extra.joinOn = task.joinOn;
        if (NON_EMPTY(task.defaultExclusiveJoinTask)) extra.defaultExclusiveJoinTask = task.defaultExclusiveJoinTask;
        return node("EXCLUSIVE_JOIN", [], extra);
      }
      case "DO_WHILE": {
        const extra: Record<string, unknown> = {};
        const hasItems = task.items !== undefined && task.items !== null;
        if (str(task.loopCondition) !== undefined && hasItems) {
          this.problem("unsupported-feature", `The DO_WHILE ${JSON.stringify(ref)} has both items and a loopCondition; node-flow loops either over items or while a condition holds`, at, ref);
          return placeholder();
        }
        const consumed: string[] = [];
        if (hasItems) extra.items = task.items;
        else if (str(task.loopCondition) !== undefined) extra.loopCondition = task.loopCondition;
        else if (input.items !== undefined && input.items !== null) {
          // List iteration as Orkes documents it: the list in inputParameters.items, loopCondition optional (often "").
          extra.items = input.items;
          consumed.push("items");
        } else return missing("a loopCondition (or items)");
        if (task.evaluatorType !== undefined && task.evaluatorType !== null) {
          if (task.evaluatorType !== "javascript" && task.evaluatorType !== "graaljs") {
            this.problem("unsupported-feature", `The DO_WHILE ${JSON.stringify(ref)} uses the evaluator ${JSON.stringify(task.evaluatorType)}; node-flow has javascript and graaljs`, [...at, "evaluatorType"], ref);
            return placeholder();
          }
          extra.evaluatorType = task.evaluatorType;
        }
        if (input.keepLastN !== undefined) {
          if (typeof input.keepLastN !== "number") {
            this.problem("unsupported-feature", `The DO_WHILE ${JSON.stringify(ref)}: keepLastN must be a number`, [...at, "inputParameters", "keepLastN"], ref);
            return placeholder();
          }
          extra.keepLastN = input.keepLastN;
          consumed.push("keepLastN");
        }
        return node("DO_WHILE", consumed, extra);
      }
      case "FORK_JOIN_DYNAMIC": {
        if (str(task.dynamicForkJoinTasksParam) !== undefined) {
          this.problem("unsupported-feature", `The FORK_JOIN_DYNAMIC ${JSON.stringify(ref)} uses the deprecated dynamicForkJoinTasksParam; use dynamicForkTasksParam + dynamicForkTasksInputParamName`, [...at, "dynamicForkJoinTasksParam"], ref);
          return placeholder();
        }
        if (str(task.dynamicForkTasksParam) !== undefined) {
          return node("FORK_JOIN_DYNAMIC", [], { dynamicForkTasksParam: task.dynamicForkTasksParam, dynamicForkTasksInputParamName: str(task.dynamicForkTasksInputParamName) });
        }
        if (input.forkTaskInputs === undefined) return missing("dynamicForkTasksParam, or forkTaskName + forkTaskInputs in inputParameters");
        const extra: Record<string, unknown> = { items: input.forkTaskInputs };
        const workflow = str(input.forkTaskWorkflow);
        if (workflow !== undefined) {
          extra.forkTaskName = workflow;
          extra.forkTaskType = "SUB_WORKFLOW";
          const v = input.forkTaskWorkflowVersion;
          const version = typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : undefined;
          if (version !== undefined) extra.forkTaskVersion = version;
        } else {
          const forkType = input.forkTaskType;
          if (forkType !== undefined && forkType !== "SIMPLE") {
            this.problem("unsupported-feature", `The FORK_JOIN_DYNAMIC ${JSON.stringify(ref)} forks ${JSON.stringify(forkType)} tasks; node-flow forks SIMPLE tasks or sub-workflows (forkTaskWorkflow)`, [...at, "inputParameters", "forkTaskType"], ref);
            return placeholder();
          }
          const name = str(input.forkTaskName);
          if (name === undefined) return missing("inputParameters.forkTaskName");
          extra.forkTaskName = name;
        }
        return node("FORK_JOIN_DYNAMIC", FORK_ITEM_KEYS, extra);
      }
      case "DYNAMIC": {
        const param = str(task.dynamicTaskNameParam);
        if (param === undefined) return missing("a dynamicTaskNameParam");
        return node("DYNAMIC", [], { dynamicTaskNameParam: param });
      }
      case "WAIT": {
        const extra: Record<string, unknown> = {};
        const consumed: string[] = [];
        for (const key of ["duration", "until"] as const) {
          if (input[key] !== undefined) {
            extra[key] = input[key];
            consumed.push(key);
          }
        }
        if (consumed.length === 0) extra.signal = true;
        return node("WAIT", consumed, extra);
      }
      case "HUMAN": {
        const ext = task.nodeFlow ?? {};
        return node("HUMAN", [], {
          title: ext.title ?? undefined,
          assignee: ext.assignee ?? undefined,
          approvals: ext.approvals ?? undefined,
          allowSelfApproval: ext.allowSelfApproval ?? undefined,
          form: ext.form ?? undefined,
          outcomes: ext.outcomes ?? undefined,
          dueIn: ext.dueIn ?? undefined,
          escalation: ext.escalation ?? undefined,
        });
      }
      case "SUB_WORKFLOW":
        return this.convertSubWorkflow(task, at, placeholder, missing, node);
      case "START_WORKFLOW": {
        const start = input.startWorkflow;
        if (typeof start !== "object" || start === null || Array.isArray(start)) return missing("inputParameters.startWorkflow {name, version?, input?, correlationId?}");
        const extra = Object.keys(start).filter((k) => !START_WORKFLOW_KEYS.includes(k));
        if (extra.length > 0) this.warn("field-dropped", `startWorkflow fields ${extra.join(", ")} dropped: node-flow has no equivalent`, [...at, "inputParameters", "startWorkflow"], ref);
        return node("START_WORKFLOW", ["startWorkflow"], { startWorkflow: pick(start as Record<string, unknown>, START_WORKFLOW_KEYS) });
      }
      case "TERMINATE": {
        if (input.terminationStatus === undefined) return missing("inputParameters.terminationStatus (COMPLETED, FAILED or TERMINATED)");
        return node("TERMINATE", ["terminationStatus", "terminationReason", "workflowOutput"], {
          terminationStatus: input.terminationStatus,
          terminationReason: input.terminationReason,
          workflowOutput: input.workflowOutput,
        });
      }
      case "FORK_JOIN":
        // Reached only through buildList, which handles FORK_JOIN itself.
        return placeholder();
    }
  }

  /**
   * Conductor reads http_request into typed fields (Jackson), so a timeout
   * written as a string of digits is that number; node-flow's fields are
   * numbers, so the import does the same conversion and says so.
   */
  private httpNumbers(request: Record<string, unknown>, at: Path, ref: string): Record<string, unknown> {
    for (const key of HTTP_NUMBER_KEYS) {
      const v = request[key];
      if (typeof v === "string" && /^\d{1,9}$/.test(v.trim())) {
        request[key] = Number(v.trim());
        this.warn("coerced", `${key} ${JSON.stringify(v)} read as the number ${request[key] as number}`, [...at, key], ref);
      }
    }
    return request;
  }

  private convertSubWorkflow(
    task: ConductorWorkflowTask,
    at: Path,
    placeholder: () => WorkflowNode,
    missing: (what: string) => WorkflowNode,
    node: (t: WorkflowNode["type"], consumed: readonly string[], extra: Record<string, unknown>) => WorkflowNode,
  ): WorkflowNode {
    const ref = task.taskReferenceName;
    const params: ConductorSubWorkflowParams | null | undefined = task.subWorkflowParam;
    if (params === undefined || params === null) return missing("a subWorkflowParam");
    const paramsAt: Path = [...at, "subWorkflowParam"];
    if (NON_EMPTY(params.taskToDomain)) this.warn("field-dropped", "taskToDomain dropped: node-flow has no task domains", [...paramsAt, "taskToDomain"], ref);
    const inline = params.workflowDefinition;
    if (typeof inline === "string") {
      this.problem("unsupported-feature", `The SUB_WORKFLOW ${JSON.stringify(ref)} takes its definition from an expression; node-flow needs the definition inline or a registered name`, [...paramsAt, "workflowDefinition"], ref);
      return placeholder();
    }
    if (inline !== undefined && inline !== null) {
      const innerAt: Path = [...paramsAt, "workflowDefinition"];
      if (this.inlineDepth + 1 > this.limits.maxInlineDepth) {
        this.problem("too-deep", `Inline sub-workflows nest more than ${this.limits.maxInlineDepth} deep`, innerAt, ref);
        return placeholder();
      }
      const inner = convertWorkflow(inline, innerAt, this.inlineDepth + 1, this.limits, this.layout, this.warnings);
      if (inner.definition === undefined) {
        for (const p of inner.problems) this.problems.push({ ...p, message: `In the inline workflow of ${JSON.stringify(ref)}: ${p.message}` });
        return placeholder();
      }
      return node("SUB_WORKFLOW", [], { workflowDefinition: inner.definition });
    }
    if (typeof params.name !== "string" || params.name === "") return missing("subWorkflowParam.name (or an inline workflowDefinition)");
    const sub: Record<string, unknown> = { name: params.name };
    if (typeof params.version === "number" && params.version >= 1) sub.version = params.version;
    else if (typeof params.version === "string" && /^\d+$/.test(params.version) && Number(params.version) >= 1) sub.version = Number(params.version);
    else if (typeof params.version === "string" && params.version.includes("${")) sub.version = params.version;
    else if (typeof params.version === "string" && params.version !== "") {
      this.problem("invalid-field", `The SUB_WORKFLOW ${JSON.stringify(ref)}: subWorkflowParam.version ${JSON.stringify(params.version)} is neither a number nor an expression`, [...paramsAt, "version"], ref);
      return placeholder();
    }
    return node("SUB_WORKFLOW", [], { subWorkflowParam: sub });
  }

  /** Resolves every JOIN's `joinOn` to incoming edges (see the module comment for the rules). */
  private wireJoins(): void {
    const deferred: { join: string; ref: string; sources: readonly Exit[] }[] = [];
    const insideOf: { join: string; sources: { exit: Exit; entry: string; branch: number }[] }[] = [];
    for (const pj of this.pendingJoins) {
      const kept: string[] = [];
      const inside: { exit: Exit; entry: string; branch: number }[] = [];
      pj.joinOn.forEach((original, j) => {
        const at: Path = [...pj.path, "joinOn", j];
        let ref = original;
        const alias = this.aliases.get(ref);
        if (alias !== undefined) {
          this.warn("join-on-adjusted", `joinOn ${JSON.stringify(ref)} is the JOIN absorbed into the FORK_JOIN_DYNAMIC ${JSON.stringify(alias)}: waits for that fork`, at, pj.ref);
          ref = alias;
        }
        if (this.forkRefs.has(ref)) {
          this.problem(
            "invalid-join-on",
            `${JSON.stringify(pj.ref)} waits on the FORK_JOIN ${JSON.stringify(ref)}, which completes as soon as it forks: name the JOIN that closes it, or tasks in its branches`,
            at,
            pj.ref,
          );
          return;
        }
        if (!this.byRef.has(ref)) {
          this.problem("invalid-join-on", `${JSON.stringify(pj.ref)} waits on ${JSON.stringify(ref)}, which is no task of this workflow: Conductor would wait forever`, at, pj.ref);
          return;
        }
        // Lift to the JOIN's level: a loop-body task is waited for by waiting for its loop.
        let lifted = ref;
        let upstreamOfLevel = false;
        while (this.byRef.get(lifted)!.parent !== pj.parent) {
          const p = this.byRef.get(lifted)!.parent;
          if (p === undefined) {
            upstreamOfLevel = true;
            break;
          }
          lifted = p;
        }
        if (upstreamOfLevel) {
          // The JOIN is inside a loop body and names a task outside it: finished before the loop started, or never.
          deferred.push({ join: pj.ref, ref, sources: [] });
          if (!kept.includes(ref)) kept.push(ref);
          return;
        }
        if (lifted !== ref) this.warn("join-on-adjusted", `joinOn ${JSON.stringify(ref)} is inside the loop ${JSON.stringify(lifted)}: waits for the whole loop`, at, pj.ref);
        const target = this.byRef.get(lifted)!;
        if (target.type === "TERMINATE") {
          this.warn("join-on-adjusted", `joinOn ${JSON.stringify(lifted)} is a TERMINATE, which ends the workflow: nothing to wait for`, at, pj.ref);
          return;
        }
        const sources = target.type === "SWITCH" ? (this.switchExits.get(lifted) ?? []) : [{ source: lifted }];
        if (sources.length === 0) {
          this.warn("join-on-adjusted", `joinOn ${JSON.stringify(lifted)}: every case of that SWITCH ends in a TERMINATE, so there is nothing to wait for`, at, pj.ref);
          return;
        }
        if (!kept.includes(lifted)) kept.push(lifted);
        const branch = pj.members?.get(lifted);
        if (branch !== undefined) for (const exit of sources) inside.push({ exit, entry: lifted, branch });
        else deferred.push({ join: pj.ref, ref: lifted, sources });
      });
      for (const s of inside) this.addEdge(s.exit, pj.ref);
      insideOf.push({ join: pj.ref, sources: inside });
      if (pj.members !== undefined && inside.length === 0) this.connect(pj.entry, pj.ref);
      const node = this.byRef.get(pj.ref);
      if (node?.type === "JOIN" && kept.length > 0) node.joinOn = kept;
    }
    // A joinOn entry that finishes before another entry of the same JOIN (Conductor users often list every
    // task of a branch) stays in joinOn but gets no edge: the later one already implies it.
    const pairs: { join: string; exit: Exit; later: string }[] = [];
    for (const { join, sources } of insideOf) {
      // Only entries of one branch can run one after the other (a 1,000-branch fork is not a million questions);
      // exits of one SWITCH are alternatives, not a sequence.
      const byBranch = new Map<number, (typeof sources)[number][]>();
      for (const src of sources) {
        const group = byBranch.get(src.branch);
        if (group === undefined) byBranch.set(src.branch, [src]);
        else group.push(src);
      }
      for (const group of byBranch.values()) {
        for (const a of group) for (const b of group) if (a.entry !== b.entry && a.exit.source !== b.exit.source) pairs.push({ join, exit: a.exit, later: b.exit.source });
      }
    }
    if (deferred.length === 0 && pairs.length === 0) return;
    // One graph answers both questions, as a batch (per-pair searches would be quadratic).
    const graph = buildGraph({ nodes: this.nodes, edges: this.edges });
    const answers = graph.areUpstream([...pairs.map((p) => ({ ref: p.exit.source, of: p.later })), ...deferred.map((d) => ({ ref: d.ref, of: d.join }))]);
    const redundant = new Set<string>();
    pairs.forEach((p, k) => {
      if (answers[k] === true) redundant.add(JSON.stringify([p.exit.source, p.join, p.exit.case ?? null]));
    });
    if (redundant.size > 0) {
      let kept = 0;
      for (const e of this.edges) {
        const key = JSON.stringify([e.source, e.target, e.case ?? null]);
        if (redundant.has(key)) this.edgeKeys.delete(key);
        else this.edges[kept++] = e;
      }
      this.edges.length = kept;
    }
    // Outside the fork: wait only for what has not surely finished already.
    deferred.forEach((d, k) => {
      if (answers[pairs.length + k] === true) return;
      for (const s of d.sources) this.addEdge(s, d.join);
    });
  }

  /** Redirects expressions and joinOn lists naming absorbed JOINs to their FORK_JOIN_DYNAMIC. */
  rewriteWorkflowExpressions(definition: WorkflowDefinition): void {
    for (const [join, fork] of this.aliases) {
      const rewrite = rootRewriter(join, fork);
      const forkNode = this.byRef.get(fork);
      // Conductor's JOIN keys instances by ref (`_name_0`…); node-flow's items form outputs `{results: [...]}`.
      const shape = forkNode?.type === "FORK_JOIN_DYNAMIC" && forkNode.items !== undefined ? "; its output is {results: [...]}, one entry per item, so paths into it may need adjusting" : "";
      for (const node of this.nodes) {
        if (rewriteNodeExpressions(node, rewrite)) {
          this.warn(
            "expression-rewritten",
            `Expressions reading ${JSON.stringify(join)} (the JOIN after the FORK_JOIN_DYNAMIC) now read ${JSON.stringify(fork)}${shape}`,
            this.taskPath.get(node.ref) ?? [],
            node.ref,
          );
        }
        if (node.type === "EXCLUSIVE_JOIN") {
          if (node.joinOn?.includes(join) === true) node.joinOn = node.joinOn.map((r) => (r === join ? fork : r));
          if (node.defaultExclusiveJoinTask?.includes(join) === true) node.defaultExclusiveJoinTask = node.defaultExclusiveJoinTask.map((r) => (r === join ? fork : r));
        }
      }
      if (definition.outputParameters !== undefined) {
        const { value, changed } = rewriteStrings(definition.outputParameters, rewrite);
        if (changed) {
          definition.outputParameters = value as Record<string, unknown>;
          this.warn("expression-rewritten", `outputParameters reading ${JSON.stringify(join)} now read ${JSON.stringify(fork)}${shape}`, [...this.at, "outputParameters"]);
        }
      }
    }
  }

  /** A validation warning of the imported graph, as an import warning pointing at the Conductor task. */
  warnFromValidation(p: Problem): void {
    const { code, message, path, ref } = this.fromValidation(p);
    this.warn(code as ProblemCode, message, path, ref);
  }

  /** A validation problem of the imported graph, pointed back at the Conductor task it came from. */
  fromValidation(p: Problem): ConductorImportProblem {
    const out: ConductorImportProblem = { code: p.code, message: p.message, path: [...this.at] };
    if (p.ref !== undefined) {
      out.ref = p.ref;
      const task = this.taskPath.get(p.ref);
      if (task !== undefined) {
        out.path = [...task];
        // ["nodes", i, "input", …] ↔ ["inputParameters", …]; other fields point at the task.
        if (p.path[0] === "nodes" && p.path[2] === "input") out.path.push("inputParameters", ...p.path.slice(3));
      }
    } else if (typeof p.path[0] === "string" && p.path[0] !== "nodes" && p.path[0] !== "edges") {
      out.path = [...this.at, ...p.path];
    }
    return out;
  }
}

const HTTP_REQUEST_KEYS = ["uri", "method", "headers", "body", "accept", "contentType", "connectionTimeOut", "readTimeOut"] as const;
const HTTP_NUMBER_KEYS = ["connectionTimeOut", "readTimeOut"] as const;
const START_WORKFLOW_KEYS: readonly string[] = ["name", "version", "input", "correlationId", "priority", "idempotencyKey", "idempotencyStrategy"];
const HTTP_POLL_REQUEST_KEYS = [...HTTP_REQUEST_KEYS, "terminationCondition", "pollingInterval", "pollingStrategy", "maxPollCount"] as const;
const MCP_LIST_KEYS = ["mcpServer", "headers"] as const;
const MCP_CALL_KEYS = ["mcpServer", "method", "arguments", "headers"] as const;
const AGENT_CONFIG_KEYS = Object.keys(AgentConfigSchema.shape);
const JDBC_KEYS = ["connectionId", "integrationName", "type", "statement", "parameters", "expectedUpdateCount"] as const;
const FORK_ITEM_KEYS = ["forkTaskName", "forkTaskType", "forkTaskInputs", "forkTaskWorkflow", "forkTaskWorkflowVersion"] as const;

function pick(source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (source[k] !== undefined && source[k] !== null) out[k] = source[k];
  return out;
}

/** `inputParameters` without the keys a node keeps in typed fields; undefined when nothing is left. */
function rest(input: Record<string, unknown> | null | undefined, consumed: readonly string[]): Record<string, unknown> | undefined {
  if (input === undefined || input === null) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (!consumed.includes(k)) out[k] = v;
  return Object.keys(out).length === 0 ? undefined : out;
}

function withParent(node: WorkflowNode, parent: string | undefined): WorkflowNode {
  if (parent !== undefined) node.parent = parent;
  return node;
}

function formatPath(path: readonly (string | number)[]): string {
  return path.map((k) => (typeof k === "number" ? `[${k}]` : `.${k}`)).join("").replace(/^\./, "");
}
